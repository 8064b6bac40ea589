//! Hostile inputs, one test per class an outside adversarial test found: an index from
//! the wire that sized an allocation (abort), quadratic time from small events, bytes
//! dropped without a trace, a failed call turning into phantom calls, calls without a
//! name, memory amplification, one big push, chunk-dependent framing, data after the end,
//! empty events. Each test asserts what the run costs in memory (the counting allocator,
//! per thread: peak bytes ≤ a constant times the input plus the configured limits) and
//! what the events say (`common::oracle`: calls + failures = calls started, no call
//! without a name, an end that tells the truth). Time is not asserted: each of these took
//! minutes or aborted before, and each runs in well under a second now (BENCHMARKS.md,
//! `hostile` group).

use crate::common::alloc::measure;
use crate::common::oracle::check_events;

use bytes::Bytes;
use toolstream::assemble::{DropReason, Event, FailureKind, Policy};
use toolstream::eventstream::encode;
use toolstream::pipeline::Stream;
use toolstream::provider::Format;
use toolstream::sse;

/// The default limits' sum that a pipeline may hold whatever the input: a line and an
/// event of framing, and the arguments of the calls (the default policy's 128 calls of
/// 16 MiB are not reached by any input here: one call's worth is allowed).
const LIMITS: usize = (8 << 20) + (16 << 20) + (16 << 20);

/// Run `input` through a pipeline in `chunk`-byte pushes (0: one push): the events (each
/// run checked by the oracle), the peak bytes allocated and the allocations made.
fn run(format: Option<Format>, input: &Bytes, chunk: usize) -> (Vec<Event>, usize, u64) {
    run_with(format, Policy::default(), input, chunk)
}

fn run_with(
    format: Option<Format>,
    policy: Policy,
    input: &Bytes,
    chunk: usize,
) -> (Vec<Event>, usize, u64) {
    run_limits(format, policy, sse::Limits::default(), input, chunk)
}

fn run_limits(
    format: Option<Format>,
    policy: Policy,
    framing: sse::Limits,
    input: &Bytes,
    chunk: usize,
) -> (Vec<Event>, usize, u64) {
    let (events, peak, allocs) = measure(|| {
        let mut s = Stream::with_limits(format, policy, framing);
        let mut events = Vec::new();
        let step = if chunk == 0 {
            input.len().max(1)
        } else {
            chunk
        };
        let mut i = 0;
        while i < input.len() {
            let j = (i + step).min(input.len());
            s.push(input.slice(i..j), &mut events);
            i = j;
        }
        s.finish(&mut events);
        events
    });
    if let Err(e) = check_events(&events) {
        panic!("{e}: {:?}", &events[..events.len().min(20)]);
    }
    (events, peak, allocs)
}

fn sse(payloads: &[String]) -> Bytes {
    let mut s = String::new();
    for p in payloads {
        s.push_str("data: ");
        s.push_str(p);
        s.push_str("\n\n");
    }
    Bytes::from(s)
}

/// An OpenAI chat chunk with one tool-call delta.
fn chat_call(index: &str, id: Option<&str>, name: Option<&str>, args: &str) -> String {
    let mut f = serde_json::Map::new();
    if let Some(n) = name {
        f.insert("name".into(), n.into());
    }
    f.insert("arguments".into(), args.into());
    let mut c = serde_json::json!({"function": f});
    c["index"] = serde_json::from_str(index).unwrap();
    if let Some(id) = id {
        c["id"] = id.into();
    }
    serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": [c]}}]}).to_string()
}

fn calls(events: &[Event]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall(c) => Some((
                c.name.clone(),
                String::from_utf8_lossy(&c.arguments).into_owned(),
            )),
            _ => None,
        })
        .collect()
}

fn failures(events: &[Event]) -> Vec<(String, FailureKind)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallFailed(f) => Some((f.name.clone(), f.kind)),
            _ => None,
        })
        .collect()
}

fn drops(events: &[Event]) -> Vec<toolstream::assemble::Dropped> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Dropped(d) => Some(*d),
            _ => None,
        })
        .collect()
}

fn dropped(events: &[Event]) -> Vec<DropReason> {
    drops(events).iter().map(|d| d.reason).collect()
}

fn end(events: &[Event]) -> bool {
    match events.last() {
        Some(Event::End { complete }) => *complete,
        other => panic!("no end: {other:?}"),
    }
}

/// Peak memory within `per_byte` times the input, plus the limits.
#[track_caller]
fn assert_memory(what: &str, peak: usize, input: usize, per_byte: usize) {
    eprintln!("{what}: peak {peak} bytes for {input} bytes of input");
    assert!(
        peak <= per_byte * input + LIMITS,
        "{what}: peak {peak} bytes for {input} bytes of input"
    );
}

#[test]
fn an_index_from_the_wire_never_sizes_an_allocation() {
    let ev = |kind: &str, body: &str| {
        encode(
            &[(":event-type", kind), (":message-type", "event")],
            body.as_bytes(),
        )
    };
    for index in ["4294967295", "50000000"] {
        // Gemini's candidate index (the 67-byte abort).
        let input = sse(&[format!(
            r#"{{"candidates":[{{"index":{index},"finishReason":"STOP"}}]}}"#
        )]);
        let (events, peak, _) = run(None, &input, 0);
        assert!(events.iter().any(|e| matches!(e, Event::Finish { .. })));
        assert!(peak < 1 << 20, "gemini {index}: {peak}");
        // Gemini streamed arguments on that candidate.
        let input = sse(&[format!(
            r#"{{"candidates":[{{"index":{index},"content":{{"parts":[{{"functionCall":{{"name":"f","partialArgs":[{{"jsonPath":"$.a","numberValue":1}}],"willContinue":true}}}}]}}}}]}}"#
        )]);
        let (_, peak, _) = run(None, &input, 0);
        assert!(peak < 1 << 20, "gemini partialArgs {index}: {peak}");
        // OpenAI's choice and tool-call indices.
        let mut p = chat_call(index, Some("c"), Some("f"), "{}");
        p = p.replace("\"index\":0", &format!("\"index\":{index}"));
        let input = sse(&[p, "[DONE]".into()]);
        let (events, peak, _) = run(None, &input, 0);
        assert_eq!(calls(&events), [("f".into(), "{}".into())]);
        assert!(peak < 1 << 20, "openai {index}: {peak}");
        // Anthropic's block index.
        let input = Bytes::from(format!(
            "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{index},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{{}}}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{index},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{{}}\"}}}}\n\n\
             event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{index}}}\n\n\
             event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
        ));
        let (events, peak, _) = run(None, &input, 0);
        assert_eq!(calls(&events), [("f".into(), "{}".into())]);
        assert!(peak < 1 << 20, "anthropic {index}: {peak}");
        // Responses' output index.
        let input = Bytes::from(format!(
            "event: response.output_item.added\ndata: {{\"type\":\"response.output_item.added\",\"output_index\":{index},\"item\":{{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"f\"}}}}\n\n\
             event: response.function_call_arguments.done\ndata: {{\"type\":\"response.function_call_arguments.done\",\"output_index\":{index},\"arguments\":\"{{}}\"}}\n\n\
             event: response.completed\ndata: {{\"type\":\"response.completed\",\"response\":{{\"status\":\"completed\"}}}}\n\n"
        ));
        let (events, peak, _) = run(None, &input, 0);
        assert_eq!(calls(&events), [("f".into(), "{}".into())]);
        assert!(peak < 1 << 20, "responses {index}: {peak}");
        // Bedrock's content block index.
        let mut input = ev(
            "contentBlockStart",
            &format!(
                r#"{{"contentBlockIndex":{index},"start":{{"toolUse":{{"toolUseId":"t","name":"f"}}}}}}"#
            ),
        );
        input.extend(ev(
            "contentBlockDelta",
            &format!(r#"{{"contentBlockIndex":{index},"delta":{{"toolUse":{{"input":"{{}}"}}}}}}"#),
        ));
        input.extend(ev(
            "contentBlockStop",
            &format!(r#"{{"contentBlockIndex":{index}}}"#),
        ));
        input.extend(ev("messageStop", r#"{"stopReason":"tool_use"}"#));
        let (events, peak, _) = run(None, &Bytes::from(input), 0);
        assert_eq!(calls(&events), [("f".into(), "{}".into())]);
        assert!(peak < 1 << 20, "bedrock {index}: {peak}");
    }
}

#[test]
fn many_reasoning_details_in_one_delta_cost_what_their_bytes_cost() {
    let details = vec!["{}"; 400_000].join(",");
    let input = sse(&[format!(
        r#"{{"choices":[{{"index":0,"delta":{{"reasoning_details":[{details}]}}}}]}}"#
    )]);
    let (events, peak, allocs) = run(None, &input, 0);
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::ReasoningDetails { raw, .. } if raw == "[{}]")));
    assert_memory("reasoning details", peak, input.len(), 4);
    // A constant number of allocations per element (front insertion moved every earlier
    // element once per new one, without allocating: see the `hostile` bench for time).
    assert!(allocs < 8 * 400_000, "{allocs} allocations");
}

#[test]
fn a_repeated_key_is_read_once_last_one_wins() {
    let members = vec![r#""content":"x""#; 160_000].join(",");
    let input = sse(&[
        format!(r#"{{"choices":[{{"index":0,"delta":{{{members},"content":"last"}}}}]}}"#),
        "[DONE]".into(),
    ]);
    let (events, peak, _) = run(None, &input, 0);
    let texts: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["last"]);
    assert_memory("repeated key", peak, input.len(), 2);
}

#[test]
fn many_glued_objects_count_against_the_call_limit() {
    let args: String = (0..160_000).map(|i| format!(r#"{{"a":{i}}}"#)).collect();
    let input = sse(&[chat_call("0", Some("c"), Some("f"), &args), "[DONE]".into()]);
    let (events, peak, _) = run(None, &input, 0);
    let got = calls(&events);
    assert_eq!(got.len(), 128);
    assert_eq!(got[127].1, r#"{"a":127}"#);
    assert_eq!(failures(&events), [("f".to_string(), FailureKind::Limit)]);
    assert_memory("glued objects", peak, input.len(), 16);
    // Duplicates among glued objects are still found, by hash.
    let input = sse(&[
        chat_call(
            "0",
            Some("c"),
            Some("f"),
            r#"{"a":1}{"b":2}{ "a" : 1 }{"b":2}{"c":3}"#,
        ),
        "[DONE]".into(),
    ]);
    let (events, _, _) = run(None, &input, 0);
    assert_eq!(calls(&events).len(), 3);
    let dups = events
        .iter()
        .filter(|e| matches!(e, Event::Duplicate { .. }))
        .count();
    assert_eq!(dups, 2);
}

/// `{"cmd":"rm -rf ` + a fragment on a line one byte over the line limit + `/tmp/x"}`
/// must never come out as `rm -rf /tmp/x`.
#[test]
fn a_fragment_dropped_over_the_line_limit_fails_the_call_and_the_end() {
    let limit = 1 << 16;
    let policy = Policy::default();
    let framing = sse::Limits::default().max_line_bytes(limit);
    let middle = "x".repeat(limit as usize);
    let input = sse(&[
        chat_call("0", Some("c1"), Some("run"), r#"{"cmd":"rm -rf "#),
        chat_call("0", None, None, &middle),
        chat_call("0", None, None, r#"/tmp/x"}"#),
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.into(),
        "[DONE]".into(),
    ]);
    for chunk in [0, 1 << 20, 4096, 7] {
        let (events, _, _) = run_limits(None, policy, framing, &input, chunk);
        assert_eq!(calls(&events), [], "chunk {chunk}");
        assert_eq!(dropped(&events), [DropReason::LineTooLong], "chunk {chunk}");
        assert_eq!(
            failures(&events),
            [("run".to_string(), FailureKind::Interrupted)]
        );
        assert!(!end(&events), "chunk {chunk}");
        // The failure carries every byte the call received.
        let raw = events.iter().find_map(|e| match e {
            Event::ToolCallFailed(f) => Some(f.raw.clone()),
            _ => None,
        });
        assert_eq!(raw.as_deref(), Some(&br#"{"cmd":"rm -rf /tmp/x"}"#[..]));
    }
    // An event over the event limit, the same.
    let framing = sse::Limits::default().max_event_bytes(limit);
    let (events, _, _) = run_limits(None, policy, framing, &input, 0);
    assert_eq!(calls(&events), []);
    assert_eq!(dropped(&events), [DropReason::EventTooLarge]);
    assert!(!end(&events));
    // The real size: a middle fragment on a line one byte over the default 8 MiB.
    let middle = "x".repeat((8 << 20) + 1 - 70);
    let input = sse(&[
        chat_call("0", Some("c1"), Some("run"), r#"{"cmd":"rm -rf "#),
        chat_call("0", None, None, &middle),
        chat_call("0", None, None, r#"/tmp/x"}"#),
        "[DONE]".into(),
    ]);
    let (events, peak, _) = run(None, &input, 1 << 16);
    assert_eq!(calls(&events), []);
    assert_eq!(dropped(&events), [DropReason::LineTooLong]);
    assert!(!end(&events));
    assert_memory("8 MiB line", peak, 0, 0);
    // An in-stream error on an over-limit line: not silent either.
    let error = format!(
        r#"{{"error":{{"message":"{}"}}}}"#,
        "e".repeat(limit as usize)
    );
    let input = sse(&[error, "[DONE]".into()]);
    let framing = sse::Limits::default().max_line_bytes(limit);
    let (events, _, _) = run_limits(None, policy, framing, &input, 0);
    assert_eq!(dropped(&events), [DropReason::LineTooLong]);
    assert!(!end(&events));
    // NDJSON: a line over the limit.
    let line = format!(
        r#"{{"message":{{"role":"assistant","content":"{}"}},"done":false}}"#,
        "x".repeat(limit as usize)
    );
    let input = Bytes::from(format!(
        "{line}\n{{\"message\":{{\"role\":\"assistant\",\"content\":\"\"}},\"done\":true}}\n"
    ));
    for chunk in [0, 7] {
        let (events, _, _) = run_limits(None, policy, framing, &input, chunk);
        assert_eq!(dropped(&events), [DropReason::LineTooLong], "chunk {chunk}");
        assert!(!end(&events));
    }
}

/// One bad byte in call 0, then 200 more fragments for it, then the model's real next
/// call: one failure (with every byte), and the next call comes out.
#[test]
fn a_failed_call_absorbs_the_rest_of_its_fragments_in_every_format() {
    // OpenAI chat.
    let mut p = vec![chat_call("0", Some("c1"), Some("f"), r#"{"a":"\q"#)];
    p.extend((0..200).map(|_| chat_call("0", None, None, "x")));
    p.push(chat_call("1", Some("c2"), Some("g"), "{}"));
    p.push("[DONE]".into());
    let (events, _, _) = run(None, &sse(&p), 0);
    assert_eq!(calls(&events), [("g".into(), "{}".into())]);
    assert_eq!(failures(&events), [("f".to_string(), FailureKind::Syntax)]);
    let f = events.iter().find_map(|e| match e {
        Event::ToolCallFailed(f) => Some(f.clone()),
        _ => None,
    });
    let f = f.unwrap();
    assert_eq!(f.offset, 7);
    assert_eq!(f.raw.len(), 8 + 200);
    // A scalar, then an object: no successful call.
    let p = vec![
        chat_call("0", Some("c1"), Some("f"), "1"),
        chat_call("0", None, None, r#"{"a":1}"#),
        "[DONE]".into(),
    ];
    let (events, _, _) = run(None, &sse(&p), 0);
    assert_eq!(calls(&events), []);
    assert_eq!(
        failures(&events),
        [("f".to_string(), FailureKind::NotObject)]
    );
    // Ollama: whole calls, one per entry; a bad one fails alone.
    let input = Bytes::from_static(
        b"{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":7}},{\"function\":{\"name\":\"g\",\"arguments\":{}}}]},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true}\n",
    );
    let (events, _, _) = run(None, &input, 0);
    assert_eq!(calls(&events), [("g".into(), "{}".into())]);
    assert_eq!(
        failures(&events),
        [("f".to_string(), FailureKind::NotObject)]
    );
    // Anthropic.
    let delta = |i: u32, json: &str| {
        format!(
            "event: content_block_delta\ndata: {}\n\n",
            serde_json::json!({"type":"content_block_delta","index":i,"delta":{"type":"input_json_delta","partial_json":json}})
        )
    };
    let start = |i: u32, name: &str| {
        format!(
            "event: content_block_start\ndata: {}\n\n",
            serde_json::json!({"type":"content_block_start","index":i,"content_block":{"type":"tool_use","id":format!("t{i}"),"name":name,"input":{}}})
        )
    };
    let stop = |i: u32| {
        format!("event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{i}}}\n\n")
    };
    let mut s = start(0, "f") + &delta(0, r#"{"a":"\q"#);
    for _ in 0..200 {
        s += &delta(0, "x");
    }
    s += &stop(0);
    s += &start(1, "g");
    s += &delta(1, "{}");
    s += &stop(1);
    s += "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let (events, _, _) = run(None, &Bytes::from(s), 0);
    assert_eq!(calls(&events), [("g".into(), "{}".into())]);
    assert_eq!(failures(&events), [("f".to_string(), FailureKind::Syntax)]);
    // Responses.
    let ev = |ty: &str, body: serde_json::Value| {
        let mut body = body;
        body["type"] = ty.into();
        format!("event: {ty}\ndata: {body}\n\n")
    };
    let mut s = ev(
        "response.output_item.added",
        serde_json::json!({"output_index":0,"item":{"type":"function_call","call_id":"c1","name":"f"}}),
    );
    s += &ev(
        "response.function_call_arguments.delta",
        serde_json::json!({"output_index":0,"delta":"{\"a\":\"\\q"}),
    );
    for _ in 0..200 {
        s += &ev(
            "response.function_call_arguments.delta",
            serde_json::json!({"output_index":0,"delta":"x"}),
        );
    }
    s += &ev(
        "response.output_item.added",
        serde_json::json!({"output_index":1,"item":{"type":"function_call","call_id":"c2","name":"g"}}),
    );
    s += &ev(
        "response.function_call_arguments.delta",
        serde_json::json!({"output_index":1,"delta":"{}"}),
    );
    s += &ev(
        "response.completed",
        serde_json::json!({"response":{"status":"completed"}}),
    );
    let (events, _, _) = run(None, &Bytes::from(s), 0);
    assert_eq!(calls(&events), [("g".into(), "{}".into())]);
    assert_eq!(failures(&events), [("f".to_string(), FailureKind::Syntax)]);
    // Gemini partialArgs: a path that does not fit, then more entries for it.
    let part = |fc: serde_json::Value| {
        format!(
            "data: {}\n\n",
            serde_json::json!({"candidates":[{"index":0,"content":{"parts":[{"functionCall":fc}]}}]})
        )
    };
    let mut s = part(serde_json::json!({"name":"f","willContinue":true}));
    s += &part(
        serde_json::json!({"partialArgs":[{"jsonPath":"$[0]","numberValue":1}],"willContinue":true}),
    );
    for k in 0..200 {
        s += &part(
            serde_json::json!({"partialArgs":[{"jsonPath":format!("$.k{k}"),"numberValue":1}],"willContinue":true}),
        );
    }
    s += &part(serde_json::json!({}));
    s += &part(serde_json::json!({"name":"g","args":{}}));
    s += "data: {\"candidates\":[{\"index\":0,\"finishReason\":\"STOP\"}]}\n\n";
    let (events, _, _) = run(None, &Bytes::from(s), 0);
    assert_eq!(calls(&events), [("g".into(), "{}".into())]);
    assert_eq!(failures(&events), [("f".to_string(), FailureKind::Syntax)]);
    // Bedrock.
    let ev = |kind: &str, body: &str| {
        encode(
            &[(":event-type", kind), (":message-type", "event")],
            body.as_bytes(),
        )
    };
    let bdelta = |i: u32, input: &str| {
        ev(
            "contentBlockDelta",
            &serde_json::json!({"contentBlockIndex":i,"delta":{"toolUse":{"input":input}}})
                .to_string(),
        )
    };
    let bstart = |i: u32, name: &str| {
        ev(
            "contentBlockStart",
            &serde_json::json!({"contentBlockIndex":i,"start":{"toolUse":{"toolUseId":format!("t{i}"),"name":name}}})
                .to_string(),
        )
    };
    let mut s = bstart(0, "f");
    s.extend(bdelta(0, r#"{"a":"\q"#));
    for _ in 0..200 {
        s.extend(bdelta(0, "x"));
    }
    s.extend(ev("contentBlockStop", r#"{"contentBlockIndex":0}"#));
    s.extend(bstart(1, "g"));
    s.extend(bdelta(1, "{}"));
    s.extend(ev("contentBlockStop", r#"{"contentBlockIndex":1}"#));
    s.extend(ev("messageStop", r#"{"stopReason":"tool_use"}"#));
    let (events, _, _) = run(None, &Bytes::from(s), 0);
    assert_eq!(calls(&events), [("g".into(), "{}".into())]);
    assert_eq!(failures(&events), [("f".to_string(), FailureKind::Syntax)]);
}

#[test]
fn a_call_without_a_name_is_a_failure_in_every_format() {
    // OpenAI chat: a delta with no name.
    let input = sse(&[
        chat_call("0", Some("c1"), None, r#"{"a":1}"#),
        "[DONE]".into(),
    ]);
    let (events, _, _) = run(None, &input, 0);
    assert_eq!(calls(&events), []);
    assert_eq!(failures(&events), [(String::new(), FailureKind::NoName)]);
    // ... and no arguments at all.
    let input = sse(&[chat_call("0", Some("c1"), None, ""), "[DONE]".into()]);
    let (events, _, _) = run(None, &input, 0);
    assert_eq!(failures(&events), [(String::new(), FailureKind::NoName)]);
    // Anthropic: a delta with no content_block_start.
    let input = Bytes::from_static(b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":1}\"}}\n\nevent: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    let (events, _, _) = run(None, &input, 0);
    assert_eq!(calls(&events), []);
    assert_eq!(failures(&events), [(String::new(), FailureKind::NoName)]);
    // Responses: a delta with no output_item.added.
    let input = Bytes::from_static(b"event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"delta\":\"{}\"}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n");
    let (events, _, _) = run(None, &input, 0);
    assert_eq!(calls(&events), []);
    assert_eq!(failures(&events), [(String::new(), FailureKind::NoName)]);
    // Ollama: a call with no name.
    let input = Bytes::from_static(
        b"{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"arguments\":{}}}]},\"done\":true}\n",
    );
    let (events, _, _) = run(None, &input, 0);
    assert_eq!(calls(&events), []);
    assert_eq!(failures(&events), [(String::new(), FailureKind::NoName)]);
    // The turn sent back has no such call.
    let input = sse(&[
        chat_call("0", Some("c1"), None, r#"{"a":1}"#),
        "[DONE]".into(),
    ]);
    let (events, _, _) = run(None, &input, 0);
    let mut turn = toolstream::replay::Turn::new(Format::OpenAiChat);
    for e in &events {
        turn.push(e);
    }
    assert!(!turn.to_json().to_string().contains("\"c1\""));
}

#[test]
fn large_payloads_are_detected_and_errors_read_without_a_tree() {
    // 7 MB of nested members in one event, format unknown: detection reads the keys.
    let items = vec![r#"{"a":[1,2,3]}"#; 500_000].join(",");
    let input = sse(&[
        format!(r#"{{"x":[{items}],"choices":[]}}"#),
        "[DONE]".into(),
    ]);
    let (events, peak, _) = run(None, &input, 0);
    assert!(end(&events));
    assert_memory("detection", peak, input.len(), 3);
    // A 7 MB error object: its message and code, without a tree.
    let input = sse(&[
        format!(r#"{{"error":{{"message":"boom","code":429,"x":[{items}]}}}}"#),
        "[DONE]".into(),
    ]);
    let (events, peak, _) = run(None, &input, 0);
    assert!(events.iter().any(
        |e| matches!(e, Event::ProviderError { status: Some(429), message, .. } if message == "boom")
    ));
    assert_memory("error", peak, input.len(), 3);
}

#[test]
fn a_deep_partial_args_path_is_refused_not_built() {
    let path = format!("${}", ".a".repeat(3_500_000));
    let input = sse(&[
        serde_json::json!({"candidates":[{"index":0,"content":{"parts":[{"functionCall":{"name":"f","partialArgs":[{"jsonPath":path,"numberValue":1}],"willContinue":true}}]}}]}).to_string(),
        r#"{"candidates":[{"index":0,"finishReason":"STOP"}]}"#.into(),
    ]);
    let (events, peak, _) = run(None, &input, 0);
    assert_eq!(failures(&events), [("f".to_string(), FailureKind::Syntax)]);
    assert_memory("deep path", peak, input.len(), 3);
}

#[test]
fn a_preview_tree_counts_against_the_arguments_limit() {
    let policy = Policy {
        preview: true,
        json: toolstream::json::Limits::default().max_value_bytes(1 << 20),
        ..Policy::default()
    };
    // Half a million numbers in one call, fed in 4 KiB fragments: the view is given up
    // once it would cost more than the limit; the call itself is fine.
    let args = format!("{{\"a\":[{}]}}", vec!["0"; 500_000].join(","));
    let mut p = vec![chat_call("0", Some("c"), Some("f"), "")];
    p.extend(
        args.as_bytes()
            .chunks(4096)
            .map(|c| chat_call("0", None, None, std::str::from_utf8(c).unwrap())),
    );
    p.push("[DONE]".into());
    let input = sse(&p);
    let mut s = Stream::with_policy(None, policy);
    let mut events = Vec::new();
    let mut most = 0;
    let (_, peak, _) = measure(|| {
        for piece in input.chunks(1 << 16) {
            s.push(Bytes::copy_from_slice(piece), &mut events);
            most = most.max(s.buffered());
        }
    });
    assert!(most <= 3 << 20, "buffered {most}");
    assert!(peak <= 8 << 20, "peak {peak}");
    s.finish(&mut events);
    assert_eq!(calls(&events).len(), 1);
}

#[test]
fn one_big_push_costs_what_small_pushes_cost() {
    let input = Bytes::from(":\n\n".repeat(5_000_000));
    let (events, peak, _) = run(None, &input, 0);
    assert!(!end(&events));
    assert_memory("15 MB of comments in one push", peak, 0, 0);
    assert!(peak < 1 << 20, "peak {peak}");
    let input = Bytes::from("{}\n".repeat(5_000_000));
    let (_, peak, _) = run(Some(Format::Ollama), &input, 0);
    assert!(peak < 16 << 20, "NDJSON: peak {peak}");
}

#[test]
fn leading_whitespace_decides_the_framing_however_it_is_cut() {
    for blank in [65_536, 65_600] {
        let input = Bytes::from(format!(
            "{}{}",
            "\n".repeat(blank),
            "{\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true}\n"
        ));
        let whole = run(None, &input, 0).0;
        for chunk in [1, 7, 4096] {
            assert_eq!(
                run(None, &input, chunk).0,
                whole,
                "{blank} blanks, chunk {chunk}"
            );
        }
        // Within the bound, NDJSON; past it, SSE, which finds nothing in those lines and
        // says so.
        if blank == 65_536 {
            assert!(end(&whole));
        } else {
            assert_eq!(dropped(&whole), [DropReason::NotAnEventStream]);
            assert!(!end(&whole));
        }
    }
}

#[test]
fn payloads_after_the_terminal_marker_are_dropped_and_reported_once() {
    let late = chat_call("0", Some("c1"), Some("f"), r#"{"a"#);
    // Where the first payload after the marker was framed: its event's blank line.
    let at = (14 + 6 + late.len() + 1) as u64;
    let input = sse(&[
        "[DONE]".into(),
        late,
        "[DONE]".into(),
        chat_call("0", None, None, r#"":1}"#),
    ]);
    for chunk in [0, 1, 7] {
        let (events, _, _) = run(None, &input, chunk);
        assert_eq!(calls(&events), []);
        assert_eq!(failures(&events), []);
        let d = drops(&events);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].reason, DropReason::AfterEnd);
        assert_eq!(d[0].offset, at);
        assert!(!end(&events));
    }
    // Anthropic after message_stop, likewise.
    let input = Bytes::from_static(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"late\"}}\n\n");
    let (events, _, _) = run(None, &input, 0);
    assert_eq!(dropped(&events), [DropReason::AfterEnd]);
    assert!(!events.iter().any(|e| matches!(e, Event::Text { .. })));
}

#[test]
fn empty_data_events_are_nothing() {
    let input = Bytes::from("data:\n\n".repeat(1_000_000) + "data: [DONE]\n\n");
    let (events, peak, _) = run(Some(Format::OpenAiChat), &input, 0);
    assert_eq!(events, [Event::End { complete: true }]);
    assert!(peak < 1 << 20, "peak {peak}");
}

#[test]
fn binary_input_is_said_to_be_no_event_stream_once() {
    // gzip's magic, then bytes.
    let mut input = vec![0x1f, 0x8b, 0x08, 0x00];
    input.extend((0..10_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 | 1));
    let input: Vec<u8> = input
        .into_iter()
        .filter(|&b| b != b'\n' && b != b'\r')
        .collect();
    let (events, _, _) = run(None, &Bytes::from(input), 0);
    assert_eq!(dropped(&events), [DropReason::NotAnEventStream]);
    assert!(!end(&events));
}

#[test]
fn responses_done_arguments_that_differ_from_the_deltas_are_reported() {
    let ev = |ty: &str, body: serde_json::Value| {
        let mut body = body;
        body["type"] = ty.into();
        format!("event: {ty}\ndata: {body}\n\n")
    };
    let s = |done: &str| {
        ev(
            "response.output_item.added",
            serde_json::json!({"output_index":0,"item":{"type":"function_call","call_id":"c1","name":"f"}}),
        ) + &ev(
            "response.function_call_arguments.delta",
            serde_json::json!({"output_index":0,"delta":"{\"a\":1}"}),
        ) + &ev(
            "response.function_call_arguments.done",
            serde_json::json!({"output_index":0,"arguments":done}),
        ) + &ev(
            "response.completed",
            serde_json::json!({"response":{"status":"completed"}}),
        )
    };
    let (events, _, _) = run(None, &Bytes::from(s(r#"{"a":1}"#)), 0);
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::ProviderError { .. })));
    let (events, _, _) = run(None, &Bytes::from(s(r#"{"a":2}"#)), 0);
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::ProviderError { message, .. } if message.contains("differs"))));
}

#[test]
fn string_too_long_fires_with_the_default_limits() {
    let args = format!("{{\"content\":\"{}\"}}", "a".repeat(9 << 20));
    let mut p = vec![chat_call("0", Some("c"), Some("f"), "")];
    p.extend(
        args.as_bytes()
            .chunks(1 << 20)
            .map(|c| chat_call("0", None, None, std::str::from_utf8(c).unwrap())),
    );
    p.push("[DONE]".into());
    let input = sse(&p);
    let (events, _, _) = run(None, &input, 1 << 16);
    let detail = events.iter().find_map(|e| match e {
        Event::ToolCallFailed(f) => f.detail,
        _ => None,
    });
    assert_eq!(detail, Some(toolstream::json::ErrorKind::StringTooLong));
}

/// Pieces of OpenAI chat, Anthropic and Gemini streams with the hostile shapes at small
/// sizes: edge indices, bad escapes, glued and nameless calls, over-limit lines, junk,
/// empty events, terminal markers in the middle.
fn hostile_piece() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let index = prop_oneof![
        Just("0".to_string()),
        Just("1".to_string()),
        Just("4294967295".to_string()),
        Just("4294967296".to_string()),
        Just("-1".to_string()),
        Just("0.5".to_string()),
    ];
    let args = prop_oneof![
        Just(r#"{"a":1}"#),
        Just(r#"{"a":1}{"b":2}"#),
        Just(r#"{"a":"\q"#),
        Just("x"),
        Just("1"),
        Just(r#"{"cmd":"rm -rf "#),
        Just(r#"/tmp/x"}"#),
        Just(""),
    ];
    let name = prop_oneof![Just(None), Just(Some("f")), Just(Some("g"))];
    prop_oneof![
        (index.clone(), name, args.clone()).prop_map(|(i, n, a)| {
            let mut p = chat_call(&i, Some("c"), n, a);
            p = p.replace("\"index\":0", &format!("\"index\":{i}"));
            format!("data: {p}\n\n")
        }),
        (index.clone(), args)
            .prop_map(|(i, a)| format!("data: {}\n\n", chat_call(&i, None, None, a))),
        (0usize..300).prop_map(|n| format!("data: {}\n\n", "x".repeat(n))),
        Just("data: [DONE]\n\n".to_string()),
        Just("data:\n\n".to_string()),
        Just(": ping\n\n".to_string()),
        Just(
            r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#
                .to_string()
                + "\n\n"
        ),
        Just(
            r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#.to_string()
                + "\n\n"
        ),
        Just("data: {\"error\":{\"message\":\"boom\",\"code\":500}}\n\n".to_string()),
        index.prop_map(|i| format!(
            "data: {{\"candidates\":[{{\"index\":{i},\"finishReason\":\"STOP\"}}]}}\n\n"
        )),
        prop::collection::vec(any::<u8>(), 0..40)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

    /// Any stream of hostile pieces, with small limits (line 256 B, event 1 KiB, value
    /// 128 B, 4 calls): the oracle's properties, peak memory within 32 times the input plus
    /// the limits, and the same events whatever the chunking.
    #[test]
    fn hostile_streams_keep_every_guarantee(
        pieces in proptest::collection::vec(hostile_piece(), 0..24),
        cut in 1usize..64,
    ) {
        let input = Bytes::from(pieces.concat());
        let policy = Policy {
            json: toolstream::json::Limits::default().max_value_bytes(128),
            max_calls: 4,
            ..Policy::default()
        };
        let framing = sse::Limits::default().max_line_bytes(256).max_event_bytes(1024);
        let go = |chunk: usize| {
            measure(|| {
                let mut s = Stream::with_limits(None, policy, framing);
                let mut events = Vec::new();
                for piece in input.chunks(chunk) {
                    s.push(Bytes::copy_from_slice(piece), &mut events);
                }
                s.finish(&mut events);
                events
            })
        };
        let (whole, peak, _) = go(input.len().max(1));
        if let Err(e) = check_events(&whole) {
            return Err(proptest::test_runner::TestCaseError::fail(format!("{e}: {whole:?}")));
        }
        let limits = 256 + 2 * 1024 + 4 * 3 * 129 + (64 << 10);
        proptest::prop_assert!(peak <= 32 * input.len() + limits, "peak {}", peak);
        let (chunked, _, _) = go(cut);
        proptest::prop_assert_eq!(chunked, whole);
    }
}

/// An error body of 16 MiB is classified from its text, without a tree of it.
#[test]
fn a_huge_error_body_is_classified_without_a_tree() {
    use toolstream::classify::{classify_http, HttpFailure, Policy, Provider, Reason};
    let items = vec![r#"{"a":[1,2,3]}"#; 1_200_000].join(",");
    let body = format!(
        r#"{{"error":{{"message":"Rate limit reached, try again in 2s","type":"tokens","x":[{items}]}}}}"#
    );
    let (v, peak, _) = measure(|| {
        classify_http(
            &HttpFailure {
                provider: Provider::Openai,
                status: 429,
                headers: &[],
                body: body.as_bytes(),
                attempt: 0,
            },
            &Policy::default(),
        )
    });
    assert_eq!(v.reason, Reason::RateLimit);
    assert!(
        peak < 1 << 20,
        "peak {peak} bytes for a {} byte body",
        body.len()
    );
}

/// Tiny undecodable payloads, over and over: the first few are reported one by one with
/// their text, the rest counted into one report at the end, so the events stay about the
/// size of the input. Found by `pipeline_small_limits` (one event of ~300 bytes for each
/// 10-byte line).
#[test]
fn many_undecodable_payloads_are_reported_in_one_event_past_the_first() {
    use toolstream::pipeline::MAX_UNDECODABLE_REPORTS;
    let n = 200_000;
    for (format, line, payload) in [
        (Format::OpenAiChat, "data: [\n\n", 1u64),
        (
            Format::Anthropic,
            "event: content_block_delta\ndata: [\n\n",
            1,
        ),
    ] {
        let input = Bytes::from(line.repeat(n));
        for chunk in [0, 1, 7] {
            let (events, peak, _) = run(Some(format), &input, chunk);
            let errors = events
                .iter()
                .filter(|e| matches!(e, Event::ProviderError { .. }))
                .count();
            assert_eq!(errors, MAX_UNDECODABLE_REPORTS, "{format:?} chunk {chunk}");
            let d = drops(&events);
            assert_eq!(d.len(), 1, "{format:?}");
            assert_eq!(d[0].reason, DropReason::Undecodable);
            assert_eq!(d[0].bytes, (n - MAX_UNDECODABLE_REPORTS) as u64 * payload);
            assert!(!end(&events));
            assert!(peak < input.len() + (1 << 20), "{format:?}: peak {peak}");
        }
    }
    // NDJSON (Ollama) lines of one bracket each: 4 MB of them. The lines are decoded in
    // 64 KiB pieces, and one piece's items (about 2.3 MB for these) are what it costs.
    let n = 2_000_000;
    let input = Bytes::from("[\n".repeat(n));
    let (events, peak, _) = run(Some(Format::Ollama), &input, 0);
    let errors = events
        .iter()
        .filter(|e| matches!(e, Event::ProviderError { .. }))
        .count();
    assert_eq!(errors, MAX_UNDECODABLE_REPORTS);
    assert_eq!(dropped(&events), [DropReason::Undecodable]);
    assert!(!end(&events));
    assert!(peak < 3 << 20, "peak {peak}");
}

/// An Anthropic web-search turn: the `server_tool_use` block's input streams as
/// `input_json_delta` like a client call's, but the provider runs it. It is no call and no
/// failure; the `tool_use` block beside it is the one call. A block event without an index
/// cannot be placed: the stream is not complete. (At 91c7367 the server tool's input was
/// read as a call: a `no_name` failure, and a phantom call in the proxy.)
#[test]
fn a_server_tool_is_no_client_call_and_a_block_without_index_is_undecodable() {
    let events = |list: &[(&str, &str)]| {
        let mut s = String::new();
        for (ty, data) in list {
            s.push_str(&format!("event: {ty}\ndata: {data}\n\n"));
        }
        Bytes::from(s)
    };
    let turn = events(&[
        (
            "message_start",
            r#"{"type":"message_start","message":{"id":"m","content":[]}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"weather\"}"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Paris\"}"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":2}"#,
        ),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ]);
    for chunk in [0, 1, 7] {
        let (ev, _, _) = run(None, &turn, chunk);
        assert_eq!(
            calls(&ev),
            [("get_weather".to_string(), r#"{"city":"Paris"}"#.to_string())]
        );
        assert!(failures(&ev).is_empty(), "{:?}", failures(&ev));
        assert!(end(&ev));
    }
    let no_index = events(&[
        (
            "message_start",
            r#"{"type":"message_start","message":{"id":"m","content":[]}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Paris\"}"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":0}"#,
        ),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#,
        ),
        ("message_stop", r#"{"type":"message_stop"}"#),
    ]);
    let (ev, _, _) = run(Some(Format::Anthropic), &no_index, 0);
    assert!(calls(&ev).is_empty(), "{ev:?}");
    assert!(!end(&ev));
}

/// An SSE comment over the line limit (`:` and 9 MiB) in the middle of a call: a comment
/// carries no data, so the call and the end are untouched. (At 91c7367 it failed the open
/// call as `interrupted` and the stream as incomplete.)
#[test]
fn a_comment_over_the_line_limit_touches_no_call() {
    let mut s = String::new();
    s += &format!(
        "data: {}\n\n",
        chat_call("0", Some("c1"), Some("f"), "{\"a\":")
    );
    s += &format!(":{}\n\n", "x".repeat(9 << 20));
    s += &format!("data: {}\n\n", chat_call("0", None, None, "1}"));
    s += "data: [DONE]\n\n";
    let input = Bytes::from(s);
    for chunk in [0, 4096, 65536] {
        let (ev, peak, _) = run(None, &input, chunk);
        assert_eq!(calls(&ev), [("f".to_string(), "{\"a\":1}".to_string())]);
        assert!(end(&ev), "chunk {chunk}");
        assert_memory("comment over the limit", peak, input.len(), 2);
    }
}

/// A non-streaming `chat.completion` body (what a client gets that leaves out
/// `stream=True`) is decoded like its streaming twin: the same text, the same calls, glued
/// ones split, and a complete end. (At 91c7367 the decoder skipped `message`: the calls and
/// the text were gone with no event, and the end said complete.)
#[test]
fn a_non_streaming_completion_gives_what_its_stream_gives() {
    let body = Bytes::from_static(br#"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}{\"a\":2}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}"#);
    let stream = sse(&[
        r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#.into(),
        chat_call("0", Some("c1"), Some("f"), r#"{"a":1}{"a":2}"#),
        chat_call("1", Some("c2"), Some("g"), "{}"),
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#.into(),
    ]);
    let want = [
        ("f".to_string(), r#"{"a":1}"#.to_string()),
        ("f".to_string(), r#"{"a":2}"#.to_string()),
        ("g".to_string(), "{}".to_string()),
    ];
    for chunk in [0, 1, 7] {
        let (ev, _, _) = run(None, &body, chunk);
        assert_eq!(calls(&ev), want, "chunk {chunk}");
        assert!(ev
            .iter()
            .any(|e| matches!(e, Event::Text { text, .. } if text == "Hi")));
        assert!(end(&ev));
    }
    let (ev, _, _) = run(None, &stream, 0);
    assert_eq!(calls(&ev), want);
}

/// A non-streaming Anthropic body (`"type": "message"`) gives what its stream gives: text,
/// the `tool_use` calls whole (a server tool's input no call), the stop reason and a
/// complete end. (At 91c7367 it gave nothing at all and an incomplete end.)
#[test]
fn a_non_streaming_anthropic_message_gives_what_its_stream_gives() {
    let body = Bytes::from_static(br#"{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"sig"},{"type":"text","text":"Hi"},{"type":"server_tool_use","id":"s","name":"web_search","input":{"q":1}},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}},{"type":"tool_use","id":"toolu_2","name":"g","input":{}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2}}"#);
    for chunk in [0, 1, 7] {
        let (ev, _, _) = run(None, &body, chunk);
        assert_eq!(
            calls(&ev),
            [
                ("f".to_string(), r#"{"a":1}"#.to_string()),
                ("g".to_string(), "{}".to_string())
            ],
            "chunk {chunk}"
        );
        assert!(failures(&ev).is_empty());
        assert!(ev
            .iter()
            .any(|e| matches!(e, Event::Text { text, .. } if text == "Hi")));
        assert!(ev.iter().any(
            |e| matches!(e, Event::ReasoningSignature { signature, .. } if signature == "sig")
        ));
        assert!(end(&ev));
    }
}

/// A non-streaming Responses body (the response object) gives what its stream gives: the
/// reasoning item whole, the output text, each function call (glued arguments split), the
/// finish by its status and a complete end; an incomplete status is a length finish. (At
/// 91c7367 it gave nothing at all and an incomplete end.)
#[test]
fn a_non_streaming_response_object_gives_what_its_stream_gives() {
    let body = Bytes::from_static(br#"{"id":"resp_1","object":"response","status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[]},{"type":"message","content":[{"type":"output_text","text":"Hi"}]},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"a\":1}{\"b\":2}","status":"completed"}],"usage":{"total_tokens":3}}"#);
    for chunk in [0, 1, 7] {
        let (ev, _, _) = run(None, &body, chunk);
        assert_eq!(
            calls(&ev),
            [
                ("f".to_string(), r#"{"a":1}"#.to_string()),
                ("f".to_string(), r#"{"b":2}"#.to_string())
            ],
            "chunk {chunk}"
        );
        assert!(ev
            .iter()
            .any(|e| matches!(e, Event::Text { text, .. } if text == "Hi")));
        assert!(ev.iter().any(|e| matches!(e, Event::ReasoningItem { .. })));
        assert!(end(&ev));
    }
    let cut = Bytes::from_static(br#"{"object":"response","status":"incomplete","output":[{"type":"function_call","call_id":"c","name":"f","arguments":"{\"a\":"}]}"#);
    let (ev, _, _) = run(None, &cut, 0);
    assert_eq!(failures(&ev), [("f".to_string(), FailureKind::Truncated)]);
}

/// A non-streaming Bedrock `Converse` body gives what its stream gives: text, each tool use
/// whole, the stop reason and a complete end. (At 91c7367 it gave nothing at all.)
#[test]
fn a_non_streaming_converse_body_gives_what_its_stream_gives() {
    let body = Bytes::from_static(br#"{"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"hm","signature":"sig"}}},{"text":"Hi"},{"toolUse":{"toolUseId":"t1","name":"f","input":{"a":1}}}]}},"stopReason":"tool_use","usage":{"inputTokens":1}}"#);
    for chunk in [0, 1, 7] {
        let (ev, _, _) = run(None, &body, chunk);
        assert_eq!(calls(&ev), [("f".to_string(), r#"{"a":1}"#.to_string())]);
        assert!(ev
            .iter()
            .any(|e| matches!(e, Event::Text { text, .. } if text == "Hi")));
        assert!(end(&ev), "chunk {chunk}");
    }
}
