//! Group `hostile`: the pipeline on adversarial shapes at 1 KiB, 64 KiB, 1 MiB and 4 MiB,
//! one push each. Linear work means the throughput is flat across the sizes; a quadratic
//! step shows as a throughput that falls by the size ratio (64× from 64 KiB to 4 MiB).
//! Shapes: one delta with the `content` key repeated, one delta with many
//! `reasoning_details` elements, one call's arguments as many glued objects, one delta with
//! many tool calls of distinct indices, many Gemini `partialArgs` entries on deep paths,
//! and many empty `data:` events.
//! Run: `cargo bench -p toolstream-benches --bench hostile` (see BENCHMARKS.md).

use std::hint::black_box;
use std::time::Duration;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use toolstream::assemble::Event;
use toolstream::pipeline::Stream;

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

fn run(input: &Bytes) -> usize {
    let mut s = Stream::new(None);
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
        for (shape, input) in shapes(size) {
            assert!(run(&input) > 0);
            g.throughput(Throughput::Bytes(input.len() as u64));
            g.bench_function(BenchmarkId::new(shape, label), |b| {
                b.iter(|| black_box(run(black_box(&input))))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_hostile);
criterion_main!(benches);
