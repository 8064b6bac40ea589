//! The JSON splitter beside its peers, on the same bytes in the same run.
//!
//! Corpus: deterministic, generated (no files): realistic tool-call arguments — shell
//! commands with quotes and escapes, file contents as long escaped strings (code, prose,
//! raw UTF-8, `\u00e9`, surrogate pairs), nested edit lists, numbers — objects from about
//! 100 B to 64 KiB, glued back to back (`}{`) and, for one row, as NDJSON.
//! `TOOLSTREAM_BENCH_MB` sets the size (default 64 MiB; the ≤ 16-byte chunk rows use an
//! eighth of it). Every timed closure asserts the number of values it found.
//!
//! Groups: `splitter` (chunk sizes, beside a plain byte loop fed the same chunks), `peers`
//! (whole buffer), `peers-interleaved` and `chunks-interleaved` (the same comparisons with
//! every side timed piece by piece at the same moments), `linear` (1-byte deltas vs.
//! re-parsing the accumulated buffer).
//! Run: `cargo bench -p toolstream-benches --bench splitter`, then `scripts/bench-table.py` (see BENCHMARKS.md).

mod common;

use std::hint::black_box;
use std::time::Duration;

use bytes::Bytes;
use common::conditions::actson_chunks;
use common::interleaved::{self, Side};
use common::splitter::{
    byte_loop_chunks, byte_loop_values_chunks, corpus, escape, toolstream_chunks,
    toolstream_slices, CODE,
};
use common::Rng;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde::de::IgnoredAny;
use toolstream::json::Mode;

/// Value boundaries, for the peers that need each value on its own.
fn boundaries(input: &Bytes) -> Vec<(usize, usize)> {
    common::conditions::spans(input)
}

fn group_config(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
}

const CHUNKS: &[(&str, usize)] = &[
    ("whole", usize::MAX),
    ("64KiB", 64 << 10),
    ("4KiB", 4 << 10),
    ("64B", 64),
    ("16B", 16),
    ("7B", 7),
    ("1B", 1),
];

fn bench_splitter(c: &mut Criterion) {
    let (big, big_n) = corpus(common::corpus_bytes(64), false);
    let (small, small_n) = corpus(common::corpus_bytes(64) / 8, false);
    let mut g = c.benchmark_group("splitter");
    group_config(&mut g);
    for &(name, size) in CHUNKS {
        let (input, n) = if size <= 16 {
            (&small, small_n)
        } else {
            (&big, big_n)
        };
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_function(BenchmarkId::new("toolstream", name), |b| {
            b.iter(|| assert_eq!(toolstream_chunks(input, size), n))
        });
        g.bench_function(BenchmarkId::new("byte-loop", name), |b| {
            b.iter(|| assert_eq!(byte_loop_chunks(input, size), n))
        });
    }
    g.finish();
}

fn bench_peers(c: &mut Criterion) {
    let (input, n) = corpus(common::corpus_bytes(64), false);
    let (nd, nd_n) = corpus(common::corpus_bytes(64), true);
    let spans = boundaries(&input);
    let max_len = spans.iter().map(|(s, e)| e - s).max().unwrap_or(0);
    let mut g = c.benchmark_group("peers");
    group_config(&mut g);
    g.throughput(Throughput::Bytes(input.len() as u64));
    g.bench_function(BenchmarkId::new("toolstream", "whole"), |b| {
        b.iter(|| assert_eq!(toolstream_chunks(&input, usize::MAX), n))
    });
    g.bench_function(BenchmarkId::new("toolstream-ndjson-lines", "whole"), |b| {
        b.iter(|| assert_eq!(toolstream_chunks(&nd, usize::MAX), nd_n))
    });
    g.bench_function(BenchmarkId::new("serde_json-IgnoredAny", "whole"), |b| {
        b.iter(|| {
            let it = serde_json::Deserializer::from_slice(&input).into_iter::<IgnoredAny>();
            let mut k = 0;
            for r in it {
                r.expect("valid");
                k += 1;
            }
            assert_eq!(k, n)
        })
    });
    g.bench_function(BenchmarkId::new("serde_json-Value", "whole"), |b| {
        b.iter(|| {
            let it = serde_json::Deserializer::from_slice(&input).into_iter::<serde_json::Value>();
            let mut k = 0;
            for r in it {
                black_box(r.expect("valid"));
                k += 1;
            }
            assert_eq!(k, n)
        })
    });
    // simd-json parses in place: each value is copied into a scratch buffer first.
    g.bench_function(BenchmarkId::new("simd-json-tape", "whole"), |b| {
        let mut scratch = Vec::with_capacity(max_len);
        let mut buffers = simd_json::Buffers::new(max_len);
        b.iter(|| {
            let mut k = 0;
            for &(s, e) in &spans {
                scratch.clear();
                scratch.extend_from_slice(&input[s..e]);
                let tape =
                    simd_json::to_tape_with_buffers(&mut scratch, &mut buffers).expect("valid");
                black_box(&tape);
                k += 1;
            }
            assert_eq!(k, n)
        })
    });
    g.bench_function(BenchmarkId::new("simd-json-BorrowedValue", "whole"), |b| {
        let mut scratch = Vec::with_capacity(max_len);
        b.iter(|| {
            let mut k = 0;
            for &(s, e) in &spans {
                scratch.clear();
                scratch.extend_from_slice(&input[s..e]);
                black_box(simd_json::to_borrowed_value(&mut scratch).expect("valid"));
                k += 1;
            }
            assert_eq!(k, n)
        })
    });
    g.bench_function(BenchmarkId::new("jiter-skip", "whole"), |b| {
        b.iter(|| {
            let mut k = 0;
            for &(s, e) in &spans {
                let mut j = jiter::Jiter::new(&input[s..e]);
                j.next_skip().expect("valid");
                j.finish().expect("one value");
                k += 1;
            }
            assert_eq!(k, n)
        })
    });
    g.bench_function(BenchmarkId::new("actson-64B", "whole"), |b| {
        b.iter(|| assert_eq!(actson_chunks(&input, 64), n))
    });
    g.bench_function(BenchmarkId::new("byte-loop", "whole"), |b| {
        b.iter(|| assert_eq!(byte_loop_chunks(&input, usize::MAX), n))
    });
    g.bench_function(BenchmarkId::new("memchr2-scan", "whole"), |b| {
        b.iter(|| black_box(memchr::memchr2_iter(b'"', b'\\', &input).count()))
    });
    g.finish();
}

/// One object of about `size` bytes.
fn one_object(size: usize) -> Bytes {
    let mut rng = Rng(7);
    let mut s = String::from("{\"path\":\"a.rs\",\"content\":\"");
    while s.len() + 20 < size {
        escape(CODE, &mut s);
    }
    s.truncate(size - 3);
    // Do not cut an escape or a UTF-8 character in half.
    while s.ends_with('\\') || !s.is_char_boundary(s.len()) {
        s.pop();
    }
    let _ = rng.next();
    s.push_str("\"}");
    Bytes::from(s)
}

fn bench_linear(c: &mut Criterion) {
    let mut g = c.benchmark_group("linear");
    group_config(&mut g);
    for (name, size) in [("1KiB", 1 << 10), ("64KiB", 64 << 10), ("1MiB", 1 << 20)] {
        let obj = one_object(size);
        g.throughput(Throughput::Bytes(obj.len() as u64));
        g.bench_function(BenchmarkId::new("toolstream-1B-deltas", name), |b| {
            b.iter(|| assert_eq!(toolstream_chunks(&obj, 1), 1))
        });
        if size <= 256 << 10 {
            g.bench_function(
                BenchmarkId::new("serde_json-reparse-every-16B", name),
                |b| {
                    b.iter(|| {
                        let mut done = 0;
                        let mut end = 0;
                        while end < obj.len() {
                            end = (end + 16).min(obj.len());
                            if serde_json::from_slice::<IgnoredAny>(&obj[..end]).is_ok() {
                                done += 1;
                            }
                        }
                        assert_eq!(done, 1)
                    })
                },
            );
        }
    }
    g.finish();
}

/// Pieces of about 1 MiB of whole values, for the interleaved groups: each piece's bytes and
/// the spans of its values within them.
fn value_pieces(input: &Bytes) -> Vec<(Bytes, Vec<(usize, usize)>)> {
    common::conditions::sections(input)
}

/// The whole-buffer comparison again, interleaved (`common::interleaved`): toolstream on
/// whole pieces and at 64-byte chunks, serde_json → IgnoredAny, simd-json's tape per value,
/// and actson at 64-byte chunks, so the whole-buffer and 64-byte targets are read off one
/// set of moments.
fn bench_peers_interleaved(c: &mut Criterion) {
    let (input, n) = corpus(common::corpus_bytes(64), false);
    let pieces = value_pieces(&input);
    let max_len = pieces
        .iter()
        .flat_map(|(_, spans)| spans.iter().map(|(s, e)| e - s))
        .max()
        .unwrap_or(0);
    let mut scratch = Vec::with_capacity(max_len);
    let mut buffers = simd_json::Buffers::new(max_len);
    let p = &pieces;
    let sides: Vec<Side<'_>> = vec![
        (
            "toolstream",
            Box::new(|k| toolstream_chunks(&p[k].0, usize::MAX)),
        ),
        (
            "toolstream-64B",
            Box::new(|k| toolstream_chunks(&p[k].0, 64)),
        ),
        (
            "toolstream-slices-64B",
            Box::new(|k| toolstream_slices(&p[k].0, 64)),
        ),
        (
            "serde_json-IgnoredAny",
            Box::new(|k| {
                let mut found = 0;
                for r in serde_json::Deserializer::from_slice(&p[k].0).into_iter::<IgnoredAny>() {
                    r.expect("valid");
                    found += 1;
                }
                found
            }),
        ),
        (
            "simd-json-tape",
            Box::new(move |k| {
                let (bytes, spans) = &p[k];
                for &(vs, ve) in spans {
                    scratch.clear();
                    scratch.extend_from_slice(&bytes[vs..ve]);
                    let tape =
                        simd_json::to_tape_with_buffers(&mut scratch, &mut buffers).expect("valid");
                    black_box(&tape);
                }
                spans.len()
            }),
        ),
        ("actson-64B", Box::new(|k| actson_chunks(&p[k].0, 64))),
    ];
    interleaved::run(c, "peers-interleaved", input.len(), p.len(), n, sides);
}

/// Small chunks interleaved with the plain byte loop at the same chunk sizes (the
/// first eighth of the corpus, as in the `splitter` group's small-chunk rows).
fn bench_chunks_interleaved(c: &mut Criterion) {
    let (input, n) = corpus(common::corpus_bytes(64) / 8, false);
    let pieces = value_pieces(&input);
    let p = &pieces;
    let mut sides: Vec<Side<'_>> = Vec::new();
    for (ours, loop_, values, actson, size) in [
        (
            "toolstream-16B",
            "byte-loop-16B",
            "byte-loop-values-16B",
            "actson-16B",
            16,
        ),
        (
            "toolstream-7B",
            "byte-loop-7B",
            "byte-loop-values-7B",
            "actson-7B",
            7,
        ),
        (
            "toolstream-1B",
            "byte-loop-1B",
            "byte-loop-values-1B",
            "actson-1B",
            1,
        ),
    ] {
        sides.push((ours, Box::new(move |k| toolstream_chunks(&p[k].0, size))));
        sides.push((loop_, Box::new(move |k| byte_loop_chunks(&p[k].0, size))));
        sides.push((
            values,
            Box::new(move |k| byte_loop_values_chunks(&p[k].0, size)),
        ));
        sides.push((actson, Box::new(move |k| actson_chunks(&p[k].0, size))));
    }
    interleaved::run(c, "chunks-interleaved", input.len(), p.len(), n, sides);
}

/// An edit list: many small objects in an array, each with two short strings and a number
/// (the tree grows by many nodes rather than one long string).
fn edits_object(size: usize) -> Bytes {
    let mut s = String::from("{\"path\":\"a.rs\",\"edits\":[");
    let mut line = 0;
    while s.len() + 120 < size {
        if line > 0 {
            s.push(',');
        }
        s.push_str(&format!(
            "{{\"line\":{line},\"old\":\"let x = {line};\",\"new\":\"let x = {};\\n\"}}",
            line + 1
        ));
        line += 1;
    }
    s.push_str("]}");
    Bytes::from(s)
}

/// The view of arguments in progress after every 16-byte delta, as a UI shows them:
/// `json::Preview` (the tree changed by each delta) beside jiter's partial mode (pydantic's
/// way: re-parse the accumulated text with `allow_partial` after every delta; only up to
/// 256 KiB, it is quadratic).
fn bench_preview(c: &mut Criterion) {
    use toolstream::json::Preview;
    let mut g = c.benchmark_group("preview");
    group_config(&mut g);
    let cases = [
        ("string-1KiB", one_object(1 << 10)),
        ("string-64KiB", one_object(64 << 10)),
        ("string-1MiB", one_object(1 << 20)),
        ("edits-64KiB", edits_object(64 << 10)),
        ("edits-1MiB", edits_object(1 << 20)),
    ];
    for (name, obj) in cases {
        g.throughput(Throughput::Bytes(obj.len() as u64));
        g.bench_function(BenchmarkId::new("toolstream-16B-deltas", name), |b| {
            b.iter(|| {
                let mut p = Preview::new(Mode::Objects);
                let mut done = Vec::new();
                for d in obj.chunks(16) {
                    p.push(d, &mut done).expect("valid");
                    black_box(p.partial());
                }
                assert_eq!(done.len(), 1)
            })
        });
        if obj.len() <= 256 << 10 {
            g.bench_function(
                BenchmarkId::new("jiter-partial-reparse-every-16B", name),
                |b| {
                    b.iter(|| {
                        let mut end = 0;
                        let mut last = None;
                        while end < obj.len() {
                            end = (end + 16).min(obj.len());
                            last = Some(
                                jiter::JsonValue::parse_with_config(
                                    &obj[..end],
                                    false,
                                    jiter::PartialMode::TrailingStrings,
                                )
                                .expect("a valid prefix"),
                            );
                        }
                        assert!(matches!(last, Some(jiter::JsonValue::Object(_))))
                    })
                },
            );
        }
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_splitter,
    bench_peers,
    bench_peers_interleaved,
    bench_chunks_interleaved,
    bench_linear,
    bench_preview
);
criterion_main!(benches);
