//! The streams recorded from real providers by the Vercel AI SDK project, shipped in
//! tests/data/vercel-ai (Apache-2.0, its licence and README beside them), replayed as wire
//! bytes through `pipeline::Stream` at chunk sizes whole, 1, 7 and 64. The expectations
//! below were written by reading each capture, not by running the code.

use crate::common;

use std::path::PathBuf;

use bytes::Bytes;
use serde_json::{json, Value};
use toolstream::assemble::Event;
use toolstream::pipeline::Stream;

fn dir() -> PathBuf {
    common::data_dir("vercel-ai")
}

/// Wrap each payload line as its provider sends it (the captures README's rules).
fn wire(name: &str, text: &str) -> Bytes {
    let mut out = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if name.starts_with("anthropic")
            || name.starts_with("azure")
            || name.starts_with("open-responses")
            || name.starts_with("openai__")
        {
            let v: Value = serde_json::from_str(line).expect("capture line is JSON");
            let ty = v["type"].as_str().unwrap_or("message");
            out.push_str(&format!("event: {ty}\ndata: {line}\n\n"));
        } else if name.starts_with("google") {
            out.push_str(&format!("data: {line}\r\n\r\n"));
        } else {
            out.push_str(&format!("data: {line}\n\n"));
        }
    }
    Bytes::from(out)
}

struct Seen {
    calls: Vec<(String, Value)>,
    failures: usize,
    errors: Vec<String>,
    finish: Option<String>,
    complete: bool,
    text: String,
    reasoning: String,
    signatures: Vec<String>,
    reasoning_items: Vec<Value>,
}

fn replay(input: &Bytes, chunk: usize) -> Seen {
    let events = common::pipeline_events(None, input, chunk);
    let mut seen = Seen {
        calls: vec![],
        failures: 0,
        errors: vec![],
        finish: None,
        complete: false,
        text: String::new(),
        reasoning: String::new(),
        signatures: vec![],
        reasoning_items: vec![],
    };
    for e in events {
        match e {
            Event::ToolCall(c) => seen.calls.push((
                c.name,
                serde_json::from_slice(&c.arguments).expect("valid arguments"),
            )),
            Event::ToolCallFailed(_) => seen.failures += 1,
            Event::ProviderError { message, .. } => seen.errors.push(message),
            Event::Finish { reason, .. } => seen.finish = Some(reason.as_str().to_string()),
            Event::End { complete } => seen.complete = complete,
            Event::Text { text, .. } => seen.text.push_str(&text),
            Event::Reasoning { text, .. } => seen.reasoning.push_str(&text),
            Event::ReasoningSignature { signature, .. } => seen.signatures.push(signature),
            Event::ReasoningItem { raw, .. } => seen
                .reasoning_items
                .push(serde_json::from_str(&raw).expect("a reasoning item is JSON")),
            _ => {}
        }
    }
    seen
}

/// The reasoning text of a capture's payload lines, read with serde_json as each format
/// documents it: OpenAI-compatible `reasoning_content` (or `reasoning`) strings, Anthropic
/// `thinking_delta`s, the Responses API's reasoning text and summary deltas, Gemini's
/// `thought` parts.
fn reasoning_in(capture: &str) -> String {
    let mut out = String::new();
    let s = |v: &Value| v.as_str().filter(|t| !t.is_empty()).map(str::to_string);
    for line in capture.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).expect("capture line is JSON");
        for c in v["choices"].as_array().into_iter().flatten() {
            let d = &c["delta"];
            if let Some(t) = s(&d["reasoning_content"]).or_else(|| s(&d["reasoning"])) {
                out.push_str(&t);
            }
        }
        if v["delta"]["type"] == "thinking_delta" {
            out.push_str(v["delta"]["thinking"].as_str().unwrap_or_default());
        }
        if v["type"] == "response.reasoning_text.delta"
            || v["type"] == "response.reasoning_summary_text.delta"
        {
            out.push_str(v["delta"].as_str().unwrap_or_default());
        }
        for c in v["candidates"].as_array().into_iter().flatten() {
            for p in c["content"]["parts"].as_array().into_iter().flatten() {
                if p["thought"] == true {
                    out.push_str(p["text"].as_str().unwrap_or_default());
                }
            }
        }
    }
    out
}

/// The signatures a tool loop must send back, in the capture's order: Gemini's
/// `thoughtSignature` of each part, Anthropic's `signature_delta`s.
fn signatures_in(capture: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in capture.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).expect("capture line is JSON");
        for c in v["candidates"].as_array().into_iter().flatten() {
            for p in c["content"]["parts"].as_array().into_iter().flatten() {
                if let Some(s) = p["thoughtSignature"].as_str().filter(|s| !s.is_empty()) {
                    out.push(s.to_string());
                }
            }
        }
        if v["delta"]["type"] == "signature_delta" {
            out.push(
                v["delta"]["signature"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
        }
    }
    out
}

/// The reasoning items a stateless client must send back, in the capture's order: the
/// Responses API's `response.output_item.done` events whose item is a `reasoning` item.
fn reasoning_items_in(capture: &str) -> Vec<Value> {
    capture
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).expect("capture line is JSON"))
        .filter(|v| v["type"] == "response.output_item.done" && v["item"]["type"] == "reasoning")
        .map(|v| v["item"].clone())
        .collect()
}

/// A capture's name, the calls it must give (name, arguments), and its finish reason.
type Expectation = (&'static str, Vec<(&'static str, Value)>, &'static str);

fn sf() -> Value {
    json!({"location": "San Francisco"})
}

#[test]
fn every_real_capture_decodes_right_at_every_chunk_size() {
    let dir = dir();
    let expect: Vec<Expectation> = vec![
        (
            "alibaba__alibaba-tool-call",
            vec![("weather", sf())],
            "tool_calls",
        ),
        (
            "anthropic__anthropic-json-tool.1",
            vec![(
                "json",
                json!({"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}),
            )],
            "tool_calls",
        ),
        (
            "anthropic__anthropic-tool-no-args",
            vec![("updateIssueList", json!({}))],
            "tool_calls",
        ),
        ("anthropic__duplicate-message-start", vec![], "stop"),
        (
            "azure__azure-tool-call.1",
            vec![("weather", sf())],
            "tool_calls",
        ),
        (
            "deepseek__deepseek-tool-call",
            vec![("weather", sf())],
            "tool_calls",
        ),
        (
            "google__google-stream-no-args-tool-call",
            vec![
                ("read_theme", json!({})),
                ("read_screen", json!({"id": "A"})),
                ("read_screen", json!({"id": "B"})),
                ("read_screen", json!({"id": "C"})),
            ],
            "stop",
        ),
        (
            "google__google-stream-tool-call-arguments",
            vec![
                ("getWeather", json!({"location": "Boston"})),
                ("getWeather", json!({"location": "San Francisco"})),
            ],
            "stop",
        ),
        (
            "google__google-stream-tool-call-array-arguments-missing-terminal-function-call",
            vec![(
                "writeItems",
                json!({"operations": [
            {"action": "add", "description": "Fresh red apple", "itemid": "apple_001", "price": 0.5},
            {"action": "add", "description": "Ripe yellow banana", "itemid": "banana_001", "price": 0.3}]}),
            )],
            "stop",
        ),
        (
            "google__google-tool-call-gemini3",
            vec![("weather", sf())],
            "stop",
        ),
        ("google__google-tool-call", vec![("weather", sf())], "stop"),
        (
            "groq__groq-tool-call",
            vec![("weather", json!({}))],
            "tool_calls",
        ),
        (
            "mistral__mistral-incremental-tool-call",
            vec![("webSearchTool", json!({"query": "current Berlin weather"}))],
            "tool_calls",
        ),
        (
            "mistral__mistral-tool-call",
            vec![("weather", sf())],
            "tool_calls",
        ),
        (
            "open-responses__lmstudio-tool-call.1",
            vec![("weather", sf())],
            "tool_calls",
        ),
        (
            "openai-compatible__xai-tool-call",
            vec![("weather", sf())],
            "tool_calls",
        ),
        ("openai__openai-error.1", vec![], "error"),
    ];
    let mut replayed = 0;
    for (name, calls, finish) in &expect {
        let text = std::fs::read_to_string(dir.join(format!("{name}.chunks.txt")))
            .expect("capture present");
        let input = wire(name, &text);
        let whole = replay(&input, input.len());
        for chunk in [1, 7, 64] {
            let got = replay(&input, chunk);
            assert_eq!(got.calls, whole.calls, "{name} at {chunk}");
            assert_eq!(
                (
                    got.failures,
                    &got.errors,
                    &got.finish,
                    got.complete,
                    &got.text,
                    &got.reasoning,
                    &got.signatures,
                    &got.reasoning_items
                ),
                (
                    whole.failures,
                    &whole.errors,
                    &whole.finish,
                    whole.complete,
                    &whole.text,
                    &whole.reasoning,
                    &whole.signatures,
                    &whole.reasoning_items
                ),
                "{name} at {chunk}"
            );
        }
        let want: Vec<(String, Value)> = calls
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
        assert_eq!(whole.calls, want, "{name}");
        assert_eq!(whole.failures, 0, "{name}");
        assert_eq!(whole.finish.as_deref(), Some(*finish), "{name}");
        assert!(whole.complete, "{name} should end complete");
        assert_eq!(whole.reasoning, reasoning_in(&text), "{name}: reasoning");
        assert_eq!(whole.signatures, signatures_in(&text), "{name}: signatures");
        assert_eq!(
            whole.reasoning_items,
            reasoning_items_in(&text),
            "{name}: reasoning items"
        );
        replayed += 1;
    }
    // The nested Vertex capture: one call, checked by shape.
    let name = "google__google-vertex-stream-tool-call-arguments-nested.1";
    let text = std::fs::read_to_string(dir.join(format!("{name}.chunks.txt"))).unwrap();
    let input = wire(name, &text);
    for chunk in [input.len(), 1, 7, 64] {
        let got = replay(&input, chunk);
        assert_eq!(got.calls.len(), 1, "{name} at {chunk}");
        let (n, args) = &got.calls[0];
        assert_eq!(n, "cookRecipe");
        assert_eq!(args["recipe"]["name"], "Lasagna");
        assert_eq!(
            args["recipe"]["ingredients"].as_array().map(Vec::len),
            Some(10)
        );
        assert_eq!(
            args["recipe"]["ingredients"][0],
            json!({"amount": "16 oz", "name": "Lasagna noodles"})
        );
        assert_eq!(args["recipe"]["steps"].as_array().map(Vec::len), Some(10));
        assert_eq!(
            args["recipe"]["steps"][4],
            "In a 9x13 baking dish, spread a thin layer of meat sauce."
        );
    }
    replayed += 1;
    // Special cases read from the captures.
    let err = replay(
        &wire(
            "openai__openai-error.1",
            &std::fs::read_to_string(dir.join("openai__openai-error.1.chunks.txt")).unwrap(),
        ),
        64,
    );
    assert_eq!(err.errors.len(), 1);
    assert!(
        err.errors[0].starts_with("You exceeded your current quota"),
        "{:?}",
        err.errors
    );
    let hello = replay(
        &wire(
            "anthropic__duplicate-message-start",
            &std::fs::read_to_string(dir.join("anthropic__duplicate-message-start.chunks.txt"))
                .unwrap(),
        ),
        7,
    );
    assert_eq!(hello.text, "Hello, World!");
    // Groq: whole arguments in one delta, and usage under the vendor key `x_groq`.
    let groq = wire(
        "groq__groq-tool-call",
        &std::fs::read_to_string(dir.join("groq__groq-tool-call.chunks.txt")).unwrap(),
    );
    let mut s = Stream::new(None);
    let mut events = Vec::new();
    s.push(groq, &mut events);
    s.finish(&mut events);
    let usage = events.iter().find_map(|e| match e {
        Event::Usage { raw } => Some(serde_json::from_str::<Value>(raw).unwrap()),
        _ => None,
    });
    assert_eq!(usage.expect("usage reported")["total_tokens"], 225);
    // DeepSeek: reasoning deltas before the call are not text and not a call.
    let ds = replay(
        &wire(
            "deepseek__deepseek-tool-call",
            &std::fs::read_to_string(dir.join("deepseek__deepseek-tool-call.chunks.txt")).unwrap(),
        ),
        7,
    );
    assert_eq!(ds.calls.len(), 1);
    // Read off the capture by hand: the reasoning streams before the call.
    assert!(ds.reasoning.starts_with(
        "The user is asking for the weather in San Francisco. I need to use the weather tool"
    ));
    assert_eq!(ds.reasoning.len(), 191);
    // Gemini 3: the call's part carries a thought signature, which Gemini wants back on
    // that part; it comes as the event right before the call opens.
    let name = "google__google-tool-call-gemini3";
    let input = wire(
        name,
        &std::fs::read_to_string(dir.join(format!("{name}.chunks.txt"))).unwrap(),
    );
    let mut s = Stream::new(None);
    let mut events = Vec::new();
    s.push(input, &mut events);
    s.finish(&mut events);
    let at = events
        .iter()
        .position(|e| matches!(e, Event::CallStarted { name, .. } if name == "weather"))
        .expect("the call");
    assert!(
        matches!(&events[at - 1], Event::ReasoningSignature { signature, .. } if signature.starts_with("EpEgCo4gAb4+9vvWwdN+")),
        "{:?}",
        &events[..at]
    );
    assert_eq!(replayed, 18);
}

/// The same 18 captures through `toolstream inspect --json`, compared (text, reasoning,
/// signature and reasoning item events aside: the replay test checks them against the
/// captures)
/// with hand-written expected files in tests/captures-expected/: names, ids, argument
/// objects, failures, errors, finish reasons, completeness.
#[test]
fn inspect_json_matches_the_expected_files() {
    let dir = dir();
    let expected_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/captures-expected");
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let mut checked = 0;
    for entry in std::fs::read_dir(&expected_dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text =
            std::fs::read_to_string(dir.join(format!("{name}.chunks.txt"))).expect("capture");
        let wire_path = tmp.join(format!("{name}.wire"));
        std::fs::write(&wire_path, wire(&name, &text)).unwrap();
        let want: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).expect("expected line is JSON"))
            .collect();
        let mut first: Option<Vec<Value>> = None;
        for chunk in ["0", "1", "7", "64"] {
            let mut cmd = common::cli(env!("CARGO_BIN_EXE_toolstream"));
            cmd.args(["inspect", "--json"]).arg(&wire_path);
            if chunk != "0" {
                cmd.args(["--chunk", chunk]);
            }
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{name}");
            let got: Vec<Value> = String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .filter(|v| {
                    !["text", "reasoning", "reasoning_signature", "reasoning_item"]
                        .contains(&v["type"].as_str().unwrap_or(""))
                })
                .collect();
            let first = first.get_or_insert_with(|| got.clone());
            assert_eq!(&got, first, "{name} at chunk {chunk}");
            let got = common::mask_made_ids(&got);
            assert_eq!(got, want, "{name} at chunk {chunk}");
        }
        checked += 1;
    }
    assert_eq!(checked, 18);
}
