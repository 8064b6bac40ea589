//! The assistant turn a tool loop sends back (`replay::Turn`), built from the shipped
//! captures at every chunk size and compared with messages written by hand from each
//! provider's documented request shape.

use crate::common;

use std::path::Path;

use bytes::Bytes;
use serde_json::{json, Value};
use toolstream::provider::Format;
use toolstream::replay::Turn;

/// The turn of `input` fed in `chunk`-byte pieces.
fn turn_of(format: Format, input: &[u8], chunk: usize) -> Value {
    let input = Bytes::copy_from_slice(input);
    let events = common::pipeline_events(Some(format), &input, chunk);
    let mut turn = Turn::new(format);
    for e in &events {
        turn.push(e);
    }
    turn.to_json()
}

/// The turn of a shipped capture, the same at 1, 7 and 64 bytes as whole.
fn capture_turn(format: Format, name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/captures")
        .join(name);
    let input = std::fs::read(&path).expect("shipped capture");
    let whole = turn_of(format, &input, input.len());
    for chunk in [1, 7, 64] {
        assert_eq!(turn_of(format, &input, chunk), whole, "{name} at {chunk}");
    }
    whole
}

#[test]
fn anthropic_thinking_redacted_and_tool_use_go_back_in_order_with_the_signature() {
    assert_eq!(
        capture_turn(Format::Anthropic, "anthropic-thinking-tool-use.sse"),
        json!({"role": "assistant", "content": [
            {"type": "thinking",
             "thinking": "The user wants the weather in Paris, in \"Celsius\". I'll call get_weather\u{2026}",
             "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/f0R2QMeH+3kSz1f1uV2M="},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
            {"type": "tool_use", "id": "toolu_01Weather", "name": "get_weather",
             "input": {"city": "Paris", "unit": "c"}},
        ]})
    );
}

#[test]
fn gemini_signatures_go_back_on_their_parts_through_the_openai_compatible_api() {
    assert_eq!(
        capture_turn(Format::OpenAiChat, "gemini-openai-thought-signatures.sse"),
        json!({
            "role": "assistant",
            "content": "I'll check both cities.",
            "extra_content": {"google": {"thought_signature": "CtsBAdHtim9Vx3rT1kq0Yc7+Hn2pQ=="}},
            "tool_calls": [
                {"id": "function-call-1", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
                 "extra_content": {"google": {"thought_signature": "CpoCAdHtim+Kq2wE8f5lR0sVb9x4Zg=="}}},
                {"id": "function-call-2", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\":\"Tokyo\"}"}},
            ],
        })
    );
}

#[test]
fn openrouter_reasoning_goes_back_as_reasoning_content_and_merged_details() {
    assert_eq!(
        capture_turn(Format::OpenAiChat, "openrouter-reasoning-details.sse"),
        json!({
            "role": "assistant",
            "content": null,
            "reasoning_content": "The user wants the weather in \"Paris\".",
            "reasoning_details": [{"type": "reasoning.text",
                "text": "The user wants the weather in \"Paris\".",
                "signature": "ErUBCkYIBxgCIkDm0pV4q+Zs1bN7yT3hR8wK",
                "format": "anthropic-claude-v1", "index": 0}],
            "tool_calls": [{"id": "toolu_01Or", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}],
        })
    );
}

#[test]
fn responses_reasoning_items_go_back_whole_before_their_calls() {
    assert_eq!(
        capture_turn(Format::OpenAiResponses, "responses-encrypted-reasoning.sse"),
        json!([
            {"id": "rs_0a1", "type": "reasoning",
             "encrypted_content": "gAAAAABpK3vQ9x2mZ1eL0a7Rk3TqWfYb8Uo4sNcD5hJv6EiP==",
             "summary": [{"type": "summary_text", "text": "**Checking the weather**"}]},
            {"type": "function_call", "call_id": "call_w1", "name": "get_weather",
             "arguments": "{\"city\":\"Paris\"}"},
        ])
    );
}

#[test]
fn ollama_text_and_calls_go_back_with_object_arguments() {
    assert_eq!(
        capture_turn(Format::Ollama, "ollama-native.ndjson"),
        json!({"role": "assistant", "content": "I'll look that up.",
               "tool_calls": [{"function": {"name": "search",
                   "arguments": {"query": "rust sse parser", "limit": 5}}}]})
    );
}

#[test]
fn gemini_native_signatures_go_back_on_the_part_that_carried_them() {
    // A thought summary, then a call whose part carries the signature, a second call
    // without one, then a signature on an empty text part at the end.
    let chunks = [
        r#"{"candidates":[{"content":{"parts":[{"text":"Two cities","thought":true}],"role":"model"},"index":0}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":": Paris, Tokyo.","thought":true}],"role":"model"},"index":0}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"SigA"},{"functionCall":{"name":"get_weather","args":{"city":"Tokyo"}}}],"role":"model"},"index":0}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"SigB"}],"role":"model"},"finishReason":"STOP","index":0}]}"#,
    ];
    let sse: String = chunks
        .iter()
        .map(|c| format!("data: {c}\r\n\r\n"))
        .collect();
    let want = json!({"role": "model", "parts": [
        {"text": "Two cities: Paris, Tokyo.", "thought": true},
        {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "SigA"},
        {"functionCall": {"name": "get_weather", "args": {"city": "Tokyo"}}},
        {"text": "", "thoughtSignature": "SigB"},
    ]});
    for chunk in [sse.len(), 1, 7, 64] {
        assert_eq!(
            turn_of(Format::Gemini, sse.as_bytes(), chunk),
            want,
            "at {chunk}"
        );
    }
}

#[test]
fn deepseek_tool_call_turns_can_always_carry_reasoning_content() {
    let sse = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let events = common::pipeline_events(Some(Format::OpenAiChat), &Bytes::from(sse), sse.len());
    let turn = |always: bool| {
        let mut t = Turn::new(Format::OpenAiChat).reasoning_content_on_every_call_turn(always);
        for e in &events {
            t.push(e);
        }
        t.to_json()
    };
    // Off by default: no member the server may not know.
    assert_eq!(turn(false).get("reasoning_content"), None);
    assert_eq!(turn(true)["reasoning_content"], "");
    // A turn without calls never gets an empty one.
    let mut t = Turn::new(Format::OpenAiChat).reasoning_content_on_every_call_turn(true);
    t.push(&toolstream::assemble::Event::Text {
        choice: 0,
        text: "hi".into(),
    });
    assert_eq!(t.to_json().get("reasoning_content"), None);
}

#[test]
fn failed_and_duplicate_calls_are_not_sent_back() {
    // The second object of a glued call repeats the first: dropped; the third call's
    // arguments are cut off: failed. Neither was executed, so neither goes back.
    let sse = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}{\\\"a\\\":1}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"c2\",\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"b\\\":\"}}]},\"finish_reason\":\"length\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    assert_eq!(
        turn_of(Format::OpenAiChat, sse.as_bytes(), sse.len()),
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}},
        ]})
    );
}

mod properties {
    use bytes::Bytes;
    use proptest::prelude::*;
    use serde_json::Value;
    use toolstream::assemble::{Event, ToolCall};
    use toolstream::provider::Format;
    use toolstream::replay::Turn;

    fn event() -> impl Strategy<Value = Event> {
        let text = || "[a-z \"\\\\]{0,6}";
        prop_oneof![
            text().prop_map(|text| Event::Text { choice: 0, text }),
            text().prop_map(|text| Event::Reasoning { choice: 0, text }),
            "[A-Za-z0-9+/=]{1,8}".prop_map(|signature| Event::ReasoningSignature {
                choice: 0,
                signature
            }),
            "[A-Za-z0-9]{1,8}".prop_map(|data| Event::RedactedReasoning { choice: 0, data }),
            ("[a-z0-9]{0,4}", "[a-z]{1,4}", 0u32..100).prop_map(|(id, name, n)| {
                Event::ToolCall(ToolCall {
                    index: 0,
                    part: 1,
                    id,
                    id_source: Default::default(),
                    name,
                    repairs: Vec::new(),
                    original: None,
                    arguments: Bytes::from(format!("{{\"n\":{n}}}")),
                })
            }),
            // Another choice's: never in the turn.
            text().prop_map(|text| Event::Text {
                choice: 1,
                text: format!("other:{text}")
            }),
            "[A-Za-z0-9]{1,8}".prop_map(|signature| Event::ReasoningSignature {
                choice: 1,
                signature: format!("other:{signature}")
            }),
        ]
    }

    /// Every string value anywhere in `v`, in document order.
    fn strings(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            Value::Object(m) => m.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }

    fn turn(format: Format, events: &[Event]) -> Value {
        let mut t = Turn::new(format);
        for e in events {
            t.push(e);
        }
        t.to_json()
    }

    proptest! {
        /// Nothing the provider checks is lost or invented: in Gemini's shape (every part
        /// kept) each signature of the first choice is on exactly one part, in order, and
        /// the parts' text, thought text and calls are the events', in order; in
        /// Anthropic's, the same for the signed thinking, and the calls' ids and inputs.
        #[test]
        fn signatures_calls_and_text_survive_in_order(events in prop::collection::vec(event(), 0..24)) {
            let sigs: Vec<String> = events.iter().filter_map(|e| match e {
                Event::ReasoningSignature { choice: 0, signature } => Some(signature.clone()),
                _ => None,
            }).collect();
            let text: String = events.iter().filter_map(|e| match e {
                Event::Text { choice: 0, text } => Some(text.as_str()),
                _ => None,
            }).collect();
            let thought: String = events.iter().filter_map(|e| match e {
                Event::Reasoning { choice: 0, text } => Some(text.as_str()),
                _ => None,
            }).collect();
            let calls: Vec<(String, Value)> = events.iter().filter_map(|e| match e {
                Event::ToolCall(c) => Some((c.name.clone(), serde_json::from_slice(&c.arguments).unwrap())),
                _ => None,
            }).collect();

            let g = turn(Format::Gemini, &events);
            let parts = g["parts"].as_array().unwrap();
            let got_sigs: Vec<String> = parts.iter()
                .filter_map(|p| p["thoughtSignature"].as_str().map(str::to_owned)).collect();
            prop_assert_eq!(&got_sigs, &sigs);
            let part_text = |thought: bool| -> String {
                parts.iter()
                    .filter(|p| p["thought"].as_bool().unwrap_or(false) == thought)
                    .filter_map(|p| p["text"].as_str()).collect()
            };
            prop_assert_eq!(part_text(false), text.clone());
            prop_assert_eq!(part_text(true), thought);
            let got_calls: Vec<(String, Value)> = parts.iter().filter_map(|p| {
                let c = p.get("functionCall")?;
                Some((c["name"].as_str()?.to_owned(), c["args"].clone()))
            }).collect();
            prop_assert_eq!(&got_calls, &calls);
            // No part is empty but for a signature's.
            for p in parts {
                prop_assert!(p.get("functionCall").is_some()
                    || p["text"].as_str() != Some("")
                    || p.get("thoughtSignature").is_some(), "{}", p);
            }

            let a = turn(Format::Anthropic, &events);
            let blocks = a["content"].as_array().unwrap();
            let signed: Vec<String> = blocks.iter()
                .filter(|b| b["type"] == "thinking")
                .map(|b| b["signature"].as_str().unwrap().to_owned()).collect();
            prop_assert_eq!(&signed, &sigs);
            let got_calls: Vec<(String, Value)> = blocks.iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| (b["name"].as_str().unwrap().to_owned(), b["input"].clone())).collect();
            prop_assert_eq!(&got_calls, &calls);
            let a_text: String = blocks.iter()
                .filter(|b| b["type"] == "text")
                .map(|b| b["text"].as_str().unwrap()).collect();
            prop_assert_eq!(a_text, text);
            // Nothing of the other choice anywhere, in any shape.
            for format in [Format::Gemini, Format::Anthropic, Format::OpenAiChat, Format::OpenAiResponses, Format::Ollama] {
                let mut all = Vec::new();
                strings(&turn(format, &events), &mut all);
                prop_assert!(!all.iter().any(|s| s.contains("other:")), "{:?}: {:?}", format, all);
            }
        }
    }

    /// Text, free signatures, and calls whose part carried (or not) a signature, each call
    /// opening its slot at once and closing its arguments `delay` atoms later (other parts
    /// streaming meanwhile), as the assembler gives them: `(events, call signatures)`.
    fn signed_calls() -> impl Strategy<Value = (Vec<Event>, Vec<Option<String>>)> {
        #[derive(Clone, Debug)]
        enum Atom {
            Text(String),
            Sig(String),
            Call(Option<String>, usize),
        }
        let atom = prop_oneof![
            "[a-z]{1,4}".prop_map(Atom::Text),
            "[A-Z]{1,4}".prop_map(|s| Atom::Sig(format!("free:{s}"))),
            (prop::option::of("[A-Z]{1,4}"), 0usize..4)
                .prop_map(|(s, d)| Atom::Call(s.map(|s| format!("call:{s}")), d)),
        ];
        prop::collection::vec(atom, 0..16).prop_map(|atoms| {
            let mut events = Vec::new();
            let mut sigs = Vec::new();
            let mut due: Vec<(usize, Event)> = Vec::new();
            let n = atoms.len();
            for (i, a) in atoms.into_iter().enumerate() {
                match a {
                    Atom::Text(text) => events.push(Event::Text { choice: 0, text }),
                    Atom::Sig(signature) => events.push(Event::ReasoningSignature {
                        choice: 0,
                        signature,
                    }),
                    Atom::Call(sig, delay) => {
                        let k = sigs.len() as u32;
                        if let Some(signature) = sig.clone() {
                            events.push(Event::ReasoningSignature {
                                choice: 0,
                                signature,
                            });
                        }
                        sigs.push(sig);
                        events.push(Event::CallStarted {
                            index: k,
                            id: format!("id{k}"),
                            name: format!("c{k}"),
                        });
                        due.push((
                            i + delay,
                            Event::ToolCall(ToolCall {
                                index: k,
                                part: 1,
                                id: format!("id{k}"),
                                id_source: Default::default(),
                                name: format!("c{k}"),
                                arguments: Bytes::from(format!("{{\"k\":{k}}}")),
                                repairs: Vec::new(),
                                original: None,
                            }),
                        ));
                    }
                }
                let (now, later): (Vec<_>, Vec<_>) =
                    due.into_iter().partition(|(at, _)| *at <= i || i + 1 == n);
                events.extend(now.into_iter().map(|(_, e)| e));
                due = later;
            }
            (events, sigs)
        })
    }

    proptest! {
        /// A call's signature stays with the call however late its arguments close, in
        /// Gemini's parts and in the OpenAI-compatible tool calls, and no signature is lost
        /// or invented.
        #[test]
        fn a_call_keeps_the_signature_of_its_part((events, call_sigs) in signed_calls()) {
            let mut want: Vec<String> = events.iter().filter_map(|e| match e {
                Event::ReasoningSignature { signature, .. } => Some(signature.clone()),
                _ => None,
            }).collect();
            want.sort();

            let g = turn(Format::Gemini, &events);
            let parts = g["parts"].as_array().unwrap();
            let mut got: Vec<String> = parts.iter()
                .filter_map(|p| p["thoughtSignature"].as_str().map(str::to_owned)).collect();
            got.sort();
            prop_assert_eq!(&got, &want);
            for (k, sig) in call_sigs.iter().enumerate() {
                let Some(sig) = sig else { continue };
                let part = parts.iter()
                    .find(|p| p["functionCall"]["name"] == format!("c{k}").as_str());
                prop_assert_eq!(part.and_then(|p| p["thoughtSignature"].as_str()), Some(sig.as_str()), "{}", g);
            }

            let o = turn(Format::OpenAiChat, &events);
            for (k, sig) in call_sigs.iter().enumerate() {
                let Some(sig) = sig else { continue };
                let call = o["tool_calls"].as_array().and_then(|c| {
                    c.iter().find(|c| c["function"]["name"] == format!("c{k}").as_str())
                });
                prop_assert_eq!(
                    call.and_then(|c| c["extra_content"]["google"]["thought_signature"].as_str()),
                    Some(sig.as_str()),
                    "{}",
                    o
                );
            }
        }
    }
}

#[test]
fn bedrock_reasoning_text_and_tool_use_go_back_in_converses_shape() {
    // Converse's assistant message: reasoningContent.reasoningText with its signature,
    // text, toolUse with the input object (the Converse API's ContentBlock members).
    assert_eq!(
        capture_turn(Format::Bedrock, "bedrock-converse-tool-use.eventstream"),
        json!({"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {
                "text": "The user wants the weather.", "signature": "EqQBCkYIBRgCKkBsig=="}}},
            {"text": "Checking both cities."},
            {"toolUse": {"toolUseId": "tooluse_Paris01", "name": "get_weather",
                         "input": {"city": "Paris", "units": "c"}}},
            {"toolUse": {"toolUseId": "tooluse_Oslo02", "name": "get_weather",
                         "input": {"city": "Oslo"}}},
        ]})
    );
}

#[test]
fn claude_through_bedrock_invoke_goes_back_in_anthropics_shape() {
    // InvokeModelWithResponseStream carries Anthropic's own events, and its requests take
    // Anthropic's messages: the turn is built for Format::Anthropic from the same events.
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/captures/bedrock-invoke-claude.eventstream");
    let input = Bytes::from(std::fs::read(&path).unwrap());
    for chunk in [1, 7, 64, input.len()] {
        let events = common::pipeline_events(Some(Format::Bedrock), &input, chunk);
        let mut turn = Turn::new(Format::Anthropic);
        for e in &events {
            turn.push(e);
        }
        assert_eq!(
            turn.to_json(),
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Read the file first.",
                 "signature": "ErcBCkgIBhABGAIiQsig"},
                {"type": "tool_use", "id": "toolu_bdrk_01", "name": "read_file",
                 "input": {"path": "src/lib.rs", "lines": [1, 80]}},
            ]}),
            "chunk {chunk}"
        );
    }
}
