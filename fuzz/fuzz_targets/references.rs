//! Fuzz target: see `repromin::fuzzing::references` for the input and what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = repromin::fuzzing::references(data) {
        panic!("{broken}");
    }
});
