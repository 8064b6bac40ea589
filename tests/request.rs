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

// ---- `repair_bytes`: the same repairs on a body's bytes, everything else kept ----

use toolstream::request::repair_bytes;

/// `repair_bytes` on `body`'s text finds what `repair` finds on its tree, and its output,
/// read back, is `repair`'s tree.
#[track_caller]
fn same_as_tree(body: &Value) {
    // Compact, as serde_json writes the tree: an object given where its text belongs keeps
    // its text as it came, so the two agree on its spacing only when it came compact.
    let text = serde_json::to_string(body).unwrap();
    let mut tree = body.clone();
    let found = repair(&mut tree);
    let r = repair_bytes(text.as_bytes()).unwrap();
    assert_eq!(r.found, found, "{text}");
    match r.body {
        None => assert!(found.is_empty()),
        Some(out) => {
            let back: Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(back, tree, "{}", String::from_utf8_lossy(&out));
        }
    }
}

#[test]
fn repair_bytes_agrees_with_repair_on_every_shape() {
    for raw in [
        r#"{"a":1"#,
        r#"{"a":1}{"b":2}"#,
        "[1,2]",
        r#""text""#,
        "",
        "  \n",
        "{'a': 1}",
        "{\"a\":\"\\q\"}",
        "{\"a\":\"é \\\" \\\\ \\u00e9\"}",
        r#"{"a":1}"#,
        "{}",
    ] {
        same_as_tree(&openai(json!(raw)));
    }
    same_as_tree(&openai(json!({"a": 1})));
    same_as_tree(&openai(json!(null)));
    same_as_tree(&openai(json!([1, "x"])));
    same_as_tree(&json!({"model": "m", "input": [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\"a\":1}{\"b\":2}"},
        {"arguments": "{", "name": "g", "type": "function_call"},
        {"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{\"ok\":true}"},
    ]}));
    for input in [
        json!({"a": 1}),
        json!("{\"a\":1}"),
        json!(" {\"a\": [1]} "),
        json!("{\"a\":"),
        json!("{}{}"),
        json!([1]),
        json!(7),
    ] {
        same_as_tree(&json!({"messages": [{"role": "assistant", "content": [
            {"type": "text", "text": "calling"},
            {"input": input, "name": "f", "type": "tool_use", "id": "t1"},
        ]}]}));
    }
}

/// What serde_json refuses and RFC 8259's grammar allows, elsewhere in the body, does not
/// stop the repair: a lone surrogate escape (what `json.dumps` writes for a cut emoji), a
/// number out of a float's range, 130 nested arrays, a key written with an escape.
/// Everything but the repaired arguments is kept byte for byte. (At 91c7367 the proxy read
/// the body with serde_json and sent such bodies on unrepaired, saying nothing.)
#[test]
fn repair_bytes_reads_what_a_tree_reader_refuses() {
    let deep = format!("{}{}", "[".repeat(130), "]".repeat(130));
    for extra in ["\"\\ud83d\"", "1e400", deep.as_str(), "\"\\udc00 x\""] {
        let body = format!(
            r#"{{"model":"m","x":{extra},"messages":[{{"role":"user","content":{extra}}},{{"role":"assistant","tool\u005fcalls":[{{"id":"c","function":{{"name":"f","arguments":"{{\"a\":1"}}}}]}}]}}"#
        );
        let r = repair_bytes(body.as_bytes()).unwrap();
        assert_eq!(r.found.len(), 1, "{extra}");
        assert_eq!(r.found[0].problem, Problem::Invalid);
        let out = String::from_utf8(r.body.unwrap()).unwrap();
        let want = body.replace(
            r#""arguments":"{\"a\":1""#,
            r#""arguments":"{\"INVALID_JSON\":\"{\\\"a\\\":1\"}""#,
        );
        assert_eq!(out, want);
    }
    // A lone surrogate inside the arguments themselves is kept as it came.
    let body = r#"{"messages":[{"tool_calls":[{"function":{"name":"f","arguments":"{\"a\":\"\ud83d\""}}]}]}"#;
    let out = repair_bytes(body.as_bytes()).unwrap().body.unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains(r#"{\"INVALID_JSON\":\"{\\\"a\\\":\\\"\\ud83d\\\"\"}"#),
        "{out}"
    );
    // Not JSON: said, not repaired.
    assert!(repair_bytes(b"{\"messages\":[{\"tool_calls\":[").is_err());
    assert!(repair_bytes(b"\xff").is_err());
}

/// Memory in proportion: a history of a million small numbers and an arguments string of
/// `1 1 1 ...` cost about their bytes, not a tree (at 91c7367 a serde tree of the body,
/// ~30x its bytes, and a list of every value of the arguments: ~1 GiB).
#[test]
fn repair_bytes_memory_is_in_proportion_to_the_body() {
    let ones = "1 ".repeat(4 << 20);
    let numbers = vec!["1"; 1 << 20].join(",");
    let body = format!(
        r#"{{"x":[{numbers}],"messages":[{{"tool_calls":[{{"function":{{"name":"f","arguments":"{ones}"}}}}]}}]}}"#
    );
    let (r, peak, _) = crate::common::alloc::measure(|| repair_bytes(body.as_bytes()).unwrap());
    assert_eq!(r.found[0].problem, Problem::Glued);
    // The arguments decoded, judged, wrapped and escaped, and the output: a few copies.
    assert!(
        peak < 6 * body.len(),
        "peak {peak} bytes for a body of {}",
        body.len()
    );
}
