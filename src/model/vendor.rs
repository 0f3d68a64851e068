//! The three agent CLIs Taskie works with. Each is both a client whose stop hook Taskie is
//! (SPEC §20; `model/host.rs` names it `Client`) and a kind of reviewer (SPEC §18;
//! `model/reviewers.rs` names it `Kind`): one enum, so a vendor added is added once.

/// An agent CLI, by the name `TASKIE_CLIENT`, `--agent` and a `reviewers` entry give it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[strum(serialize_all = "lowercase")]
pub enum Vendor {
    /// Claude Code, the client assumed when nothing says otherwise.
    #[default]
    Claude,
    Codex,
    Gemini,
}

impl Vendor {
    pub const ALL: &[Vendor] = <Vendor as strum::VariantArray>::VARIANTS;

    /// `claude`, `codex` or `gemini`.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The vendor `name` names exactly (lowercase), if any.
    pub fn from_name(name: &str) -> Option<Vendor> {
        name.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_none() {
        for &v in Vendor::ALL {
            assert_eq!(Vendor::from_name(v.name()), Some(v));
        }
        assert_eq!(Vendor::from_name("cursor"), None);
        assert_eq!(Vendor::from_name("Claude"), None);
        assert_eq!(Vendor::default(), Vendor::Claude);
    }
}
