//! The whole pipeline (SSE framing + OpenAI chat decoding + tool-call assembly) beside the
//! usual hand-assembled stack from popular crates: eventsource-stream for SSE, serde_json
//! into typed chunk structs, arguments accumulated in a String per call, and serde_json on
//! the finished arguments. Same bytes, same run; counts asserted.
//!
//! Corpus: OpenAI-style responses whose tool-call arguments (realistic objects, 300 B to
//! 2 KiB) arrive in 3..20-byte deltas, ~340-byte envelopes, `TOOLSTREAM_BENCH_MB` MiB in
//! all (default 100), fed in 4 KiB network chunks. The same calls as Anthropic Messages
//! events and as OpenAI Responses events (a quarter of the size each) beside the same kind
//! of stack, interleaved.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::interleaved::{self, Side};
use common::pipeline::{
    anthropic_corpus, anthropic_reference, corpus, reference, responses_corpus,
    responses_reference, toolstream_pipeline, toolstream_pipeline_as,
};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde::Deserialize;
use toolstream::provider::{Delta, Format};

fn bench_pipeline(c: &mut Criterion) {
    let (responses, calls) = corpus(common::corpus_bytes(100));
    let total: usize = responses.iter().map(Bytes::len).sum();
    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Bytes(total as u64));
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    g.bench_function(BenchmarkId::new("toolstream", "4KiB"), |b| {
        b.iter(|| assert_eq!(toolstream_pipeline(&responses, 4096), calls))
    });
    g.bench_function(
        BenchmarkId::new("eventsource+serde_json-typed", "4KiB"),
        |b| b.iter(|| assert_eq!(reference(&responses, 4096), calls)),
    );
    g.finish();
    // The same two, interleaved (`common::interleaved`), response by response, so both
    // sides see the same moments of this shared machine (its load drifts by 2x between one
    // benchmark and the next); BENCHMARKS.md reports the ratio of the sums.
    let r = &responses;
    let sides: Vec<Side<'_>> = vec![
        (
            "toolstream",
            Box::new(|k| toolstream_pipeline(std::slice::from_ref(&r[k]), 4096)),
        ),
        (
            "reference",
            Box::new(|k| reference(std::slice::from_ref(&r[k]), 4096)),
        ),
    ];
    interleaved::run(c, "pipeline-interleaved", total, r.len(), calls, sides);

    // The same calls streamed as Anthropic Messages events and as OpenAI Responses events,
    // each beside the same kind of stack (eventsource-stream, typed serde_json, String
    // accumulation), interleaved.
    type Corpus = fn(usize) -> (Vec<Bytes>, usize);
    type Reference = fn(&[Bytes], usize) -> usize;
    let evented: [(&str, Corpus, Format, Reference); 2] = [
        (
            "pipeline-anthropic-interleaved",
            anthropic_corpus,
            Format::Anthropic,
            anthropic_reference,
        ),
        (
            "pipeline-responses-interleaved",
            responses_corpus,
            Format::OpenAiResponses,
            responses_reference,
        ),
    ];
    for (group, corpus, format, reference) in evented {
        let (responses, calls) = corpus(common::corpus_bytes(100) / 4);
        let total: usize = responses.iter().map(Bytes::len).sum();
        let r = &responses;
        let sides: Vec<Side<'_>> = vec![
            (
                "toolstream",
                Box::new(move |k| {
                    toolstream_pipeline_as(std::slice::from_ref(&r[k]), 4096, format)
                }),
            ),
            (
                "reference",
                Box::new(move |k| reference(std::slice::from_ref(&r[k]), 4096)),
            ),
        ];
        interleaved::run(c, group, total, r.len(), calls, sides);
    }
}

#[derive(Deserialize)]
struct EnvChunk<'a> {
    #[serde(borrow, default)]
    choices: Vec<EnvChoice<'a>>,
}
#[derive(Deserialize)]
struct EnvChoice<'a> {
    #[serde(borrow, default)]
    delta: Option<EnvDelta<'a>>,
}
#[derive(Deserialize)]
struct EnvDelta<'a> {
    #[serde(borrow, default)]
    tool_calls: Option<Vec<EnvCall<'a>>>,
}
#[derive(Deserialize)]
struct EnvCall<'a> {
    #[serde(borrow, default)]
    function: Option<EnvFunction<'a>>,
}
#[derive(Deserialize)]
struct EnvFunction<'a> {
    #[serde(borrow, default)]
    arguments: Option<std::borrow::Cow<'a, str>>,
}

/// Envelope decoding alone, to choose the envelope parser by measurement: serde_json into
/// borrowed typed structs, simd-json to its tape (a lower bound for simd-json: no values
/// built), and toolstream's OpenAI chat decoder (the strict cursor; fresh per payload, and
/// one per stream as the pipeline runs it), on the same `data:` payloads.
fn bench_envelopes(c: &mut Criterion) {
    let (responses, _) = corpus(common::corpus_bytes(100) / 10);
    let payloads: Vec<Bytes> = responses
        .iter()
        .flat_map(|r| {
            r.split(|&b| b == b'\n')
                .filter_map(|l| l.strip_prefix(b"data: "))
                .filter(|l| *l != b"[DONE]")
                .map(Bytes::copy_from_slice)
                .collect::<Vec<_>>()
        })
        .collect();
    let total: usize = payloads.iter().map(Bytes::len).sum();
    let n = payloads.len();
    let mut g = c.benchmark_group("envelopes");
    g.throughput(Throughput::Bytes(total as u64));
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    g.bench_function(BenchmarkId::new("serde_json-borrowed-typed", "each"), |b| {
        b.iter(|| {
            let mut k = 0;
            for p in &payloads {
                let text = std::str::from_utf8(p).expect("utf-8");
                let c: EnvChunk<'_> = serde_json::from_str(text).expect("valid");
                for choice in c.choices {
                    for call in choice.delta.and_then(|d| d.tool_calls).unwrap_or_default() {
                        std::hint::black_box(call.function.and_then(|f| f.arguments));
                    }
                }
                k += 1;
            }
            assert_eq!(k, n)
        })
    });
    g.bench_function(BenchmarkId::new("toolstream-cursor", "each"), |b| {
        // A fresh decoder per payload: no remembered envelope prefix, every byte read.
        b.iter(|| {
            let mut k = 0;
            let mut out = Vec::new();
            for p in &payloads {
                toolstream::provider::openai_chat::Decoder::default().decode(p, &mut out);
                assert!(matches!(out.first(), Some(d) if !matches!(d, Delta::Error { .. } | Delta::Undecodable { .. })));
                out.clear();
                k += 1;
            }
            assert_eq!(k, n)
        })
    });
    g.bench_function(BenchmarkId::new("toolstream-cursor-stream", "each"), |b| {
        // One decoder for the payloads of a stream, as the pipeline runs it: it resumes
        // after the envelope prefix it has already read.
        b.iter(|| {
            let mut k = 0;
            let mut out = Vec::new();
            let mut d = toolstream::provider::openai_chat::Decoder::default();
            for p in &payloads {
                d.decode(p, &mut out);
                assert!(matches!(out.first(), Some(d) if !matches!(d, Delta::Error { .. } | Delta::Undecodable { .. })));
                out.clear();
                k += 1;
            }
            assert_eq!(k, n)
        })
    });
    g.bench_function(BenchmarkId::new("simd-json-tape", "each"), |b| {
        let mut scratch = Vec::new();
        let mut buffers = simd_json::Buffers::new(1024);
        b.iter(|| {
            let mut k = 0;
            for p in &payloads {
                scratch.clear();
                scratch.extend_from_slice(p);
                let tape =
                    simd_json::to_tape_with_buffers(&mut scratch, &mut buffers).expect("valid");
                std::hint::black_box(&tape);
                k += 1;
            }
            assert_eq!(k, n)
        })
    });
    g.finish();

    // The same sides interleaved (`common::interleaved`), response by response: the
    // back-to-back rows above drift with this machine's load (the simd-json row has read
    // 0.30 and 0.54 GB/s in two runs of the same binary). The stream side keeps one decoder
    // per response, as the pipeline does.
    let per_response: Vec<&[Bytes]> = {
        let mut out = Vec::new();
        let mut from = 0;
        for (i, p) in payloads.iter().enumerate() {
            let last = b"\"finish_reason\":\"";
            if p.windows(last.len()).any(|w| w == last) {
                out.push(&payloads[from..=i]);
                from = i + 1;
            }
        }
        assert_eq!(from, n, "every response ends with its finish reason");
        out
    };
    let r = &per_response;
    let mut scratch = Vec::new();
    let mut buffers = simd_json::Buffers::new(1024);
    let sides: Vec<Side<'_>> = vec![
        (
            "serde",
            Box::new(|k| {
                for p in r[k] {
                    let text = std::str::from_utf8(p).expect("utf-8");
                    let c: EnvChunk<'_> = serde_json::from_str(text).expect("valid");
                    for choice in c.choices {
                        for call in choice.delta.and_then(|d| d.tool_calls).unwrap_or_default() {
                            std::hint::black_box(call.function.and_then(|f| f.arguments));
                        }
                    }
                }
                r[k].len()
            }),
        ),
        (
            "cursor",
            Box::new(|k| {
                let mut out = Vec::new();
                for p in r[k] {
                    toolstream::provider::openai_chat::Decoder::default().decode(p, &mut out);
                    assert!(
                        matches!(out.first(), Some(d) if !matches!(d, Delta::Error { .. } | Delta::Undecodable { .. }))
                    );
                    out.clear();
                }
                r[k].len()
            }),
        ),
        (
            "cursor-stream",
            Box::new(|k| {
                let mut out = Vec::new();
                let mut d = toolstream::provider::openai_chat::Decoder::default();
                for p in r[k] {
                    d.decode(p, &mut out);
                    assert!(
                        matches!(out.first(), Some(d) if !matches!(d, Delta::Error { .. } | Delta::Undecodable { .. }))
                    );
                    out.clear();
                }
                r[k].len()
            }),
        ),
        (
            "simd-json-tape",
            Box::new(move |k| {
                for p in r[k] {
                    scratch.clear();
                    scratch.extend_from_slice(p);
                    let tape =
                        simd_json::to_tape_with_buffers(&mut scratch, &mut buffers).expect("valid");
                    std::hint::black_box(&tape);
                }
                r[k].len()
            }),
        ),
    ];
    interleaved::run(c, "envelopes-interleaved", total, r.len(), n, sides);
}

criterion_group!(benches, bench_pipeline, bench_envelopes);
criterion_main!(benches);
