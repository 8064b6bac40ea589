//! Structure-aware: each format's own events (OpenAI chat chunks, Anthropic and Responses
//! events, Gemini candidates with `partialArgs`, Ollama lines, Bedrock messages), generated
//! with numbers at the edges (0, 2^32-1, 2^32, 2^63, negative, fractional), repeated keys,
//! long arrays, deep nesting and long strings, so that the fuzzer reaches the decoders'
//! paths that byte mutation rarely does. The same checks as `pipeline_small_limits`: the
//! oracle's properties, no dropped byte without an event, peak memory within a constant
//! times the input plus the limits, and chunk invariance.
#![no_main]

use arbitrary::Arbitrary;
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use toolstream::assemble::Policy;
use toolstream::json::Limits;
use toolstream::provider::Format;
use toolstream::sse;
use toolstream_fuzz::alloc::Counting;

#[global_allocator]
static ALLOC: Counting = Counting;

/// A number from the wire.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Num {
    Small(u8),
    Max32,
    Over32,
    Big63,
    Negative,
    Fraction,
    Exponent,
}

impl Num {
    fn text(self) -> String {
        match self {
            Num::Small(n) => (n % 4).to_string(),
            Num::Max32 => "4294967295".into(),
            Num::Over32 => "4294967296".into(),
            Num::Big63 => "9223372036854775808".into(),
            Num::Negative => "-1".into(),
            Num::Fraction => "0.5".into(),
            Num::Exponent => "1e3".into(),
        }
    }
}

/// A string from the wire (as its JSON text, quoted).
#[derive(Arbitrary, Debug, Clone)]
enum Text {
    Piece(u8),
    Long(u16, u8),
    Any(String),
}

/// Argument fragments: pieces of objects, glued objects, bad bytes, deep nesting.
const PIECES: &[&str] = &[
    "{",
    "}",
    "{\"a\":",
    "1",
    "\"x\"",
    "{\"a\":1}",
    "{\"a\":1}{\"b\":2}",
    "{}",
    "\\q",
    "[",
    "]",
    "\"",
    ",",
    "{\"a\":\"\\u12",
    "\u{e9}",
    " ",
    "null",
    "{\"k\":[1,2,{\"z\":null}]}",
    // Objects a duplicate check that lost track of an escape would take for one.
    "{\"k\":\"a\\\" b\"}",
    "{\"k\":\"a\\\"b\"}",
    "{\"k\":\"\\u0041\"} ",
];

impl Text {
    fn raw(&self) -> String {
        match self {
            Text::Piece(k) => PIECES[*k as usize % PIECES.len()].to_string(),
            Text::Long(n, b) => {
                let c = (b'a' + b % 26) as char;
                std::iter::repeat_n(c, *n as usize % 2048).collect()
            }
            Text::Any(s) => s.chars().take(256).collect(),
        }
    }
    fn json(&self) -> String {
        serde_json::Value::String(self.raw()).to_string()
    }
}

/// One event, rendered in the stream's format.
#[derive(Arbitrary, Debug)]
enum Ev {
    /// A call starts (in formats that say so).
    Start {
        slot: Num,
        id: Option<Text>,
        name: Option<Text>,
    },
    /// An argument fragment for a slot.
    Args { slot: Num, text: Text },
    /// A slot's end.
    Stop { slot: Num },
    /// Assistant text, its key repeated `repeat` times.
    Say { text: Text, repeat: u8 },
    /// Many elements in one event (reasoning details, tool calls, parts).
    Many { n: u16 },
    /// A finish reason.
    Finish { slot: Num, reason: u8 },
    /// An error object.
    Error { code: Num, message: Text },
    /// The terminal marker.
    End,
    /// Deep nesting in an ignored member.
    Deep { depth: u8 },
    /// Bytes as a payload.
    Junk(Vec<u8>),
    /// An empty event.
    Empty,
}

#[derive(Arbitrary, Debug)]
struct Input {
    format: u8,
    events: Vec<Ev>,
    cuts: Vec<u16>,
}

const REASONS: &[&str] = &[
    "stop",
    "length",
    "tool_calls",
    "MALFORMED_FUNCTION_CALL",
    "x",
];

fn sse(event: Option<&str>, data: &str) -> String {
    match event {
        Some(e) => format!("event: {e}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

fn opt(t: &Option<Text>) -> String {
    t.as_ref().map_or("null".into(), Text::json)
}

fn chat(ev: &Ev) -> String {
    let body = match ev {
        Ev::Start { slot, id, name } => format!(
            r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":{},"id":{},"function":{{"name":{}}}}}]}}}}]}}"#,
            slot.text(),
            opt(id),
            opt(name)
        ),
        Ev::Args { slot, text } => format!(
            r#"{{"choices":[{{"index":0,"delta":{{"tool_calls":[{{"index":{},"function":{{"arguments":{}}}}}]}}}}]}}"#,
            slot.text(),
            text.json()
        ),
        Ev::Stop { .. } => return String::new(),
        Ev::Say { text, repeat } => {
            let m = vec![format!(r#""content":{}"#, text.json()); 1 + *repeat as usize].join(",");
            format!(r#"{{"choices":[{{"index":0,"delta":{{{m}}}}}]}}"#)
        }
        Ev::Many { n } => {
            let d = vec![r#"{"type":"reasoning.text","text":"a","index":0}"#; *n as usize % 4096]
                .join(",");
            let c = vec![r#"{"index":0}"#; *n as usize % 512].join(",");
            format!(
                r#"{{"choices":[{{"index":0,"delta":{{"reasoning_details":[{d}],"tool_calls":[{c}]}}}}]}}"#
            )
        }
        Ev::Finish { slot, reason } => format!(
            r#"{{"choices":[{{"index":{},"delta":{{}},"finish_reason":"{}"}}]}}"#,
            slot.text(),
            REASONS[*reason as usize % REASONS.len()]
        ),
        Ev::Error { code, message } => format!(
            r#"{{"error":{{"message":{},"code":{},"code":{}}}}}"#,
            message.json(),
            code.text(),
            code.text()
        ),
        Ev::End => "[DONE]".into(),
        Ev::Deep { depth } => {
            let d = *depth as usize;
            format!(r#"{{"x":{}{},"choices":[]}}"#, "[".repeat(d), "]".repeat(d))
        }
        Ev::Junk(b) => String::from_utf8_lossy(b).replace('\n', " "),
        Ev::Empty => String::new(),
    };
    sse(None, &body)
}

fn anthropic(ev: &Ev) -> String {
    let (name, body) = match ev {
        Ev::Start { slot, id, name } => (
            "content_block_start",
            format!(
                r#"{{"type":"content_block_start","index":{},"content_block":{{"type":"tool_use","id":{},"name":{},"input":{{}}}}}}"#,
                slot.text(),
                opt(id),
                opt(name)
            ),
        ),
        Ev::Args { slot, text } => (
            "content_block_delta",
            format!(
                r#"{{"type":"content_block_delta","index":{},"delta":{{"type":"input_json_delta","partial_json":{}}}}}"#,
                slot.text(),
                text.json()
            ),
        ),
        Ev::Stop { slot } => (
            "content_block_stop",
            format!(r#"{{"type":"content_block_stop","index":{}}}"#, slot.text()),
        ),
        Ev::Say { text, .. } => (
            "content_block_delta",
            format!(
                r#"{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":{}}}}}"#,
                text.json()
            ),
        ),
        Ev::Finish { reason, .. } => (
            "message_delta",
            format!(
                r#"{{"type":"message_delta","delta":{{"stop_reason":"{}"}}}}"#,
                REASONS[*reason as usize % REASONS.len()]
            ),
        ),
        Ev::Error { message, .. } => (
            "error",
            format!(
                r#"{{"type":"error","error":{{"type":"overloaded_error","message":{}}}}}"#,
                message.json()
            ),
        ),
        Ev::End => ("message_stop", r#"{"type":"message_stop"}"#.to_string()),
        other => return chat(other),
    };
    sse(Some(name), &body)
}

fn responses(ev: &Ev) -> String {
    let (name, body) = match ev {
        Ev::Start { slot, id, name } => (
            "response.output_item.added",
            format!(
                r#"{{"type":"response.output_item.added","output_index":{},"item":{{"type":"function_call","call_id":{},"name":{}}}}}"#,
                slot.text(),
                opt(id),
                opt(name)
            ),
        ),
        Ev::Args { slot, text } => (
            "response.function_call_arguments.delta",
            format!(
                r#"{{"type":"response.function_call_arguments.delta","output_index":{},"delta":{}}}"#,
                slot.text(),
                text.json()
            ),
        ),
        Ev::Stop { slot } => (
            "response.function_call_arguments.done",
            format!(
                r#"{{"type":"response.function_call_arguments.done","output_index":{},"arguments":"{{}}"}}"#,
                slot.text()
            ),
        ),
        Ev::Say { text, .. } => (
            "response.output_text.delta",
            format!(
                r#"{{"type":"response.output_text.delta","output_index":0,"delta":{}}}"#,
                text.json()
            ),
        ),
        Ev::End => (
            "response.completed",
            r#"{"type":"response.completed","response":{"status":"completed"}}"#.into(),
        ),
        Ev::Error { message, .. } => (
            "error",
            format!(r#"{{"type":"error","message":{}}}"#, message.json()),
        ),
        other => return chat(other),
    };
    sse(Some(name), &body)
}

fn gemini(ev: &Ev) -> String {
    let cand = |slot: &Num, part: String| {
        format!(
            r#"{{"candidates":[{{"index":{},"content":{{"parts":[{part}]}}}}]}}"#,
            slot.text()
        )
    };
    let body = match ev {
        Ev::Start { slot, id, name } => cand(
            slot,
            format!(
                r#"{{"functionCall":{{"id":{},"name":{},"willContinue":true}}}}"#,
                opt(id),
                opt(name)
            ),
        ),
        Ev::Args { slot, text } => {
            let raw = text.raw();
            let path = if raw.starts_with('[') {
                format!("$[{}]", raw.len())
            } else {
                format!("$.{}", raw.len() % 3)
            };
            cand(
                slot,
                format!(
                    r#"{{"functionCall":{{"partialArgs":[{{"jsonPath":"{path}","stringValue":{},"willContinue":{}}}],"willContinue":true}}}}"#,
                    text.json(),
                    raw.len() % 2 == 0
                ),
            )
        }
        Ev::Stop { slot } => cand(slot, r#"{"functionCall":{}}"#.into()),
        Ev::Say { text, .. } => cand(&Num::Small(0), format!(r#"{{"text":{}}}"#, text.json())),
        Ev::Many { n } => cand(
            &Num::Small(0),
            vec![r#"{"text":"a"}"#; *n as usize % 4096].join(","),
        ),
        Ev::Finish { slot, reason } => format!(
            r#"{{"candidates":[{{"index":{},"finishReason":"{}"}}]}}"#,
            slot.text(),
            REASONS[*reason as usize % REASONS.len()]
        ),
        Ev::Deep { depth } => {
            let d = *depth as usize;
            let path = format!("${}", ".a".repeat(d));
            format!(
                r#"{{"candidates":[{{"content":{{"parts":[{{"functionCall":{{"name":"f","partialArgs":[{{"jsonPath":"{path}","nullValue":null}}],"willContinue":true}}}}]}}}}]}}"#
            )
        }
        other => return chat(other),
    };
    sse(None, &body)
}

fn ollama(ev: &Ev) -> String {
    let line = match ev {
        Ev::Start { name, id, .. } => format!(
            r#"{{"message":{{"role":"assistant","content":"","tool_calls":[{{"id":{},"function":{{"name":{},"arguments":{{}}}}}}]}},"done":false}}"#,
            opt(id),
            opt(name)
        ),
        Ev::Args { text, .. } => format!(
            r#"{{"message":{{"role":"assistant","content":"","tool_calls":[{{"function":{{"name":"f","arguments":{}}}}}]}},"done":false}}"#,
            text.json()
        ),
        Ev::Say { text, .. } => format!(
            r#"{{"message":{{"role":"assistant","content":{}}},"done":false}}"#,
            text.json()
        ),
        Ev::End => {
            r#"{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}"#
                .into()
        }
        Ev::Junk(b) => String::from_utf8_lossy(b).replace('\n', " "),
        Ev::Empty => String::new(),
        Ev::Error { message, .. } => format!(r#"{{"error":{}}}"#, message.json()),
        _ => return String::new(),
    };
    line + "\n"
}

fn bedrock(ev: &Ev) -> Vec<u8> {
    let m = |kind: &str, body: String| {
        toolstream::eventstream::encode(
            &[(":event-type", kind), (":message-type", "event")],
            body.as_bytes(),
        )
    };
    match ev {
        Ev::Start { slot, id, name } => m(
            "contentBlockStart",
            format!(
                r#"{{"contentBlockIndex":{},"start":{{"toolUse":{{"toolUseId":{},"name":{}}}}}}}"#,
                slot.text(),
                opt(id),
                opt(name)
            ),
        ),
        Ev::Args { slot, text } => m(
            "contentBlockDelta",
            format!(
                r#"{{"contentBlockIndex":{},"delta":{{"toolUse":{{"input":{}}}}}}}"#,
                slot.text(),
                text.json()
            ),
        ),
        Ev::Stop { slot } => m(
            "contentBlockStop",
            format!(r#"{{"contentBlockIndex":{}}}"#, slot.text()),
        ),
        Ev::Say { text, .. } => m(
            "contentBlockDelta",
            format!(
                r#"{{"contentBlockIndex":0,"delta":{{"text":{}}}}}"#,
                text.json()
            ),
        ),
        Ev::End => m("messageStop", r#"{"stopReason":"end_turn"}"#.into()),
        Ev::Error { message, .. } => toolstream::eventstream::encode(
            &[
                (":exception-type", "throttlingException"),
                (":message-type", "exception"),
            ],
            format!(r#"{{"message":{}}}"#, message.json()).as_bytes(),
        ),
        Ev::Junk(b) => m("metadata", String::from_utf8_lossy(b).into_owned()),
        _ => Vec::new(),
    }
}

fuzz_target!(|input: Input| {
    let format = Format::ALL[input.format as usize % Format::ALL.len()];
    let mut data = Vec::new();
    for ev in &input.events {
        match format {
            Format::OpenAiChat => data.extend(chat(ev).into_bytes()),
            Format::Anthropic => data.extend(anthropic(ev).into_bytes()),
            Format::OpenAiResponses => data.extend(responses(ev).into_bytes()),
            Format::Gemini => data.extend(gemini(ev).into_bytes()),
            Format::Ollama => data.extend(ollama(ev).into_bytes()),
            _ => data.extend(bedrock(ev)),
        }
    }
    let policy = Policy {
        json: Limits::default().max_depth(16).max_value_bytes(1024),
        max_calls: 8,
        preview: input.format & 0x80 != 0,
        ..Policy::default()
    };
    let framing = sse::Limits::default()
        .max_line_bytes(4096)
        .max_event_bytes(16384);
    let data = Bytes::from(data);
    let cuts = toolstream_fuzz::cut_points(&input.cuts, data.len());
    let bound = toolstream_fuzz::limits_bound(&policy, &framing) + (64 << 10);
    toolstream_fuzz::check_pipeline(&data, &cuts, policy, framing, bound);
});
