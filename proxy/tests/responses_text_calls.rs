//! The Responses rewriter with `--text-calls`: calls a model wrote into a message's
//! `output_text` become `function_call` items right after the message, the message's
//! deltas and done events carry the text without them, later items move down, and the
//! terminal event's output lists what the client got — checked by a strict client at every
//! chunking.

use std::collections::BTreeMap;

use bytes::{Bytes, BytesMut};
use serde_json::{json, Value};
use toolstream::rewrite::text::{TextCalls, TextSetting};
use toolstream::rewrite::ResponsesRewriter;
use toolstream::text_calls::Tools;

fn weather() -> Option<TextSetting> {
    TextSetting::new(TextCalls::Auto, Tools::from_names(["get_weather"]))
}

/// What a strict client holds at the end: the items done, in output order, and the
/// terminal event's output.
#[derive(Debug, Default, PartialEq)]
struct Client {
    items: Vec<Value>,
    output: Option<Vec<Value>>,
    end: Option<String>,
    comments: Vec<String>,
}

fn read(out: &[u8]) -> Client {
    let text = std::str::from_utf8(out).expect("UTF-8");
    let mut c = Client::default();
    let mut last_seq: Option<u64> = None;
    // By output index: the item as added, its text so far, done.
    let mut open: BTreeMap<u64, (Value, String, bool)> = BTreeMap::new();
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
        let s = v["sequence_number"].as_u64().expect("a sequence number");
        assert!(
            last_seq.is_none_or(|l| s > l),
            "sequence {s} after {last_seq:?}"
        );
        last_seq = Some(s);
        let at = v["output_index"].as_u64();
        match v["type"].as_str().unwrap() {
            "response.output_item.added" => {
                let at = at.unwrap();
                assert_eq!(at as usize, open.len(), "items added at 0, 1, 2, ...");
                assert!(
                    open.values().all(|o| o.2),
                    "an item added while another is open"
                );
                open.insert(at, (v["item"].clone(), String::new(), false));
            }
            "response.output_text.delta" => {
                let o = open
                    .get_mut(&at.unwrap())
                    .expect("a delta of an item added");
                assert!(!o.2, "a delta after its item's done");
                assert_eq!(v["item_id"], o.0["id"], "a delta of another item");
                o.1.push_str(v["delta"].as_str().unwrap());
            }
            "response.output_text.done" => {
                let o = &open[&at.unwrap()];
                assert_eq!(
                    v["text"].as_str().unwrap(),
                    o.1,
                    "the done text is the deltas'"
                );
            }
            "response.content_part.done" => {
                let o = &open[&at.unwrap()];
                assert_eq!(
                    v["part"]["text"].as_str().unwrap(),
                    o.1,
                    "the part is the deltas'"
                );
            }
            "response.output_item.done" => {
                let o = open.get_mut(&at.unwrap()).unwrap();
                assert_eq!(v["item"]["id"], o.0["id"]);
                if v["item"]["type"] == "message" {
                    assert_eq!(
                        v["item"]["content"][0]["text"].as_str().unwrap(),
                        o.1,
                        "the message done is the deltas'"
                    );
                }
                o.2 = true;
                c.items.push(v["item"].clone());
            }
            t @ ("response.completed" | "response.incomplete") => {
                c.output = v["response"]["output"].as_array().cloned();
                c.end = Some(t.to_string());
            }
            "error" => c.end = Some("error".into()),
            _ => {}
        }
    }
    c
}

fn rewrite(stream: &[u8], step: usize, text: Option<TextSetting>) -> Vec<u8> {
    let data = Bytes::copy_from_slice(stream);
    let mut r = ResponsesRewriter::with_text(text);
    let mut out = BytesMut::new();
    for at in (0..data.len()).step_by(step.max(1)) {
        r.push(data.slice(at..data.len().min(at + step)), &mut out);
    }
    r.finish(None, &mut out);
    out.to_vec()
}

/// The same bytes out at every chunking; the client's view of them.
fn through(stream: &[u8], text: Option<TextSetting>) -> (Client, Vec<u8>) {
    let whole = rewrite(stream, stream.len(), text.clone());
    for step in [1, 2, 3, 7, 64] {
        assert_eq!(
            rewrite(stream, step, text.clone()),
            whole,
            "{step}-byte pushes"
        );
    }
    (read(&whole), whole)
}

fn event(ty: &str, mut v: Value, seq: &mut u64) -> String {
    v["type"] = json!(ty);
    v["sequence_number"] = json!(*seq);
    *seq += 1;
    format!("event: {ty}\ndata: {v}\n\n")
}

/// A response: a reasoning item, a message streaming these text deltas, a native
/// function call, then the end.
fn response(deltas: &[&str]) -> String {
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
    let text: String = deltas.concat();
    let msg = |status: &str, text: &str| {
        let content = if status == "in_progress" {
            json!([])
        } else {
            json!([{"type": "output_text", "annotations": [], "text": text}])
        };
        json!({"id": "msg_1", "type": "message", "status": status, "role": "assistant", "content": content})
    };
    s += &event(
        "response.output_item.added",
        json!({"output_index": 1, "item": msg("in_progress", "")}),
        &mut seq,
    );
    s += &event(
        "response.content_part.added",
        json!({"item_id": "msg_1", "output_index": 1,
        "content_index": 0, "part": {"type": "output_text", "annotations": [], "text": ""}}),
        &mut seq,
    );
    for d in deltas {
        s += &event(
            "response.output_text.delta",
            json!({"item_id": "msg_1", "output_index": 1,
            "content_index": 0, "delta": d, "logprobs": []}),
            &mut seq,
        );
    }
    s += &event(
        "response.output_text.done",
        json!({"item_id": "msg_1", "output_index": 1,
        "content_index": 0, "text": text, "logprobs": []}),
        &mut seq,
    );
    s += &event(
        "response.content_part.done",
        json!({"item_id": "msg_1", "output_index": 1,
        "content_index": 0, "part": {"type": "output_text", "annotations": [], "text": text}}),
        &mut seq,
    );
    let done = msg("completed", &text);
    s += &event(
        "response.output_item.done",
        json!({"output_index": 1, "item": done}),
        &mut seq,
    );
    let call = json!({"id": "fc_9", "type": "function_call", "status": "completed",
        "arguments": "{\"city\":\"Oslo\"}", "call_id": "call_9", "name": "get_weather"});
    let added = json!({"id": "fc_9", "type": "function_call", "status": "in_progress",
        "arguments": "", "call_id": "call_9", "name": "get_weather"});
    s += &event(
        "response.output_item.added",
        json!({"output_index": 2, "item": added}),
        &mut seq,
    );
    s += &event(
        "response.function_call_arguments.delta",
        json!({"item_id": "fc_9", "output_index": 2,
        "delta": "{\"city\":\"Oslo\"}"}),
        &mut seq,
    );
    s += &event(
        "response.function_call_arguments.done",
        json!({"item_id": "fc_9", "output_index": 2,
        "arguments": "{\"city\":\"Oslo\"}"}),
        &mut seq,
    );
    s += &event(
        "response.output_item.done",
        json!({"output_index": 2, "item": call}),
        &mut seq,
    );
    s += &event(
        "response.completed",
        json!({"response": {"id": "resp_1", "status": "completed",
            "output": [reasoning, done, call], "usage": {"total_tokens": 5}}}),
        &mut seq,
    );
    s
}

/// (type, text or name, arguments) of each item.
fn summary(items: &[Value]) -> Vec<(String, String, String)> {
    items
        .iter()
        .map(|i| {
            let kind = i["type"].as_str().unwrap().to_string();
            match kind.as_str() {
                "message" => (
                    kind,
                    i["content"][0]["text"].as_str().unwrap().into(),
                    String::new(),
                ),
                "function_call" => (
                    kind,
                    i["name"].as_str().unwrap().into(),
                    i["arguments"].as_str().unwrap().into(),
                ),
                _ => (kind, String::new(), String::new()),
            }
        })
        .collect()
}

fn s(a: &str, b: &str, c: &str) -> (String, String, String) {
    (a.into(), b.into(), c.into())
}

#[test]
fn a_call_in_the_text_becomes_an_item_after_its_message() {
    let stream = response(&[
        "Let me check. <tool",
        "_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>",
        " Then I answer.",
    ]);
    let (c, _) = through(stream.as_bytes(), weather());
    let want = vec![
        s("reasoning", "", ""),
        s("message", "Let me check.  Then I answer.", ""),
        s("function_call", "get_weather", r#"{"city": "Paris"}"#),
        s("function_call", "get_weather", r#"{"city":"Oslo"}"#),
    ];
    assert_eq!(summary(&c.items), want);
    assert_eq!(c.end.as_deref(), Some("response.completed"));
    let output = c.output.expect("the terminal's output");
    assert_eq!(output, c.items, "the output lists the items the client got");
    // The call made has ids in the API's shapes, unique, with no numeric tail; the native
    // call keeps its own.
    let made = &c.items[2];
    let (id, call_id) = (
        made["id"].as_str().unwrap(),
        made["call_id"].as_str().unwrap(),
    );
    assert!(
        id.starts_with("fc_") && call_id.starts_with("call_"),
        "{made}"
    );
    for x in [id, call_id] {
        let tail = x.rsplit(['_', '-']).next().unwrap();
        assert!(!tail.bytes().all(|b| b.is_ascii_digit()), "{x}");
    }
    assert_eq!(c.items[3]["call_id"], "call_9");
    assert!(
        c.comments
            .iter()
            .any(|n| n.contains("made for a call taken out of the text")),
        "{:?}",
        c.comments
    );
}

#[test]
fn a_message_of_only_calls_keeps_an_empty_text_and_each_call_is_an_item() {
    let stream = response(&[
        "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>",
        "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>",
    ]);
    let (c, _) = through(stream.as_bytes(), weather());
    assert_eq!(
        summary(&c.items),
        vec![
            s("reasoning", "", ""),
            s("message", "", ""),
            s("function_call", "get_weather", r#"{"city": "Paris"}"#),
            s("function_call", "get_weather", r#"{"city": "Rome"}"#),
            s("function_call", "get_weather", r#"{"city":"Oslo"}"#),
        ]
    );
    assert_eq!(c.output.unwrap(), c.items);
    assert_ne!(c.items[2]["call_id"], c.items[3]["call_id"]);
}

#[test]
fn off_and_plain_text_pass_byte_for_byte() {
    let marked =
        response(&["<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>"]);
    assert_eq!(rewrite(marked.as_bytes(), 64, None), marked.as_bytes());
    let plain = response(&["Hello, ", "world."]);
    let (_, out) = through(plain.as_bytes(), weather());
    assert_eq!(out, plain.as_bytes());
}

#[test]
fn markup_of_an_undeclared_tool_or_unreadable_stays_in_the_text() {
    let undeclared = "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>";
    let broken = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": }}</tool_call>";
    let stream = response(&["A ", undeclared, " B ", broken]);
    let (c, _) = through(stream.as_bytes(), weather());
    assert_eq!(
        summary(&c.items)[1],
        s("message", &format!("A {undeclared} B {broken}"), "")
    );
    assert_eq!(c.items.len(), 3, "no call made");
    assert!(
        c.comments.iter().any(|n| n.contains("text_call_error")),
        "{:?}",
        c.comments
    );
    assert_eq!(c.output.unwrap(), c.items);
}

#[test]
fn a_stream_cut_inside_the_text_keeps_the_text_and_ends_with_an_error() {
    let stream = response(&["Let me ", "check. <tool_call>{\"name\": \"get_"]);
    let cut = &stream.as_bytes()[..stream.find("response.output_text.done").unwrap() - 7];
    let out = rewrite(cut, 64, weather());
    let text = std::str::from_utf8(&out).unwrap();
    assert!(text.contains("Let me "), "{text}");
    assert!(
        text.contains("<tool_call>{\\\"name\\\": \\\"get_"),
        "held text out: {text}"
    );
    assert_eq!(read(&out).end.as_deref(), Some("error"));
}

/// Another item's `output_item.done` at the message's output index (an upstream that reused
/// the index) ends nothing of the text: the library reads the response's text as one, so a
/// call whose markup streams on both sides of that event is the pipeline's call here too.
/// (Found by the `proxy_structured` fuzz target: the message's text was ended there, and the
/// markup split in two was passed on as text.)
#[test]
fn another_items_done_at_the_messages_index_ends_nothing_of_the_text() {
    let mut seq = 0;
    let text = |delta: &str, seq: &mut u64| {
        event(
            "response.output_text.delta",
            json!({"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": delta}),
            seq,
        )
    };
    let custom = json!({"id": "ctc_1", "type": "custom_tool_call", "call_id": "call_c", "name": "apply_patch", "input": "x"});
    let mut s = text("<tool_call>{\"name\": \"get_weather\", ", &mut seq);
    s += &event(
        "response.output_item.added",
        json!({"output_index": 0, "item": custom}),
        &mut seq,
    );
    s += &event(
        "response.output_item.done",
        json!({"output_index": 0, "item": custom}),
        &mut seq,
    );
    s += &text(
        "\"arguments\": {\"city\": \"Paris\"}}</tool_call>",
        &mut seq,
    );
    s += &event(
        "response.completed",
        json!({"response": {"id": "resp_1", "status": "completed", "output": []}}),
        &mut seq,
    );
    // The library's calls.
    let mut stream =
        toolstream::pipeline::Stream::new(Some(toolstream::provider::Format::OpenAiResponses))
            .with_text_calls(None, Tools::from_names(["get_weather"]));
    let mut events = Vec::new();
    stream.push(Bytes::copy_from_slice(s.as_bytes()), &mut events);
    stream.finish(&mut events);
    let want: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            toolstream::assemble::Event::ToolCall(c) => Some((
                c.name.clone(),
                String::from_utf8(c.arguments.to_vec()).unwrap(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(want.len(), 1, "{events:?}");
    // The client's: the function_call items done.
    for step in [1, 7, 64, s.len()] {
        let out = rewrite(s.as_bytes(), step, weather());
        let got: Vec<(String, String)> = std::str::from_utf8(&out)
            .unwrap()
            .split("\n\n")
            .filter_map(|b| b.lines().find_map(|l| l.strip_prefix("data: ")))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .filter(|v| {
                v["type"] == "response.output_item.done" && v["item"]["type"] == "function_call"
            })
            .map(|v| {
                let item = &v["item"];
                (
                    item["name"].as_str().unwrap().to_string(),
                    item["arguments"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(got, want, "{step}-byte pushes");
    }
}
