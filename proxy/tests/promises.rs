//! The OpenAI rewriter keeps the library's promises for the client: what it sends is
//! derived from the library's decoding alone. Each stream here is one an outside test used
//! to lose, double or invent calls, or to pass a cut stream as complete, on the proxy of
//! commit 91c7367 (a serde tree of each chunk beside the decoder, a byte search for
//! `"finish_reason":null`). Every case runs whole, a byte at a time and at pseudo-random
//! cuts, and the output is read as a strict client reads it: the SSE spec first (every
//! line of an event, CR, LF or CRLF), then each event's JSON, calls accumulated per choice
//! by index as the SDKs do.

use std::collections::BTreeMap;

use bytes::{Bytes, BytesMut};
use serde_json::{json, Value};
use toolstream::classify::Provider;
use toolstream::rewrite::OpenAiRewriter;

/// What a strict client makes of the rewriter's output.
#[derive(Debug, Default, PartialEq)]
struct Client {
    /// Per choice: content.
    content: BTreeMap<u64, String>,
    /// Per choice, by index: (id, name, arguments).
    calls: BTreeMap<u64, BTreeMap<u64, (String, String, String)>>,
    /// Per choice: the finish reason.
    finish: BTreeMap<u64, String>,
    /// `[DONE]` came.
    done: bool,
    /// An error event came.
    error: bool,
}

/// Read `out` as the SSE spec says, then each event's data as JSON (which must parse).
fn client(out: &[u8]) -> Client {
    let text = std::str::from_utf8(out).expect("UTF-8 out");
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut c = Client::default();
    let mut data: Option<String> = None;
    for line in text.split('\n') {
        if line.is_empty() {
            if let Some(d) = data.take() {
                event(&mut c, &d);
            }
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if field == "data" {
            match &mut data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => data = Some(value.to_string()),
            }
        }
    }
    assert!(data.is_none(), "the output ends inside an event");
    c
}

fn event(c: &mut Client, data: &str) {
    assert!(!c.done, "an event after [DONE]: {data}");
    if data == "[DONE]" {
        c.done = true;
        return;
    }
    let v: Value = serde_json::from_str(data)
        .unwrap_or_else(|e| panic!("an event the client cannot parse ({e}): {data:?}"));
    if v.get("error").is_some() {
        c.error = true;
        return;
    }
    for choice in v["choices"].as_array().into_iter().flatten() {
        let k = choice["index"].as_u64().expect("a choice index");
        if let Some(t) = choice.pointer("/delta/content").and_then(Value::as_str) {
            c.content.entry(k).or_default().push_str(t);
        }
        for tc in choice
            .pointer("/delta/tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let i = tc["index"].as_u64().expect("a call index");
            let call = c.calls.entry(k).or_default().entry(i).or_default();
            if let Some(id) = tc["id"].as_str() {
                call.0 = id.to_string();
            }
            if let Some(n) = tc.pointer("/function/name").and_then(Value::as_str) {
                call.1.push_str(n);
            }
            if let Some(a) = tc.pointer("/function/arguments").and_then(Value::as_str) {
                call.2.push_str(a);
            }
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            c.finish.insert(k, f.to_string());
        }
    }
}

fn rewrite(data: &[u8], cuts: &[usize]) -> Vec<u8> {
    let data = Bytes::copy_from_slice(data);
    let mut r = OpenAiRewriter::new(Provider::Openai, false, None);
    let mut out = BytesMut::new();
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&data.len())) {
        r.push(data.slice(prev..c), &mut out);
        prev = c;
    }
    r.finish(None, &mut out);
    out.to_vec()
}

/// The client's view of `stream` at every chunking tried; all the same.
fn through(stream: &[u8]) -> Client {
    let whole = client(&rewrite(stream, &[]));
    let ones: Vec<usize> = (1..stream.len()).collect();
    assert_eq!(client(&rewrite(stream, &ones)), whole, "a byte at a time");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..8 {
        let mut cuts = Vec::new();
        let mut at = 0;
        loop {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            at += 1 + (x % 40) as usize;
            if at >= stream.len() {
                break;
            }
            cuts.push(at);
        }
        assert_eq!(client(&rewrite(stream, &cuts)), whole, "cut at {cuts:?}");
    }
    whole
}

fn sse(chunks: &[Value]) -> String {
    chunks.iter().map(|c| format!("data: {c}\n\n")).collect()
}

fn call_chunk(index: Value, id: Option<&str>, args: &str) -> Value {
    let mut tc = json!({"index": index, "function": {"arguments": args}});
    if let Some(id) = id {
        tc["id"] = json!(id);
        tc["type"] = json!("function");
        tc["function"]["name"] = json!("get_weather");
    }
    json!({"id": "x", "choices": [{"index": 0, "delta": {"tool_calls": [tc]}, "finish_reason": null}]})
}

fn finish(reason: &str) -> Value {
    json!({"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

/// A tool-call index the decoder does not accept (`1.0`, `"0"`, `-1`, 2^32): the chunk is
/// not forwarded (a client reading it another way would run a call the library failed),
/// no call reaches the client whole, and the stream ends with an error, not `[DONE]`.
#[test]
fn a_chunk_the_decoder_cannot_read_is_not_forwarded_and_the_end_is_an_error() {
    for index in ["1.0", "\"0\"", "-1", "4294967296"] {
        let index: Value = serde_json::from_str(index).unwrap();
        let s = sse(&[
            call_chunk(index.clone(), Some("c1"), "{\"city\":\"Paris\"}"),
            finish("tool_calls"),
        ]) + "data: [DONE]\n\n";
        let c = through(s.as_bytes());
        assert!(!c.done, "index {index}: a clean end");
        assert!(c.error, "index {index}: no error at the end");
        let whole = c
            .calls
            .values()
            .flat_map(|m| m.values())
            .any(|call| call.2 == "{\"city\":\"Paris\"}");
        assert!(!whole, "index {index}: the client got the call: {c:?}");
    }
}

/// A chunk that also holds a number serde_json refuses (`1e400`) or deep nesting: the
/// decoder reads it, and the client gets the call once, not its fragment and then the call.
#[test]
fn a_chunk_serde_json_refuses_gives_the_call_once() {
    let deep = format!("{}{}", "[".repeat(127), "]".repeat(127));
    for extra in ["1e400".to_string(), deep] {
        let mut first = call_chunk(json!(0), Some("c1"), "{\"city\":");
        first["x"] = json!("PLACEHOLDER");
        let first = first.to_string().replace("\"PLACEHOLDER\"", &extra);
        let s = format!(
            "data: {first}\n\n{}data: [DONE]\n\n",
            sse(&[
                call_chunk(json!(0), None, "\"Paris\"}"),
                finish("tool_calls")
            ])
        );
        let c = through(s.as_bytes());
        assert!(c.done && !c.error, "{c:?}");
        let calls: Vec<_> = c.calls[&0].values().cloned().collect();
        assert_eq!(
            calls,
            [(
                "c1".to_string(),
                "get_weather".to_string(),
                "{\"city\":\"Paris\"}".to_string()
            )]
        );
    }
}

/// A cut stream whose chunks say `"finish_reason": null` with a space (Python's
/// `json.dumps`): the client is told it was cut.
#[test]
fn a_cut_stream_with_spaced_json_ends_with_an_error() {
    let s = "data: {\"id\": \"x\", \"choices\": [{\"index\": 0, \"delta\": {\"content\": \"Hel\"}, \"finish_reason\": null}]}\n\n";
    let c = through(s.as_bytes());
    assert!(c.error && !c.done, "{c:?}");
    assert_eq!(c.content[&0], "Hel");
}

/// An event over the size limit between two text events: the stream ends with an error,
/// not a clean `[DONE]`.
#[test]
fn an_event_over_the_limit_ends_the_stream_with_an_error() {
    let text = |t: &str| json!({"id": "x", "choices": [{"index": 0, "delta": {"content": t}, "finish_reason": null}]});
    let big = "y".repeat(17 << 20);
    let s = sse(&[text("Hello "), text(&big), text("world"), finish("stop")]) + "data: [DONE]\n\n";
    let c = client(&rewrite(s.as_bytes(), &[]));
    assert!(c.error && !c.done, "a clean end after a dropped event");
    assert_eq!(c.content[&0], "Hello world");
}

/// Events in several `data:` lines, with CR, LF or CRLF line ends, comments and `id:` /
/// `retry:` fields: every event the client gets is valid, and the calls are whole.
#[test]
fn every_line_layout_gives_valid_events() {
    let a = call_chunk(json!(0), Some("c1"), "{\"city\":").to_string();
    let b = call_chunk(json!(0), None, "\"Paris\"}").to_string();
    let text =
        json!({"id": "x", "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": null}]})
            .to_string();
    let f = finish("tool_calls").to_string();
    // The text chunk split over two data lines at a comma.
    let (t1, t2) = text.split_at(text.find(",").unwrap() + 1);
    for nl in ["\n", "\r", "\r\n"] {
        let s = format!(
            ": keep-alive{nl}id: 1{nl}retry: 10{nl}data: {t1}{nl}data: {t2}{nl}{nl}data: {a}{nl}{nl}data:{b}{nl}{nl}data: {f}{nl}{nl}data: [DONE]{nl}{nl}"
        );
        let c = through(s.as_bytes());
        assert!(c.done && !c.error, "{nl:?}: {c:?}");
        assert_eq!(c.content[&0], "Hi");
        assert_eq!(c.calls[&0][&0].2, "{\"city\":\"Paris\"}");
    }
}

/// `n > 1`: each choice's calls stay in their choice, numbered from 0 in it; glued calls
/// split in their choice; a choice with text only keeps its `stop`.
#[test]
fn calls_stay_in_their_choice_and_the_finish_is_corrected_per_choice() {
    let call = |choice: u32, id: &str, args: &str| {
        json!({"id": "x", "choices": [{"index": choice, "delta": {"tool_calls": [
            {"index": 0, "id": id, "type": "function",
             "function": {"name": "get_weather", "arguments": args}}]}, "finish_reason": null}]})
    };
    let text = |choice: u32, t: &str| json!({"id": "x", "choices": [{"index": choice, "delta": {"content": t}, "finish_reason": null}]});
    let fin = |choice: u32, r: &str| json!({"id": "x", "choices": [{"index": choice, "delta": {}, "finish_reason": r}]});
    let s = sse(&[
        call(0, "a", "{\"city\":\"Paris\"}"),
        call(1, "b", "{\"city\":\"Oslo\"}{\"city\":\"Rome\"}"),
        text(2, "no tools"),
        fin(0, "stop"),
        fin(1, "tool_calls"),
        fin(2, "stop"),
    ]) + "data: [DONE]\n\n";
    let c = through(s.as_bytes());
    assert!(c.done && !c.error);
    let args = |k: u64| -> Vec<String> {
        c.calls
            .get(&k)
            .map(|m| m.values().map(|v| v.2.clone()).collect())
            .unwrap_or_default()
    };
    assert_eq!(args(0), ["{\"city\":\"Paris\"}"]);
    assert_eq!(args(1), ["{\"city\":\"Oslo\"}", "{\"city\":\"Rome\"}"]);
    assert!(args(2).is_empty());
    assert_eq!(c.finish[&0], "tool_calls");
    assert_eq!(c.finish[&1], "tool_calls");
    assert_eq!(c.finish[&2], "stop");
    assert_eq!(c.content[&2], "no tools");
}

/// Data after `[DONE]`: the library calls the stream incomplete, so the client does not get
/// a clean end either (`[DONE]` is held until the upstream's body ends).
#[test]
fn data_after_done_is_not_a_clean_end() {
    let s = sse(&[finish("stop")]) + "data: [DONE]\n\n" + &sse(&[finish("stop")]);
    let c = through(s.as_bytes());
    assert!(c.error && !c.done, "{c:?}");
}

/// An Anthropic client's view: blocks by index as the SDK keeps them (each start appends a
/// block whose index must be its position; deltas go to `content[index]`).
fn anthropic_blocks(out: &[u8]) -> (Vec<(String, String, String)>, bool) {
    let text = std::str::from_utf8(out).unwrap();
    let mut blocks: Vec<(String, String, String)> = Vec::new();
    let mut stopped = false;
    for ev in text.split("\n\n").filter(|e| !e.trim().is_empty()) {
        let data: String = ev
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .collect::<Vec<_>>()
            .join("\n");
        if data.is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&data).expect("valid JSON");
        match v["type"].as_str().unwrap_or_default() {
            "content_block_start" => {
                assert_eq!(
                    v["index"].as_u64().unwrap() as usize,
                    blocks.len(),
                    "{data}"
                );
                let b = &v["content_block"];
                blocks.push((
                    b["type"].as_str().unwrap().into(),
                    b["name"].as_str().unwrap_or_default().into(),
                    String::new(),
                ));
            }
            "content_block_delta" => {
                let i = v["index"].as_u64().unwrap() as usize;
                let d = &v["delta"];
                let piece = d["partial_json"].as_str().or(d["text"].as_str()).unwrap();
                blocks[i].2.push_str(piece);
            }
            "message_stop" => stopped = true,
            "error" => stopped = false,
            _ => {}
        }
    }
    (blocks, stopped)
}

/// A web-search turn: the `server_tool_use` block and its result pass as they are (never
/// a client call, never a phantom `tool_use` with an empty name); the glued `tool_use`
/// input becomes two calls; every block keeps a contiguous index.
#[test]
fn anthropic_server_tools_pass_and_only_tool_use_blocks_are_calls() {
    use toolstream::rewrite::AnthropicRewriter;
    let list = [
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
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\":\"Paris\"}{\"city\":\"Oslo\"}"}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Done."}}"#,
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
    ];
    let stream: String = list
        .iter()
        .map(|(t, d)| format!("event: {t}\ndata: {d}\n\n"))
        .collect();
    for step in [stream.len(), 1, 7] {
        let data = Bytes::from(stream.clone());
        let mut r = AnthropicRewriter::new();
        let mut out = BytesMut::new();
        for at in (0..data.len()).step_by(step) {
            r.push(data.slice(at..data.len().min(at + step)), &mut out);
        }
        r.finish(None, &mut out);
        let (blocks, stopped) = anthropic_blocks(&out);
        assert!(stopped);
        let kinds: Vec<(&str, &str, &str)> = blocks
            .iter()
            .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("server_tool_use", "web_search", "{\"query\": \"weather\"}"),
                ("tool_use", "get_weather", "{\"city\":\"Paris\"}"),
                ("tool_use", "get_weather", "{\"city\":\"Oslo\"}"),
                ("text", "", "Done."),
            ]
        );
    }
}

/// A non-streaming completion whose call glues more objects than a response may have
/// calls gets what a stream of the same call gets (the non-streaming body is read by the
/// same decoder and assembler): the first `max_calls` objects as calls, the rest one
/// failure. (At 91c7367 there was no limit, and the duplicate check and a copy of the
/// whole arguments per part made it quadratic: 40 000 objects took 7 s.)
#[test]
fn a_completion_with_too_many_glued_objects_is_limited_as_a_stream_is() {
    use toolstream::rewrite::rewrite_completion;
    let max = toolstream::assemble::Policy::default().max_calls;
    for (n, calls) in [(max, max), (max + 1, max + 1), (40_000, max + 1)] {
        let args: String = (0..n).map(|k| format!("{{\"k\":{k}}}")).collect();
        let body = json!({"id": "x", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c",
            "type": "function", "function": {"name": "f", "arguments": args}}]},
            "finish_reason": "tool_calls"}]});
        let (out, counts) =
            rewrite_completion(body.to_string().as_bytes(), false, None, None).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let got = v["choices"][0]["message"]["tool_calls"].as_array().unwrap();
        assert_eq!(got.len(), calls, "{n} objects");
        assert_eq!(counts.calls as usize, max.min(n));
        assert_eq!(counts.failures as usize, usize::from(n > max));
        assert_eq!(
            got[max - 1]["function"]["arguments"],
            json!(format!("{{\"k\":{}}}", max - 1))
        );
    }
}

/// Anthropic: an event after `message_stop` is not forwarded, and `message_stop` is held
/// until the upstream's body ends, so the client never sees a clean end followed by more
/// (found by the proxy_structured fuzz target); a stream cut inside an event still
/// delivers what that event carried, as the pipeline does, and ends with an error.
#[test]
fn anthropic_data_after_message_stop_is_not_a_clean_end() {
    use toolstream::rewrite::AnthropicRewriter;
    let stream = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[]}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    );
    let mut r = AnthropicRewriter::new();
    let mut out = BytesMut::new();
    r.push(Bytes::from_static(stream.as_bytes()), &mut out);
    r.finish(None, &mut out);
    let text = String::from_utf8(out.to_vec()).unwrap();
    assert!(!text.contains("event: message_stop"), "{text}");
    assert!(!text.contains("event: content_block_start"), "{text}");
    assert!(
        text.trim_end().ends_with("}") && text.contains("event: error"),
        "{text}"
    );
}

/// A non-streaming completion is read by the library's decoder, not a tree: glued calls
/// are split even when the body holds what serde_json refuses (`1e400`), every other
/// member stays byte for byte, each choice's calls stay in it, and a body the decoder
/// cannot read is left as it came. (At 91c7367 the path parsed the body with serde_json
/// and forwarded anything it refused unchanged, glued calls and all.)
#[test]
fn a_completion_is_rewritten_from_the_decoder_and_the_rest_kept() {
    use toolstream::rewrite::rewrite_completion;
    let body = r#"{"id":"x","object":"chat.completion","x":1e400,"choices":[{"index":0,"message":{"role":"assistant","content":null,"annotations":[{"t":1}],"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"a\":1}{\"a\":2}"}}]},"logprobs":{"content":[]},"finish_reason":"stop"},{"index":1,"message":{"role":"assistant","content":"plain"},"finish_reason":"stop"}],"usage":{"total_tokens":3}}"#;
    let (out, counts) = rewrite_completion(body.as_bytes(), false, None, None).unwrap();
    let out = String::from_utf8(out.to_vec()).unwrap();
    let want = body
        .replace(
            r#"[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"a\":1}{\"a\":2}"}}]"#,
            &format!(
                r#"[{{"id":"a","type":"function","function":{{"name":"f","arguments":"{{\"a\":1}}"}}}},{{"id":"{}","type":"function","function":{{"name":"f","arguments":"{{\"a\":2}}"}}}}]"#,
                // The split call's id as the library makes it (its shape is tested there).
                toolstream::ids::derive("a", 2, 0)
            ),
        )
        .replacen(r#""finish_reason":"stop"}"#, r#""finish_reason":"tool_calls"}"#, 1);
    assert_eq!(out, want);
    assert_eq!((counts.calls, counts.splits), (2, 1));
    // Nothing to change: the body as it came.
    let plain = r#"{"choices":[{"index":0,"message":{"content":"hi"},"finish_reason":"stop"}]}"#;
    assert_eq!(
        &rewrite_completion(plain.as_bytes(), false, None, None)
            .unwrap()
            .0[..],
        plain.as_bytes()
    );
    // Not readable by the decoder: left as it came.
    let odd = r#"{"choices":[{"index":"0","message":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}{}"}}]}}]}"#;
    assert!(rewrite_completion(odd.as_bytes(), false, None, None).is_none());
}

/// A stream that ends with `id:` and `retry:` lines and no blank line after them carries no
/// data in that last event: nothing is lost, and the stream ends as the library says (found
/// by the proxy_structured fuzz target: the calls failed as cut while the pipeline
/// delivered them).
#[test]
fn trailing_fields_without_data_lose_nothing() {
    let s = sse(&[call_chunk(json!(0), Some("c1"), "{}"), finish("tool_calls")])
        + "id: 7\nretry: 100\n";
    let c = through(s.as_bytes());
    assert!(!c.error, "{c:?}");
    assert_eq!(c.calls[&0][&0].2, "{}");
}

/// The ids a client gets on every path where one is made — a glued call split, a call
/// sent without an id, a call taken out of the text (OpenAI), a glued `tool_use` split
/// (Anthropic) — are in the provider's shape, unique in the response, never an id plus a
/// suffix and never ending in `_<digits>` (one agent folds such a `tool_use` into the
/// base id's batch and loses its result); each is announced with what it was made from;
/// and they are the same at every chunking. (At 91c7367: `call_abc_2`, `call_abc_3`,
/// `call_<seed>0001` from a random seed, `toolu_1_2`.)
#[test]
fn made_ids_have_the_providers_shape_and_are_unique_on_every_path() {
    use toolstream::rewrite::text::{TextCalls, TextSetting};
    use toolstream::rewrite::AnthropicRewriter;
    use toolstream::text_calls::Tools;

    let no_digits_tail = |id: &str| {
        let tail = id.rsplit(['_', '-']).next().unwrap();
        !tail.bytes().all(|b| b.is_ascii_digit())
    };
    let content =
        "<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Rome\"}}</tool_call>";
    let stream = sse(&[
        call_chunk(json!(0), Some("call_abc"), "{\"a\":1}{\"a\":2}{\"a\":3}"),
        call_chunk(json!(1), Some(""), "{\"b\":1}"),
        json!({"id": "x", "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]}),
        finish("tool_calls"),
    ]) + "data: [DONE]\n\n";
    let run = |step: usize| {
        let setting = TextSetting::new(TextCalls::Auto, Tools::from_names(["get_weather"]));
        let mut r = OpenAiRewriter::new(Provider::Openai, false, setting);
        let data = Bytes::from(stream.clone());
        let mut out = BytesMut::new();
        for at in (0..data.len()).step_by(step) {
            r.push(data.slice(at..data.len().min(at + step)), &mut out);
        }
        r.finish(None, &mut out);
        out.to_vec()
    };
    let whole = run(stream.len());
    for step in [1, 7, 64] {
        assert_eq!(
            run(step),
            whole,
            "the same ids and bytes at {step}-byte pushes"
        );
    }
    let c = client(&whole);
    let ids: Vec<&str> = c.calls[&0].values().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids.len(), 5, "{ids:?}");
    assert_eq!(ids[0], "call_abc");
    let mut seen = std::collections::HashSet::new();
    for id in &ids {
        assert!(seen.insert(*id), "{id} twice in {ids:?}");
        assert!(id.starts_with("call_") && no_digits_tail(id), "{id}");
        assert!(*id == "call_abc" || !id.starts_with("call_abc"), "{id}");
    }
    let text = String::from_utf8(whole).unwrap();
    assert_eq!(
        text.matches("made for a call split from call_abc's arguments")
            .count(),
        2
    );
    assert_eq!(
        text.matches("minted: the provider sent the call without one")
            .count(),
        1
    );
    assert_eq!(
        text.matches("made for a call taken out of the text")
            .count(),
        1
    );

    // Anthropic: the split `tool_use` gets a `toolu_` id of its own.
    let list = [
        (
            "message_start",
            r#"{"type":"message_start","message":{"id":"m","content":[]}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_01","name":"f","input":{}}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1}{\"a\":2}"}}"#,
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
    ];
    let stream: String = list
        .iter()
        .map(|(t, d)| format!("event: {t}\ndata: {d}\n\n"))
        .collect();
    let mut r = AnthropicRewriter::new();
    let mut out = BytesMut::new();
    r.push(Bytes::from(stream), &mut out);
    r.finish(None, &mut out);
    let out = String::from_utf8(out.to_vec()).unwrap();
    let ids: Vec<String> = out
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter(|v| v["type"] == "content_block_start")
        .map(|v| v["content_block"]["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{out}");
    assert_eq!(ids[0], "toolu_01");
    assert!(
        ids[1].starts_with("toolu_") && !ids[1].starts_with("toolu_01"),
        "{ids:?}"
    );
    assert!(no_digits_tail(&ids[1]), "{ids:?}");
    assert!(
        out.contains(&format!(
            ": toolstream id {} made for a call split from toolu_01's arguments",
            ids[1]
        )),
        "{out}"
    );
}
