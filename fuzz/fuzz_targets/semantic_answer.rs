//! Fuzz target: see `repromin::fuzzing::semantic_answer` for the input and what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = repromin::fuzzing::semantic_answer(data) {
        panic!("{broken}");
    }
});
