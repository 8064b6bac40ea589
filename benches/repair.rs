//! Repair of broken tool-call arguments beside the Rust ports of the whole-text repair
//! libraries, on the same bytes, interleaved (`repair-interleaved`):
//!
//! * `toolstream-repair`: [`toolstream::repair::repair`], every kind on;
//! * `llm_json`: `llm_json::repair_json` (a port of Python's `json_repair`);
//! * `jsonrepair-rs`: `jsonrepair_rs::jsonrepair` (a port of JS's `jsonrepair`).
//!
//! The corpus: arguments of a file-writing tool (a path, ~600 bytes of code with quotes
//! and newlines, a line number, a flag), each written with one mistake of a closed-form
//! kind, checked before timing (the per-kind counts are printed); the timing takes the
//! kinds that every side repairs to the original value. Items: arguments repaired.

mod common;

use common::interleaved::{self, Side};
use common::Rng;
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};
use toolstream::repair::{repair, RepairPolicy};

fn arguments(rng: &mut Rng) -> Value {
    let mut code = String::new();
    while code.len() < 600 {
        let line = match rng.below(4) {
            0 => "fn main() { println!(\"hello, world\"); }\n",
            1 => "    let x = compute(&items, 42); // why not\n",
            2 => "    if x > 0 { return Err(\"negative\".into()); }\n",
            _ => "use std::collections::HashMap;\n",
        };
        code.push_str(line);
    }
    json!({
        "path": format!("src/module_{}.rs", rng.below(1000)),
        "content": code,
        "line": rng.below(5000),
        "create": rng.below(2) == 0,
        "mode": null,
    })
}

/// How a kind writes an object (given as compact JSON) with its mistake.
type Write = fn(&str) -> String;

/// The kinds, each with how it writes the object.
const KINDS: &[(&str, Write)] = &[
    ("trailing_comma", |t| format!("{},}}", &t[..t.len() - 1])),
    ("single_quotes_key", |t| t.replacen("\"path\"", "'path'", 1)),
    ("unquoted_key", |t| t.replacen("\"line\"", "line", 1)),
    ("literal", |t| t.replacen("null", "None", 1)),
    ("comment", |t| format!("{{ /* arguments */ {}", &t[1..])),
    ("fence", |t| format!("```json\n{t}\n```")),
    ("prose", |t| {
        format!("Sure! Here are the arguments:\n{t}\nLet me know if you need more.")
    }),
];

fn same(out: Option<String>, v: &Value) -> bool {
    out.and_then(|s| serde_json::from_str::<Value>(&s).ok())
        .is_some_and(|o| &o == v)
}

fn ours(text: &str) -> Option<String> {
    repair(text.as_bytes(), RepairPolicy::all())
        .ok()
        .map(|r| String::from_utf8(r.arguments.to_vec()).unwrap())
}

fn llm(text: &str) -> Option<String> {
    llm_json::repair_json(text, &llm_json::RepairOptions::default()).ok()
}

fn jsr(text: &str) -> Option<String> {
    jsonrepair_rs::jsonrepair(text).ok()
}

fn bench(c: &mut Criterion) {
    let mut rng = Rng(0x5eed_1234);
    let mut corpus = Vec::new();
    let mut values = Vec::new();
    let total = common::corpus_bytes(4);
    let mut bytes = 0;
    while bytes < total {
        for (_, write) in KINDS {
            let v = arguments(&mut rng);
            let text = write(&serde_json::to_string(&v).unwrap());
            bytes += text.len();
            corpus.push(text);
            values.push(v);
        }
    }
    // Correctness first, untimed: each side on each kind; the timing takes the kinds
    // every side restores.
    let mut timed = Vec::new();
    for (k, (kind, _)) in KINDS.iter().enumerate() {
        let idx: Vec<usize> = (k..corpus.len()).step_by(KINDS.len()).collect();
        let count = |f: fn(&str) -> Option<String>| {
            idx.iter()
                .filter(|&&i| same(f(&corpus[i]), &values[i]))
                .count()
        };
        let (a, b, c) = (count(ours), count(llm), count(jsr));
        println!(
            "{kind}: restored by toolstream {a}/{n}, llm_json {b}/{n}, jsonrepair-rs {c}/{n}",
            n = idx.len()
        );
        if a == idx.len() && b == idx.len() && c == idx.len() {
            timed.extend(idx);
        } else {
            println!("  ({kind} left out of the timing: not every side restores it)");
        }
    }
    timed.sort_unstable();
    let corpus: Vec<String> = timed.into_iter().map(|i| corpus[i].clone()).collect();
    let total_bytes: usize = corpus.iter().map(String::len).sum();
    let cs = &corpus;
    let sides: Vec<Side<'_>> = vec![
        (
            "toolstream-repair",
            Box::new(|k| ours(&cs[k]).is_some() as usize),
        ),
        ("llm_json", Box::new(|k| llm(&cs[k]).is_some() as usize)),
        (
            "jsonrepair-rs",
            Box::new(|k| jsr(&cs[k]).is_some() as usize),
        ),
    ];
    interleaved::run(
        c,
        "repair-interleaved",
        total_bytes,
        cs.len(),
        cs.len(),
        sides,
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
