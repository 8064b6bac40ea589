//! SSE and NDJSON decoding throughput, beside peers on the same bytes in the same run.
//!
//! Corpus: a deterministic OpenAI-style chat-completions stream (tool-call argument
//! fragments in `data:` events, occasional keep-alive comments, `[DONE]` at the end),
//! about `TOOLSTREAM_BENCH_MB` MiB (default 100), pre-cut into chunks outside the timed
//! code. Every timed closure checks its event count.
//!
//! Groups: `sse` and `ndjson` (each implementation timed on its own, chunk size by chunk
//! size), `sse-interleaved` and `ndjson-interleaved` (every side run on the same pieces at
//! the same moments, see `common::interleaved`).
//!
//! Run: `cargo bench -p toolstream-benches --bench sse` (see BENCHMARKS.md).

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::interleaved::{self, Side};
use common::sse::{
    cut, eventsource_stream_peer, sse_corpus, sse_stream_peer, toolstream_sse, FRAGMENTS,
};
use common::Rng;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// The NDJSON corpus (Ollama /api/chat style) and its number of lines.
fn ndjson_corpus(bytes: usize) -> (Bytes, usize) {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut out = String::with_capacity(bytes + 1024);
    let mut lines = 0;
    while out.len() < bytes {
        out.push_str("{\"model\":\"qwen3:8b\",\"created_at\":\"2026-11-30T00:00:00.000Z\",\"message\":{\"role\":\"assistant\",\"content\":\"");
        out.push_str(rng.pick(FRAGMENTS));
        out.push_str("\"},\"done\":false}\n");
        lines += 1;
    }
    (Bytes::from(out), lines)
}

const CHUNKS: &[(&str, usize)] = &[
    ("whole", usize::MAX),
    ("64KiB", 64 << 10),
    ("16KiB", 16 << 10),
    ("4KiB", 4 << 10),
    ("1KiB", 1 << 10),
];

/// The ceiling: find every line end with memchr and do nothing else.
fn memchr_lines(chunks: &[Bytes]) -> usize {
    chunks
        .iter()
        .map(|c| memchr::memchr_iter(b'\n', c).count())
        .sum()
}

fn bench_sse(c: &mut Criterion) {
    let (input, events) = sse_corpus(common::corpus_bytes(100));
    let lines = memchr::memchr_iter(b'\n', &input).count();
    let mut g = c.benchmark_group("sse");
    g.throughput(Throughput::Bytes(input.len() as u64));
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    for &(name, size) in CHUNKS {
        let chunks = cut(&input, size.min(input.len()));
        g.bench_with_input(BenchmarkId::new("toolstream", name), &chunks, |b, ch| {
            b.iter(|| assert_eq!(toolstream_sse(ch), events))
        });
        g.bench_with_input(
            BenchmarkId::new("sse-stream-0.3", name),
            &chunks,
            |b, ch| b.iter(|| assert_eq!(sse_stream_peer(ch), events)),
        );
        // eventsource-stream re-scans its whole buffer for every event: quadratic on one
        // big chunk (0.5 MB/s on 8 MiB here), so it is left out of the whole-buffer row.
        if size != usize::MAX {
            g.bench_with_input(
                BenchmarkId::new("eventsource-stream", name),
                &chunks,
                |b, ch| b.iter(|| assert_eq!(eventsource_stream_peer(ch), events)),
            );
        }
        g.bench_with_input(BenchmarkId::new("memchr-lines", name), &chunks, |b, ch| {
            b.iter(|| assert_eq!(memchr_lines(ch), lines))
        });
    }
    g.finish();
}

/// Pieces of about 1 MiB, each ending just after a `sep` (whole events for SSE with a
/// blank line, whole lines for NDJSON with a newline).
fn pieces(input: &Bytes, sep: &[u8]) -> Vec<Bytes> {
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < input.len() {
        let want = (start + (1 << 20)).min(input.len());
        let end =
            memchr::memmem::find(&input[want..], sep).map_or(input.len(), |i| want + i + sep.len());
        pieces.push(input.slice(start..end));
        start = end;
    }
    pieces
}

/// The network chunk sizes interleaved (`common::interleaved`): toolstream, sse-stream and
/// eventsource-stream on the same pieces of an eighth of the corpus, cut into 1 KiB and
/// 4 KiB chunks outside the timed code, so the ratios come from the same moments.
fn bench_sse_interleaved(c: &mut Criterion) {
    let (input, events) = sse_corpus(common::corpus_bytes(100) / 8);
    let pieces = pieces(&input, b"\n\n");
    let cut_all =
        |size: usize| -> Vec<Vec<Bytes>> { pieces.iter().map(|p| cut(p, size)).collect() };
    let (k1, k4) = (cut_all(1 << 10), cut_all(4 << 10));
    let (k1, k4) = (&k1, &k4);
    let sides: Vec<Side<'_>> = vec![
        ("toolstream-1KiB", Box::new(|k| toolstream_sse(&k1[k]))),
        ("sse-stream-1KiB", Box::new(|k| sse_stream_peer(&k1[k]))),
        (
            "eventsource-stream-1KiB",
            Box::new(|k| eventsource_stream_peer(&k1[k])),
        ),
        ("toolstream-4KiB", Box::new(|k| toolstream_sse(&k4[k]))),
        ("sse-stream-4KiB", Box::new(|k| sse_stream_peer(&k4[k]))),
        (
            "eventsource-stream-4KiB",
            Box::new(|k| eventsource_stream_peer(&k4[k])),
        ),
    ];
    interleaved::run(
        c,
        "sse-interleaved",
        input.len(),
        pieces.len(),
        events,
        sides,
    );
}

fn toolstream_ndjson(chunks: &[Bytes]) -> usize {
    let mut d = toolstream::ndjson::Decoder::new();
    let mut items = Vec::new();
    let mut n = 0;
    for c in chunks {
        d.push(c.clone(), &mut items);
        n += items
            .drain(..)
            .filter(|i| matches!(i, toolstream::ndjson::Item::Value(_)))
            .count();
    }
    d.finish(&mut items);
    n + items.len()
}

/// The common approach: split lines, validate each with serde_json (no tree built).
fn serde_lines(input: &Bytes) -> usize {
    input
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice::<serde::de::IgnoredAny>(l).is_ok() as usize)
        .sum()
}

fn bench_ndjson(c: &mut Criterion) {
    let (input, lines) = ndjson_corpus(common::corpus_bytes(100));
    let mut g = c.benchmark_group("ndjson");
    g.throughput(Throughput::Bytes(input.len() as u64));
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    for &(name, size) in &CHUNKS[..3] {
        let chunks = cut(&input, size.min(input.len()));
        g.bench_with_input(BenchmarkId::new("toolstream", name), &chunks, |b, ch| {
            b.iter(|| assert_eq!(toolstream_ndjson(ch), lines))
        });
    }
    g.bench_function(
        BenchmarkId::new("serde_json-lines-IgnoredAny", "whole"),
        |b| b.iter(|| assert_eq!(serde_lines(&input), lines)),
    );
    g.finish();
}

/// NDJSON interleaved (`common::interleaved`): toolstream's decoder and serde_json line by
/// line on the same pieces of whole lines (an eighth of the corpus), whole and, for
/// toolstream, at 4 KiB chunks cut outside the timed code.
fn bench_ndjson_interleaved(c: &mut Criterion) {
    let (input, lines) = ndjson_corpus(common::corpus_bytes(100) / 8);
    let pieces = pieces(&input, b"\n");
    let k4: Vec<Vec<Bytes>> = pieces.iter().map(|p| cut(p, 4 << 10)).collect();
    let (p, k4) = (&pieces, &k4);
    let sides: Vec<Side<'_>> = vec![
        (
            "toolstream",
            Box::new(|k| toolstream_ndjson(std::slice::from_ref(&p[k]))),
        ),
        ("toolstream-4KiB", Box::new(|k| toolstream_ndjson(&k4[k]))),
        (
            "serde_json-lines-IgnoredAny",
            Box::new(|k| serde_lines(&p[k])),
        ),
    ];
    interleaved::run(c, "ndjson-interleaved", input.len(), p.len(), lines, sides);
}

criterion_group!(
    benches,
    bench_sse,
    bench_sse_interleaved,
    bench_ndjson,
    bench_ndjson_interleaved
);
criterion_main!(benches);
