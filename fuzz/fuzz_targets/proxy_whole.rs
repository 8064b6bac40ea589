//! Oracle: a non-streaming Responses or Messages body, rewritten, is one JSON object
//! whose calls are the pipeline's on the same body (each call's arguments exactly, each
//! failed call's bytes as they came, the text calls the pipeline finds with the same
//! setting, the calls it repairs with repair on), every call with a name and a call id
//! unique in the body; a body the rewriter leaves is left byte for byte.
#![no_main]

use arbitrary::Arbitrary;
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use toolstream::assemble::{Event, Policy};
use toolstream::pipeline::Stream;
use toolstream::provider::Format;
use toolstream::repair::RepairPolicy;
use toolstream::rewrite::text::{TextCalls, TextSetting};
use toolstream::rewrite::{rewrite_message, rewrite_response, CallRepair};
use toolstream::text_calls::Tools;

const ARGS: &[&str] = &[
    "{\"city\":\"Oslo\"}",
    "{\"city\":\"Oslo\"}{\"city\":\"Rome\"}",
    "{\"city\":\"Oslo\"}{\"city\":\"Oslo\"}",
    "{\"a\":1}{}",
    "{\"a\":",
    "",
    "[1]",
    "{\"a\":1} {\"b\":[2,{\"c\":null}]}",
    "{\"x\":\"\\u00e9\"}",
    "not json",
    "{'city': 'Oslo',}",
    "```json\n{\"city\": True}\n```",
];

const TEXT: &[&str] = &[
    "plain",
    "A <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call> B",
    "<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"get_weather\", \"arguments\": {\"k\": [1]}}</tool_call>",
    "<tool_call>{\"name\": \"other\", \"arguments\": {}}</tool_call>",
    "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": }}</tool_call>",
    "<tool_call>{\"name\": \"get_weather\", ",
    "",
];

#[derive(Arbitrary, Debug)]
enum Item {
    Call { args: u8, id: u8, name: bool },
    Text { text: u8 },
    Other,
}

#[derive(Arbitrary, Debug)]
struct Input {
    anthropic: bool,
    text_calls: bool,
    repair: bool,
    items: Vec<Item>,
}

fn tools() -> Tools {
    Tools::from_names(["get_weather"])
}

/// The text of an item. With text calls on, only whole markup: the rewriter reads each
/// text part for calls on its own (a call cannot span two messages), where the pipeline
/// reads the body's text as one, so a cut-off call followed by another item's text would
/// be read differently by design.
fn text(i: u8, text_calls: bool) -> &'static str {
    let t = TEXT[i as usize % TEXT.len()];
    if text_calls && !t.ends_with('>') && t.contains('<') && !t.ends_with(" B") {
        "plain"
    } else {
        t
    }
}

fuzz_target!(|input: Input| {
    let mut output = Vec::new();
    for (k, item) in input.items.iter().take(16).enumerate() {
        output.push(match (input.anthropic, item) {
            (false, Item::Call { args, id, name }) => json!({"id": format!("fc_{k}"),
                "type": "function_call", "status": "completed",
                "call_id": format!("call_{}", id % 4), "name": if *name { "get_weather" } else { "" },
                "arguments": ARGS[*args as usize % ARGS.len()]}),
            (true, Item::Call { args, id, .. }) => json!({"type": "tool_use",
                "id": format!("toolu_{}", id % 4), "name": "get_weather",
                "input": serde_json::from_str::<Value>(ARGS[*args as usize % ARGS.len()])
                    .ok().filter(Value::is_object).unwrap_or(json!({}))}),
            (false, Item::Text { text: t }) => json!({"id": format!("msg_{k}"), "type": "message",
                "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "annotations": [], "text": text(*t, input.text_calls)}]}),
            (true, Item::Text { text: t }) => json!({"type": "text", "text": text(*t, input.text_calls)}),
            (false, Item::Other) => json!({"id": "rs_1", "type": "reasoning", "summary": []}),
            (true, Item::Other) => json!({"type": "thinking", "thinking": "x", "signature": "s"}),
        });
    }
    let body = if input.anthropic {
        json!({"id": "msg_1", "type": "message", "role": "assistant", "content": output,
            "stop_reason": "end_turn", "usage": {"input_tokens": 1}})
    } else {
        json!({"id": "resp_1", "object": "response", "status": "completed", "output": output})
    };
    let body = body.to_string().into_bytes();
    // Messages bodies hold their calls' arguments as objects: nothing to repair.
    let repair = if input.repair && !input.anthropic {
        RepairPolicy::all()
    } else {
        RepairPolicy::default()
    };
    let setting = input
        .text_calls
        .then(|| TextSetting::new(TextCalls::Auto, tools()))
        .flatten();
    let (out, format) = if input.anthropic {
        (
            rewrite_message(&body, setting.as_ref()).map(|(b, _)| b),
            Format::Anthropic,
        )
    } else {
        (
            rewrite_response(
                &body,
                setting.as_ref(),
                Some(&CallRepair {
                    policy: repair,
                    schemas: None,
                }),
            )
            .map(|(b, _, _)| b),
            Format::OpenAiResponses,
        )
    };
    // What the pipeline finds in the same body.
    // A JSON body: the pipeline finds its format by itself.
    let _ = format;
    let mut s = Stream::with_policy(
        None,
        Policy {
            repair,
            ..Policy::default()
        },
    );
    if input.text_calls {
        s = s.with_text_calls(None, tools());
    }
    let mut events = Vec::new();
    s.push(Bytes::from(body.clone()), &mut events);
    s.finish(&mut events);
    let mut want = toolstream_fuzz::pipeline_calls(&events);
    let Some(out) = out else {
        // Left as it came: the pipeline could not read it either.
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::Dropped(_) | Event::End { complete: false })),
            "a body the pipeline reads was not rewritten: {events:?}"
        );
        return;
    };
    let v: Value = serde_json::from_slice(&out).expect("one JSON object");
    let mut got = Vec::new();
    let mut ids = std::collections::HashSet::new();
    let key = if input.anthropic { "content" } else { "output" };
    let mut changed = false;
    for item in v[key].as_array().expect("the items") {
        let (id, name, args) = match item["type"].as_str() {
            Some("function_call") => (
                item["call_id"].as_str().unwrap().to_string(),
                item["name"].as_str().unwrap().to_string(),
                item["arguments"].as_str().unwrap().to_string(),
            ),
            Some("tool_use") => (
                item["id"].as_str().unwrap().to_string(),
                item["name"].as_str().unwrap().to_string(),
                item["input"].to_string(),
            ),
            _ => continue,
        };
        changed |= !ids.insert(id.clone());
        got.push((name, args, id));
    }
    let _ = changed;
    if !input.anthropic {
        // Anthropic inputs are objects the pipeline reads whole (its arguments text is
        // the input's, spacing aside): compared on Responses only, where they are strings.
        let mut got: Vec<(String, String)> =
            got.iter().map(|(n, a, _)| (n.clone(), a.clone())).collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "the client's calls are the pipeline's");
    }
    if out[..] != body[..] {
        // Rewritten: every call made has a name.
        for (n, _, _) in &got {
            assert!(!n.is_empty() || !input.anthropic, "a call without a name");
        }
    }
});
