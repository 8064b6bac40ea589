//! A quick probe of where wall time goes, by object kind: toolstream (whole buffer, or
//! `CHUNK`-byte chunks) and serde_json → IgnoredAny alternating on 8 MiB (`TOOLSTREAM_BENCH_MB`) of the splitter
//! corpus, all kinds and then each kind alone (0 commands, 1 file contents, 2 edit lists,
//! 3 number arrays; only kind K with `TOOLSTREAM_BENCH_KIND=K`, only all with `all`), the best of `ROUNDS`
//! (default 15) each; chunks through `push_slice` with `TOOLSTREAM_SLICES=1`; against the
//! plain byte loop at the same chunk size rather than serde_json with `TOOLSTREAM_VS=byte-loop`. For finding what to work on
//! and for A/B runs of two builds; the figures BENCHMARKS.md reports come from the
//! criterion groups.
//!
//! `cargo run --release -p toolstream-benches --example walltime -- [CHUNK]`

mod common;
use common::splitter::{byte_loop_chunks, corpus_of, toolstream_chunks, toolstream_slices};
use std::time::Instant;
fn main() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(15);
    let chunk: usize = std::env::args()
        .nth(1)
        .map(|c| c.parse().unwrap())
        .unwrap_or(usize::MAX);
    // `TOOLSTREAM_BENCH_KIND=K`: that kind alone (as the instructions example); `all`: the
    // whole corpus alone.
    let kinds = match std::env::var("TOOLSTREAM_BENCH_KIND").as_deref() {
        Ok("all") => vec![None],
        Ok(k) => vec![Some(
            k.parse().expect("TOOLSTREAM_BENCH_KIND is 0..=3 or all"),
        )],
        Err(_) => vec![None, Some(0), Some(1), Some(2), Some(3)],
    };
    // `TOOLSTREAM_SLICES=1`: chunks through `push_slice` rather than as `Bytes`.
    let slices = std::env::var_os("TOOLSTREAM_SLICES").is_some();
    // `TOOLSTREAM_VS=byte-loop`: the peer is the byte loop, fed the same chunks.
    let byte_loop = std::env::var("TOOLSTREAM_VS").as_deref() == Ok("byte-loop");
    for kind in kinds {
        let (input, n) = corpus_of(common::corpus_bytes(8), false, kind);
        let (mut a, mut b) = (f64::MAX, f64::MAX);
        for _ in 0..rounds {
            let t = Instant::now();
            let found = if slices {
                toolstream_slices(&input, chunk)
            } else {
                toolstream_chunks(&input, chunk)
            };
            assert_eq!(found, n);
            a = a.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let k = if byte_loop {
                byte_loop_chunks(&input, chunk)
            } else {
                let mut k = 0;
                for r in serde_json::Deserializer::from_slice(&input)
                    .into_iter::<serde::de::IgnoredAny>()
                {
                    r.unwrap();
                    k += 1;
                }
                k
            };
            assert_eq!(k, n);
            b = b.min(t.elapsed().as_secs_f64());
        }
        let gb = input.len() as f64 / 1e9;
        println!(
            "kind {:?}: ours {:.3} GB/s peer {:.3} GB/s ratio {:.3}",
            kind,
            gb / a,
            gb / b,
            b / a
        );
    }
}
