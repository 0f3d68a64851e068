//! The state.json reader (SPEC §3): any bytes either parse or give a state error, and a
//! state that parses writes back to text that parses to the same text again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use taskie::model::state::State;

fuzz_target!(|data: &[u8]| {
    let Ok(state) = State::parse(data) else {
        return;
    };
    let text = state.to_json();
    let again = State::parse(text.as_bytes()).expect("a written state parses");
    assert_eq!(again.to_json(), text, "writing is canonical");
});
