//! Oracle: the proxy's OpenAI rewriter, fed any upstream bytes at any chunking, hands the
//! client the calls the pipeline finds in the same bytes (each call's arguments exactly,
//! each failed call's bytes as they came), one per index, and the same output whatever
//! the chunking; every event is valid SSE and JSON; a stream the pipeline calls incomplete
//! ends with an error event and no `[DONE]`. With calls
//! written into the text taken out (`--text-calls auto`), the client's calls are the
//! pipeline's with the same setting (the text calls that cannot be read stay text in the
//! proxy) and its text is the same at every chunking.
#![no_main]

use arbitrary::Arbitrary;
use bytes::{Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;
use toolstream::assemble::{Event, IdSource};
use toolstream::classify::Provider;
use toolstream::pipeline::Stream;
use toolstream::provider::Format;
use toolstream::rewrite::text::{TextCalls, TextSetting};
use toolstream::rewrite::OpenAiRewriter;
use toolstream::text_calls::Tools;

#[derive(Arbitrary, Debug)]
struct Input {
    data: Vec<u8>,
    cuts: Vec<u16>,
    text_calls: bool,
}

/// The tools declared when text calls are taken out.
fn tools() -> Tools {
    Tools::from_names(["f", "get_weather"])
}

/// The content the client accumulates, over every choice.
fn client_text(out: &[u8]) -> String {
    let mut content = String::new();
    for data in toolstream_fuzz::client_events(out) {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&data) else {
            continue;
        };
        for choice in v["choices"].as_array().into_iter().flatten() {
            if let Some(t) = choice.pointer("/delta/content").and_then(|t| t.as_str()) {
                content.push_str(t);
            }
        }
    }
    content
}

/// (name, arguments) of each call the client accumulates, per choice by index, sorted
/// (the pipeline's events do not say which choice a call is in).
fn client_calls(out: &[u8]) -> Vec<(String, String)> {
    let mut per_choice: std::collections::BTreeMap<u64, Vec<(String, String)>> = Default::default();
    for data in toolstream_fuzz::client_events(out) {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&data) else {
            continue;
        };
        for choice in v["choices"].as_array().into_iter().flatten() {
            let k = choice["index"].as_u64().expect("a choice index");
            for tc in choice
                .pointer("/delta/tool_calls")
                .and_then(|t| t.as_array())
                .into_iter()
                .flatten()
            {
                let calls = per_choice.entry(k).or_default();
                let i = tc["index"].as_u64().unwrap() as usize;
                // Each call is one whole chunk with its choice's next index.
                assert_eq!(i, calls.len(), "indices in order, one chunk per call");
                calls.push((
                    tc["function"]["name"].as_str().unwrap().to_string(),
                    tc["function"]["arguments"].as_str().unwrap().to_string(),
                ));
            }
        }
    }
    let mut all: Vec<_> = per_choice.into_values().flatten().collect();
    all.sort();
    all
}

fn rewrite(data: &Bytes, cuts: &[usize], text_calls: bool) -> Vec<u8> {
    let setting = text_calls
        .then(|| TextSetting::new(TextCalls::Auto, tools()))
        .flatten();
    let mut r = OpenAiRewriter::new(Provider::Openai, false, setting);
    let mut out = BytesMut::new();
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&data.len())) {
        r.push(data.slice(prev..c.max(prev)), &mut out);
        prev = c.max(prev);
    }
    r.finish(None, &mut out);
    out.to_vec()
}

fuzz_target!(|input: Input| {
    let data = Bytes::from(input.data);
    let cuts = toolstream_fuzz::cut_points(&input.cuts, data.len());
    let out = rewrite(&data, &cuts, input.text_calls);
    let calls = client_calls(&out);

    let mut s = Stream::new(Some(Format::OpenAiChat));
    if input.text_calls {
        s = s.with_text_calls(None, tools());
    }
    let mut events = Vec::new();
    s.push(data.clone(), &mut events);
    s.finish(&mut events);
    let want: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall(c) => Some((
                c.name.clone(),
                String::from_utf8_lossy(&c.arguments).into_owned(),
            )),
            // A text call that cannot be read stays text in the proxy.
            Event::ToolCallFailed(f) if f.id_source != IdSource::Text => {
                Some((f.name.clone(), String::from_utf8_lossy(&f.raw).into_owned()))
            }
            _ => None,
        })
        .collect();
    let mut want = want;
    want.sort();
    assert_eq!(calls, want, "the client's calls are the pipeline's");

    let whole_out = rewrite(&data, &[], input.text_calls);
    let whole = client_calls(&whole_out);
    assert_eq!(calls, whole, "chunking changed the calls");
    assert_eq!(
        client_text(&out),
        client_text(&whole_out),
        "chunking changed the text"
    );

    // A stream the pipeline finds incomplete never ends cleanly for the client: its last
    // event is an error, and no `[DONE]` came.
    let complete = events.last() == Some(&Event::End { complete: true });
    if !complete {
        let events = toolstream_fuzz::client_events(&out);
        assert!(
            !events.iter().any(|e| e == "[DONE]"),
            "[DONE] in an incomplete stream"
        );
        let last = events.last().expect("an error event");
        let v: serde_json::Value = serde_json::from_str(last).expect("the last event is JSON");
        assert!(
            v.get("error").is_some(),
            "the last event is not an error: {last}"
        );
    }
});
