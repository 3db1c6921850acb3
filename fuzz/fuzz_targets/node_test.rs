//! Fuzz target: see `repromin::fuzzing::node_test` for the input and what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = repromin::fuzzing::node_test(data) {
        panic!("{broken}");
    }
});
