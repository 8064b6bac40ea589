//! Structure-aware, for the proxy's rewriters: OpenAI chat chunks, Anthropic events and
//! Responses API events as providers write them, with the variants that broke the proxy where its own reading
//! disagreed with the library's: several choices (`n > 1`), tool-call indices written
//! `1.0`, `"0"`, `-1` or 2^32, members serde_json refuses (`1e400`, deep nesting), JSON
//! with spaces, events over several `data:` lines, CR / LF / CRLF line ends, comments and
//! `id:` / `retry:` fields, Anthropic server tools beside client calls, blocks without an
//! index, Responses items of every kind (function calls with output indices written any
//! way, custom tools, encrypted reasoning, unknown events), a stream cut anywhere.
//!
//! Oracle: the output, read as a strict client reads it (the SSE spec, then every event's
//! JSON, which must parse), gives the calls the pipeline finds in the same bytes (each
//! call's arguments, each failed call's bytes as they came; per choice in order, one whole
//! chunk or block per call, blocks numbered from 0 without a gap; Responses items each
//! announced once, their streamed arguments their `done` item's, `sequence_number` strictly
//! increasing); the same however the input is cut; and a stream the pipeline calls incomplete never ends cleanly for the
//! client (no `[DONE]`, no `message_stop`: an error last).
#![no_main]

use arbitrary::Arbitrary;
use bytes::{Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolstream::assemble::Event;
use toolstream::classify::Provider;
use toolstream::pipeline::Stream;
use toolstream::provider::Format;
use toolstream::rewrite::text::{TextCalls, TextSetting};
use toolstream::rewrite::{AnthropicRewriter, OpenAiRewriter, ResponsesRewriter};
use toolstream::text_calls::Tools;

/// A number from the wire, as its JSON text.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Num {
    Small(u8),
    Float,
    Quoted,
    Negative,
    Over32,
}

impl Num {
    fn text(self) -> String {
        match self {
            Num::Small(n) => (n % 3).to_string(),
            Num::Float => "1.0".into(),
            Num::Quoted => "\"0\"".into(),
            Num::Negative => "-1".into(),
            Num::Over32 => "4294967296".into(),
        }
    }
}

/// Argument fragments.
const ARGS: &[&str] = &[
    "{\"city\":",
    "\"Paris\"}",
    "{\"a\":1}",
    "{\"a\":1}{\"b\":2}",
    "{\"a\":1} {\"a\":1}",
    "{",
    "}",
    "{\"k\":\"a\\\" b\"}",
    "\\q",
    "",
    "[1]",
];

#[derive(Arbitrary, Debug)]
enum Ev {
    /// A call's first fragment (with its id and name).
    Open { choice: u8, index: Num, args: u8 },
    /// A later fragment.
    More { choice: u8, index: Num, args: u8 },
    /// Text.
    Say { choice: u8, text: String },
    /// A finish reason.
    Finish { choice: u8, stop: bool },
    /// An Anthropic server tool's block (start, input, stop), or in chat an ignored member.
    Server { index: u8, args: u8 },
    /// An Anthropic text block, or chat usage.
    Block { index: u8, text: String },
    /// A member serde_json refuses, in a text chunk.
    Refused { deep: bool },
    /// An error event.
    Error,
    /// The terminal marker.
    End,
    /// A comment, an `id:` and a `retry:` line.
    Fields,
    /// A call written into the text (whole, broken, of an undeclared tool, or a piece),
    /// as the API's text (an Anthropic text block of its own).
    Markup { choice: u8, which: u8 },
}

/// What [`Ev::Markup`] writes.
const MARKUP: &[&str] = &[
    "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>",
    "Let me check. <tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call> Done.",
    "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": }}</tool_call>",
    "<tool_call>{\"name\": \"other\", \"arguments\": {}}</tool_call>",
    "<tool_call>{\"name\": \"get_weather\", ",
    "\"arguments\": {\"a\": [1, 2]}}</tool_call>",
    "<tool_",
    "[get_weather(city='Oslo')]",
];

#[derive(Arbitrary, Debug)]
struct Input {
    /// 0: OpenAI chat, 1: Anthropic, 2: Responses.
    api: u8,
    /// Calls written into the text are taken out (`get_weather` declared).
    text_calls: bool,
    events: Vec<Ev>,
    /// JSON written with spaces after `:` and `,`.
    spaced: bool,
    /// Events written over several `data:` lines (split after each `,`).
    multiline: bool,
    /// 0: LF, 1: CR, 2: CRLF.
    newline: u8,
    /// Cut the stream this many bytes from its end (0: whole).
    cut: u16,
    cuts: Vec<u16>,
}

/// Each character of JSON text `data`, and whether it stands outside strings.
fn structural(data: &str, mut f: impl FnMut(char, bool)) {
    let (mut in_str, mut esc) = (false, false);
    for c in data.chars() {
        let outside = !in_str && c != '"';
        if in_str {
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
        }
        f(c, outside);
    }
}

struct Writer<'a> {
    input: &'a Input,
    out: String,
}

impl Writer<'_> {
    fn nl(&self) -> &'static str {
        ["\n", "\r", "\r\n"][self.input.newline as usize % 3]
    }

    fn event(&mut self, ty: Option<&str>, data: &str) {
        // Spaces after structural `:` and `,`; a line break after each structural `,`.
        let (spaced, multiline) = (self.input.spaced, self.input.multiline);
        let mut lines = vec![String::new()];
        structural(data, |c, outside| {
            let line = lines.last_mut().expect("a line");
            line.push(c);
            if outside && spaced && (c == ':' || c == ',') {
                line.push(' ');
            }
            if outside && multiline && c == ',' {
                lines.push(String::new());
            }
        });
        let nl = self.nl();
        if let Some(ty) = ty {
            self.out += &format!("event: {ty}{nl}");
        }
        for l in lines {
            self.out += &format!("data: {l}{nl}");
        }
        self.out += nl;
    }

    fn chat(&mut self, ev: &Ev) {
        let choice = |c: &u8| c % 3;
        let js = |s: &str| Value::String(s.to_string()).to_string();
        let args = |a: &u8| js(ARGS[*a as usize % ARGS.len()]);
        let body = match ev {
            Ev::Open {
                choice: c,
                index,
                args: a,
            } => format!(
                r#"{{"id":"x","choices":[{{"index":{},"delta":{{"tool_calls":[{{"index":{},"id":"call_{}","type":"function","function":{{"name":"get_weather","arguments":{}}}}}]}},"finish_reason":null}}]}}"#,
                choice(c),
                index.text(),
                choice(c),
                args(a)
            ),
            Ev::More {
                choice: c,
                index,
                args: a,
            } => format!(
                r#"{{"id":"x","choices":[{{"index":{},"delta":{{"tool_calls":[{{"index":{},"function":{{"arguments":{}}}}}]}},"finish_reason":null}}]}}"#,
                choice(c),
                index.text(),
                args(a)
            ),
            Ev::Say { choice: c, text } => format!(
                r#"{{"id":"x","choices":[{{"index":{},"delta":{{"content":{}}},"finish_reason":null}}]}}"#,
                choice(c),
                js(text)
            ),
            Ev::Finish { choice: c, stop } => format!(
                r#"{{"id":"x","choices":[{{"index":{},"delta":{{}},"finish_reason":"{}"}}]}}"#,
                choice(c),
                if *stop { "stop" } else { "tool_calls" }
            ),
            Ev::Server { .. } => r#"{"id":"x","choices":[{"index":0,"delta":{"refusal":null},"logprobs":{"content":[]}}]}"#.into(),
            Ev::Block { .. } => r#"{"id":"x","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#.into(),
            Ev::Refused { deep } => {
                let x = if *deep {
                    format!("{}{}", "[".repeat(127), "]".repeat(127))
                } else {
                    "1e400".into()
                };
                format!(r#"{{"id":"x","x":{x},"choices":[{{"index":0,"delta":{{"content":"y"}}}}]}}"#)
            }
            Ev::Error => r#"{"error":{"message":"overloaded","type":"server_error","code":529}}"#.into(),
            Ev::End => "[DONE]".into(),
            Ev::Markup { .. } => unreachable!("written as text"),
            Ev::Fields => {
                let nl = self.nl();
                self.out += &format!(": keep-alive{nl}id: 7{nl}retry: 100{nl}");
                return;
            }
        };
        self.event(None, &body);
    }

    fn anthropic(&mut self, ev: &Ev) {
        let js = |s: &str| Value::String(s.to_string()).to_string();
        let args = |a: &u8| js(ARGS[*a as usize % ARGS.len()]);
        match ev {
            Ev::Open { index, args: a, .. } => {
                let i = index.text();
                self.event(Some("content_block_start"), &format!(r#"{{"type":"content_block_start","index":{i},"content_block":{{"type":"tool_use","id":"toolu_{}","name":"get_weather","input":{{}}}}}}"#, i.len()));
                self.event(Some("content_block_delta"), &format!(r#"{{"type":"content_block_delta","index":{i},"delta":{{"type":"input_json_delta","partial_json":{}}}}}"#, args(a)));
            }
            Ev::More { index, args: a, .. } => {
                let i = index.text();
                self.event(Some("content_block_delta"), &format!(r#"{{"type":"content_block_delta","index":{i},"delta":{{"type":"input_json_delta","partial_json":{}}}}}"#, args(a)));
                self.event(
                    Some("content_block_stop"),
                    &format!(r#"{{"type":"content_block_stop","index":{i}}}"#),
                );
            }
            Ev::Server { index, args: a } => {
                let i = index % 8;
                self.event(Some("content_block_start"), &format!(r#"{{"type":"content_block_start","index":{i},"content_block":{{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{{}}}}}}"#));
                self.event(Some("content_block_delta"), &format!(r#"{{"type":"content_block_delta","index":{i},"delta":{{"type":"input_json_delta","partial_json":{}}}}}"#, args(a)));
                self.event(
                    Some("content_block_stop"),
                    &format!(r#"{{"type":"content_block_stop","index":{i}}}"#),
                );
            }
            Ev::Block { index, text } => {
                let i = index % 8;
                self.event(Some("content_block_start"), &format!(r#"{{"type":"content_block_start","index":{i},"content_block":{{"type":"text","text":""}}}}"#));
                self.event(Some("content_block_delta"), &format!(r#"{{"type":"content_block_delta","index":{i},"delta":{{"type":"text_delta","text":{}}}}}"#, js(text)));
                self.event(
                    Some("content_block_stop"),
                    &format!(r#"{{"type":"content_block_stop","index":{i}}}"#),
                );
            }
            Ev::Say { text, .. } => self.event(
                Some("content_block_delta"),
                &format!(
                    r#"{{"type":"content_block_delta","delta":{{"type":"text_delta","text":{}}}}}"#,
                    js(text)
                ),
            ),
            Ev::Finish { stop, .. } => self.event(
                Some("message_delta"),
                &format!(
                    r#"{{"type":"message_delta","delta":{{"stop_reason":"{}"}}}}"#,
                    if *stop { "end_turn" } else { "tool_use" }
                ),
            ),
            Ev::Refused { .. } => self.event(Some("ping"), r#"{"type":"ping","x":1e400}"#),
            Ev::Error => self.event(
                Some("error"),
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            ),
            Ev::End => self.event(Some("message_stop"), r#"{"type":"message_stop"}"#),
            Ev::Markup { .. } => unreachable!("written as text"),
            Ev::Fields => {
                let nl = self.nl();
                self.out += &format!(": keep-alive{nl}id: 7{nl}retry: 100{nl}");
            }
        }
    }
}

impl Writer<'_> {
    fn responses(&mut self, ev: &Ev) {
        let js = |s: &str| Value::String(s.to_string()).to_string();
        let args = |a: &u8| js(ARGS[*a as usize % ARGS.len()]);
        let seq = self.out.len();
        match ev {
            Ev::Open { index, args: a, .. } => {
                let i = index.text();
                let n = i.len();
                self.event(Some("response.output_item.added"), &format!(r#"{{"type":"response.output_item.added","sequence_number":{seq},"output_index":{i},"item":{{"id":"fc_{n}","type":"function_call","status":"in_progress","arguments":"","call_id":"call_{n}","name":"get_weather"}}}}"#));
                self.event(Some("response.function_call_arguments.delta"), &format!(r#"{{"type":"response.function_call_arguments.delta","sequence_number":{},"item_id":"fc_{n}","output_index":{i},"delta":{}}}"#, seq + 1, args(a)));
            }
            Ev::More { index, args: a, .. } => {
                let i = index.text();
                let n = i.len();
                self.event(Some("response.function_call_arguments.delta"), &format!(r#"{{"type":"response.function_call_arguments.delta","sequence_number":{seq},"item_id":"fc_{n}","output_index":{i},"delta":{}}}"#, args(a)));
                self.event(Some("response.function_call_arguments.done"), &format!(r#"{{"type":"response.function_call_arguments.done","sequence_number":{},"item_id":"fc_{n}","output_index":{i}}}"#, seq + 1));
                self.event(Some("response.output_item.done"), &format!(r#"{{"type":"response.output_item.done","sequence_number":{},"output_index":{i},"item":{{"id":"fc_{n}","type":"function_call","status":"completed","call_id":"call_{n}","name":"get_weather"}}}}"#, seq + 2));
            }
            Ev::Say { text, .. } => self.event(Some("response.output_text.delta"), &format!(r#"{{"type":"response.output_text.delta","sequence_number":{seq},"item_id":"msg_1","output_index":0,"content_index":0,"delta":{}}}"#, js(text))),
            Ev::Finish { stop, .. } => {
                let (ty, status) = if *stop { ("response.incomplete", "incomplete") } else { ("response.completed", "completed") };
                self.event(Some(ty), &format!(r#"{{"type":"{ty}","sequence_number":{seq},"response":{{"id":"resp_1","status":"{status}","output":[]}}}}"#));
            }
            Ev::Server { index, args: a } => {
                let i = index % 8;
                let item = format!(r#"{{"id":"ctc_1","type":"custom_tool_call","call_id":"call_c","name":"apply_patch","input":{}}}"#, args(a));
                self.event(Some("response.output_item.added"), &format!(r#"{{"type":"response.output_item.added","sequence_number":{seq},"output_index":{i},"item":{item}}}"#));
                self.event(Some("response.output_item.done"), &format!(r#"{{"type":"response.output_item.done","sequence_number":{},"output_index":{i},"item":{item}}}"#, seq + 1));
            }
            Ev::Block { index, text } => {
                let i = index % 8;
                self.event(Some("response.output_item.done"), &format!(r#"{{"type":"response.output_item.done","sequence_number":{seq},"output_index":{i},"item":{{"id":"rs_1","type":"reasoning","encrypted_content":{},"summary":[]}}}}"#, js(text)));
            }
            Ev::Refused { .. } => self.event(Some("response.something_new"), &format!(r#"{{"type":"response.something_new","sequence_number":{seq},"x":1e400}}"#)),
            Ev::Error => self.event(Some("error"), &format!(r#"{{"type":"error","sequence_number":{seq},"code":"server_error","message":"overloaded","param":null}}"#)),
            Ev::End => self.event(Some("response.completed"), &format!(r#"{{"type":"response.completed","sequence_number":{seq},"response":{{"id":"resp_1","status":"completed","output":[{{"id":"fc_1","type":"function_call","status":"completed","arguments":"{{}}","call_id":"call_1","name":"get_weather"}}]}}}}"#)),
            Ev::Markup { .. } => unreachable!("written as text"),
            Ev::Fields => {
                let nl = self.nl();
                self.out += &format!(": keep-alive{nl}id: 7{nl}retry: 100{nl}");
            }
        }
    }
}

/// A Responses stream as a client reads it: the function-call items (by output index:
/// name and arguments, their streamed arguments checked against their `done` ones) and
/// whether it ended with the response's last event; every event's `sequence_number`
/// strictly above the one before.
fn responses_client(events: &[String]) -> (Vec<(u64, String, String)>, bool) {
    let mut items: std::collections::BTreeMap<u64, (String, String, bool)> = Default::default();
    let mut last_seq: Option<u64> = None;
    let mut clean = false;
    for e in events {
        assert!(!clean, "an event after the response's last: {e}");
        let Ok(v) = serde_json::from_str::<Value>(e) else {
            continue;
        };
        if let Some(s) = v["sequence_number"].as_u64() {
            assert!(
                last_seq.is_none_or(|l| s > l),
                "sequence {s} after {last_seq:?}"
            );
            last_seq = Some(s);
        }
        let at = v["output_index"].as_u64();
        match v["type"].as_str().unwrap_or_default() {
            "response.output_item.added" if v["item"]["type"] == "function_call" => {
                let at = at.expect("an output index");
                assert!(!items.contains_key(&at), "output {at} added twice");
                items.insert(
                    at,
                    (
                        v["item"]["name"].as_str().unwrap_or_default().into(),
                        String::new(),
                        false,
                    ),
                );
            }
            "response.function_call_arguments.delta" => {
                if let Some(item) = at.and_then(|at| items.get_mut(&at)) {
                    item.1.push_str(v["delta"].as_str().unwrap_or_default());
                }
            }
            "response.function_call_arguments.done" => {
                if let (Some(item), Some(a)) = (
                    at.and_then(|at| items.get_mut(&at)),
                    v["arguments"].as_str(),
                ) {
                    if item.1.is_empty() {
                        item.1 = a.into();
                    }
                    assert_eq!(item.1, a, "done differs from the deltas");
                    item.2 = true;
                }
            }
            "response.output_item.done" if v["item"]["type"] == "function_call" => {
                if let (Some(item), Some(a)) = (
                    at.and_then(|at| items.get_mut(&at)),
                    v["item"]["arguments"].as_str(),
                ) {
                    if item.1.is_empty() {
                        item.1 = a.into();
                    }
                    assert_eq!(item.1, a, "the item done differs from its deltas");
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => clean = true,
            _ => {}
        }
    }
    let calls = items
        .into_iter()
        .map(|(at, (n, a, _))| (at, n, a))
        .collect();
    (calls, clean)
}

fn rewrite(api: u8, data: &Bytes, cuts: &[usize], text: Option<TextSetting>) -> Vec<u8> {
    if api % 3 == 2 {
        let mut out = BytesMut::new();
        let mut prev = 0;
        let mut r = ResponsesRewriter::with_text(text);
        for &c in cuts.iter().chain([data.len()].iter()) {
            r.push(data.slice(prev..c.max(prev)), &mut out);
            prev = c.max(prev);
        }
        r.finish(None, &mut out);
        return out.to_vec();
    }
    let anthropic = api % 3 == 1;
    let mut out = BytesMut::new();
    let mut prev = 0;
    let end = [data.len()];
    let pieces = cuts.iter().chain(end.iter());
    if anthropic {
        let mut r = AnthropicRewriter::with_text(text);
        for &c in pieces {
            r.push(data.slice(prev..c.max(prev)), &mut out);
            prev = c.max(prev);
        }
        r.finish(None, &mut out);
    } else {
        let mut r = OpenAiRewriter::new(Provider::Openai, false, text);
        for &c in pieces {
            r.push(data.slice(prev..c.max(prev)), &mut out);
            prev = c.max(prev);
        }
        r.finish(None, &mut out);
    }
    out.to_vec()
}

/// The client's calls (name, arguments), per choice or by block, in order, and whether
/// the stream ended cleanly.
fn client(api: u8, out: &[u8]) -> (Vec<(u64, String, String)>, bool) {
    let events = toolstream_fuzz::client_events(out);
    if api % 3 == 2 {
        return responses_client(&events);
    }
    let anthropic = api % 3 == 1;
    let mut calls: Vec<(u64, String, String)> = Vec::new();
    let mut clean = false;
    if anthropic {
        // Blocks as the SDK keeps them: each start is the next position.
        let mut blocks: Vec<(String, String, String)> = Vec::new();
        for e in &events {
            assert!(!clean, "an event after message_stop");
            let Ok(v) = serde_json::from_str::<Value>(e) else {
                continue;
            };
            match v["type"].as_str().unwrap_or_default() {
                "content_block_start" => {
                    let i = v["index"].as_u64().expect("a block index");
                    assert_eq!(i as usize, blocks.len(), "block indices in order: {e}");
                    let b = &v["content_block"];
                    blocks.push((
                        b["type"].as_str().unwrap_or_default().into(),
                        b["name"].as_str().unwrap_or_default().into(),
                        String::new(),
                    ));
                }
                "content_block_delta" => {
                    let i = v["index"].as_u64().expect("a block index") as usize;
                    let b = blocks.get_mut(i).expect("a delta of a started block");
                    if let Some(p) = v["delta"]["partial_json"].as_str() {
                        b.2.push_str(p);
                    }
                }
                "message_stop" => clean = true,
                _ => {}
            }
        }
        for (ty, name, args) in blocks {
            if ty == "tool_use" {
                calls.push((0, name, args));
            }
        }
    } else {
        let mut per: std::collections::BTreeMap<u64, Vec<(String, String)>> = Default::default();
        for e in &events {
            assert!(!clean, "an event after [DONE]");
            if e == "[DONE]" {
                clean = true;
                continue;
            }
            let Ok(v) = serde_json::from_str::<Value>(e) else {
                continue;
            };
            for choice in v["choices"].as_array().into_iter().flatten() {
                let k = choice["index"].as_u64().expect("a choice index");
                for tc in choice
                    .pointer("/delta/tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let calls = per.entry(k).or_default();
                    let i = tc["index"].as_u64().expect("a call index") as usize;
                    assert_eq!(i, calls.len(), "one whole chunk per call, in order");
                    calls.push((
                        tc["function"]["name"].as_str().unwrap().into(),
                        tc["function"]["arguments"].as_str().unwrap().into(),
                    ));
                }
            }
        }
        // A finish without [DONE] ends cleanly too when the library says complete.
        if !clean {
            clean = !events.iter().any(|e| e.contains("\"error\"")) && !events.is_empty();
        }
        for (k, v) in per {
            calls.extend(v.into_iter().map(|(n, a)| (k, n, a)));
        }
    }
    (calls, clean)
}

fuzz_target!(|input: Input| {
    let mut w = Writer {
        input: &input,
        out: String::new(),
    };
    let anthropic = input.api % 3 == 1;
    for ev in input.events.iter().take(64) {
        // Markup as the API's text: in Anthropic, only whole calls, each a block of its
        // own, and no marker's first byte in other text (a call is read within one text
        // block, where the pipeline reads the message's text as one).
        let owned = match ev {
            Ev::Markup { choice, which } if anthropic => Some(Ev::Block {
                index: *choice,
                text: MARKUP[usize::from(*which) % 4].to_string(),
            }),
            Ev::Markup { choice, which } => Some(Ev::Say {
                choice: *choice,
                text: MARKUP[usize::from(*which) % MARKUP.len()].to_string(),
            }),
            Ev::Block { index, text } if anthropic && input.text_calls => Some(Ev::Block {
                index: *index,
                text: text.replace(['<', '['], ""),
            }),
            _ => None,
        };
        let ev = owned.as_ref().unwrap_or(ev);
        match input.api % 3 {
            0 => w.chat(ev),
            1 => w.anthropic(ev),
            _ => w.responses(ev),
        }
    }
    let mut data = w.out.into_bytes();
    let keep = data
        .len()
        .saturating_sub(input.cut as usize % (data.len() + 1));
    data.truncate(keep);
    let data = Bytes::from(data);
    let cuts = toolstream_fuzz::cut_points(&input.cuts, data.len());
    let text = || {
        input
            .text_calls
            .then(|| TextSetting::new(TextCalls::Auto, Tools::from_names(["get_weather"])))
            .flatten()
    };
    let out = rewrite(input.api, &data, &cuts, text());
    let (calls, clean) = client(input.api, &out);

    let format = [
        Format::OpenAiChat,
        Format::Anthropic,
        Format::OpenAiResponses,
    ][input.api as usize % 3];
    let mut s = Stream::new(Some(format));
    if input.text_calls {
        s = s.with_text_calls(None, Tools::from_names(["get_weather"]));
    }
    let mut events = Vec::new();
    s.push(data.clone(), &mut events);
    s.finish(&mut events);
    let mut want = toolstream_fuzz::pipeline_calls(&events);
    let mut got: Vec<(String, String)> = calls
        .iter()
        .map(|(_, n, a)| (n.clone(), a.clone()))
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "the client's calls are the pipeline's");

    let whole = rewrite(input.api, &data, &[], text());
    assert_eq!(
        client(input.api, &whole),
        (calls, clean),
        "chunking changed the client's view"
    );

    let complete = events.last() == Some(&Event::End { complete: true });
    if !complete {
        assert!(
            !clean,
            "the library says incomplete; the client saw a clean end"
        );
    }
});
