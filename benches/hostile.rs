//! Group `hostile`: the pipeline on adversarial shapes at 1 KiB, 64 KiB, 1 MiB and 4 MiB,
//! one push each. Linear work means the throughput is flat across the sizes; a quadratic
//! step shows as a throughput that falls by the size ratio (64× from 64 KiB to 4 MiB).
//! Shapes: one delta with the `content` key repeated, one delta with many
//! `reasoning_details` elements, one call's arguments as many glued objects, one delta with
//! many tool calls of distinct indices, many Gemini `partialArgs` entries on deep paths,
//! and many empty `data:` events; and, with calls written into the text taken out, a
//! closed `<tool_call>` object followed by one-space content deltas, Mistral's `[ARGS]`
//! followed by one-space deltas, and one MiniMax `<invoke>` with many parameters and a long
//! run of spaces.
//! Run: `cargo bench -p toolstream-benches --bench hostile` (see BENCHMARKS.md).

use std::hint::black_box;
use std::time::Duration;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use toolstream::assemble::Event;
use toolstream::pipeline::Stream;
use toolstream::text_calls::Tools;

/// `n` copies of `unit` joined by `sep`, inside `head` and `tail`, at least `size` bytes.
fn fill(head: &str, unit: &str, sep: &str, tail: &str, size: usize) -> Bytes {
    let n = (size / (unit.len() + sep.len())).max(1);
    let mut s = String::with_capacity(size + head.len() + tail.len());
    s.push_str(head);
    for k in 0..n {
        if k > 0 {
            s.push_str(sep);
        }
        s.push_str(unit);
    }
    s.push_str(tail);
    Bytes::from(s)
}

fn shapes(size: usize) -> Vec<(&'static str, Bytes)> {
    let chat = |inner: &str| format!(r#"data: {{"choices":[{{"index":0,"delta":{{{inner}"#);
    let glued: String = (0..size / 8)
        .map(|i| format!(r#"{{"a":{}}}"#, i % 10))
        .collect();
    let glued = format!(
        "data: {}\n\ndata: [DONE]\n\n",
        serde_json::json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":glued}}]}}]})
    );
    let slots: String = (0..size / 40)
        .map(|i| format!(r#"{{"index":{i},"function":{{"arguments":"{{}}"}}}},"#))
        .collect();
    let slots = format!(
        "{}{}]}}}}]}}\n\ndata: [DONE]\n\n",
        chat(r#""tool_calls":["#),
        slots.trim_end_matches(',')
    );
    let path = format!("${}", ".a".repeat(100));
    let entry = format!(r#"{{"jsonPath":"{path}","numberValue":1}}"#);
    vec![
        (
            "repeated_key",
            fill(
                &chat(""),
                r#""content":"x""#,
                ",",
                "}}]}\n\ndata: [DONE]\n\n",
                size,
            ),
        ),
        (
            "many_elements",
            fill(
                &chat(r#""reasoning_details":["#),
                "{}",
                ",",
                "]}}]}\n\ndata: [DONE]\n\n",
                size,
            ),
        ),
        ("glued_objects", Bytes::from(glued)),
        ("many_slots", Bytes::from(slots)),
        (
            "deep_paths",
            fill(
                r#"data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true,"partialArgs":["#,
                &entry,
                ",",
                "]}}]}}]}\n\n",
                size,
            ),
        ),
        (
            "empty_events",
            fill("", "data:\n\n", "", "data: [DONE]\n\n", size),
        ),
    ]
}

/// The shapes whose calls are written into the text: each content delta one event.
fn text_shapes(size: usize) -> Vec<(&'static str, Bytes)> {
    let delta = |t: &str| {
        format!(
            "data: {}\n\n",
            serde_json::json!({"choices":[{"index":0,"delta":{"content":t}}]})
        )
    };
    let spaces = |head: &str, tail: &str| {
        let one = delta(" ");
        let mut s = delta(head);
        for _ in 0..size / one.len() {
            s.push_str(&one);
        }
        s.push_str(&delta(tail));
        s.push_str("data: [DONE]\n\n");
        Bytes::from(s)
    };
    let mut invoke = String::from("<minimax:tool_call>\n<invoke name=\"f\">\n");
    for i in 0..size / 100 {
        invoke.push_str(&format!("<parameter name=\"p{i}\">1</parameter>"));
    }
    invoke.push_str(&" ".repeat(size / 2));
    invoke.push_str("</invoke>\n</minimax:tool_call>");
    vec![
        (
            "hermes_spaces",
            spaces(r#"<tool_call>{"name":"f","arguments":{}}"#, "</tool_call>"),
        ),
        ("mistral_spaces", spaces("[TOOL_CALLS]f[ARGS]", "{}")),
        (
            "minimax_params",
            Bytes::from(delta(&invoke) + "data: [DONE]\n\n"),
        ),
    ]
}

fn run(input: &Bytes, text: bool) -> usize {
    let mut s = Stream::new(None);
    if text {
        s = s.with_text_calls(None, Tools::from_names(["f"]));
    }
    let mut out: Vec<Event> = Vec::new();
    s.push(input.clone(), &mut out);
    s.finish(&mut out);
    out.len()
}

fn bench_hostile(c: &mut Criterion) {
    let mut g = c.benchmark_group("hostile");
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_secs(2));
    for (label, size) in [
        ("1KiB", 1 << 10),
        ("64KiB", 64 << 10),
        ("1MiB", 1 << 20),
        ("4MiB", 4 << 20),
    ] {
        let all = shapes(size)
            .into_iter()
            .map(|(n, b)| (n, b, false))
            .chain(text_shapes(size).into_iter().map(|(n, b)| (n, b, true)));
        for (shape, input, text) in all {
            assert!(run(&input, text) > 0);
            g.throughput(Throughput::Bytes(input.len() as u64));
            g.bench_function(BenchmarkId::new(shape, label), |b| {
                b.iter(|| black_box(run(black_box(&input), text)))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_hostile);
criterion_main!(benches);
