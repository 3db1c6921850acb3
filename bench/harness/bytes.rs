//! `bytes`: in-process throughput of `repromin::bytes`, with allocations counted.

use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

use repromin::bytes::{Interesting, Limits, Settings, Storage, reduce};

use crate::peers::thousands;
use crate::{Res, counting_alloc};

pub(crate) struct BytesRow {
    name: &'static str,
    input_len: usize,
    final_len: usize,
    attempts: u64,
    runs: u32,
    secs: f64,
    candidates_per_s: f64,
    mb_per_s: f64,
    allocations: u64,
}

/// Deterministic text-like bytes: words and newlines.
fn text_input(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    (0..len)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            if i % 61 == 60 {
                b'\n'
            } else if state.is_multiple_of(7) {
                b' '
            } else {
                b'a' + (state % 26) as u8
            }
        })
        .collect()
}

pub(crate) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

type OracleFn = fn(&[u8]) -> bool;

pub(crate) fn bytes_bench() -> Res<Vec<BytesRow>> {
    let mut needle_4k = text_input(4096);
    needle_4k[1000..1006].copy_from_slice(b"NEEDLE");
    needle_4k[3000..3003].copy_from_slice(b"PIN");
    let mut needle_64k = text_input(65536);
    needle_64k[16000..16006].copy_from_slice(b"NEEDLE");
    needle_64k[48000..48003].copy_from_slice(b"PIN");
    let big = text_input(1 << 20);
    let small = text_input(16384);

    fn needles(c: &[u8]) -> bool {
        contains(c, b"NEEDLE") && contains(c, b"PIN")
    }
    fn at_least_1000(c: &[u8]) -> bool {
        c.len() >= 1000
    }
    fn only_whole(c: &[u8]) -> bool {
        c.len() == 16384
    }
    let workloads: [(&'static str, &Vec<u8>, OracleFn); 4] = [
        ("needles, 4 KiB", &needle_4k, needles),
        ("needles, 64 KiB", &needle_64k, needles),
        ("length >= 1000, 1 MiB", &big, at_least_1000),
        ("rejects all, 16 KiB", &small, only_whole),
    ];

    let mut rows = Vec::new();
    for (name, input, oracle) in workloads {
        let mut storage = Storage::new(Limits {
            max_input_bytes: input.len(),
        })
        .map_err(|e| format!("storage: {e}"))?;
        storage.activate().map_err(|e| format!("storage: {e}"))?;
        let settings = Settings::default();
        let mut runs = 0u32;
        let mut total_attempts = 0u64;
        let mut total_bytes = 0u64;
        let mut total_allocations = 0u64;
        let mut final_len = 0usize;
        let mut attempts = 0u64;
        let start = Instant::now();
        while runs < 3 || start.elapsed() < Duration::from_secs(1) {
            // Bytes copied into candidates: every call but the first, which gets the
            // input itself.
            let mut assembled = 0u64;
            let mut first = true;
            let (outcome, allocations, _) = counting_alloc::counted(|| {
                let result = reduce(&mut storage, input, &settings, |c| {
                    if !std::mem::take(&mut first) {
                        assembled += c.len() as u64;
                    }
                    Ok::<Interesting, std::convert::Infallible>(oracle(black_box(c)).into())
                });
                result.map(|o| (o.bytes.len(), o.attempts))
            });
            let (len, n) = outcome.map_err(|e| format!("{name}: {e:?}"))?;
            final_len = len;
            attempts = n;
            total_attempts += n;
            total_bytes += assembled;
            total_allocations += allocations as u64;
            runs += 1;
        }
        let secs = start.elapsed().as_secs_f64();
        eprintln!("bytes {name}: {runs} runs in {secs:.2} s");
        rows.push(BytesRow {
            name,
            input_len: input.len(),
            final_len,
            attempts,
            runs,
            secs,
            candidates_per_s: total_attempts as f64 / secs,
            mb_per_s: total_bytes as f64 / secs / 1e6,
            allocations: total_allocations,
        });
    }
    Ok(rows)
}

pub(crate) fn write_bytes(md: &mut String, rows: &[BytesRow]) {
    let _ = writeln!(
        md,
        "| workload | input bytes | final bytes | candidates per run | runs | candidates/s | MB assembled/s | allocations in the loop |"
    );
    let _ = writeln!(
        md,
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {:.0} | {} |",
            r.name,
            thousands(r.input_len as u64),
            thousands(r.final_len as u64),
            thousands(r.attempts),
            r.runs,
            thousands(r.candidates_per_s as u64),
            r.mb_per_s,
            r.allocations
        );
    }
    let total: f64 = rows.iter().map(|r| r.secs).sum();
    let _ = writeln!(
        md,
        "\n({total:.1} s in all; the oracle's own time is included.)\n"
    );
}
