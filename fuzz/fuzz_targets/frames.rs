//! Fuzz target: see `repromin::fuzzing::frames` for the input and what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = repromin::fuzzing::frames(data) {
        panic!("{broken}");
    }
});
