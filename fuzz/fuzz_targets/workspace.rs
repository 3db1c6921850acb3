//! Fuzz target: see `repromin::fuzzing::workspace` for the input and what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = repromin::fuzzing::workspace(data) {
        panic!("{broken}");
    }
});
