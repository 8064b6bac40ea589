//! `request::check` and `request::repair`: every kind of bad arguments in each request
//! shape, repaired losslessly (the raw text is inside the repair), good arguments untouched.

use serde_json::{json, Value};
use toolstream::request::{check, repair, Problem};

fn openai(args: Value) -> Value {
    json!({"model": "m", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": args}}
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]})
}

const OPENAI_ARGS: &str = "/messages/1/tool_calls/0/function/arguments";

#[test]
fn openai_chat_arguments_of_every_bad_kind_are_wrapped_with_their_raw_text() {
    let cases: &[(&str, Problem)] = &[
        (r#"{"a":1"#, Problem::Invalid),
        (r#"{"a":1}{"b":2}"#, Problem::Glued),
        (r#"{"a":1} {"a":1}"#, Problem::Glued),
        ("[1,2]", Problem::NotObject),
        (r#""text""#, Problem::NotObject),
        ("", Problem::Empty),
        ("  \n", Problem::Empty),
        ("{'a': 1}", Problem::Invalid),
        ("{\"a\":\"\\q\"}", Problem::Invalid),
    ];
    for (raw, problem) in cases {
        let mut body = openai(json!(raw));
        let before = body.clone();
        assert_eq!(check(&body).len(), 1, "{raw}");
        assert_eq!(body, before, "check changes nothing");
        let found = repair(&mut body);
        assert_eq!(found.len(), 1, "{raw}");
        assert_eq!(found[0].problem, *problem, "{raw}");
        assert_eq!(found[0].path, OPENAI_ARGS);
        assert_eq!(found[0].tool, "f");
        let text = body.pointer(OPENAI_ARGS).unwrap().as_str().unwrap();
        let v: Value = serde_json::from_str(text).unwrap();
        assert_eq!(v, json!({"INVALID_JSON": raw}), "{raw}");
        // Everything else is as it was.
        let mut rest = body.clone();
        *rest.pointer_mut(OPENAI_ARGS).unwrap() = json!(raw);
        assert_eq!(rest, before);
        // A repaired request has nothing left to repair.
        assert!(check(&body).is_empty());
    }
}

#[test]
fn good_arguments_are_left_alone() {
    for raw in [r#"{"a":1}"#, " {\"a\": [1, {\"b\": null}]}\n", "{}"] {
        let mut body = openai(json!(raw));
        let before = body.clone();
        assert!(repair(&mut body).is_empty(), "{raw}");
        assert_eq!(body, before);
    }
}

#[test]
fn an_object_where_the_text_belongs_becomes_its_text() {
    let mut body = openai(json!({"a": 1}));
    let found = repair(&mut body);
    assert_eq!(found[0].problem, Problem::NotText);
    let text = body.pointer(OPENAI_ARGS).unwrap().as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"a": 1})
    );
    // Other JSON values where the text belongs keep their JSON text inside the wrapper.
    let mut body = openai(json!(null));
    assert_eq!(repair(&mut body)[0].problem, Problem::NotObject);
    let text = body.pointer(OPENAI_ARGS).unwrap().as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"INVALID_JSON": "null"})
    );
}

#[test]
fn responses_function_call_items_are_repaired() {
    let mut body = json!({"model": "m", "input": [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\"a\":1}{\"b\":2}"},
        {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        {"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{\"ok\":true}"},
    ]});
    let found = repair(&mut body);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].path, "/input/1/arguments");
    assert_eq!(
        (found[0].problem, found[0].tool.as_str()),
        (Problem::Glued, "f")
    );
    assert_eq!(body["input"][3]["arguments"], "{\"ok\":true}");
}

#[test]
fn anthropic_tool_use_input_that_is_not_an_object_is_repaired() {
    let msg = |input: Value| {
        json!({"model": "m", "max_tokens": 10, "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "calling"},
                {"type": "tool_use", "id": "t1", "name": "f", "input": input},
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        ]})
    };
    let path = "/messages/1/content/1/input";
    // An object is right.
    assert!(check(&msg(json!({"a": 1}))).is_empty());
    // The object's text: the object.
    let mut body = msg(json!("{\"a\":1}"));
    assert_eq!(repair(&mut body)[0].problem, Problem::NotText);
    assert_eq!(body.pointer(path).unwrap(), &json!({"a": 1}));
    // Broken text, glued text, an array: wrapped.
    for (input, problem, raw) in [
        (json!("{\"a\":"), Problem::Invalid, "{\"a\":"),
        (json!("{}{}"), Problem::Glued, "{}{}"),
        (json!([1]), Problem::NotObject, "[1]"),
    ] {
        let mut body = msg(input);
        let found = repair(&mut body);
        assert_eq!((found[0].problem, found[0].path.as_str()), (problem, path));
        assert_eq!(body.pointer(path).unwrap(), &json!({"INVALID_JSON": raw}));
    }
}

#[test]
fn every_call_of_a_long_history_is_checked() {
    let mut messages = vec![json!({"role": "user", "content": "go"})];
    for i in 0..50 {
        let args = if i % 7 == 3 {
            "{\"broken\":"
        } else {
            "{\"fine\":1}"
        };
        messages.push(json!({"role": "assistant", "tool_calls": [
            {"id": format!("c{i}"), "type": "function", "function": {"name": "f", "arguments": args}},
            {"id": format!("d{i}"), "type": "function", "function": {"name": "g", "arguments": "[]"}},
        ]}));
    }
    let mut body = json!({"messages": messages});
    let found = repair(&mut body);
    // 7 broken (i = 3, 10, ..., 45) and 50 arrays.
    assert_eq!(found.len(), 57);
    assert_eq!(
        found
            .iter()
            .filter(|f| f.problem == Problem::Invalid)
            .count(),
        7
    );
    assert!(check(&body).is_empty());
}
