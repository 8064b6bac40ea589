//! `toolstream::schema` against the `jsonschema` crate (draft 2020-12) on generated schemas
//! and instances: both must say the same of every pair. The schemas use the keywords
//! toolstream checks, over a small world of values (keys `a` `b` `c`, small numbers, short
//! strings) so that about half the pairs match and half do not.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolstream::schema::Schema;

const KEYS: [&str; 3] = ["a", "b", "c"];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..6).prop_map(|n| json!(n)),
        // Halves and whole floats: exact in binary, so `multipleOf` has one answer.
        (-6i64..12).prop_map(|n| json!(n as f64 / 2.0)),
        prop::sample::select(vec!["", "a", "b", "ab", "é😀", "abcd"]).prop_map(|s| json!(s)),
    ]
}

fn instance() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS.to_vec()), inner), 0..4).prop_map(
                |members| {
                    let mut o = Map::new();
                    for (k, v) in members {
                        o.insert(k.to_string(), v);
                    }
                    Value::Object(o)
                }
            ),
        ]
    })
}

fn type_name() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "null", "boolean", "integer", "number", "string", "array", "object",
    ])
}

fn small() -> impl Strategy<Value = u64> {
    0u64..4
}

fn keys() -> impl Strategy<Value = Vec<&'static str>> {
    prop::sample::subsequence(KEYS.to_vec(), 0..=3)
}

/// One assertion keyword (or a few that go together) on its own.
fn assertion() -> impl Strategy<Value = Map<String, Value>> {
    let one = |k: &str, v: Value| {
        let mut m = Map::new();
        m.insert(k.to_string(), v);
        m
    };
    prop_oneof![
        type_name().prop_map(move |t| one("type", json!(t))),
        // The meta-schema wants the names of a type array distinct.
        prop::sample::subsequence(
            vec!["null", "boolean", "integer", "number", "string", "array", "object"],
            1..3
        )
        .prop_map(move |t| one("type", json!(t))),
        prop::collection::vec(scalar(), 1..4).prop_map(move |e| one("enum", Value::Array(e))),
        instance().prop_map(move |c| one("const", c)),
        (
            prop::sample::select(vec![
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum"
            ]),
            -6i64..12
        )
            .prop_map(move |(k, n)| one(k, json!(n as f64 / 2.0))),
        prop::sample::select(vec![json!(1), json!(2), json!(3), json!(0.5)])
            .prop_map(move |m| one("multipleOf", m)),
        (
            prop::sample::select(vec![
                "minLength",
                "maxLength",
                "minItems",
                "maxItems",
                "minProperties",
                "maxProperties"
            ]),
            small()
        )
            .prop_map(move |(k, n)| one(k, json!(n))),
        any::<bool>().prop_map(move |b| one("uniqueItems", json!(b))),
        keys().prop_map(move |r| one("required", json!(r))),
        (prop::sample::select(KEYS.to_vec()), keys())
            .prop_map(move |(k, r)| one("dependentRequired", json!({ k: r }))),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(json!({"$ref": "#/$defs/d0"})),
        1 => Just(json!({"$ref": "#/$defs/d1"})),
        8 => prop::collection::vec(assertion(), 1..3).prop_map(|parts| {
            let mut o = Map::new();
            for p in parts {
                o.extend(p);
            }
            Value::Object(o)
        }),
    ];
    leaf.prop_recursive(3, 32, 3, |inner| {
        let list = prop::collection::vec(inner.clone(), 1..4);
        prop_oneof![
            (keys(), prop::collection::vec(inner.clone(), 3)).prop_map(|(ks, subs)| {
                let mut p = Map::new();
                for (k, s) in ks.into_iter().zip(subs) {
                    p.insert(k.to_string(), s);
                }
                json!({ "properties": p })
            }),
            (
                keys(),
                prop::collection::vec(inner.clone(), 3),
                inner.clone()
            )
                .prop_map(|(ks, subs, extra)| {
                    let mut p = Map::new();
                    for (k, s) in ks.into_iter().zip(subs) {
                        p.insert(k.to_string(), s);
                    }
                    json!({ "properties": p, "additionalProperties": extra })
                }),
            inner.clone().prop_map(|s| json!({ "items": s })),
            (prop::collection::vec(inner.clone(), 1..3), inner.clone())
                .prop_map(|(p, rest)| json!({ "prefixItems": p, "items": rest })),
            (inner.clone(), small(), prop::option::of(small())).prop_map(|(c, min, max)| {
                let mut o = json!({ "contains": c, "minContains": min });
                if let Some(max) = max {
                    o["maxContains"] = json!(max);
                }
                o
            }),
            inner.clone().prop_map(|s| json!({ "propertyNames": s })),
            list.clone().prop_map(|l| json!({ "allOf": l })),
            list.clone().prop_map(|l| json!({ "anyOf": l })),
            list.prop_map(|l| json!({ "oneOf": l })),
            inner.clone().prop_map(|s| json!({ "not": s })),
            (
                inner.clone(),
                prop::option::of(inner.clone()),
                prop::option::of(inner.clone())
            )
                .prop_map(|(i, t, e)| {
                    let mut o = json!({ "if": i });
                    if let Some(t) = t {
                        o["then"] = t;
                    }
                    if let Some(e) = e {
                        o["else"] = e;
                    }
                    o
                }),
            (prop::sample::select(KEYS.to_vec()), inner.clone())
                .prop_map(|(k, s)| json!({ "dependentSchemas": { k: s } })),
            // A keyword beside an applicator, in one schema.
            (assertion(), inner).prop_map(|(a, s)| {
                let mut o = match s {
                    Value::Object(o) => o,
                    b => {
                        let mut o = Map::new();
                        o.insert("allOf".into(), json!([b]));
                        o
                    }
                };
                o.extend(a);
                Value::Object(o)
            }),
        ]
    })
}

/// A root with two definitions that the generated `$ref`s point to.
fn document() -> impl Strategy<Value = Value> {
    (schema(), assertion(), assertion()).prop_map(|(root, d0, d1)| {
        let mut o = match root {
            Value::Object(o) => o,
            b => {
                let mut o = Map::new();
                o.insert("allOf".into(), json!([b]));
                o
            }
        };
        o.insert("$defs".into(), json!({ "d0": d0, "d1": d1 }));
        Value::Object(o)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    #[test]
    fn agrees_with_jsonschema(doc in document(), instances in prop::collection::vec(instance(), 1..6)) {
        let oracle = jsonschema::draft202012::new(&doc).expect("the oracle compiles the schema");
        let ours = Schema::compile(&doc).expect("toolstream compiles the schema");
        prop_assert!(ours.unchecked().is_empty(), "{:?}", ours.unchecked());
        for i in &instances {
            let violations = ours.validate(i);
            prop_assert_eq!(
                violations.is_empty(),
                oracle.is_valid(i),
                "schema {}\ninstance {}\nviolations {:?}",
                doc, i, violations
            );
        }
    }
}

/// How often the generated pairs match: a differential test where every pair is valid (or
/// every one invalid) would test little.
#[test]
fn the_generated_pairs_are_mixed() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut valid, mut total) = (0, 0);
    for _ in 0..2000 {
        let doc = document().new_tree(&mut runner).unwrap().current();
        let i = instance().new_tree(&mut runner).unwrap().current();
        let oracle = jsonschema::draft202012::new(&doc).unwrap();
        total += 1;
        valid += oracle.is_valid(&i) as u32;
    }
    eprintln!("{valid} of {total} generated pairs match their schema");
    assert!(
        valid > total / 10 && valid < total * 9 / 10,
        "{valid} of {total}"
    );
}
