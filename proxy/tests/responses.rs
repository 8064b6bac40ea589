//! The Responses API rewriter, read as a strict client reads it: every event parses,
//! `sequence_number` strictly increases, each item is announced, streamed and closed at
//! one `output_index`, the arguments the deltas give are the `done` event's and the item's,
//! and the terminal event's `response.output` lists the items the client got — at every
//! chunking.

use std::collections::BTreeMap;

use bytes::{Bytes, BytesMut};
use serde_json::{json, Value};
use toolstream::rewrite::ResponsesRewriter;

/// What a client holds at the end.
#[derive(Debug, Default, PartialEq)]
struct Client {
    /// By output index: (item id, call id, name, arguments) of function calls, or the
    /// item's type for the others.
    items: BTreeMap<u64, (String, String, String, String)>,
    /// The terminal event's output: the same tuples.
    output: Option<Vec<(String, String, String, String)>>,
    /// The terminal event's type, or "error".
    end: Option<String>,
    /// The SSE comments.
    comments: Vec<String>,
}

fn read(out: &[u8]) -> Client {
    let text = std::str::from_utf8(out).expect("UTF-8");
    let mut c = Client::default();
    let mut last_seq: Option<u64> = None;
    let mut args: BTreeMap<u64, String> = BTreeMap::new();
    for block in text.split("\n\n").filter(|b| !b.is_empty()) {
        if let Some(comment) = block.strip_prefix(": ") {
            c.comments.push(comment.to_string());
            continue;
        }
        let data: String = block
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect::<Vec<_>>()
            .join("\n");
        let v: Value = serde_json::from_str(&data).unwrap_or_else(|e| panic!("{e}: {data}"));
        assert!(c.end.is_none(), "an event after the end: {data}");
        if let Some(s) = v["sequence_number"].as_u64() {
            assert!(
                last_seq.is_none_or(|l| s > l),
                "sequence {s} after {last_seq:?}"
            );
            last_seq = Some(s);
        }
        let at = v["output_index"].as_u64();
        let item = |i: &Value| {
            (
                i["id"].as_str().unwrap_or("").to_string(),
                i["call_id"].as_str().unwrap_or("").to_string(),
                i["name"].as_str().unwrap_or("").to_string(),
                i["arguments"].as_str().unwrap_or("").to_string(),
            )
        };
        match v["type"].as_str().unwrap() {
            "response.output_item.added" => {
                let at = at.unwrap();
                assert!(!c.items.contains_key(&at), "output {at} added twice");
                c.items.insert(at, item(&v["item"]));
                args.insert(at, String::new());
            }
            "response.function_call_arguments.delta" => {
                let at = at.unwrap();
                assert_eq!(v["item_id"], json!(c.items[&at].0), "delta of another item");
                args.get_mut(&at)
                    .unwrap()
                    .push_str(v["delta"].as_str().unwrap());
            }
            "response.function_call_arguments.done" => {
                let at = at.unwrap();
                if !args[&at].is_empty() {
                    assert_eq!(v["arguments"].as_str().unwrap(), args[&at], "done differs");
                }
                c.items.get_mut(&at).unwrap().3 = v["arguments"].as_str().unwrap().into();
            }
            "response.output_item.done" => {
                let at = at.unwrap();
                let done = item(&v["item"]);
                if v["item"]["type"] == "function_call" {
                    assert_eq!(done, c.items[&at], "the item done is not the item streamed");
                }
            }
            t @ ("response.completed" | "response.incomplete" | "response.failed") => {
                c.output = Some(
                    v["response"]["output"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|i| i["type"] == "function_call")
                        .map(item)
                        .collect(),
                );
                c.end = Some(t.to_string());
            }
            "error" => c.end = Some("error".into()),
            _ => {}
        }
    }
    c
}

fn rewrite(stream: &[u8], step: usize) -> Vec<u8> {
    let data = Bytes::copy_from_slice(stream);
    let mut r = ResponsesRewriter::new();
    let mut out = BytesMut::new();
    for at in (0..data.len()).step_by(step.max(1)) {
        r.push(data.slice(at..data.len().min(at + step)), &mut out);
    }
    r.finish(None, &mut out);
    out.to_vec()
}

/// The client's view at every chunking (all the same bytes).
fn through(stream: &[u8]) -> (Client, Vec<u8>) {
    let whole = rewrite(stream, stream.len());
    for step in [1, 7, 64] {
        assert_eq!(rewrite(stream, step), whole, "{step}-byte pushes");
    }
    (read(&whole), whole)
}

fn event(ty: &str, mut v: Value, seq: &mut u64) -> String {
    v["type"] = json!(ty);
    v["sequence_number"] = json!(*seq);
    *seq += 1;
    format!("event: {ty}\ndata: {v}\n\n")
}

/// A response: a reasoning item (encrypted), then function calls with these arguments
/// (each streamed in two deltas), then a custom tool call and an unknown event.
fn response(calls: &[&str]) -> String {
    let mut seq = 0;
    let mut s = event(
        "response.created",
        json!({"response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        &mut seq,
    );
    let reasoning =
        json!({"id": "rs_1", "type": "reasoning", "encrypted_content": "gAAAA==", "summary": []});
    s += &event(
        "response.output_item.added",
        json!({"output_index": 0, "item": reasoning}),
        &mut seq,
    );
    s += &event(
        "response.output_item.done",
        json!({"output_index": 0, "item": reasoning}),
        &mut seq,
    );
    let mut output = vec![reasoning.clone()];
    for (k, args) in calls.iter().enumerate() {
        let at = k + 1;
        let (id, call_id) = (format!("fc_{at}"), format!("call_{at}"));
        let added = json!({"id": id, "type": "function_call", "status": "in_progress", "arguments": "", "call_id": call_id, "name": "get_weather"});
        s += &event(
            "response.output_item.added",
            json!({"output_index": at, "item": added}),
            &mut seq,
        );
        let half = args.len() / 2;
        for d in [&args[..half], &args[half..]] {
            s += &event(
                "response.function_call_arguments.delta",
                json!({"item_id": id, "output_index": at, "delta": d}),
                &mut seq,
            );
        }
        s += &event(
            "response.function_call_arguments.done",
            json!({"item_id": id, "output_index": at, "arguments": args}),
            &mut seq,
        );
        let done = json!({"id": id, "type": "function_call", "status": "completed", "arguments": args, "call_id": call_id, "name": "get_weather"});
        s += &event(
            "response.output_item.done",
            json!({"output_index": at, "item": done}),
            &mut seq,
        );
        output.push(done);
    }
    let at = calls.len() + 1;
    let custom = json!({"id": "ctc_1", "type": "custom_tool_call", "call_id": "call_c", "name": "apply_patch", "input": "*** Begin Patch"});
    s += &event(
        "response.output_item.added",
        json!({"output_index": at, "item": custom}),
        &mut seq,
    );
    s += &event(
        "response.something_new",
        json!({"output_index": at, "x": [1, 2]}),
        &mut seq,
    );
    s += &event(
        "response.output_item.done",
        json!({"output_index": at, "item": custom}),
        &mut seq,
    );
    output.push(custom);
    s += &event(
        "response.completed",
        json!({"response": {"id": "resp_1", "status": "completed", "output": output, "usage": {"total_tokens": 5}}}),
        &mut seq,
    );
    s
}

/// The events of an SSE stream: (type, data) each, and the data's JSON.
fn events(stream: &str) -> Vec<(String, String, Value)> {
    stream
        .split("\n\n")
        .filter(|b| !b.is_empty() && !b.starts_with(':'))
        .map(|b| {
            let ty = b
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .unwrap_or("");
            let data = b.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
            (
                ty.to_string(),
                data.to_string(),
                serde_json::from_str(data).unwrap(),
            )
        })
        .collect()
}

/// A stream with nothing to change: every event byte for byte, but a valid call's
/// argument deltas, which the client gets as one delta of the whole arguments numbered as
/// the first of them (a client reads one event per call, not one per few tokens).
#[test]
fn a_stream_with_nothing_to_change_passes_byte_for_byte_but_its_deltas_joined() {
    const DELTA: &str = "response.function_call_arguments.delta";
    for stream in [
        response(&[r#"{"city":"Oslo"}"#, r#"{"city":"Rome"}"#]),
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/captures/responses-function-calls.sse"
        ))
        .unwrap(),
    ] {
        let (c, out) = through(stream.as_bytes());
        let out = String::from_utf8(out).unwrap();
        let (want, got) = (events(&stream), events(&out));
        let others = |e: &[(String, String, Value)]| -> Vec<(String, String)> {
            e.iter()
                .filter(|(_, _, v)| v["type"] != DELTA)
                .map(|(t, d, _)| (t.clone(), d.clone()))
                .collect()
        };
        assert_eq!(
            others(&got),
            others(&want),
            "every other event byte for byte"
        );
        // Per item: one delta, the whole arguments, at the first delta's number, in the
        // deltas' place.
        let mut items: Vec<&str> = want
            .iter()
            .filter(|(_, _, v)| v["type"] == DELTA)
            .map(|(_, _, v)| v["item_id"].as_str().unwrap())
            .collect();
        items.dedup();
        for id in items {
            let of = |e: &[(String, String, Value)]| -> Vec<(usize, Value)> {
                e.iter()
                    .enumerate()
                    .filter(|(_, (_, _, v))| v["type"] == DELTA && v["item_id"] == id)
                    .map(|(i, (_, _, v))| (i, v.clone()))
                    .collect()
            };
            let (w, g) = (of(&want), of(&got));
            assert_eq!(g.len(), 1, "one delta for {id}");
            let whole: String = w
                .iter()
                .map(|(_, v)| v["delta"].as_str().unwrap())
                .collect();
            let (gi, gv) = &g[0];
            let (wi, _) = w.last().unwrap();
            assert_eq!(gv["delta"].as_str().unwrap(), whole);
            assert_eq!(gv["sequence_number"], w[0].1["sequence_number"]);
            assert_eq!(gv["output_index"], w[0].1["output_index"]);
            // In the deltas' place: after what came before the first, before what came
            // after the last.
            assert_eq!(got[gi - 1].1, want[w[0].0 - 1].1, "in the deltas' place");
            assert_eq!(got[gi + 1].1, want[wi + 1].1, "in the deltas' place");
        }
        assert!(c.comments.is_empty());
        assert_eq!(c.end.as_deref(), Some("response.completed"));
    }
}

/// Glued calls become one item each; everything after moves by the items added; the
/// duplicate is dropped and said; sequence numbers stay strictly increasing; the final
/// output lists what the client got. (At 9dc3123 the route passed everything through: the
/// agent failed to parse `{"city":"Oslo"}{"city":"Rome"}` and ran nothing.)
#[test]
fn glued_calls_become_items_and_the_output_agrees() {
    let stream = response(&[
        r#"{"city":"Oslo"}{"city":"Rome"}{"city":"Oslo"}"#,
        r#"{"city":"Paris"}"#,
    ]);
    let (c, out) = through(stream.as_bytes());
    let text = String::from_utf8(out).unwrap();
    assert_eq!(c.end.as_deref(), Some("response.completed"), "{text}");
    let calls: Vec<_> = c
        .items
        .values()
        .filter(|i| !i.1.is_empty() && i.2 == "get_weather")
        .cloned()
        .collect();
    let args: Vec<&str> = calls.iter().map(|i| i.3.as_str()).collect();
    assert_eq!(
        args,
        [
            r#"{"city":"Oslo"}"#,
            r#"{"city":"Rome"}"#,
            r#"{"city":"Paris"}"#
        ]
    );
    // Output indexes 0..n with no gap: reasoning, three calls, the custom tool call.
    assert_eq!(c.items.keys().copied().collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    assert_eq!(c.items[&4].1, "call_c", "the custom tool call, untouched");
    // The first keeps its ids; the split one has ids of its own, in the same shapes.
    assert_eq!(
        (calls[0].0.as_str(), calls[0].1.as_str()),
        ("fc_1", "call_1")
    );
    assert!(calls[1].0.starts_with("fc_") && calls[1].1.starts_with("call_"));
    assert!(!calls[1].1.starts_with("call_1") || calls[1].1.len() > 7);
    assert_eq!(
        (calls[2].0.as_str(), calls[2].1.as_str()),
        ("fc_2", "call_2")
    );
    assert_eq!(
        c.output.as_ref().unwrap(),
        &calls,
        "the final output lists the items streamed"
    );
    assert!(
        c.comments.iter().any(|m| m.contains("dropped a duplicate")),
        "{:?}",
        c.comments
    );
    assert!(
        c.comments
            .iter()
            .any(|m| m.contains("made for a call split from call_1")),
        "{:?}",
        c.comments
    );
    // What the rewriter does not model is byte for byte: the reasoning item, the custom
    // tool call, the unknown event (their sequence numbers and output indexes aside).
    assert!(text.contains(r#""encrypted_content":"gAAAA==""#));
    assert!(text.contains(r#""type":"response.something_new""#) && text.contains(r#""x":[1,2]"#));
}

/// A cut stream, a broken call: never a clean `response.completed`.
#[test]
fn a_cut_stream_ends_with_an_error_and_a_broken_call_is_annotated() {
    let stream = response(&[r#"{"city":"Oslo"}"#]);
    let cut = &stream.as_bytes()[..stream.len() / 2];
    let (c, _) = through(cut);
    assert_eq!(c.end.as_deref(), Some("error"));

    let stream = response(&[r#"{"city":"Os"#]);
    let (c, _) = through(stream.as_bytes());
    assert!(
        c.comments.iter().any(|m| m.contains("tool_call_error")),
        "{:?}",
        c.comments
    );
    let broken = c.items.values().find(|i| i.2 == "get_weather").unwrap();
    assert_eq!(
        broken.3, r#"{"city":"Os"#,
        "the provider's bytes, as it sent them"
    );
}

/// The follow-up request: made calls go in before the first output that answers them,
/// once, and nothing else changes; a body with nothing to add is left alone.
#[test]
fn a_follow_up_gets_the_made_calls_before_their_outputs() {
    use toolstream::rewrite::{continue_request, previous_response_id, MadeCall};
    let made = [MadeCall {
        call_id: "call_X".into(),
        name: "f".into(),
        arguments: r#"{"a":2}"#.into(),
    }];
    let body = r#"{"model":"m", "previous_response_id":"resp_\u0031","input":[{"type":"function_call_output","call_id":"call_1","output":"1"}, {"type":"function_call_output","call_id":"call_X","output":"2"},{"type":"function_call_output","call_id":"call_X","output":"again"}]}"#;
    assert_eq!(
        previous_response_id(body.as_bytes()).as_deref(),
        Some("resp_1")
    );
    let (out, n) = continue_request(body.as_bytes(), &made).unwrap();
    assert_eq!(n, 1);
    let want = body.replacen(
        r#" {"type":"function_call_output","call_id":"call_X""#,
        r#" {"arguments":"{\"a\":2}","call_id":"call_X","name":"f","type":"function_call"},{"type":"function_call_output","call_id":"call_X""#,
        1,
    );
    assert_eq!(String::from_utf8(out).unwrap(), want);
    // Already in the input, not answered, or no input array: nothing to do.
    let present = r#"{"input":[{"type":"function_call","call_id":"call_X"},{"type":"function_call_output","call_id":"call_X"}]}"#;
    assert!(continue_request(present.as_bytes(), &made).is_none());
    assert!(continue_request(
        br#"{"input":[{"type":"function_call_output","call_id":"call_1"}]}"#,
        &made
    )
    .is_none());
    assert!(continue_request(br#"{"input":"hi"}"#, &made).is_none());
    assert!(continue_request(br#"{"input":[}"#, &made).is_none());
    assert_eq!(previous_response_id(br#"{"input":"hi"}"#), None);
}

/// The rewriter reports the calls it made, with the response's id, for the follow-up.
#[test]
fn the_rewriter_reports_the_calls_it_made() {
    let stream = response(&[r#"{"city":"Oslo"}{"city":"Rome"}"#]);
    let mut r = ResponsesRewriter::new();
    let mut out = BytesMut::new();
    r.push(Bytes::from(stream), &mut out);
    let (_, cont) = r.finish_with_calls(None, &mut out);
    let cont = cont.expect("a call was made");
    assert_eq!(cont.response_id, "resp_1");
    assert_eq!(cont.calls.len(), 1);
    assert_eq!(cont.calls[0].arguments, r#"{"city":"Rome"}"#);
    assert!(String::from_utf8(out.to_vec())
        .unwrap()
        .contains(&cont.calls[0].call_id));
    // Nothing made: nothing to report.
    let mut r = ResponsesRewriter::new();
    let mut out = BytesMut::new();
    r.push(Bytes::from(response(&[r#"{"city":"Oslo"}"#])), &mut out);
    assert!(r.finish_with_calls(None, &mut out).1.is_none());
}

/// A call that streams past what a response may hold (here 20 MiB of arguments that never
/// close): its events stop being held, memory stays bounded, and the call is not lost —
/// what the library makes of it (a failure) reaches the client at the end.
#[test]
fn a_call_over_the_limit_is_not_held_and_not_lost() {
    let mut seq = 0;
    let mut s = event(
        "response.output_item.added",
        json!({"output_index": 0, "item": {"id": "fc_1", "type": "function_call", "arguments": "", "call_id": "call_1", "name": "f"}}),
        &mut seq,
    );
    s += &event(
        "response.function_call_arguments.delta",
        json!({"item_id": "fc_1", "output_index": 0, "delta": "{\"a\":\""}),
        &mut seq,
    );
    let piece = "x".repeat(64 << 10);
    let stream = Bytes::from(s);
    let mut r = ResponsesRewriter::new();
    let mut out = BytesMut::new();
    r.push(stream, &mut out);
    for _ in 0..(20 << 20) / piece.len() {
        let e = event(
            "response.function_call_arguments.delta",
            json!({"item_id": "fc_1", "output_index": 0, "delta": piece}),
            &mut seq,
        );
        r.push(Bytes::from(e), &mut out);
        // Nothing of the call goes out while it streams, and nothing piles up.
        assert!(out.len() < 4096, "{} bytes out", out.len());
    }
    r.finish(None, &mut out);
    let c = read(&out);
    assert_eq!(c.end.as_deref(), Some("error"));
    // (A call's fragments are counted, not held: 20 MiB of them hold nothing past what the
    // assembler keeps up to its limit.)
    assert!(
        c.comments.iter().any(|m| m.contains("tool_call_error")),
        "{:?}",
        c.comments
    );
    assert_eq!(c.items.len(), 1, "the failed call, as an item");
}
