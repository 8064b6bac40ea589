//! Calls written into the text (`text_calls`), in the whole pipeline, interleaved:
//!
//! * `text-calls-plain-interleaved`: prose with no markup (code-ish `<` and `[` now and
//!   then), OpenAI chat chunks of 16-byte content deltas in 4 KiB network pieces: the
//!   pipeline with `text_calls` on (auto, two tools declared) beside the same pipeline with
//!   it off. Items: text bytes delivered (the same on both sides).
//! * `text-calls-markup-interleaved`: the same prose with Hermes `<tool_call>` blocks in it
//!   (a call every ~600 bytes of text): the pipeline with `text_calls` on, beside the peers'
//!   way on the pipeline's text events — a regex over the whole text once it ended, and a
//!   regex over the text so far at every delta (what whole-text parsers run while
//!   streaming). Items: calls found (each one checked to be a declared tool with an object
//!   of arguments).
//! * `text-calls-peer-plain-interleaved` and `text-calls-peer-markup-interleaved`: the
//!   same texts in 16-byte deltas straight into the extractor (auto), beside the Rust peer,
//!   the `tool-parser` crate's Qwen parser (`parse_incremental`, which reads the same
//!   `<tool_call>` markup), each response driven in one `block_on`. Items: text bytes
//!   handed back (plain) and calls found (markup). With `--features tool-parser` only:
//!   `cargo bench -p toolstream-benches --features tool-parser --bench text_calls -- peer`.

mod common;

use bytes::Bytes;
use common::interleaved::{self, Side};
use common::Rng;
use criterion::{criterion_group, criterion_main, Criterion};
use regex::Regex;
use toolstream::assemble::Event;
use toolstream::pipeline::Stream;
use toolstream::provider::Format;
use toolstream::text_calls::Tools;

const WORDS: &[&str] = &[
    "the",
    "stream",
    "of",
    "a",
    "model",
    "writes",
    "its",
    "answer",
    "while",
    "tokens",
    "arrive",
    "and",
    "each",
    "delta",
    "is",
    "small",
    "so",
    "parsers",
    "must",
    "be",
    "incremental",
    "weather",
    "in",
    "Paris",
    "is",
    "mild",
    "today,",
    "with",
    "rain.",
    "Let",
    "me",
    "check",
    "that",
    "for",
    "you.",
    "`a < b`",
    "[1]",
    "x[i]",
    "(see",
    "below)",
];

fn prose(rng: &mut Rng, bytes: usize) -> String {
    let mut s = String::new();
    while s.len() < bytes {
        s.push_str(rng.pick(WORDS));
        s.push(if rng.below(12) == 0 { '\n' } else { ' ' });
    }
    s
}

fn call(rng: &mut Rng) -> String {
    let city = rng.pick(&["Paris", "Tokyo", "Lagos", "Lima", "Oslo"]);
    let days = rng.below(7) + 1;
    format!(
        "<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{city}\", \"days\": {days}}}}}\n</tool_call>"
    )
}

/// One response: `text` in 16-byte content deltas (on character boundaries) as OpenAI
/// chat chunks, then a finish and `[DONE]`.
fn sse(text: &str) -> Bytes {
    let mut out = String::new();
    let mut i = 0;
    while i < text.len() {
        let mut j = (i + 16).min(text.len());
        while !text.is_char_boundary(j) {
            j += 1;
        }
        let chunk = serde_json::json!({
            "id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1764900000,
            "model": "Qwen/Qwen2.5-7B-Instruct",
            "choices": [{"index": 0, "delta": {"content": &text[i..j]}, "finish_reason": null}],
        });
        out.push_str(&format!("data: {chunk}\n\n"));
        i = j;
    }
    out.push_str("data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1764900000,\"model\":\"Qwen/Qwen2.5-7B-Instruct\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    Bytes::from(out)
}

fn tools() -> Tools {
    Tools::from_request(&serde_json::json!({"tools": [
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}}
    ]}))
}

/// Run one response through a pipeline (text calls on with `tools`), 4 KiB pieces; `each`
/// sees every event.
fn run(body: &Bytes, tools: Option<&Tools>, mut each: impl FnMut(&Event)) {
    let mut s = Stream::new(Some(Format::OpenAiChat));
    if let Some(t) = tools {
        s = s.with_text_calls(None, t.clone());
    }
    let mut events = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let j = (i + 4096).min(body.len());
        s.push(body.slice(i..j), &mut events);
        events.iter().for_each(&mut each);
        events.clear();
        i = j;
    }
    s.finish(&mut events);
    events.iter().for_each(&mut each);
}

fn text_bytes(body: &Bytes, tools: Option<&Tools>) -> usize {
    let mut n = 0;
    run(body, tools, |e| {
        if let Event::Text { text, .. } = e {
            n += text.len();
        }
    });
    n
}

fn toolstream_calls(body: &Bytes, tools: &Tools) -> usize {
    let mut n = 0;
    run(body, Some(tools), |e| {
        if let Event::ToolCall(c) = e {
            n += usize::from(tools.contains(&c.name));
        }
    });
    n
}

/// The calls a regex finds in `text`: each body read with serde_json, its name declared
/// and its arguments an object.
fn regex_calls(re: &Regex, tools: &Tools, text: &str) -> usize {
    re.captures_iter(text)
        .filter(|c| {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&c[1]) else {
                return false;
            };
            v["name"].as_str().is_some_and(|n| tools.contains(n)) && v["arguments"].is_object()
        })
        .count()
}

/// The peers' way: the pipeline's text, then a regex over the whole text at its end.
fn regex_at_end(body: &Bytes, re: &Regex, tools: &Tools) -> usize {
    let mut text = String::new();
    run(body, None, |e| {
        if let Event::Text { text: t, .. } = e {
            text.push_str(t);
        }
    });
    regex_calls(re, tools, &text)
}

/// The streaming peers' way: after every delta, the regex over the text so far; a call
/// counts once it is found.
fn regex_per_delta(body: &Bytes, re: &Regex, tools: &Tools) -> usize {
    let mut text = String::new();
    let mut found = 0;
    run(body, None, |e| {
        if let Event::Text { text: t, .. } = e {
            text.push_str(t);
            found = found.max(regex_calls(re, tools, &text));
        }
    });
    found
}

fn bench(c: &mut Criterion) {
    let total = common::corpus_bytes(16);
    let mut rng = Rng(0x7e57_ca11);
    // Responses of about 8 KiB of text each.
    let mut plain = Vec::new();
    let mut marked = Vec::new();
    let mut bytes = 0;
    while bytes < total {
        let text = prose(&mut rng, 8192);
        let body = sse(&text);
        bytes += body.len();
        plain.push(body);
        let mut with = String::new();
        for _ in 0..12 {
            with.push_str(&prose(&mut rng, 600));
            with.push_str(&call(&mut rng));
        }
        marked.push(sse(&with));
    }
    let tools = tools();
    let t = &tools;
    let plain_bytes: usize = plain.iter().map(Bytes::len).sum();
    let text_total: usize = plain.iter().map(|b| text_bytes(b, None)).sum();
    let p = &plain;
    let sides: Vec<Side<'_>> = vec![
        ("text_calls-off", Box::new(|k| text_bytes(&p[k], None))),
        ("text_calls-on", Box::new(|k| text_bytes(&p[k], Some(t)))),
    ];
    interleaved::run(
        c,
        "text-calls-plain-interleaved",
        plain_bytes,
        p.len(),
        text_total,
        sides,
    );

    let re = Regex::new(r"(?s)<tool_call>\s*(\{.*?\})\s*</tool_call>").unwrap();
    let re = &re;
    // The per-delta rescans are quadratic: a slice of the corpus is enough to show it.
    let m = &marked[..marked.len().min(64)];
    let marked_bytes: usize = m.iter().map(Bytes::len).sum();
    let sides: Vec<Side<'_>> = vec![
        (
            "toolstream-text_calls",
            Box::new(|k| toolstream_calls(&m[k], t)),
        ),
        ("regex-at-end", Box::new(|k| regex_at_end(&m[k], re, t))),
        (
            "regex-per-delta",
            Box::new(|k| regex_per_delta(&m[k], re, t)),
        ),
    ];
    interleaved::run(
        c,
        "text-calls-markup-interleaved",
        marked_bytes,
        m.len(),
        12 * m.len(),
        sides,
    );
}

#[cfg(feature = "tool-parser")]
/// `text` in 16-byte deltas, on character boundaries.
fn deltas(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let mut j = (i + 16).min(text.len());
        while !text.is_char_boundary(j) {
            j += 1;
        }
        out.push(text[i..j].to_string());
        i = j;
    }
    out
}

#[cfg(feature = "tool-parser")]
/// Ours on one response's deltas: text bytes handed back, calls found.
fn extractor(deltas: &[String], tools: &Tools) -> (usize, usize) {
    let mut x = toolstream::text_calls::Extractor::new(None, tools.clone());
    let mut out = Vec::new();
    let (mut text, mut calls) = (0, 0);
    let mut count = |out: &mut Vec<toolstream::text_calls::Piece>| {
        for p in out.drain(..) {
            match p {
                toolstream::text_calls::Piece::Text(t) => text += t.len(),
                toolstream::text_calls::Piece::Call { .. } => calls += 1,
                toolstream::text_calls::Piece::Failed { .. } => {}
            }
        }
    };
    for d in deltas {
        x.push(d, &mut out);
        count(&mut out);
    }
    x.finish(&mut out);
    count(&mut out);
    (text, calls)
}

#[cfg(feature = "tool-parser")]
/// The peer on one response's deltas: text bytes handed back, calls found (a call's first
/// item names it).
fn peer(
    rt: &tokio::runtime::Runtime,
    deltas: &[String],
    tools: &[openai_protocol::common::Tool],
) -> (usize, usize) {
    use tool_parser::ToolParser;
    rt.block_on(async {
        let mut p = tool_parser::QwenParser::new();
        let (mut text, mut calls) = (0, 0);
        for d in deltas {
            let r = p
                .parse_incremental(d, tools)
                .await
                .expect("the peer's parse");
            text += r.normal_text.len();
            calls += r.calls.iter().filter(|c| c.name.is_some()).count();
        }
        (text, calls)
    })
}

#[cfg(feature = "tool-parser")]
fn bench_peer(c: &mut Criterion) {
    let total = common::corpus_bytes(16);
    let mut rng = Rng(0x7e57_ca11);
    let (mut plain, mut marked) = (Vec::new(), Vec::new());
    let mut bytes = 0;
    while bytes < total {
        let text = prose(&mut rng, 8192);
        bytes += text.len();
        plain.push(deltas(&text));
        let mut with = String::new();
        for _ in 0..12 {
            with.push_str(&prose(&mut rng, 600));
            with.push_str(&call(&mut rng));
        }
        marked.push(deltas(&with));
    }
    let tools = tools();
    let peer_tools: Vec<openai_protocol::common::Tool> = serde_json::from_value(serde_json::json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}}
    ]))
    .expect("tools");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let (t, pt, rt) = (&tools, &peer_tools, &rt);
    for (group, corpus, calls) in [
        ("text-calls-peer-plain-interleaved", &plain, false),
        ("text-calls-peer-markup-interleaved", &marked, true),
    ] {
        let text_bytes: usize = corpus.iter().flatten().map(String::len).sum();
        let item = move |(text, n): (usize, usize)| if calls { n } else { text };
        let expected: usize = corpus.iter().map(|d| item(extractor(d, t))).sum();
        let sides: Vec<Side<'_>> = vec![
            (
                "toolstream-extractor",
                Box::new(move |k| item(extractor(&corpus[k], t))),
            ),
            (
                "tool-parser-qwen",
                Box::new(move |k| item(peer(rt, &corpus[k], pt))),
            ),
        ];
        interleaved::run(c, group, text_bytes, corpus.len(), expected, sides);
    }
}

#[cfg(feature = "tool-parser")]
criterion_group!(benches, bench, bench_peer);
#[cfg(not(feature = "tool-parser"))]
criterion_group!(benches, bench);
criterion_main!(benches);
