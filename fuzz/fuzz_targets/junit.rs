//! Fuzz target: see `repromin::fuzzing::junit` for the input and what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = repromin::fuzzing::junit(data) {
        panic!("{broken}");
    }
});
