//! Non-streaming Messages and Responses bodies, rewritten as their streams are: glued
//! calls split into items, calls written into the text taken out, the rest of the body
//! byte for byte.

use serde_json::{json, Value};
use toolstream::rewrite::text::{TextCalls, TextSetting};
use toolstream::rewrite::{continue_request, rewrite_message, rewrite_response};
use toolstream::text_calls::Tools;

fn weather() -> Option<TextSetting> {
    TextSetting::new(TextCalls::Auto, Tools::from_names(["get_weather"]))
}

fn no_numeric_tail(id: &str) {
    let tail = id.rsplit(['_', '-']).next().unwrap();
    assert!(!tail.bytes().all(|b| b.is_ascii_digit()), "{id}");
}

const MESSAGE: &str = r#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"thinking","thinking":"hm","signature":"sig"},{"type":"text","text":"Let me check. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call> Then I answer."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,  "output_tokens":9}}"#;

#[test]
fn a_message_gets_its_text_calls_as_tool_use_blocks_in_place() {
    let (out, counts) = rewrite_message(MESSAGE.as_bytes(), weather().as_ref()).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let content = v["content"].as_array().unwrap();
    assert_eq!(content.len(), 4, "{v}");
    assert_eq!(content[0]["type"], "thinking");
    assert_eq!(
        content[1],
        json!({"type": "text", "text": "Let me check. "})
    );
    assert_eq!(content[2]["type"], "tool_use");
    assert_eq!(content[2]["name"], "get_weather");
    assert_eq!(content[2]["input"], json!({"city": "Oslo"}));
    let id = content[2]["id"].as_str().unwrap();
    assert!(id.starts_with("toolu_"), "{id}");
    no_numeric_tail(id);
    assert_eq!(
        content[3],
        json!({"type": "text", "text": " Then I answer."})
    );
    assert_eq!(v["stop_reason"], "tool_use");
    // The rest byte for byte (the odd spacing in usage kept).
    let text = std::str::from_utf8(&out).unwrap();
    assert!(text.starts_with(
        r#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":["#
    ));
    assert!(
        text.ends_with(r#""stop_sequence":null,"usage":{"input_tokens":5,  "output_tokens":9}}"#)
    );
    assert_eq!((counts.calls, counts.text_calls), (1, 1));
}

#[test]
fn a_message_without_text_calls_or_setting_is_unchanged() {
    let (out, _) = rewrite_message(MESSAGE.as_bytes(), None).unwrap();
    assert_eq!(&out[..], MESSAGE.as_bytes());
    let other = MESSAGE.replace("get_weather", "other_tool");
    let (out, counts) = rewrite_message(other.as_bytes(), weather().as_ref()).unwrap();
    assert_eq!(&out[..], other.as_bytes());
    assert_eq!(counts.text_calls, 0);
    assert!(rewrite_message(
        b"{\"type\":\"message\",\"content\":[{\"type\":\"tool_use\",\"index\":",
        None
    )
    .is_none());
}

fn response(output: Value) -> String {
    format!(
        r#"{{"id":"resp_9","object":"response","status":"completed","model":"m","output":{output},"usage":{{"total_tokens":  7}}}}"#
    )
}

#[test]
fn a_response_with_glued_arguments_gets_one_item_per_object_and_a_follow_up_knows_them() {
    let body = response(json!([
        {"id": "rs_1", "type": "reasoning", "encrypted_content": "gAAAA==", "summary": []},
        {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1",
         "name": "get_weather", "arguments": "{\"city\":\"Oslo\"}{\"city\":\"Rome\"}{\"city\":\"Oslo\"}"},
        {"id": "fc_2", "type": "function_call", "status": "completed", "call_id": "call_2",
         "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}
    ]));
    let (out, counts, cont) = rewrite_response(body.as_bytes(), None, None).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let items = v["output"].as_array().unwrap();
    let calls: Vec<(&str, &str, &str)> = items
        .iter()
        .filter(|i| i["type"] == "function_call")
        .map(|i| {
            (
                i["id"].as_str().unwrap(),
                i["call_id"].as_str().unwrap(),
                i["arguments"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(calls.len(), 3, "the duplicate dropped: {v}");
    assert_eq!(
        (calls[0].0, calls[0].1, calls[0].2),
        ("fc_1", "call_1", r#"{"city":"Oslo"}"#)
    );
    assert_eq!(calls[1].2, r#"{"city":"Rome"}"#);
    assert_ne!(calls[1].1, "call_1");
    assert!(calls[1].1.starts_with("call_") && calls[1].0.starts_with("fc_"));
    no_numeric_tail(calls[1].0);
    no_numeric_tail(calls[1].1);
    assert_eq!(calls[2], ("fc_2", "call_2", r#"{"city":"Paris"}"#));
    assert_eq!(items[0]["encrypted_content"], "gAAAA==");
    assert_eq!((counts.splits, counts.duplicates), (1, 1));
    let text = std::str::from_utf8(&out).unwrap();
    assert!(text.ends_with(r#""usage":{"total_tokens":  7}}"#));
    // Items not changed keep their bytes inside the rewritten output.
    assert!(text.contains(
        r#"{"encrypted_content":"gAAAA==","id":"rs_1","summary":[],"type":"reasoning"}"#
    ));
    assert!(text.contains(r#"{"arguments":"{\"city\":\"Paris\"}","call_id":"call_2","id":"fc_2","name":"get_weather","status":"completed","type":"function_call"}"#));
    // The follow-up answering the split call gets that call in its input.
    let cont = cont.expect("a call was made");
    assert_eq!(cont.response_id, "resp_9");
    let follow = json!({"previous_response_id": "resp_9", "input": [
        {"type": "function_call_output", "call_id": calls[1].1, "output": "sunny"}]});
    let (b, n) = continue_request(follow.to_string().as_bytes(), &cont.calls).unwrap();
    assert_eq!(n, 1);
    let b: Value = serde_json::from_slice(&b).unwrap();
    assert_eq!(b["input"][0]["call_id"], calls[1].1);
    assert_eq!(b["input"][0]["arguments"], r#"{"city":"Rome"}"#);
}

#[test]
fn a_response_with_nothing_to_change_is_byte_for_byte() {
    let body = response(json!([
        {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1",
         "name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"},
        {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "annotations": [], "text": "plain"}]}
    ]));
    let (out, counts, cont) = rewrite_response(body.as_bytes(), weather().as_ref(), None).unwrap();
    assert_eq!(&out[..], body.as_bytes());
    assert_eq!(counts.calls, 1);
    assert!(cont.is_none());
}

#[test]
fn a_response_gets_its_text_calls_as_items_after_the_message() {
    let body = response(json!([
        {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
         "content": [{"type": "output_text", "annotations": [],
            "text": "Checking. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>"}]}
    ]));
    let (out, counts, cont) = rewrite_response(body.as_bytes(), weather().as_ref(), None).unwrap();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let items = v["output"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{v}");
    assert_eq!(items[0]["content"][0]["text"], "Checking. ");
    assert_eq!(items[1]["type"], "function_call");
    assert_eq!(items[1]["arguments"], r#"{"city": "Oslo"}"#);
    let call_id = items[1]["call_id"].as_str().unwrap();
    assert!(call_id.starts_with("call_"));
    no_numeric_tail(call_id);
    assert_eq!((counts.calls, counts.text_calls), (1, 1));
    assert_eq!(cont.unwrap().calls[0].call_id, call_id);
}

#[test]
fn a_response_the_decoder_cannot_read_is_left_alone() {
    assert!(rewrite_response(
        br#"{"object":"response","output":[{"type":"function_call","name":3}]}"#,
        None,
        None
    )
    .is_none());
}

/// With repair on, a Responses body's broken call is repaired in its item and coerced by
/// the declared schema, the other items as they came; off, the call stays a failure.
#[test]
fn a_responses_call_is_repaired_and_coerced_when_repair_is_on() {
    use toolstream::repair::RepairPolicy;
    use toolstream::rewrite::{text::declared_schemas, CallRepair};
    let body = json!({"id": "resp_1", "object": "response", "status": "completed", "output": [
        {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "e"},
        {"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1",
         "name": "read", "arguments": "{'path': 'a.rs', 'line': '3',}"}]})
    .to_string();
    let request = json!({"tools": [{"type": "function", "name": "read", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}, "line": {"type": "integer"}}}}]});
    let schemas = declared_schemas(request.to_string().as_bytes()).map(std::sync::Arc::new);
    assert!(schemas.is_some());
    let repair = CallRepair {
        policy: RepairPolicy::all(),
        schemas,
    };
    let (out, counts, _) = rewrite_response(body.as_bytes(), None, Some(&repair)).unwrap();
    assert_eq!(counts.repaired, 1);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        v["output"][0],
        json!({"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "e"})
    );
    let args: Value = serde_json::from_str(v["output"][1]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"path": "a.rs", "line": 3}));
    assert_eq!(v["output"][1]["call_id"], "call_1");
    // Off: nothing repaired, the call's arguments as they came (the item marked
    // incomplete, as a failed call is).
    let (off, counts, _) = rewrite_response(body.as_bytes(), None, None).unwrap();
    assert_eq!((counts.repaired, counts.failures), (0, 1));
    let v: Value = serde_json::from_slice(&off).unwrap();
    assert_eq!(
        v["output"][1]["arguments"],
        "{'path': 'a.rs', 'line': '3',}"
    );
    assert_eq!(v["output"][1]["status"], "incomplete");
}
