//! The assistant turn a tool loop sends back (`replay::Turn`), built from the shipped
//! captures at every chunk size and compared with messages written by hand from each
//! provider's documented request shape.

use std::path::Path;

use bytes::Bytes;
use serde_json::{json, Value};
use toolstream::pipeline::Stream;
use toolstream::provider::Format;
use toolstream::replay::Turn;

/// The turn of `input` fed in `chunk`-byte pieces.
fn turn_of(format: Format, input: &[u8], chunk: usize) -> Value {
    let input = Bytes::copy_from_slice(input);
    let mut stream = Stream::new(Some(format));
    let mut events = Vec::new();
    let mut i = 0;
    while i < input.len() {
        let j = (i + chunk).min(input.len());
        stream.push(input.slice(i..j), &mut events);
        i = j;
    }
    stream.finish(&mut events);
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
