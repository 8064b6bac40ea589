//! Side-by-side timing on a shared, noisy machine: every side runs the same pieces of the
//! corpus, one piece at a time with the order rotating, so all sides see the same moments
//! of the machine, whose load drifts by up to 2x between one benchmark and the next.

use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};

/// One side of an interleaved comparison: its name, and what it runs on piece `k`,
/// returning how many items (values, events) it found there.
pub type Side<'a> = (&'static str, Box<dyn FnMut(usize) -> usize + 'a>);

/// Run `sides` interleaved over `pieces` pieces that hold `bytes` bytes and `expected`
/// items in all. Criterion times whole passes (every side), so the slowest side sets how
/// many passes run; the sums of every side over every pass go to target/criterion/<group>/totals.txt (`passes P bytes_per_pass B` then
/// `<side> <ns>` pairs), which `scripts/interleaved-table.py` tables for BENCHMARKS.md.
pub fn run(
    c: &mut Criterion,
    group: &str,
    bytes: usize,
    pieces: usize,
    expected: usize,
    mut sides: Vec<Side<'_>>,
) {
    let timed: Vec<TimedSide<'_>> = sides
        .iter_mut()
        .map(|(name, f)| -> TimedSide<'_> {
            (
                *name,
                Box::new(move |k| {
                    let t = Instant::now();
                    let n = f(k);
                    (n, t.elapsed())
                }),
            )
        })
        .collect();
    run_timed(c, group, bytes, pieces, expected, timed);
}

/// A side that times itself: what it found on piece `k`, and the time that counts (for a
/// side that does untimed work between its steps, as the gateway groups' other work).
pub type TimedSide<'a> = (
    &'static str,
    Box<dyn FnMut(usize) -> (usize, Duration) + 'a>,
);

/// [`run`] with sides that report their own time.
pub fn run_timed(
    c: &mut Criterion,
    group: &str,
    bytes: usize,
    pieces: usize,
    expected: usize,
    mut sides: Vec<TimedSide<'_>>,
) {
    let k = sides.len();
    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Bytes(bytes as u64));
    let mut totals = vec![Duration::ZERO; k];
    let mut passes = 0u64;
    g.bench_function(BenchmarkId::new("all-sides", "interleaved"), |b| {
        b.iter_custom(|iters| {
            let mut spent = vec![Duration::ZERO; k];
            for _ in 0..iters {
                let mut found = vec![0usize; k];
                for p in 0..pieces {
                    for r in 0..k {
                        let side = (p + r) % k;
                        let (n, t) = (sides[side].1)(p);
                        found[side] += n;
                        spent[side] += t;
                    }
                }
                assert!(
                    found.iter().all(|&f| f == expected),
                    "{found:?} != {expected}"
                );
            }
            for (t, s) in totals.iter_mut().zip(&spent) {
                *t += *s;
            }
            passes += iters;
            spent.iter().sum()
        })
    });
    g.finish();
    if passes == 0 {
        // Filtered out (`cargo bench -- <other group>`): keep the last run's totals.
        return;
    }
    let mut line = format!("passes {passes} bytes_per_pass {bytes}");
    for ((name, _), t) in sides.iter().zip(&totals) {
        line += &format!(" {name} {}", t.as_nanos());
    }
    line.push('\n');
    // Beside criterion's own reports: the workspace's target directory (cargo runs a
    // bench with the benches package, one level down, as its working directory).
    let target = std::env::var("CARGO_TARGET_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../target").into());
    let dir = std::path::Path::new(&target).join("criterion").join(group);
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join("totals.txt"), line);
    }
}
