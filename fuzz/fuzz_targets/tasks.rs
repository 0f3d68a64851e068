//! The tasks.md parser (SPEC §2, §6, §7 rule 9) and the structure validation that reads it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use taskie::model::tasks;
use taskie::model::validate::{self, Listing};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(rows) = tasks::parse(&text) {
        assert!(!rows.is_empty(), "a parsed table has task rows");
        for row in rows {
            let _ = (row.number(), row.is_finished());
        }
    }
    // The same bytes as file names (one per line) next to that tasks.md.
    let listing = Listing {
        files: text.lines().map(str::to_owned).collect(),
        nested_md: false,
    };
    let _ = validate::validate(&listing, Some(&text));
});
