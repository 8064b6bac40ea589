//! `schema`: tool declarations read from each provider's request shape, JSON Schema
//! keywords checked one by one (expected verdicts written from the specification, with the
//! path and keyword each violation must name), the budget, no recursion on deep input.
//! The differential test against the `jsonschema` crate lives in `oracle/` (a package of
//! its own, so its dependencies are built once in CI, not by every test build).

use serde_json::{json, Value};
use toolstream::classify::{self, Action, Reason};
use toolstream::schema::{Mismatch, Schema, Tools, Violation};

fn violations(schema: Value, instance: Value) -> Vec<(String, &'static str)> {
    let s = Schema::compile(&schema).expect("schema compiles");
    s.validate(&instance)
        .into_iter()
        .map(|v| (v.path, v.keyword))
        .collect()
}

fn valid(schema: Value, instance: Value) -> bool {
    Schema::compile(&schema)
        .expect("schema compiles")
        .is_valid(&instance)
}

#[test]
fn types_including_integer_as_a_number_without_fraction() {
    let cases = [
        (json!("integer"), json!(1), true),
        (json!("integer"), json!(1.0), true),
        (json!("integer"), json!(1.5), false),
        (json!("integer"), json!("1"), false),
        (json!("number"), json!(1), true),
        (json!("number"), json!(-2.5e3), true),
        (json!("string"), json!(""), true),
        (json!("string"), json!(null), false),
        (json!("boolean"), json!(false), true),
        (json!("boolean"), json!(0), false),
        (json!("null"), json!(null), true),
        (json!("array"), json!([]), true),
        (json!("object"), json!({}), true),
        (json!("object"), json!([]), false),
        (json!(["string", "null"]), json!(null), true),
        (json!(["string", "null"]), json!(3), false),
        // Gemini's Schema writes the names in capitals.
        (json!("STRING"), json!("x"), true),
        (json!("INTEGER"), json!("x"), false),
    ];
    for (t, instance, want) in cases {
        assert_eq!(
            valid(json!({"type": t}), instance.clone()),
            want,
            "type {t} on {instance}"
        );
    }
    // OpenAPI's nullable.
    assert!(valid(
        json!({"type": "string", "nullable": true}),
        json!(null)
    ));
    assert!(!valid(
        json!({"type": "string", "nullable": false}),
        json!(null)
    ));
}

#[test]
fn enum_and_const_compare_json_values() {
    let s = json!({"enum": ["a", 1, {"k": [1, 2]}, null]});
    assert!(valid(s.clone(), json!("a")));
    assert!(valid(s.clone(), json!(1.0)), "1.0 equals 1");
    assert!(valid(s.clone(), json!({"k": [1.0, 2]})));
    assert!(valid(s.clone(), json!(null)));
    assert!(!valid(s.clone(), json!({"k": [2, 1]})));
    assert!(!valid(s.clone(), json!("b")));
    assert!(!valid(s, json!(true)));
    assert!(valid(
        json!({"const": {"a": 1, "b": 2}}),
        json!({"b": 2, "a": 1})
    ));
    assert!(!valid(json!({"const": {"a": 1}}), json!({"a": 1, "b": 2})));
    assert!(!valid(json!({"const": false}), json!(0)));
}

#[test]
fn number_bounds_and_multiples() {
    let cases = [
        (json!({"minimum": 1}), json!(1), true),
        (json!({"minimum": 1}), json!(0.999), false),
        (json!({"exclusiveMinimum": 1}), json!(1), false),
        (json!({"exclusiveMinimum": 1}), json!(1.001), true),
        (json!({"maximum": 10}), json!(10), true),
        (json!({"maximum": 10}), json!(11), false),
        (json!({"exclusiveMaximum": 10}), json!(10), false),
        // Draft 4's boolean form.
        (
            json!({"minimum": 5, "exclusiveMinimum": true}),
            json!(5),
            false,
        ),
        (
            json!({"minimum": 5, "exclusiveMinimum": false}),
            json!(5),
            true,
        ),
        // Both given: the tighter one binds.
        (
            json!({"minimum": 5, "exclusiveMinimum": 3}),
            json!(4),
            false,
        ),
        (
            json!({"minimum": 3, "exclusiveMinimum": 5}),
            json!(5),
            false,
        ),
        (
            json!({"minimum": 3, "exclusiveMinimum": 5}),
            json!(5.5),
            true,
        ),
        // Exact for integers beyond f64's 53 bits.
        (
            json!({"maximum": 9007199254740993u64}),
            json!(9007199254740993u64),
            true,
        ),
        (
            json!({"maximum": 9007199254740992u64}),
            json!(9007199254740993u64),
            false,
        ),
        (json!({"minimum": -1}), json!(18446744073709551615u64), true),
        (json!({"multipleOf": 3}), json!(9), true),
        (json!({"multipleOf": 3}), json!(10), false),
        (json!({"multipleOf": 0.1}), json!(0.3), true),
        (json!({"multipleOf": 0.5}), json!(2.5), true),
        (json!({"multipleOf": 0.5}), json!(2.2), false),
        // Bounds apply to numbers only.
        (json!({"minimum": 5}), json!("1"), true),
    ];
    for (s, instance, want) in cases {
        assert_eq!(
            valid(s.clone(), instance.clone()),
            want,
            "{s} on {instance}"
        );
    }
}

#[test]
fn string_lengths_count_code_points() {
    let s = json!({"minLength": 2, "maxLength": 3});
    assert!(valid(s.clone(), json!("ab")));
    assert!(valid(s.clone(), json!("é😀")), "two code points, six bytes");
    assert!(!valid(s.clone(), json!("😀")));
    assert!(!valid(s.clone(), json!("abcd")));
    assert!(valid(s, json!(12345)), "lengths apply to strings only");
    // Gemini writes int64 fields as strings.
    assert!(!valid(json!({"maxLength": "2"}), json!("abc")));
}

#[test]
fn arrays() {
    let s = json!({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3});
    assert_eq!(violations(s.clone(), json!([1, 2])), []);
    assert_eq!(violations(s.clone(), json!([])), [("".into(), "minItems")]);
    assert_eq!(
        violations(s.clone(), json!([1, "x", 3, 4])),
        [("".into(), "maxItems"), ("/1".into(), "type")]
    );
    // 2020-12 prefixItems, then items for the rest.
    let t = json!({"prefixItems": [{"type": "string"}, {"type": "number"}], "items": false});
    assert!(valid(t.clone(), json!(["a", 1])));
    assert!(valid(t.clone(), json!(["a"])));
    assert_eq!(
        violations(t, json!(["a", 1, null])),
        [("/2".into(), "false")]
    );
    // Draft 7 tuples: items as an array, additionalItems for the rest.
    let d7 = json!({"items": [{"type": "string"}], "additionalItems": {"type": "boolean"}});
    assert!(valid(d7.clone(), json!(["a", true, false])));
    assert_eq!(
        violations(d7, json!([1, true, 2])),
        [("/0".into(), "type"), ("/2".into(), "type")]
    );
    let u = json!({"uniqueItems": true});
    assert!(valid(u.clone(), json!([1, "1", [1], {"a": 1}])));
    assert!(!valid(u.clone(), json!([1, 2, 1.0])));
    assert!(!valid(u, json!([{"a": 1, "b": 2}, {"b": 2, "a": 1}])));
    let c = json!({"contains": {"const": 5}, "minContains": 2, "maxContains": 3});
    assert!(valid(c.clone(), json!([5, 1, 5])));
    assert_eq!(
        violations(c.clone(), json!([5, 1])),
        [("".into(), "contains")]
    );
    assert_eq!(
        violations(c.clone(), json!([5, 5, 5, 5])),
        [("".into(), "contains")]
    );
    assert_eq!(
        violations(json!({"contains": true}), json!([])),
        [("".into(), "contains")]
    );
    assert!(valid(
        json!({"contains": false, "minContains": 0}),
        json!([])
    ));
    assert!(valid(c, json!("not an array")));
}

#[test]
fn objects() {
    let s = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "line": {"type": "integer", "minimum": 1}},
        "required": ["path"],
        "additionalProperties": false
    });
    assert_eq!(violations(s.clone(), json!({"path": "a", "line": 3})), []);
    assert_eq!(
        violations(s.clone(), json!({"line": 0, "extra": 1, "more": 2})),
        [
            ("".into(), "required"),
            ("".into(), "additionalProperties"),
            ("/line".into(), "minimum"),
        ]
    );
    let a = json!({"properties": {"a": true}, "additionalProperties": {"type": "integer"}});
    assert!(valid(a.clone(), json!({"a": "x", "b": 1})));
    assert_eq!(violations(a, json!({"b": "x"})), [("/b".into(), "type")]);
    let n = json!({"propertyNames": {"maxLength": 3}, "minProperties": 1, "maxProperties": 2});
    assert!(valid(n.clone(), json!({"abc": 1})));
    assert_eq!(
        violations(n.clone(), json!({"abcd": 1})),
        [("/abcd".into(), "maxLength")]
    );
    assert_eq!(
        violations(n.clone(), json!({})),
        [("".into(), "minProperties")]
    );
    assert_eq!(
        violations(n, json!({"a": 1, "b": 2, "c": 3})),
        [("".into(), "maxProperties")]
    );
    let d = json!({"dependentRequired": {"start": ["end"]}, "dependentSchemas": {"mode": {"required": ["file"]}}});
    assert!(valid(d.clone(), json!({"end": 1})));
    assert_eq!(
        violations(d.clone(), json!({"start": 1})),
        [("".into(), "dependentRequired")]
    );
    assert_eq!(violations(d, json!({"mode": 1})), [("".into(), "required")]);
    // Draft 7's `dependencies`, both forms.
    let d7 = json!({"dependencies": {"a": ["b"], "c": {"properties": {"d": {"type": "string"}}}}});
    assert!(!valid(d7.clone(), json!({"a": 1})));
    assert!(!valid(d7.clone(), json!({"c": 1, "d": 2})));
    assert!(valid(d7, json!({"a": 1, "b": 2, "c": 1, "d": "x"})));
    // Keys with `/` and `~` in the path are escaped as RFC 6901 says.
    let e = json!({"properties": {"a/b~c": {"type": "string"}}});
    assert_eq!(
        violations(e, json!({"a/b~c": 1})),
        [("/a~1b~0c".into(), "type")]
    );
}

#[test]
fn combinators_keep_only_the_violations_that_decide() {
    // Optional[str] as pydantic writes it.
    let opt = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
    assert!(valid(opt.clone(), json!(null)));
    let v = Schema::compile(&opt).unwrap().validate(&json!(3));
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].keyword, "anyOf");
    assert_eq!(v[0].message, "expected string or null, got integer");
    let one = json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]});
    assert!(valid(one.clone(), json!(1)));
    assert!(valid(one.clone(), json!(2.5)));
    assert_eq!(violations(one.clone(), json!(3)), [("".into(), "oneOf")]);
    assert_eq!(violations(one, json!(1.5)), [("".into(), "oneOf")]);
    assert!(valid(json!({"not": {"type": "string"}}), json!(1)));
    assert_eq!(
        violations(json!({"not": {"type": "string"}}), json!("s")),
        [("".into(), "not")]
    );
    let all = json!({"allOf": [{"minimum": 1}, {"maximum": 3}]});
    assert_eq!(violations(all, json!(5)), [("".into(), "maximum")]);
    let cond = json!({
        "if": {"properties": {"kind": {"const": "file"}}},
        "then": {"required": ["path"]},
        "else": {"required": ["url"]}
    });
    assert!(valid(cond.clone(), json!({"kind": "file", "path": "a"})));
    assert!(valid(cond.clone(), json!({"kind": "web", "url": "u"})));
    assert_eq!(
        violations(cond.clone(), json!({"kind": "file"})),
        [("".into(), "required")]
    );
    assert_eq!(
        violations(cond, json!({"kind": "web"})),
        [("".into(), "required")]
    );
    // A violation beside a group is kept when the group succeeds (the group's own
    // violations are dropped, not its siblings').
    let beside = json!({
        "properties": {"a": {"type": "string"}, "b": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
    });
    assert_eq!(
        violations(beside, json!({"a": 1, "b": 2})),
        [("/a".into(), "type")]
    );
    let nested =
        json!({"anyOf": [{"required": ["x"]}, {"not": {"required": ["y"]}}], "required": ["z"]});
    assert_eq!(
        violations(nested.clone(), json!({"y": 1})),
        [("".into(), "required"), ("".into(), "anyOf")]
    );
    assert_eq!(
        violations(nested, json!({"x": 1, "y": 1})),
        [("".into(), "required")]
    );
}

#[test]
fn references_within_the_schema() {
    // As pydantic writes a model with a nested model and a recursive one.
    let s = json!({
        "$defs": {
            "Edit": {"type": "object", "properties": {"line": {"type": "integer"}}, "required": ["line"]},
            "Tree": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}, "additionalProperties": false}
        },
        "type": "object",
        "properties": {
            "edits": {"type": "array", "items": {"$ref": "#/$defs/Edit"}},
            "tree": {"$ref": "#/$defs/Tree"},
            "legacy": {"$ref": "#/definitions/Old"}
        },
        "definitions": {"Old": {"type": "boolean"}}
    });
    assert!(valid(
        s.clone(),
        json!({"edits": [{"line": 1}], "tree": {"children": [{"children": []}]}, "legacy": true})
    ));
    assert_eq!(
        violations(
            s.clone(),
            json!({"edits": [{"line": 1}, {}], "tree": {"children": [{"x": 1}]}, "legacy": 1})
        ),
        [
            ("/edits/1".into(), "required"),
            ("/legacy".into(), "type"),
            ("/tree/children/0".into(), "additionalProperties"),
        ]
    );
    // `$ref` applies beside its siblings (2019-09 and later).
    assert!(!valid(
        json!({"$defs": {"n": {"type": "number"}}, "$ref": "#/$defs/n", "minimum": 3}),
        json!(2)
    ));
    // The whole schema, and percent-encoded pointers.
    let root = json!({"properties": {"next": {"$ref": "#"}}, "required": ["v"]});
    assert!(!valid(root.clone(), json!({"v": 1, "next": {}})));
    assert!(valid(root, json!({"v": 1, "next": {"v": 2}})));
    let pct = json!({"$defs": {"a b": {"type": "string"}}, "$ref": "#/$defs/a%20b"});
    assert!(!valid(pct, json!(1)));
}

#[test]
fn what_is_not_checked_is_said() {
    let s = Schema::compile(&json!({
        "properties": {"id": {"type": "string", "pattern": "^[a-z]+$"}},
        "patternProperties": {"^x-": {}},
        "additionalProperties": false,
        "$defs": {"r": {"$ref": "https://example.com/s.json"}},
        "format": "anything"
    }))
    .unwrap();
    assert_eq!(
        s.unchecked(),
        [
            "/properties/id: pattern",
            ": additionalProperties (beside patternProperties)",
            ": patternProperties",
        ],
        "the remote $ref is in $defs, which nothing uses: not compiled, not listed"
    );
    // additionalProperties is not applied where patternProperties decides what is additional.
    assert!(s.is_valid(&json!({"id": "ABC", "x-y": 1, "other": 2})));
    let r = Schema::compile(&json!({"$ref": "other.json#/a"})).unwrap();
    assert_eq!(r.unchecked(), [": $ref other.json#/a"]);
    assert!(r.is_valid(&json!(1)));
    assert!(Schema::compile(&json!({"type": "string"}))
        .unwrap()
        .unchecked()
        .is_empty());
}

#[test]
fn bad_schemas_are_refused_with_a_pointer() {
    let cases = [
        (json!({"type": 5}), "/type"),
        (json!({"type": "text"}), "/type"),
        (json!({"required": "a"}), "/required"),
        (
            json!({"properties": {"a": {"minLength": -1}}}),
            "/properties/a/minLength",
        ),
        (json!({"anyOf": []}), "/anyOf"),
        (json!({"multipleOf": 0}), "/multipleOf"),
        (json!({"$ref": "#/$defs/missing"}), "/$ref"),
        (json!({"items": 3}), "/items"),
        (json!(7), ""),
    ];
    for (s, pointer) in cases {
        let e = Schema::compile(&s).expect_err(&s.to_string());
        assert_eq!(e.pointer, pointer, "{s}: {e}");
    }
}

#[test]
fn the_budget_ends_cycles_and_explosions() {
    // A reference to itself that never descends into the instance has no answer: it is
    // reported as a cycle at the value, after a few steps, whatever the budget.
    for budget in [10_000, 1 << 20, usize::MAX] {
        let s = Schema::compile(&json!({"$ref": "#"}))
            .unwrap()
            .with_budget(budget);
        let v = s.validate(&json!(1));
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!((v[0].keyword, v[0].path.as_str()), ("$ref", ""));
    }
    // Through two definitions and two kinds of applicator, below a property.
    let loop2 = json!({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}]}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
        "properties": {"x": {"$ref": "#/$defs/a"}}});
    let v = Schema::compile(&loop2).unwrap().validate(&json!({"x": {}}));
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!((v[0].keyword, v[0].path.as_str()), ("$ref", "/x"));
    // Not reached, no cycle: the other property is checked as usual.
    let v = Schema::compile(&loop2).unwrap().validate(&json!({"y": 1}));
    assert!(v.is_empty(), "{v:?}");
    // Recursion that descends into the instance is no cycle, however deep the schema
    // chain on one value: 300 definitions each referring to the next, then a tree.
    let mut defs = serde_json::Map::new();
    for i in 0..300 {
        defs.insert(
            format!("d{i}"),
            json!({"$ref": format!("#/$defs/d{}", i + 1)}),
        );
    }
    defs.insert(
        "d300".into(),
        json!({"type": "object", "properties": {"next": {"$ref": "#/$defs/d0"}, "v": {"type": "integer"}}}),
    );
    let chain = Schema::compile(&json!({"$defs": defs, "$ref": "#/$defs/d0"})).unwrap();
    let v = chain.validate(&json!({"next": {"next": {"v": "x"}}}));
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!((v[0].keyword, v[0].path.as_str()), ("type", "/next/next/v"));
    // An explosion without a cycle (each level applies the next one twice: 2^30 steps)
    // ends with the budget.
    let mut defs = serde_json::Map::new();
    for i in 0..30 {
        let next = format!("#/$defs/e{}", i + 1);
        defs.insert(
            format!("e{i}"),
            json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert("e30".into(), json!({"type": "integer"}));
    let boom = Schema::compile(&json!({"$defs": defs, "$ref": "#/$defs/e0"})).unwrap();
    let v = boom.validate(&json!(1));
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].keyword, "budget");
    // The default budget is far above real arguments: 10 000 items against a small schema.
    let big = json!({"type": "array", "items": {"type": "object", "properties": {"a": {"type": "integer"}}}});
    let items: Vec<Value> = (0..10_000).map(|i| json!({"a": i})).collect();
    assert!(valid(big, Value::Array(items)));
}

#[test]
fn deep_instances_and_schemas_need_no_recursion() {
    // 120 nested arrays (under serde_json's own limit of 128) against a recursive schema,
    // and a 5 000-deep chain of subschemas: no stack is used per level.
    // (Built by hand: `json!` serializes an expression it is given, recursively.)
    let mut instance = json!(1);
    for _ in 0..120 {
        instance = Value::Array(vec![instance]);
    }
    let s = json!({"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#"}}]});
    assert!(valid(s.clone(), instance.clone()));
    let mut schema = json!({"type": "string"});
    for _ in 0..5_000 {
        let mut o = serde_json::Map::new();
        o.insert("allOf".into(), Value::Array(vec![schema]));
        schema = Value::Object(o);
    }
    let compiled = std::thread::Builder::new()
        .stack_size(64 << 10)
        .spawn(move || {
            let c = Schema::compile(&schema).unwrap();
            let ok = c.is_valid(&json!("s"));
            let bad = c.validate(&json!(1));
            std::mem::forget(schema); // serde_json's Drop recurses; not ours to test
            (ok, bad.len())
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(compiled, (true, 1));
}

#[test]
fn tools_from_every_providers_request_shape() {
    let params =
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    let requests = [
        (
            "openai chat",
            json!({"model": "m", "tools": [{"type": "function", "function": {"name": "weather", "parameters": params}}]}),
        ),
        (
            "responses",
            json!({"tools": [{"type": "web_search"}, {"type": "function", "name": "weather", "parameters": params}]}),
        ),
        (
            "anthropic",
            json!({"tools": [{"type": "web_search_20250305", "name": "web_search"}, {"name": "weather", "input_schema": params}]}),
        ),
        (
            "gemini",
            json!({"tools": [{"googleSearch": {}}, {"functionDeclarations": [{"name": "weather", "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]}}]}]}),
        ),
        (
            "gemini json schema",
            json!({"tools": [{"function_declarations": [{"name": "weather", "parametersJsonSchema": params}]}]}),
        ),
        (
            "bedrock",
            json!({"toolConfig": {"tools": [{"toolSpec": {"name": "weather", "inputSchema": {"json": params}}}]}}),
        ),
        (
            "tools array",
            json!([{"type": "function", "function": {"name": "weather", "parameters": params}}]),
        ),
    ];
    for (what, request) in requests {
        let tools = Tools::from_request(&request).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(tools.names().collect::<Vec<_>>(), ["weather"], "{what}");
        assert_eq!(
            tools.check("weather", br#"{"city":"Paris"}"#),
            Ok(()),
            "{what}"
        );
        match tools.check("weather", br#"{"city":7}"#) {
            Err(Mismatch::Invalid(v)) => assert_eq!(v[0].path, "/city", "{what}"),
            other => panic!("{what}: {other:?}"),
        }
    }
    // No parameters: any arguments.
    let t =
        Tools::from_request(&json!({"tools": [{"type": "function", "function": {"name": "now"}}]}))
            .unwrap();
    assert_eq!(t.check("now", br#"{"x":1}"#), Ok(()));
    // Where a bad schema is, in the request.
    let e = Tools::from_request(&json!({"tools": [{"name": "a", "input_schema": {"type": "object"}}, {"name": "b", "input_schema": {"required": 1}}]})).unwrap_err();
    assert_eq!(e.pointer, "/tools/1/required");
    assert!(Tools::from_request(&json!({"model": "m"})).is_err());
}

#[test]
fn a_mismatch_becomes_feedback_for_the_model() {
    let tools = Tools::from_request(&json!({"tools": [{"name": "write_file", "input_schema": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "mode": {"enum": ["create", "append"]}},
        "required": ["path"],
        "additionalProperties": false
    }}, {"name": "read_file", "input_schema": {"type": "object"}}]}))
    .unwrap();
    let m = tools
        .check("write_file", br#"{"mode":"w","force":true}"#)
        .unwrap_err();
    let Mismatch::Invalid(v) = &m else {
        panic!("{m:?}")
    };
    assert_eq!(
        v,
        &[
            Violation {
                path: "".into(),
                keyword: "required",
                message: "missing required property `path`".into()
            },
            Violation {
                path: "".into(),
                keyword: "additionalProperties",
                message: "unexpected property `force`; allowed: `mode`, `path`".into()
            },
            Violation {
                path: "/mode".into(),
                keyword: "enum",
                message: r#"must be one of "create", "append", got "w""#.into()
            },
        ]
    );
    let verdict = classify::classify_mismatch("write_file", &m, 0, &classify::Policy::default());
    assert_eq!(verdict.reason, Reason::ModelOutput);
    assert_eq!(verdict.action, Action::RetryWithFeedback);
    let feedback = verdict.feedback.expect("feedback");
    assert!(
        feedback.contains("- at the top level: missing required property `path`\n"),
        "{feedback}"
    );
    assert!(
        feedback.contains("- at /mode: must be one of"),
        "{feedback}"
    );
    assert!(!verdict.should_fallback);

    let unknown = tools.check("write", b"{}").unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "there is no tool named `write`; the tools are `write_file`, `read_file`"
    );
    let verdict = classify::classify_mismatch("write", &unknown, 0, &classify::Policy::default());
    assert_eq!(verdict.action, Action::RetryWithFeedback);
    assert!(verdict
        .feedback
        .unwrap()
        .contains("`write_file`, `read_file`"));
}
