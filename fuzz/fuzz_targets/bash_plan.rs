//! Parse, expand and check any command line: never a panic, and an accepted
//! line runs exactly the argv the policy checked (see src/shell/fuzzing.rs).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(line) = std::str::from_utf8(data) {
        rootbound::fuzz_bash_line(line);
    }
});
