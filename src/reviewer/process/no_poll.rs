//! Where no pidfd exists, there is no polling watch: [`Polled`] has no values, and the
//! reviewer is watched with threads.

use std::process::Child;
use std::time::Instant;

use super::{Heard, News, Spec};

pub(super) const AVAILABLE: bool = false;

pub(super) enum Polled {}

impl Polled {
    pub(super) fn start(_: &mut Child, _: &Spec, _: &mut Heard) -> Option<Polled> {
        None
    }

    pub(super) fn next(&mut self, _: Option<Instant>, _: &mut Heard) -> News {
        match *self {}
    }

    pub(super) fn take(&mut self) -> [(Vec<u8>, bool); 2] {
        match *self {}
    }
}
