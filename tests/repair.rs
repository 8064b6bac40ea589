//! `repair`: valid arguments come out byte for byte; an object written with closed-form
//! mistakes (single quotes, unquoted keys, Python literals, trailing commas, comments, a
//! fence and prose around it) comes out as the same JSON value, every repair's offset
//! pointing at the bytes it names; what is cut is refused.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolstream::repair::{repair, RepairKind, RepairPolicy};

/// A value: nested objects and arrays of numbers, booleans, null and plain strings.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        any::<i32>().prop_map(|n| json!(n)),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
        "[a-z0-9 ]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_][a-z0-9_]{0,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn object() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-z_][a-z0-9_]{0,6}", value(), 1..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// How an object is written wrong.
#[derive(Clone, Copy, Debug)]
struct Style {
    single_quotes: bool,
    bare_keys: bool,
    python: bool,
    trailing: bool,
    comments: bool,
}

fn style() -> impl Strategy<Value = Style> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(single_quotes, bare_keys, python, trailing, comments)| Style {
                single_quotes,
                bare_keys,
                python,
                trailing,
                comments,
            },
        )
}

fn write(v: &Value, s: Style, out: &mut String) {
    let string = |t: &str, out: &mut String| {
        if s.single_quotes {
            out.push('\'');
            out.push_str(t);
            out.push('\'');
        } else {
            out.push_str(&serde_json::to_string(t).unwrap());
        }
    };
    match v {
        Value::Null => out.push_str(if s.python { "None" } else { "null" }),
        Value::Bool(b) => out.push_str(match (b, s.python) {
            (true, true) => "True",
            (false, true) => "False",
            (true, false) => "true",
            (false, false) => "false",
        }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(t) => string(t, out),
        Value::Array(a) => {
            out.push('[');
            for (k, x) in a.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write(x, s, out);
            }
            if s.trailing && !a.is_empty() {
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (k, (key, x)) in m.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                if s.comments {
                    out.push_str("/* note */ ");
                }
                if s.bare_keys {
                    out.push_str(key);
                } else {
                    string(key, out);
                }
                out.push_str(": ");
                write(x, s, out);
            }
            if s.trailing && !m.is_empty() {
                out.push(',');
            }
            if s.comments {
                out.push_str(" // end\n");
            }
            out.push('}');
        }
    }
}

proptest! {
    #[test]
    fn valid_arguments_come_out_byte_for_byte(v in object()) {
        let raw = serde_json::to_string_pretty(&v).unwrap();
        let r = repair(raw.as_bytes(), RepairPolicy::all()).unwrap();
        prop_assert_eq!(&r.arguments[..], raw.as_bytes());
        prop_assert!(r.repairs.is_empty());
    }

    #[test]
    fn closed_form_mistakes_give_the_same_value(v in object(), s in style(), fence in any::<bool>(), prose in any::<bool>()) {
        let mut raw = String::new();
        if prose {
            raw.push_str("Here are the arguments: ");
        }
        if fence {
            raw.push_str("```json\n");
        }
        write(&v, s, &mut raw);
        if fence {
            raw.push_str("\n```");
        }
        if prose {
            raw.push_str("\nLet me know.");
        }
        let r = repair(raw.as_bytes(), RepairPolicy::all())
            .map_err(|e| TestCaseError::fail(format!("{raw}: {e:?}")))?;
        let got: Value = serde_json::from_slice(&r.arguments).unwrap();
        prop_assert_eq!(&got, &v, "{}", raw);
        for rep in &r.repairs {
            prop_assert!(
                raw.as_bytes()[rep.offset..].starts_with(rep.replaced.as_bytes()),
                "{:?} does not name the bytes at {} in {}", rep, rep.offset, raw
            );
        }
        // Strict: nothing repaired.
        if !r.repairs.is_empty() {
            prop_assert!(repair(raw.as_bytes(), RepairPolicy::default()).is_err());
        }
    }

    #[test]
    fn cut_arguments_are_refused(v in object(), s in style(), cut in 1usize..1000) {
        let mut raw = String::new();
        write(&v, s, &mut raw);
        // Cut inside the object (the last byte is its closing brace).
        let at = cut % (raw.len() - 1);
        if !raw.is_char_boundary(at) { return Ok(()); }
        let cut = &raw[..at];
        prop_assert!(repair(cut.as_bytes(), RepairPolicy::all()).is_err(), "{} repaired", cut);
    }
}

#[test]
fn a_repair_names_its_kind() {
    for k in RepairKind::ALL {
        assert_eq!(RepairKind::from_name(k.as_str()), Some(k));
    }
}

/// The pipeline with the request's tools and repair on: a call whose string stands where
/// its tool's schema says integer and boolean comes out coerced, at every chunking, each
/// coercion a repair with its path; with repair off, or without the schemas, as it came.
#[test]
fn the_pipeline_coerces_calls_by_the_declared_schemas_when_repair_is_on() {
    use bytes::Bytes;
    use toolstream::assemble::{Event, Policy};
    use toolstream::pipeline::Stream;
    use toolstream::schema::Tools;
    let request = json!({"tools": [{"type": "function", "function": {"name": "read",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "line": {"type": "integer"}, "all": {"type": "boolean"}}}}}]});
    let args = r#"{"path": "12", "line": "12", "all": "true"}"#;
    let body = format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1",
            "type": "function", "function": {"name": "read", "arguments": args}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    );
    let run = |repair: RepairPolicy, schemas: bool, chunk: usize| {
        let mut s = Stream::with_policy(
            None,
            Policy {
                repair,
                ..Policy::default()
            },
        );
        if schemas {
            s = s.with_schemas(Tools::from_request(&request).unwrap());
        }
        let mut events = Vec::new();
        for piece in body.as_bytes().chunks(chunk) {
            s.push(Bytes::copy_from_slice(piece), &mut events);
        }
        s.finish(&mut events);
        let calls: Vec<_> = events
            .into_iter()
            .filter_map(|e| match e {
                Event::ToolCall(c) => Some(c),
                _ => None,
            })
            .collect();
        assert_eq!(calls.len(), 1);
        calls.into_iter().next().unwrap()
    };
    for chunk in [1, 7, 64, body.len()] {
        let c = run(RepairPolicy::all(), true, chunk);
        let v: Value = serde_json::from_slice(&c.arguments).unwrap();
        assert_eq!(v, json!({"path": "12", "line": 12, "all": true}));
        let paths: Vec<_> = c.repairs.iter().map(|r| r.path.as_deref()).collect();
        assert_eq!(paths, [Some("/line"), Some("/all")]);
        assert!(c.repairs.iter().all(|r| r.kind == RepairKind::Coerce));
        assert_eq!(c.original.as_deref(), Some(args.as_bytes()));
        // Coercion switched off, repair off, or no schemas: as it came.
        for (repair, schemas) in [
            (RepairPolicy::all().with(RepairKind::Coerce, false), true),
            (RepairPolicy::default(), true),
            (RepairPolicy::all(), false),
        ] {
            let c = run(repair, schemas, chunk);
            assert_eq!(&c.arguments[..], args.as_bytes());
            assert!(c.repairs.is_empty());
        }
    }
}

/// A call repaired in the pipeline is no failure to the classifier: no retry; without
/// repair, the same bytes are a failure to retry with feedback.
#[test]
fn a_repaired_call_needs_no_retry() {
    use bytes::Bytes;
    use toolstream::assemble::{Event, Policy};
    use toolstream::classify::{classify_event, Action, Phase, Policy as Classify, Provider};
    use toolstream::pipeline::Stream;
    let body = Bytes::from_static(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1,}\"}}]}}]}\n\ndata: [DONE]\n\n",
    );
    let verdicts = |repair: RepairPolicy| {
        let mut s = Stream::with_policy(
            None,
            Policy {
                repair,
                ..Policy::default()
            },
        );
        let mut events = Vec::new();
        s.push(body.clone(), &mut events);
        s.finish(&mut events);
        let repaired = events
            .iter()
            .any(|e| matches!(e, Event::ToolCall(c) if !c.repairs.is_empty()));
        let actions: Vec<Action> = events
            .iter()
            .filter_map(|e| {
                classify_event(
                    e,
                    Provider::Openai,
                    Phase::BeforeOutput,
                    0,
                    &Classify::default(),
                )
            })
            .map(|v| v.action)
            .collect();
        (repaired, actions)
    };
    assert_eq!(verdicts(RepairPolicy::all()), (true, vec![]));
    assert_eq!(
        verdicts(RepairPolicy::default()),
        (false, vec![Action::RetryWithFeedback])
    );
}
