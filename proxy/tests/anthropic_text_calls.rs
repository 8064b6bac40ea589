//! The Messages rewriter with `--text-calls`: calls a model wrote into a `text` block come
//! out as `tool_use` blocks in their place, the text around them in text blocks of their
//! own, at every cut of the upstream's bytes; a strict client checks the block events'
//! order as the `anthropic` SDK's accumulator relies on it.

use bytes::{Bytes, BytesMut};
use serde_json::{json, Value};
use toolstream::rewrite::text::{declared_tools, TextCalls, TextSetting};
use toolstream::rewrite::AnthropicRewriter;
use toolstream::text_calls::Tools;

fn weather() -> Option<TextSetting> {
    TextSetting::new(TextCalls::Auto, Tools::from_names(["get_weather"]))
}

/// A block as the client holds it.
#[derive(Clone, Debug, PartialEq)]
enum Block {
    Text(String),
    /// id, name, input (JSON text).
    Tool(String, String, String),
    Other(String),
}

/// What a strict client accumulates: the blocks in index order, the stop reason, whether
/// `message_stop` came, an error event, the comments.
#[derive(Debug, Default, PartialEq)]
struct Message {
    blocks: Vec<Block>,
    stop_reason: Option<String>,
    stopped: bool,
    error: bool,
    comments: Vec<String>,
}

fn client(out: &[u8]) -> Message {
    let mut m = Message::default();
    let mut open: Option<usize> = None;
    let text = std::str::from_utf8(out).expect("UTF-8 out");
    for event in text.split("\n\n").filter(|b| !b.is_empty()) {
        if let Some(note) = event.strip_prefix(": ") {
            m.comments.push(note.to_string());
            continue;
        }
        let mut lines = event.lines();
        let ty = lines
            .next()
            .and_then(|l| l.strip_prefix("event: "))
            .expect("an event line");
        let data = lines
            .next()
            .and_then(|l| l.strip_prefix("data: "))
            .expect("a data line");
        assert!(lines.next().is_none(), "one data line: {event}");
        let v: Value = serde_json::from_str(data).expect("each event is JSON");
        assert_eq!(v["type"], ty, "the payload's type is the event's");
        assert!(!m.stopped, "nothing after message_stop");
        match ty {
            "content_block_start" => {
                assert!(open.is_none(), "a block starts after the last one stopped");
                let i = v["index"].as_u64().unwrap() as usize;
                assert_eq!(i, m.blocks.len(), "blocks numbered 0, 1, 2, ...");
                let b = &v["content_block"];
                m.blocks.push(match b["type"].as_str().unwrap() {
                    "text" => Block::Text(b["text"].as_str().unwrap().to_string()),
                    "tool_use" => {
                        assert_eq!(b["input"], json!({}));
                        Block::Tool(
                            b["id"].as_str().unwrap().into(),
                            b["name"].as_str().unwrap().into(),
                            String::new(),
                        )
                    }
                    other => Block::Other(other.to_string()),
                });
                open = Some(i);
            }
            "content_block_delta" => {
                let i = v["index"].as_u64().unwrap() as usize;
                assert_eq!(open, Some(i), "a delta of the open block");
                match (&mut m.blocks[i], v["delta"]["type"].as_str().unwrap()) {
                    (Block::Text(t), "text_delta") => {
                        t.push_str(v["delta"]["text"].as_str().unwrap())
                    }
                    (Block::Tool(_, _, input), "input_json_delta") => {
                        input.push_str(v["delta"]["partial_json"].as_str().unwrap())
                    }
                    (b, d) => panic!("a {d} in {b:?}"),
                }
            }
            "content_block_stop" => {
                let i = v["index"].as_u64().unwrap() as usize;
                assert_eq!(open.take(), Some(i), "the open block stops");
                if let Block::Text(t) = &m.blocks[i] {
                    assert!(
                        !t.is_empty(),
                        "no empty text block (the API refuses it in history)"
                    );
                }
                if let Block::Tool(_, _, input) = &m.blocks[i] {
                    serde_json::from_str::<serde_json::Map<String, Value>>(input)
                        .expect("a tool_use input is one object");
                }
            }
            "message_delta" => {
                m.stop_reason = v["delta"]["stop_reason"].as_str().map(str::to_string)
            }
            "message_stop" => {
                assert!(open.is_none(), "every block stopped");
                m.stopped = true
            }
            "error" => m.error = true,
            "message_start" | "ping" => {}
            other => panic!("unexpected event {other}"),
        }
    }
    m
}

fn rewrite(data: &[u8], cuts: &[usize], text: Option<TextSetting>, cut: Option<&str>) -> Vec<u8> {
    let data = Bytes::copy_from_slice(data);
    let mut r = AnthropicRewriter::with_text(text);
    let mut out = BytesMut::new();
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&data.len())) {
        r.push(data.slice(prev..c), &mut out);
        prev = c;
    }
    r.finish(cut, &mut out);
    out.to_vec()
}

fn event(s: &mut String, v: Value) {
    let ty = v["type"].as_str().unwrap().to_string();
    s.push_str(&format!("event: {ty}\ndata: {v}\n\n"));
}

/// A message of one text block with these deltas, then `end_turn` and `message_stop`
/// (`stop`: false leaves the stream cut inside the text block).
fn stream(deltas: &[&str], stop: bool) -> Vec<u8> {
    let mut s = String::new();
    event(
        &mut s,
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
        "role": "assistant", "content": [], "model": "m", "stop_reason": null,
        "usage": {"input_tokens": 5, "output_tokens": 1}}}),
    );
    event(
        &mut s,
        json!({"type": "content_block_start", "index": 0,
        "content_block": {"type": "text", "text": ""}}),
    );
    for d in deltas {
        event(
            &mut s,
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "text_delta", "text": d}}),
        );
    }
    if stop {
        event(&mut s, json!({"type": "content_block_stop", "index": 0}));
        event(
            &mut s,
            json!({"type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": null},
            "usage": {"output_tokens": 9}}),
        );
        event(&mut s, json!({"type": "message_stop"}));
    }
    s.into_bytes()
}

/// The client's message: the same at every single cut and one byte at a time, with the
/// ids made aside (each checked for the provider's shape first).
fn same_at_every_cut(data: &[u8], text: Option<TextSetting>) -> Message {
    let strip = |mut m: Message| {
        for b in &mut m.blocks {
            if let Block::Tool(id, _, _) = b {
                assert!(id.starts_with("toolu_"), "an Anthropic-shaped id: {id}");
                let tail = id.rsplit(['_', '-']).next().unwrap();
                assert!(
                    !tail.bytes().all(|c| c.is_ascii_digit()),
                    "no id a client reads as an entry of a batch: {id}"
                );
                id.clear();
            }
        }
        m.comments.retain(|c| !c.starts_with("toolstream id "));
        m
    };
    let whole = strip(client(&rewrite(data, &[], text.clone(), None)));
    for cut in 1..data.len() {
        let got = strip(client(&rewrite(data, &[cut], text.clone(), None)));
        assert_eq!(got, whole, "cut at {cut}");
    }
    let bytes: Vec<usize> = (1..data.len()).collect();
    assert_eq!(
        strip(client(&rewrite(data, &bytes, text, None))),
        whole,
        "byte by byte"
    );
    whole
}

fn tool(name: &str, input: &str) -> Block {
    Block::Tool(String::new(), name.into(), input.into())
}

#[test]
fn a_call_in_the_text_becomes_a_tool_use_block_between_the_text_around_it() {
    let data = stream(
        &[
            "Let me check. <tool",
            "_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>",
            " Then I answer.",
        ],
        true,
    );
    let m = same_at_every_cut(&data, weather());
    assert_eq!(
        m.blocks,
        vec![
            Block::Text("Let me check. ".into()),
            tool("get_weather", r#"{"city": "Paris"}"#),
            Block::Text(" Then I answer.".into()),
        ]
    );
    assert_eq!(m.stop_reason.as_deref(), Some("tool_use"));
    assert!(m.stopped && !m.error);
}

#[test]
fn a_text_block_that_held_only_calls_is_not_sent() {
    let data = stream(
        &[
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>",
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}</tool_call>",
        ],
        true,
    );
    let m = same_at_every_cut(&data, weather());
    assert_eq!(
        m.blocks,
        vec![
            tool("get_weather", r#"{"city": "Paris"}"#),
            tool("get_weather", r#"{"city": "Rome"}"#),
        ]
    );
    assert_eq!(m.stop_reason.as_deref(), Some("tool_use"));
    // Two calls, two different ids.
    let out = client(&rewrite(&data, &[], weather(), None));
    let ids: Vec<&String> = out
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Tool(id, _, _) => Some(id),
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
    assert!(
        out.comments
            .iter()
            .any(|c| c.contains("made for a call taken out of the text")),
        "the ids made are reported: {:?}",
        out.comments
    );
}

#[test]
fn off_no_tools_and_plain_text_forward_the_stream_byte_for_byte() {
    let marked = stream(
        &["<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>"],
        true,
    );
    assert_eq!(rewrite(&marked, &[], None, None), marked);
    assert_eq!(
        TextSetting::new(TextCalls::Auto, Tools::default()).map(|_| ()),
        None,
        "no declared tool: no extraction at all"
    );
    let plain = stream(&["Hello, ", "world."], true);
    assert_eq!(rewrite(&plain, &[], weather(), None), plain);
}

#[test]
fn markup_of_an_undeclared_tool_stays_in_the_text() {
    let call = "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>";
    let data = stream(&["Sure: ", call], true);
    let m = same_at_every_cut(&data, weather());
    assert_eq!(m.blocks, vec![Block::Text(format!("Sure: {call}"))]);
    assert_eq!(m.stop_reason.as_deref(), Some("end_turn"));
}

#[test]
fn markup_that_cannot_be_read_goes_back_into_the_text_with_a_note() {
    let broken = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": }}</tool_call>";
    let data = stream(&["A ", broken, " B"], true);
    let m = same_at_every_cut(&data, weather());
    assert_eq!(m.blocks, vec![Block::Text(format!("A {broken} B"))]);
    assert_eq!(m.stop_reason.as_deref(), Some("end_turn"));
    assert!(
        m.comments.iter().any(|c| c.contains("text_call_error")),
        "{:?}",
        m.comments
    );
}

#[test]
fn a_stream_cut_inside_the_text_keeps_its_text_and_ends_with_an_error() {
    let data = stream(&["Let me ", "check. <tool_call>{\"name\": \"get_"], false);
    let m = client(&rewrite(&data, &[], weather(), None));
    assert!(m.error && !m.stopped);
    assert_eq!(
        m.blocks[0],
        Block::Text("Let me check. <tool_call>{\"name\": \"get_".into()),
        "the held text is not lost"
    );
}

#[test]
fn other_blocks_keep_their_place_around_the_calls() {
    let mut s = String::new();
    event(
        &mut s,
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
        "role": "assistant", "content": [], "model": "m", "stop_reason": null,
        "usage": {"input_tokens": 5, "output_tokens": 1}}}),
    );
    event(
        &mut s,
        json!({"type": "content_block_start", "index": 0,
        "content_block": {"type": "thinking", "thinking": ""}}),
    );
    event(&mut s, json!({"type": "content_block_stop", "index": 0}));
    event(
        &mut s,
        json!({"type": "content_block_start", "index": 1,
        "content_block": {"type": "text", "text": ""}}),
    );
    event(
        &mut s,
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta",
        "text": "x <tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>"}}),
    );
    event(&mut s, json!({"type": "content_block_stop", "index": 1}));
    event(
        &mut s,
        json!({"type": "content_block_start", "index": 2, "content_block":
        {"type": "tool_use", "id": "toolu_native", "name": "get_weather", "input": {}}}),
    );
    event(
        &mut s,
        json!({"type": "content_block_delta", "index": 2,
        "delta": {"type": "input_json_delta", "partial_json": "{\"city\":\"Oslo\"}"}}),
    );
    event(&mut s, json!({"type": "content_block_stop", "index": 2}));
    event(
        &mut s,
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
        "usage": {"output_tokens": 9}}),
    );
    event(&mut s, json!({"type": "message_stop"}));
    let m = same_at_every_cut(s.as_bytes(), weather());
    assert_eq!(
        m.blocks,
        vec![
            Block::Other("thinking".into()),
            Block::Text("x ".into()),
            tool("get_weather", "{}"),
            tool("get_weather", r#"{"city":"Oslo"}"#),
        ]
    );
    assert_eq!(m.stop_reason.as_deref(), Some("tool_use"));
}

#[test]
fn declared_tools_reads_anthropic_and_responses_tool_shapes() {
    let anthropic = br#"{"tools": [{"name": "a", "input_schema": {"type": "object"}}]}"#;
    assert!(declared_tools(anthropic).contains("a"));
    let responses =
        br#"{"tools": [{"type": "function", "name": "b", "parameters": {"type": "object"}}]}"#;
    assert!(declared_tools(responses).contains("b"));
}

#[test]
fn a_text_block_at_the_index_of_an_open_call_does_not_lose_the_call() {
    // Found by fuzzing: a stop at an index a tool_use block and a text block both had
    // ends the call, as the decoder reads it; the call (here failed: its arguments never
    // closed) must reach the client.
    let mut s = String::new();
    event(
        &mut s,
        json!({"type": "content_block_start", "index": 1, "content_block":
        {"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {}}}),
    );
    event(
        &mut s,
        json!({"type": "content_block_delta", "index": 1,
        "delta": {"type": "input_json_delta", "partial_json": "{\"city\":"}}),
    );
    event(
        &mut s,
        json!({"type": "content_block_start", "index": 1,
        "content_block": {"type": "text", "text": ""}}),
    );
    event(
        &mut s,
        json!({"type": "content_block_delta", "index": 1,
        "delta": {"type": "text_delta", "text": "me"}}),
    );
    event(&mut s, json!({"type": "content_block_stop", "index": 1}));
    event(&mut s, json!({"type": "message_stop"}));
    let with = rewrite(s.as_bytes(), &[], weather(), None);
    let without = rewrite(s.as_bytes(), &[], None, None);
    let calls = |out: &[u8]| {
        let text = String::from_utf8(out.to_vec()).unwrap();
        text.matches("\"partial_json\":\"{\\\"city\\\":\"").count()
    };
    assert_eq!(calls(&without), 1, "{}", String::from_utf8_lossy(&without));
    assert_eq!(calls(&with), 1, "{}", String::from_utf8_lossy(&with));
}
