//! Why the splitter is slower out of cache and after other work: the measurements behind
//! BENCHMARKS.md's "conditions" section, printed as tables.
//!
//! `cargo run --release -p toolstream-benches --example probe -- sizes` (whole buffers of
//! 1 MiB to 256 MiB, each read many times over: in cache up to L2/L3's size, out of it
//! past them; toolstream, serde_json and a read of every byte with no work), and
//! `-- gateway` (4 KiB pieces with each kind of other work between them), `-- rewarm` (the
//! part of the cold start a run over other values brings back).

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use common::conditions::{self, Gateway, Other, Work};

fn gbs(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e9
}

/// The median of `runs` timings of `f` over `reps` passes.
fn timed(runs: usize, reps: usize, mut f: impl FnMut() -> usize) -> Duration {
    let mut ts: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..reps {
                std::hint::black_box(f());
            }
            t.elapsed() / reps as u32
        })
        .collect();
    ts.sort();
    ts[runs / 2]
}

fn corpora(bytes: usize) -> Vec<(&'static str, Bytes)> {
    vec![
        ("generated", common::splitter::corpus(bytes, false).0),
        ("agent", common::agent::corpus(bytes).0),
    ]
}

fn sizes() {
    let all = corpora(256 << 20);
    println!("| corpus | buffer | toolstream GB/s | serde_json GB/s | × serde_json | read-all GB/s | toolstream / read-all |");
    println!("|---|---|---|---|---|---|---|");
    for (name, input) in &all {
        for mib in [1usize, 2, 8, 32, 64, 256] {
            let (buf, n) = conditions::prefix(input, mib << 20);
            let reps = ((1usize << 30) / buf.len()).max(1);
            let ts = timed(3, reps, || {
                let k = conditions::toolstream_whole(&buf);
                assert_eq!(k, n);
                k
            });
            let sj = timed(3, reps.div_ceil(3), || {
                let k = conditions::serde_whole(&buf);
                assert_eq!(k, n);
                k
            });
            let rd = timed(3, reps, || conditions::read_all(&buf));
            let (a, b, c) = (gbs(buf.len(), ts), gbs(buf.len(), sj), gbs(buf.len(), rd));
            println!(
                "| {name} | {mib} MiB | {a:.2} | {b:.2} | {:.2} | {c:.2} | {:.2} |",
                a / b,
                a / c
            );
        }
    }
}

/// The median of `v`.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median of the differences `xs[i] - ws[i]` (one per round).
fn median_diff(xs: &[f64], ws: &[f64]) -> f64 {
    median(xs.iter().zip(ws).map(|(x, w)| x - w).collect())
}

/// A cold start in ns a piece, and as a share of the time with nothing between pieces.
fn penalty(ns: f64, warm: f64) -> String {
    format!("{ns:+.0} ns ({:+.0} %)", 100.0 * ns / warm)
}

/// Rounds of every condition in turn, so that a drift of the machine's speed over the run
/// falls on all of them alike; each cold start is the median of its rounds' differences.
const ROUNDS: usize = 7;

fn gateway() {
    let all = corpora(16 << 20);
    println!(
        "GB/s of each parser's own time, median of {ROUNDS} rounds (each runs every kind of other"
    );
    println!("work in turn, every parser under each); then the time a cold start adds to each 4 KiB piece");
    println!("(ns), against the same parser with nothing between pieces in the same round, median over rounds.");
    println!();
    println!("| corpus | between pieces | toolstream 4 KiB | toolstream 64 B | serde_json | actson 64 B | 4 KiB × serde_json | 64 B × actson |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut work = Work::default();
    let mut penalties = Vec::new();
    for (name, input) in &all {
        let spans = conditions::spans(input);
        let pieces = input.len().div_ceil(4096) as f64;
        // ns a piece: [condition][parser][round].
        let mut runs = vec![vec![Vec::new(); 4]; Other::ALL.len()];
        for _ in 0..ROUNDS {
            for (k, &other) in Other::ALL.iter().enumerate() {
                let g = Gateway::new(input, &spans, other);
                let (n0, t0) = g.toolstream(&mut work);
                let (n1, t1) = g.toolstream_slices(64, &mut work);
                let (n2, t2) = g.serde(&mut work);
                let (n3, t3) = g.actson(64, &mut work);
                assert!([n1, n2, n3].iter().all(|&n| n == n0), "{n0} {n1} {n2} {n3}");
                for (r, t) in runs[k].iter_mut().zip([t0, t1, t2, t3]) {
                    r.push(t.as_secs_f64() * 1e9 / pieces);
                }
            }
        }
        for (k, &other) in Other::ALL.iter().enumerate() {
            let ns: Vec<f64> = runs[k].iter().map(|r| median(r.clone())).collect();
            let [a, b, c, d] = [0, 1, 2, 3].map(|p| 4096.0 / ns[p]);
            println!(
                "| {name} | {other:?} | {a:.2} | {b:.2} | {c:.2} | {d:.3} | {:.2} | {:.1} |",
                a / c,
                b / d
            );
            if k > 0 {
                let cells: Vec<String> = (0..4)
                    .map(|p| {
                        penalty(
                            median_diff(&runs[k][p], &runs[0][p]),
                            median(runs[0][p].clone()),
                        )
                    })
                    .collect();
                penalties.push((name, other, cells));
            }
        }
    }
    println!();
    println!("| corpus | between pieces | toolstream 4 KiB | toolstream 64 B | serde_json | actson 64 B |");
    println!("|---|---|---|---|---|---|");
    for (name, other, cells) in &penalties {
        println!("| {name} | {other:?} | {} |", cells.join(" | "));
    }
    println!();
    // The other work's own cost, for the record.
    for other in [Other::Caches, Other::Predictors, Other::Both] {
        let t = Instant::now();
        for _ in 0..1000 {
            work.run(other);
        }
        println!(
            "other work {other:?}: {:.1} µs a round",
            t.elapsed().as_secs_f64() * 1e3
        );
    }
}

/// One side under one condition, many times over: for a profiler, or for a side's time a
/// piece. `probe -- one <generated|agent> <Nothing|Caches|Predictors|Both> <64|4096|serde|timer>`
/// (`timer`: no parser, the timer alone).
fn one(args: &[String]) {
    let corpus = args.first().map_or("agent", String::as_str);
    let other = match args.get(1).map_or("Both", String::as_str) {
        "Nothing" => Other::Nothing,
        "Caches" => Other::Caches,
        "Predictors" => Other::Predictors,
        _ => Other::Both,
    };
    let side = args.get(2).map_or("64", String::as_str);
    let mb: usize = std::env::var("PROBE_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(16);
    let iters: u32 = std::env::var("PROBE_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let all = corpora(mb << 20);
    let input = &all.iter().find(|(n, _)| *n == corpus).expect("corpus").1;
    let spans = conditions::spans(input);
    let g = Gateway::new(input, &spans, other);
    let mut work = Work::default();
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let (_, t) = match side {
            "4096" => g.toolstream(&mut work),
            "serde" => g.serde(&mut work),
            "timer" => g.timer_only(&mut work),
            _ => g.toolstream_slices(64, &mut work),
        };
        total += t;
    }
    let pieces = input.len().div_ceil(4096) as f64 * f64::from(iters);
    println!(
        "{corpus} {other:?} {side}: {:.0} ns a 4 KiB piece",
        total.as_secs_f64() * 1e9 / pieces
    );
    println!(
        "{corpus} {other:?} {side}: {:.2} GB/s",
        gbs(input.len() * iters as usize, total)
    );
}

/// The cold start's parts: toolstream in 64-byte slices after each kind of other work, and
/// the same with an untimed run of a second splitter over 4 KiB of other values of the same
/// corpus between the other work and the piece. That run brings back the code, its
/// constants and tables and the predictors' memory, but not the timed splitter's own state
/// and buffer: what is left of the cold start is theirs.
fn rewarm() {
    let all = corpora(16 << 20);
    println!(
        "| corpus | between pieces | ns a piece | with the code warmed again | cold start | cold start left |"
    );
    println!("|---|---|---|---|---|---|");
    let mut work = Work::default();
    for (name, input) in &all {
        // Whole values from the corpus's last part, which the timed run reaches last.
        let spans = conditions::spans(input);
        let first = spans
            .iter()
            .position(|&(a, _)| a >= input.len() - (1 << 20))
            .expect("values");
        let last = spans[first..]
            .iter()
            .position(|&(_, e)| e >= spans[first].0 + 4096)
            .map_or(spans.len() - 1, |k| first + k);
        let warm = input.slice(spans[first].0..spans[last].1);
        let mut out = Vec::new();
        let pieces = input.len().div_ceil(4096) as f64;
        // ns a piece: [condition][plain, rewarmed][round].
        let mut runs = vec![[Vec::new(), Vec::new()]; Other::ALL.len()];
        for _ in 0..ROUNDS {
            for (k, &other) in Other::ALL.iter().enumerate() {
                let g = Gateway::new(input, &spans, other);
                let (_, plain) = g.toolstream_slices(64, &mut work);
                let mut d = toolstream::json::Splitter::new(toolstream::json::Mode::Objects);
                let (_, rewarmed) = g.toolstream_slices_then(64, &mut work, || {
                    for c in warm.chunks(64) {
                        d.push_slice(c, &mut out).expect("valid");
                    }
                    out.clear();
                });
                for (r, t) in runs[k].iter_mut().zip([plain, rewarmed]) {
                    r.push(t.as_secs_f64() * 1e9 / pieces);
                }
            }
        }
        for (k, &other) in Other::ALL.iter().enumerate() {
            let [a, b] = [0, 1].map(|j| median(runs[k][j].clone()));
            // Each column against its own figure with nothing between pieces, round by round.
            let cold = |j: usize| median_diff(&runs[k][j], &runs[0][j]);
            if k == 0 {
                println!(
                    "| {name} | {other:?} | {a:.0} | {b:.0} | – | – (the extra run: {:+.0} ns) |",
                    median_diff(&runs[0][1], &runs[0][0])
                );
            } else {
                println!(
                    "| {name} | {other:?} | {a:.0} | {b:.0} | {:+.0} ns | {:+.0} ns |",
                    cold(0),
                    cold(1)
                );
            }
        }
    }
}

/// Out of cache: the whole buffer in pieces, plain, or with the next piece read ahead
/// first (a software prefetch of sorts): whether the misses the hardware prefetcher leaves
/// are what the out-of-cache loss is.
fn ahead() {
    let all = corpora(256 << 20);
    println!("| corpus | piece | plain GB/s | next piece read first GB/s | × plain |");
    println!("|---|---|---|---|---|");
    for (name, input) in &all {
        let n = conditions::spans(input).len();
        for piece in [16usize << 10, 64 << 10, 256 << 10] {
            let run = |ahead: bool| {
                let mut s = toolstream::json::Splitter::new(toolstream::json::Mode::Objects);
                let mut out = Vec::new();
                let mut k = 0;
                let mut i = 0;
                while i < input.len() {
                    let j = (i + piece).min(input.len());
                    if ahead {
                        let e = (j + piece).min(input.len());
                        conditions::read_all(&input[j..e]);
                    }
                    s.push(input.slice(i..j), &mut out).expect("valid");
                    k += out.len();
                    out.clear();
                    i = j;
                }
                assert_eq!(k, n);
                k
            };
            let mut a = Vec::new();
            let mut b = Vec::new();
            for _ in 0..3 {
                let t = Instant::now();
                run(false);
                a.push(t.elapsed());
                let t = Instant::now();
                run(true);
                b.push(t.elapsed());
            }
            a.sort();
            b.sort();
            let (x, y) = (gbs(input.len(), a[1]), gbs(input.len(), b[1]));
            println!(
                "| {name} | {} KiB | {x:.2} | {y:.2} | {:.2} |",
                piece >> 10,
                y / x
            );
        }
    }
}

/// In cache, but not the same bytes over and over: 1 MiB pieces of a 256 MiB corpus, each
/// parsed (a) many times over, as a warmed benchmark does, (b) once, after an untimed read
/// that brings it into cache, (c) once, straight from memory. (a) against (b) is what the
/// branch predictors learn from bytes seen before; (b) against (c) is the cache's share.
fn memo() {
    let all = corpora(256 << 20);
    println!("| corpus | parser | same piece repeated GB/s | new piece, in cache GB/s | new piece, from memory GB/s |");
    println!("|---|---|---|---|---|");
    for (name, input) in &all {
        let spans = conditions::spans(input);
        // Pieces of whole values, about 1 MiB each.
        let mut pieces = Vec::new();
        let mut from = 0;
        for &(_, e) in &spans {
            if e - from >= 1 << 20 {
                pieces.push(input.slice(from..e));
                from = e;
            }
        }
        for parser in ["toolstream", "serde_json"] {
            let parse = |b: &Bytes| match parser {
                "toolstream" => conditions::toolstream_whole(b),
                _ => conditions::serde_whole(b),
            };
            let mut same = Duration::ZERO;
            let mut warm = Duration::ZERO;
            let mut cold = Duration::ZERO;
            let mut bytes = 0;
            // (c) first, over every piece (the corpus is far larger than the caches).
            for p in &pieces {
                let t = Instant::now();
                parse(p);
                cold += t.elapsed();
                bytes += p.len();
            }
            for p in &pieces {
                conditions::read_all(p);
                conditions::read_all(p);
                let t = Instant::now();
                parse(p);
                warm += t.elapsed();
            }
            for p in pieces.iter().take(16) {
                parse(p);
                let t = Instant::now();
                for _ in 0..16 {
                    parse(p);
                }
                same += t.elapsed() / 16;
            }
            let same_bytes: usize = pieces.iter().take(16).map(|p| p.len()).sum();
            println!(
                "| {name} | {parser} | {:.2} | {:.2} | {:.2} |",
                gbs(same_bytes, same),
                gbs(bytes, warm),
                gbs(bytes, cold)
            );
        }
    }
}

fn main() {
    println!(
        "scan implementation: {}",
        toolstream::scan::implementation()
    );
    match std::env::args().nth(1).as_deref() {
        Some("sizes") => sizes(),
        Some("gateway") => gateway(),
        Some("ahead") => ahead(),
        Some("memo") => memo(),
        Some("rewarm") => rewarm(),
        Some("one") => one(&std::env::args().skip(2).collect::<Vec<_>>()),
        _ => {
            sizes();
            gateway();
        }
    }
}
