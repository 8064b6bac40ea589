//! The OpenAI rewriter with `--text-calls`: calls a model wrote into its content come out
//! as tool calls, the content without them, at every cut of the upstream's bytes; markup of
//! undeclared tools, and markup that cannot be read, stays in the text byte for byte.

use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use serde_json::{json, Value};
use toolstream::classify::Provider;
use toolstream::rewrite::text::{declared_tools, TextCalls, TextSetting};
use toolstream::rewrite::{rewrite_completion, OpenAiRewriter};
use toolstream::text_calls::Tools;

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/text-calls")
}

fn weather() -> Option<TextSetting> {
    TextSetting::new(TextCalls::Auto, Tools::from_names(["get_weather"]))
}

/// What a client accumulates from the rewriter's output.
#[derive(Debug, Default, PartialEq)]
struct Client {
    content: String,
    /// (id, name, arguments) by index.
    calls: Vec<(String, String, String)>,
    finish: Option<String>,
    comments: Vec<String>,
    done: bool,
    /// Calls seen per choice.
    per_choice: std::collections::HashMap<u64, usize>,
}

fn client(out: &[u8]) -> Client {
    let mut c = Client::default();
    let text = std::str::from_utf8(out).expect("UTF-8 out");
    for block in text.split("\n\n").filter(|b| !b.is_empty()) {
        if let Some(note) = block.strip_prefix(": ") {
            c.comments.push(note.to_string());
            continue;
        }
        let data = block.strip_prefix("data: ").expect("data or comment");
        if data == "[DONE]" {
            c.done = true;
            continue;
        }
        let v: Value = serde_json::from_str(data).expect("each chunk is JSON");
        let choice = &v["choices"][0];
        if let Some(t) = choice.pointer("/delta/content").and_then(Value::as_str) {
            c.content.push_str(t);
        }
        for tc in choice
            .pointer("/delta/tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            // Each choice numbers its own calls.
            let i = tc["index"].as_u64().unwrap() as usize;
            let k = choice["index"].as_u64().unwrap();
            let before = c.per_choice.entry(k).or_insert(0);
            assert_eq!(
                i, *before,
                "one whole chunk per call, in order, in its choice"
            );
            *before += 1;
            c.calls.push((
                tc["id"].as_str().unwrap().into(),
                tc["function"]["name"].as_str().unwrap().into(),
                tc["function"]["arguments"].as_str().unwrap().into(),
            ));
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            c.finish = Some(f.to_string());
        }
    }
    c
}

fn rewrite(data: &[u8], cuts: &[usize], text: Option<TextSetting>) -> Vec<u8> {
    let data = Bytes::copy_from_slice(data);
    let mut r = OpenAiRewriter::new(Provider::Openai, false, text);
    let mut out = BytesMut::new();
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&data.len())) {
        r.push(data.slice(prev..c), &mut out);
        prev = c;
    }
    r.finish(None, &mut out);
    out.to_vec()
}

/// SSE of OpenAI chunks carrying these content deltas, a `stop` and `[DONE]`.
fn stream(deltas: &[&str]) -> Vec<u8> {
    let mut s = String::new();
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    s += &format!(
        "data: {}\n\n",
        chunk(json!({"role": "assistant", "content": ""}), Value::Null)
    );
    for d in deltas {
        s += &format!("data: {}\n\n", chunk(json!({"content": d}), Value::Null));
    }
    s += &format!("data: {}\n\n", chunk(json!({}), json!("stop")));
    s += "data: [DONE]\n\n";
    s.into_bytes()
}

/// The client's view: the same at every single cut of the upstream's bytes and one byte at
/// a time, with calls' ids aside (minted per stream).
fn same_at_every_cut(data: &[u8], text: Option<TextSetting>) -> Client {
    let strip = |mut c: Client| {
        for call in &mut c.calls {
            assert!(
                call.0.starts_with("call_"),
                "an OpenAI-shaped id: {}",
                call.0
            );
            call.0.clear();
        }
        c
    };
    let whole = strip(client(&rewrite(data, &[], text.clone())));
    for cut in 1..data.len() {
        let got = strip(client(&rewrite(data, &[cut], text.clone())));
        assert_eq!(got, whole, "cut at {cut}");
    }
    let bytes: Vec<usize> = (1..data.len()).collect();
    assert_eq!(
        strip(client(&rewrite(data, &bytes, text))),
        whole,
        "byte by byte"
    );
    whole
}

#[test]
fn the_shipped_sample_gives_its_calls_and_the_text_without_them() {
    let data = std::fs::read(sample().join("qwen-hermes-calls-in-content.sse")).unwrap();
    let request = std::fs::read(sample().join("request.json")).unwrap();
    let setting = TextSetting::new(TextCalls::Auto, declared_tools(&request));
    assert!(setting.is_some(), "the request declares get_weather");
    let c = same_at_every_cut(&data, setting);
    // From the sample's hand-written expected file.
    let expected =
        std::fs::read_to_string(sample().join("qwen-hermes-calls-in-content.expected.jsonl"))
            .unwrap();
    let mut text = String::new();
    let mut calls = Vec::new();
    for line in expected.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        match v["type"].as_str() {
            Some("text") => text.push_str(v["text"].as_str().unwrap()),
            Some("tool_call") => calls.push((
                v["name"].as_str().unwrap().to_string(),
                v["arguments"].clone(),
            )),
            _ => {}
        }
    }
    assert_eq!(c.content, text);
    let got: Vec<(String, Value)> = c
        .calls
        .iter()
        .map(|(_, n, a)| (n.clone(), serde_json::from_str(a).unwrap()))
        .collect();
    assert_eq!(got, calls);
    assert_eq!(c.finish.as_deref(), Some("tool_calls"));
    assert!(c.done);
}

#[test]
fn off_and_no_tools_forward_the_stream_byte_for_byte() {
    let data = stream(&[
        "Sure. <tool_call>{\"name\": \"get_weather\", ",
        "\"arguments\": {}}</tool_call>",
    ]);
    assert_eq!(rewrite(&data, &[], None), data);
    assert!(TextSetting::new(TextCalls::Off, Tools::from_names(["get_weather"])).is_none());
    assert!(TextSetting::new(TextCalls::Auto, Tools::default()).is_none());
    // On, with plain text only: every chunk as it came.
    let plain = stream(&["Plain ", "text, a < b and [x] ", "too."]);
    assert_eq!(rewrite(&plain, &[], weather()), plain);
}

#[test]
fn a_call_cut_across_deltas_with_text_around_it() {
    let data = stream(&[
        "Let me check. <tool",
        "_call>\n{\"name\": \"get_weather\", \"argu",
        "ments\": {\"city\": \"Paris\"}}\n</tool_",
        "call> Done <",
        "3.",
    ]);
    let c = same_at_every_cut(&data, weather());
    assert_eq!(c.content, "Let me check.  Done <3.");
    assert_eq!(c.calls.len(), 1);
    assert_eq!(c.calls[0].1, "get_weather");
    assert_eq!(c.calls[0].2, r#"{"city": "Paris"}"#);
    assert_eq!(c.finish.as_deref(), Some("tool_calls"));
}

#[test]
fn markup_of_an_undeclared_tool_stays_text() {
    let deltas = ["Run <tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call> now"];
    let c = same_at_every_cut(&stream(&deltas), weather());
    assert_eq!(c.content, deltas[0]);
    assert!(c.calls.is_empty());
    assert_eq!(c.finish.as_deref(), Some("stop"));
}

#[test]
fn markup_that_cannot_be_read_goes_back_into_the_text_with_a_note() {
    let deltas = [
        "A <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": }}</tool_call>",
        " and <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Ro",
    ];
    let c = same_at_every_cut(&stream(&deltas), weather());
    assert_eq!(
        c.content,
        deltas.concat(),
        "every byte of the text, in order"
    );
    assert!(c.calls.is_empty());
    assert_eq!(c.finish.as_deref(), Some("stop"));
    let notes = c
        .comments
        .iter()
        .filter(|n| n.contains("text_call_error"))
        .count();
    assert_eq!(notes, 2, "{:?}", c.comments);
}

#[test]
fn text_held_at_the_end_of_a_stream_without_done_is_not_lost() {
    // No finish, no [DONE]: a cut stream; the held `<tool` still reaches the client before
    // the error.
    let mut data = stream(&["Hello <tool"]);
    let keep = data.len() - "data: [DONE]\n\n".len();
    data.truncate(keep);
    let at = String::from_utf8_lossy(&data).rfind("data: ").unwrap();
    data.truncate(at);
    let out = rewrite(&data, &[], weather());
    let c = client(&out[..out.len()]);
    assert_eq!(c.content, "Hello <tool");
    assert!(String::from_utf8_lossy(&out).contains("stream_interrupted"));
}

#[test]
fn structured_and_text_calls_share_the_numbering() {
    let mut s = String::new();
    s += r#"data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":null}]}"#;
    s += "\n\n";
    s += r#"data: {"id":"c","choices":[{"index":0,"delta":{"content":"<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Rome\"}}</tool_call>"},"finish_reason":null}]}"#;
    s += "\n\ndata: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let c = client(&rewrite(s.as_bytes(), &[], weather()));
    let args: Vec<&str> = c.calls.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(args, [r#"{"city":"Oslo"}"#, r#"{"city":"Rome"}"#]);
    assert_eq!(c.calls[0].0, "call_a");
    assert_ne!(c.calls[1].0, "call_a");
    assert_eq!(c.content, "");
}

#[test]
fn a_non_streaming_completion_gets_its_text_calls_as_tool_calls() {
    let body = json!({
        "id": "x", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant",
            "content": "On it.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>",
        }}],
    });
    let raw = body.to_string();
    let (out, counts) =
        rewrite_completion(raw.as_bytes(), false, weather().as_ref(), None).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let m = &v["choices"][0]["message"];
    assert_eq!(
        m["content"],
        "On it.\n\n<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>"
    );
    let calls = m["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["function"]["name"], "get_weather");
    assert_eq!(calls[0]["function"]["arguments"], r#"{"city": "Paris"}"#);
    assert!(calls[0]["id"].as_str().unwrap().starts_with("call_"));
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(counts.text_calls, 1);
    // Off: unchanged.
    let (same, _) = rewrite_completion(raw.as_bytes(), false, None, None).unwrap();
    assert_eq!(same, raw.as_bytes());
}

#[test]
fn declared_tools_reads_the_tools_member_only() {
    let t = declared_tools(br#"{"messages":[[[[1e999999]]]],"tools":[{"type":"function","function":{"name":"a"}},{"name":"b","input_schema":{}}]}"#);
    assert!(t.contains("a") && t.contains("b") && !t.contains("c"));
    assert!(declared_tools(b"{not json").is_empty());
    assert!(declared_tools(br#"{"tools": 5}"#).is_empty());
}

#[test]
fn choices_past_the_bound_keep_their_text() {
    let one = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>";
    let n = 3000;
    let mut s = String::new();
    for c in 0..n {
        let chunk = json!({"id": "c", "choices": [{"index": c, "delta": {"content": one}}]});
        s += &format!("data: {chunk}\n\n");
    }
    s += "data: [DONE]\n\n";
    let c = client(&rewrite(s.as_bytes(), &[], weather()));
    assert_eq!(c.calls.len(), toolstream::text_calls::MAX_CHOICES);
    assert_eq!(
        c.content,
        one.repeat(n - toolstream::text_calls::MAX_CHOICES)
    );
}
