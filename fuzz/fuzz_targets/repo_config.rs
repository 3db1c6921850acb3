//! Fuzz target: see `repromin::fuzzing::repo_config` for the input and what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = repromin::fuzzing::repo_config(data) {
        panic!("{broken}");
    }
});
