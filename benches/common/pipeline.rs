//! The pipeline benches' corpus and the two pipelines they compare, shared with the
//! instruction-count example (`benches/instructions.rs`, mode `pipeline`).

use std::collections::BTreeMap;
use std::convert::Infallible;

use bytes::Bytes;
use futures::StreamExt;
use serde::Deserialize;
use toolstream::assemble::Event;
use toolstream::pipeline::Stream;
use toolstream::provider::Format;

use super::Rng;

fn arguments(rng: &mut Rng) -> String {
    let target = 300 + (rng.next() % 1700) as usize;
    let mut s = String::from("{\"path\":\"src/lib.rs\",\"content\":\"");
    while s.len() < target {
        s.push_str("fn main() {\\n    println!(\\\"caf\\u00e9 {}\\\", 42);\\n}\\n");
    }
    s.push_str("\",\"mode\":\"overwrite\",\"line\":12}");
    s
}

/// `args` cut into 3..20-byte deltas (on character boundaries), each as a JSON string.
fn fragments(args: &str, rng: &mut Rng) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let mut j = (i + 3 + (rng.next() % 18) as usize).min(args.len());
        while !args.is_char_boundary(j) {
            j += 1;
        }
        out.push(serde_json::to_string(&args[i..j]).unwrap());
        i = j;
    }
    out
}

/// What a corpus writer is asked to append to a response's body.
enum Part<'a> {
    /// The response starts.
    Open,
    /// Call `k` of the response, its arguments and their fragments (each a JSON string).
    Call {
        k: usize,
        args: &'a str,
        fragments: Vec<String>,
    },
    /// The response ends.
    Close,
}

/// Responses of 20 calls each, `bytes` in all (each a complete SSE body `write` appends
/// its parts to), and the total number of calls. Every format gets the same calls from the
/// same seed (`write` may draw from the generator too, after a call's fragments are cut).
fn calls_corpus(
    bytes: usize,
    mut write: impl FnMut(&mut String, Part<'_>, &mut Rng),
) -> (Vec<Bytes>, usize) {
    let mut rng = Rng(0xABCD_EF01_2345_6789);
    let mut responses = Vec::new();
    let mut total = 0;
    let mut calls = 0;
    while total < bytes {
        let mut body = String::new();
        write(&mut body, Part::Open, &mut rng);
        for k in 0..20 {
            let args = arguments(&mut rng);
            let fragments = fragments(&args, &mut rng);
            write(
                &mut body,
                Part::Call {
                    k,
                    args: &args,
                    fragments,
                },
                &mut rng,
            );
            calls += 1;
        }
        write(&mut body, Part::Close, &mut rng);
        total += body.len();
        responses.push(Bytes::from(body));
    }
    (responses, calls)
}

/// Responses (each one a complete SSE body) and the total number of calls.
pub fn corpus(bytes: usize) -> (Vec<Bytes>, usize) {
    chat_corpus(bytes, false)
}

/// [`corpus`] from a reasoning model: before each call, as many `reasoning_content` deltas
/// as the call has argument deltas (the same fragments, as text), in DeepSeek's shape.
pub fn reasoning_corpus(bytes: usize) -> (Vec<Bytes>, usize) {
    chat_corpus(bytes, true)
}

fn chat_corpus(bytes: usize, reasoning: bool) -> (Vec<Bytes>, usize) {
    calls_corpus(bytes, |body, part, _| match part {
        Part::Open => {}
        Part::Call { k, fragments, .. } => {
            if reasoning {
                for frag in &fragments {
                    body.push_str(&format!(
                        "data: {{\"id\":\"0c2f0c5e-6f5b-4a8e-9d1a-3a4c1f2e9b7d\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"deepseek-reasoner\",\"system_fingerprint\":\"fp_7e0991cad4_prod0820_fp8_kvcache\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":null,\"reasoning_content\":{frag}}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"
                    ));
                }
            }
            // The first delta names the call.
            body.push_str(&format!(
                "data: {{\"id\":\"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{k},\"id\":\"call_{k:08}\",\"type\":\"function\",\"function\":{{\"name\":\"write_file\",\"arguments\":\"\"}}}}]}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"
            ));
            for frag in fragments {
                body.push_str(&format!(
                    "data: {{\"id\":\"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_eb9dce56a8\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{k},\"function\":{{\"arguments\":{frag}}}}}]}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"
                ));
            }
        }
        Part::Close => {
            body.push_str("data: {\"id\":\"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT\",\"object\":\"chat.completion.chunk\",\"created\":1741570283,\"model\":\"gpt-4o-2024-08-06\",\"choices\":[{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n");
        }
    })
}

/// The same calls as Anthropic Messages streams (a `content_block_start` per call, its
/// arguments in the same `input_json_delta` fragments, `content_block_stop`), for the
/// instruction counts.
pub fn anthropic_corpus(bytes: usize) -> (Vec<Bytes>, usize) {
    calls_corpus(bytes, |body, part, _| match part {
        Part::Open => {
            body.push_str("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01XFDUDYJgAACzvnptvVoYEL\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":472,\"output_tokens\":2}}}\n\n");
        }
        Part::Call { k, fragments, .. } => {
            body.push_str(&format!(
                "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{k},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"toolu_{k:08}\",\"name\":\"write_file\",\"input\":{{}}}}}}\n\n"
            ));
            for frag in fragments {
                body.push_str(&format!(
                    "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{k},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":{frag}}}}}\n\n"
                ));
            }
            body.push_str(&format!(
                "event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{k}}}\n\n"
            ));
        }
        Part::Close => {
            body.push_str("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":89}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
        }
    })
}

/// The same calls as OpenAI Responses API streams, as OpenAI sends them: a
/// `response.output_item.added` per call, its arguments in the same fragments as
/// `response.function_call_arguments.delta` events (each with its `sequence_number` and a
/// random-looking `obfuscation` string of varying length), `.done` with the whole
/// arguments, `response.output_item.done`, and `response.completed` at the end.
pub fn responses_corpus(bytes: usize) -> (Vec<Bytes>, usize) {
    const OBFUSCATION: &str = "nWru1sTmaAzi9OSdSOtFrey5ScOEy3kpvfM";
    let mut seq = 0;
    calls_corpus(bytes, |body, part, rng| match part {
        Part::Open => {
            seq = 0;
            body.push_str("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_68ac6fa9b2e081a0a5c4c6ad8db3e46e\",\"object\":\"response\",\"status\":\"in_progress\",\"model\":\"gpt-4.1-2025-04-14\",\"output\":[]}}\n\n");
        }
        Part::Call { k, args, fragments } => {
            let item = format!("fc_68ac6faa3ba881a0b6d3a4e1c0f2{k:08}");
            seq += 1;
            body.push_str(&format!(
                "event: response.output_item.added\ndata: {{\"type\":\"response.output_item.added\",\"sequence_number\":{seq},\"output_index\":{k},\"item\":{{\"id\":\"{item}\",\"type\":\"function_call\",\"status\":\"in_progress\",\"arguments\":\"\",\"call_id\":\"call_{k:08}\",\"name\":\"write_file\"}}}}\n\n"
            ));
            for frag in fragments {
                seq += 1;
                let ob = &OBFUSCATION[..4 + (rng.next() % 28) as usize];
                body.push_str(&format!(
                    "event: response.function_call_arguments.delta\ndata: {{\"type\":\"response.function_call_arguments.delta\",\"sequence_number\":{seq},\"item_id\":\"{item}\",\"output_index\":{k},\"delta\":{frag},\"obfuscation\":\"{ob}\"}}\n\n"
                ));
            }
            let whole = serde_json::to_string(args).unwrap();
            seq += 1;
            body.push_str(&format!(
                "event: response.function_call_arguments.done\ndata: {{\"type\":\"response.function_call_arguments.done\",\"sequence_number\":{seq},\"item_id\":\"{item}\",\"output_index\":{k},\"arguments\":{whole}}}\n\n"
            ));
            seq += 1;
            body.push_str(&format!(
                "event: response.output_item.done\ndata: {{\"type\":\"response.output_item.done\",\"sequence_number\":{seq},\"output_index\":{k},\"item\":{{\"id\":\"{item}\",\"type\":\"function_call\",\"status\":\"completed\",\"arguments\":{whole},\"call_id\":\"call_{k:08}\",\"name\":\"write_file\"}}}}\n\n"
            ));
        }
        Part::Close => {
            seq += 1;
            body.push_str(&format!("event: response.completed\ndata: {{\"type\":\"response.completed\",\"sequence_number\":{seq},\"response\":{{\"id\":\"resp_68ac6fa9b2e081a0a5c4c6ad8db3e46e\",\"object\":\"response\",\"status\":\"completed\",\"model\":\"gpt-4.1-2025-04-14\",\"usage\":{{\"input_tokens\":291,\"output_tokens\":23,\"total_tokens\":314}}}}}}\n\n"));
        }
    })
}

/// The toolstream pipeline over OpenAI chat responses: the number of calls.
pub fn toolstream_pipeline(responses: &[Bytes], chunk: usize) -> usize {
    toolstream_pipeline_as(responses, chunk, Format::OpenAiChat)
}

/// [`toolstream_pipeline`] for a stream in `format`.
pub fn toolstream_pipeline_as(responses: &[Bytes], chunk: usize, format: Format) -> usize {
    let mut calls = 0;
    let mut events = Vec::new();
    for body in responses {
        let mut s = Stream::new(Some(format));
        let mut i = 0;
        while i < body.len() {
            let j = (i + chunk).min(body.len());
            s.push(body.slice(i..j), &mut events);
            calls += take_calls(&mut events);
            i = j;
        }
        s.finish(&mut events);
        calls += take_calls(&mut events);
    }
    calls
}

/// The calls among `events`, which are cleared.
pub fn take_calls(events: &mut Vec<Event>) -> usize {
    let n = events
        .iter()
        .filter(|e| matches!(e, Event::ToolCall(_)))
        .count();
    events.clear();
    n
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
}
#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<DeltaMsg>,
}
#[derive(Deserialize)]
struct DeltaMsg {
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}
#[derive(Deserialize)]
struct ToolCallDelta {
    index: u32,
    #[serde(default)]
    function: Option<FunctionDelta>,
}
#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    arguments: Option<String>,
}

/// The usual stack: eventsource-stream, typed serde_json chunks, String accumulation,
/// serde_json on the finished arguments.
pub fn reference(responses: &[Bytes], chunk: usize) -> usize {
    use eventsource_stream::Eventsource;
    let mut calls = 0;
    for body in responses {
        let pieces: Vec<Bytes> = (0..body.len())
            .step_by(chunk)
            .map(|i| body.slice(i..(i + chunk).min(body.len())))
            .collect();
        let stream = futures::stream::iter(pieces.into_iter().map(Ok::<Bytes, Infallible>));
        calls += reference_calls(stream.eventsource());
    }
    calls
}

/// The usual stack's work on one response's SSE events (eventsource-stream's): the calls.
pub fn reference_calls<E: std::fmt::Debug>(
    events: impl futures::Stream<Item = Result<eventsource_stream::Event, E>>,
) -> usize {
    let mut args: BTreeMap<u32, String> = BTreeMap::new();
    futures::executor::block_on(events.for_each(|ev| {
        let ev = ev.expect("valid SSE");
        if ev.data != "[DONE]" {
            let c: Chunk = serde_json::from_str(&ev.data).expect("valid chunk");
            for choice in c.choices {
                for tc in choice.delta.and_then(|d| d.tool_calls).unwrap_or_default() {
                    if let Some(a) = tc.function.and_then(|f| f.arguments) {
                        args.entry(tc.index).or_default().push_str(&a);
                    }
                }
            }
        }
        futures::future::ready(())
    }));
    for a in args.values() {
        let _: serde_json::Value = serde_json::from_str(a).expect("valid arguments");
    }
    args.len()
}

#[derive(Deserialize)]
struct AnthropicEvent {
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    delta: Option<AnthropicDelta>,
}

#[derive(Deserialize)]
struct AnthropicDelta {
    #[serde(default)]
    partial_json: Option<String>,
}

/// The usual stack for an Anthropic stream: eventsource-stream, each `content_block_delta`
/// into a typed struct with serde_json, `partial_json` accumulated in a String per block,
/// serde_json on the finished arguments at the block's `content_block_stop`.
pub fn anthropic_reference(responses: &[Bytes], chunk: usize) -> usize {
    typed_events_reference(
        responses,
        chunk,
        ("content_block_delta", "content_block_stop"),
        |e: AnthropicEvent| (e.index, e.delta.and_then(|d| d.partial_json)),
    )
}

#[derive(Deserialize)]
struct ResponsesEvent {
    #[serde(default)]
    output_index: Option<u32>,
    #[serde(default)]
    delta: Option<String>,
}

/// The usual stack for a Responses stream: eventsource-stream, each
/// `response.function_call_arguments.delta` into a typed struct with serde_json, `delta`
/// accumulated in a String per output item, serde_json on the finished arguments at the
/// item's `response.function_call_arguments.done`.
pub fn responses_reference(responses: &[Bytes], chunk: usize) -> usize {
    typed_events_reference(
        responses,
        chunk,
        (
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
        ),
        |e: ResponsesEvent| (e.output_index, e.delta),
    )
}

/// The usual stack for a stream of typed SSE events: eventsource-stream, each event named
/// `delta` or `end` into `E` with serde_json, what `fields` gives of a `delta` event (the
/// call's index and an argument fragment) accumulated in a String per index, serde_json on
/// the finished arguments at the index's `end` event.
fn typed_events_reference<E: serde::de::DeserializeOwned>(
    responses: &[Bytes],
    chunk: usize,
    (delta, end): (&str, &str),
    fields: impl Fn(E) -> (Option<u32>, Option<String>),
) -> usize {
    let mut calls = 0;
    for body in responses {
        let mut args: BTreeMap<u32, String> = BTreeMap::new();
        for_each_event(body, chunk, |ev| {
            let name = ev.event.as_str();
            if name != delta && name != end {
                return;
            }
            let e: E = serde_json::from_str(&ev.data).expect("valid event");
            let (index, fragment) = fields(e);
            let index = index.unwrap_or(0);
            if name == delta {
                if let Some(f) = fragment {
                    args.entry(index).or_default().push_str(&f);
                }
            } else if let Some(a) = args.remove(&index) {
                let _: serde_json::Value = serde_json::from_str(&a).expect("valid arguments");
                calls += 1;
            }
        });
    }
    calls
}

/// eventsource-stream over `body` cut into `chunk`-byte pieces: `f` on every event.
fn for_each_event(body: &Bytes, chunk: usize, mut f: impl FnMut(eventsource_stream::Event)) {
    use eventsource_stream::Eventsource;
    let pieces: Vec<Bytes> = (0..body.len())
        .step_by(chunk)
        .map(|i| body.slice(i..(i + chunk).min(body.len())))
        .collect();
    let stream =
        futures::stream::iter(pieces.into_iter().map(Ok::<Bytes, Infallible>)).eventsource();
    futures::executor::block_on(stream.for_each(|ev| {
        f(ev.expect("valid SSE"));
        futures::future::ready(())
    }));
}
