//! Instruction counts for the splitter, repeatable where wall time on a shared machine is
//! not: `scripts/instructions.sh` runs this under `valgrind --tool=callgrind` once per
//! mode and subtracts the `none` run (generating the corpus).
//!
//! `cargo run --release -p toolstream-benches --example instructions -- MODE [CHUNK]`, with `MODE` one of
//! `none`, `toolstream`, `toolstream-slices` (chunks through `push_slice`), `serde_json`, `byte-loop`, `byte-loop-values` and `slices` (cutting the chunks only),
//! on the benches' splitter corpus (`TOOLSTREAM_BENCH_MB` MiB, default 2; only the objects
//! of one kind with `TOOLSTREAM_BENCH_KIND`, see below); or
//! `pipeline-none`, `pipeline-toolstream`, `pipeline-reference` on the pipeline benches'
//! stream, `pipeline-anthropic-none` and `pipeline-anthropic` on the same calls streamed as
//! Anthropic events, `pipeline-responses-none`, `pipeline-responses` and
//! `pipeline-responses-reference` on them as OpenAI Responses events,
//! `pipeline-reasoning-none`, `pipeline-reasoning` and `pipeline-reasoning-reference` on
//! the OpenAI chat stream with reasoning deltas before each call; or `envelopes-none`,
//! `envelopes-fresh` (a decoder per payload), `envelopes-stream` (one per response) on that
//! stream's `data:` payloads; or `sse-none`, `sse-toolstream`, `sse-sse-stream`, each
//! with a chunk size in bytes, on the SSE benches' stream; or `preview-none`,
//! `preview-splitter` (the strict check alone) and `preview-toolstream` (`json::Preview`,
//! the view read after every delta) on 1 MiB of code-like string argument in 16-byte deltas.

mod common;

use common::splitter::{
    byte_loop_chunks, byte_loop_values_chunks, corpus_of, toolstream_chunks, toolstream_slices,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("toolstream");
    if let Some(side) = mode.strip_prefix("pipeline-") {
        return pipeline(side);
    }
    if let Some(side) = mode.strip_prefix("envelopes-") {
        return envelopes(side);
    }
    if let Some(side) = mode.strip_prefix("sse-") {
        return sse(side, args.get(2).map(String::as_str));
    }
    if let Some(side) = mode.strip_prefix("preview-") {
        return preview(side);
    }
    let chunk = args
        .get(2)
        .map(|c| c.parse().expect("CHUNK is a number of bytes"))
        .unwrap_or(usize::MAX);
    // `TOOLSTREAM_BENCH_KIND=K`: only objects of kind K (0 commands, 1 file contents, 2 edit
    // lists, 3 number arrays), for a profile by kind.
    let kind = std::env::var("TOOLSTREAM_BENCH_KIND")
        .ok()
        .map(|k| k.parse().expect("TOOLSTREAM_BENCH_KIND is 0..=3"));
    let (input, n) = corpus_of(common::corpus_bytes(2), false, kind);
    let found = match mode {
        "none" => n,
        "toolstream" => toolstream_chunks(&input, chunk),
        "toolstream-slices" => toolstream_slices(&input, chunk),
        "serde_json" => {
            let mut k = 0;
            for r in
                serde_json::Deserializer::from_slice(&input).into_iter::<serde::de::IgnoredAny>()
            {
                r.expect("valid corpus");
                k += 1;
            }
            k
        }
        "byte-loop" => byte_loop_chunks(&input, chunk),
        "byte-loop-values" => byte_loop_values_chunks(&input, chunk),
        "slices" => {
            let mut i = 0;
            while i < input.len() {
                let j = i.saturating_add(chunk).min(input.len());
                std::hint::black_box(input.slice(i..j));
                i = j;
            }
            n
        }
        _ => panic!("unknown mode {mode}"),
    };
    assert_eq!(found, n, "{mode} found {found} values, the corpus has {n}");
    std::hint::black_box(&input);
}

/// The pipeline benches' stream (`TOOLSTREAM_BENCH_MB` MiB, default 2) in 4 KiB chunks:
/// `none` (building it only), `toolstream` or `reference`; or the same calls as an
/// Anthropic stream: `anthropic-none`, `anthropic` (toolstream), `anthropic-reference`; or
/// as an OpenAI Responses stream: `responses-none`, `responses` (toolstream),
/// `responses-reference`; or the OpenAI chat stream of a reasoning model (reasoning deltas
/// before each call): `reasoning-none`, `reasoning` (toolstream), `reasoning-reference`.
fn pipeline(side: &str) {
    use common::pipeline as p;
    use toolstream::provider::Format;
    type Corpus = fn(usize) -> (Vec<bytes::Bytes>, usize);
    type Reference = fn(&[bytes::Bytes], usize) -> usize;
    // Which stream the side names, and what runs on it.
    let (stream, run) = match side {
        "none" | "toolstream" | "reference" => ("chat", side),
        s => s.split_once('-').unwrap_or((s, "toolstream")),
    };
    let (corpus, format, reference): (Corpus, Format, Reference) = match stream {
        "chat" => (p::corpus, Format::OpenAiChat, p::reference),
        "reasoning" => (p::reasoning_corpus, Format::OpenAiChat, p::reference),
        "anthropic" => (
            p::anthropic_corpus,
            Format::Anthropic,
            p::anthropic_reference,
        ),
        "responses" => (
            p::responses_corpus,
            Format::OpenAiResponses,
            p::responses_reference,
        ),
        _ => panic!("unknown pipeline side {side}"),
    };
    let (responses, calls) = corpus(common::corpus_bytes(2));
    let found = match run {
        "none" => calls,
        "toolstream" => p::toolstream_pipeline_as(&responses, 4096, format),
        "reference" => reference(&responses, 4096),
        _ => panic!("unknown pipeline side {side}"),
    };
    assert_eq!(
        found, calls,
        "{side} found {found} calls, the stream has {calls}"
    );
    std::hint::black_box(&responses);
}

/// The `data:` payloads of the pipeline benches' stream, each decoded by the OpenAI chat
/// decoder: `none` (building them only), `fresh` (a decoder per payload) or `stream` (one
/// decoder per response, as the pipeline runs it).
fn envelopes(side: &str) {
    use toolstream::provider::openai_chat::Decoder;
    let (responses, _) = common::pipeline::corpus(common::corpus_bytes(2));
    let payloads: Vec<Vec<&[u8]>> = responses
        .iter()
        .map(|r| {
            r.split(|&b| b == b'\n')
                .filter_map(|l| l.strip_prefix(b"data: "))
                .collect()
        })
        .collect();
    let mut out = Vec::new();
    let mut deltas = 0;
    for response in &payloads {
        let mut d = Decoder::default();
        for p in response {
            match side {
                "none" => {}
                "fresh" => Decoder::default().decode(p, &mut out),
                "stream" => d.decode(p, &mut out),
                _ => panic!("unknown envelopes side {side}"),
            }
            deltas += out.len();
            out.clear();
        }
    }
    std::hint::black_box(deltas);
}

/// The SSE benches' stream (`TOOLSTREAM_BENCH_MB` MiB, default 2) cut into `chunk`-byte
/// chunks: `none` (building and cutting it only), `toolstream` or `sse-stream`.
fn sse(side: &str, chunk: Option<&str>) {
    use common::sse as s;
    let chunk: usize = chunk
        .map(|c| c.parse().expect("CHUNK is a number of bytes"))
        .unwrap_or(1024);
    let (input, events) = s::sse_corpus(common::corpus_bytes(2));
    let chunks = s::cut(&input, chunk);
    let found = match side {
        "none" => events,
        "toolstream" => s::toolstream_sse(&chunks),
        "sse-stream" => s::sse_stream_peer(&chunks),
        _ => panic!("unknown sse side {side}"),
    };
    assert_eq!(found, events, "{side} found {found} events");
    std::hint::black_box(&chunks);
}

/// One arguments object of about 1 MiB (a file's content: code with an escape every few
/// bytes) in 16-byte deltas: `none` (building it only), `splitter` (the strict splitter
/// alone, as the preview runs it) or `toolstream` (`json::Preview`, the view read after
/// every delta).
fn preview(side: &str) {
    use toolstream::json::{Mode, Preview, Splitter};
    let mut s = String::from("{\"path\":\"a.rs\",\"content\":\"");
    while s.len() < (1 << 20) {
        s.push_str("fn main() {\\n    println!(\\\"caf\\u00e9 {}\\\", 42);\\n}\\n");
    }
    s.push_str("\"}");
    let values = match side {
        "none" => 1,
        "splitter" => {
            let mut sp = Splitter::new(Mode::Objects);
            let mut out = Vec::new();
            for d in s.as_bytes().chunks(16) {
                sp.push_slice(d, &mut out).expect("valid");
            }
            out.len()
        }
        "toolstream" => {
            let mut p = Preview::new(Mode::Objects);
            let mut done = Vec::new();
            for d in s.as_bytes().chunks(16) {
                p.push(d, &mut done).expect("valid");
                std::hint::black_box(p.partial());
            }
            done.len()
        }
        _ => panic!("unknown preview side {side}"),
    };
    assert_eq!(values, 1);
    std::hint::black_box(&s);
}
