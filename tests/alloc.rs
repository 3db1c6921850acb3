//! Checks that `reduce` performs no heap allocation once its storage is active.

use std::hint::black_box;

use repromin::bytes::{Completion, Interesting, Limits, ReduceError, Settings, Storage, reduce};

mod counting_alloc;
use counting_alloc::counted;

fn active_storage(max_input_bytes: usize) -> Storage {
    let mut storage = Storage::new(Limits { max_input_bytes }).unwrap();
    storage.activate().unwrap();
    storage
}

fn input_4k() -> Vec<u8> {
    let mut input: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 26) as u8 + b'a').collect();
    input[1000..1006].copy_from_slice(b"NEEDLE");
    input[3000..3003].copy_from_slice(b"PIN");
    input
}

/// Interesting when both markers survive; inspects the slice without allocating.
fn has_needle(candidate: &[u8]) -> bool {
    candidate.windows(6).any(|w| w == b"NEEDLE") && candidate.windows(3).any(|w| w == b"PIN")
}

#[test]
fn counter_detects_an_allocation() {
    let ((), allocations, deallocations) = counted(|| {
        let v: Vec<u8> = Vec::with_capacity(1);
        black_box(&v);
    });
    assert_eq!((allocations, deallocations), (1, 1));
}

#[test]
fn reduce_on_4k_input_does_not_allocate() {
    let mut storage = active_storage(4096);
    let input = input_4k();
    let settings = Settings::default();
    let mut calls = 0u64;
    let (summary, allocations, deallocations) = counted(|| {
        let outcome = reduce(&mut storage, &input, &settings, |c| {
            calls += 1;
            Ok::<Interesting, std::convert::Infallible>(has_needle(c).into())
        });
        outcome.map(|o| (o.bytes == b"NEEDLEPIN", o.attempts, o.completion))
    });
    assert_eq!((allocations, deallocations), (0, 0));
    let (is_needle, attempts, completion) = summary.unwrap();
    assert!(is_needle);
    assert_eq!(completion, Completion::OneMinimal);
    assert_eq!((attempts, calls), (124, 124));
    assert!(!storage.status().in_use);
}

#[test]
fn oracle_error_and_budget_paths_do_not_allocate() {
    let mut storage = active_storage(4096);
    let input = input_4k();
    let mut calls = 0u32;
    let (failed, allocations, _) = counted(|| {
        let result = reduce(&mut storage, &input, &Settings::default(), |_| {
            calls += 1;
            match calls {
                1 => Ok(Interesting::Interesting),
                5 => Err(calls),
                _ => Ok(Interesting::Uninteresting),
            }
        });
        result.err()
    });
    assert_eq!(allocations, 0);
    assert_eq!(failed, Some(ReduceError::Oracle(5)));
    assert!(!storage.status().in_use);

    let settings = Settings {
        max_attempts: Some(123),
    };
    let (summary, allocations, _) = counted(|| {
        let outcome = reduce(&mut storage, &input, &settings, |c| {
            Ok::<Interesting, ()>(has_needle(c).into())
        });
        outcome.map(|o| (has_needle(o.bytes), o.attempts, o.completion))
    });
    assert_eq!(allocations, 0);
    assert_eq!(summary, Ok((true, 123, Completion::BudgetExhausted)));
}
