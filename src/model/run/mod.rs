//! `taskie run` (SPEC §23), the pure part: the journal and the run state it replays
//! into, and the scheduling rules. The driver (`commands/run`) does the I/O.

pub(crate) mod journal;
pub mod schedule;
pub(crate) mod view;
