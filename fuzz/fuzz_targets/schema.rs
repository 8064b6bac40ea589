//! A schema and an instance (two JSON texts split at the first NUL; the first byte picks a
//! small budget): compiling and checking never panic and never run without end, and the
//! answers agree with each other:
//! - every violation's path points into the instance (and a compile error's into the schema);
//! - a check under a small budget gives the full answer or exactly one `budget` violation;
//! - `{"not": S}` matches exactly when `S` does not (for schemas without `$ref`, whose
//!   pointers the wrapping would move);
//! - `Tools::check` on the instance's bytes, with `S` declared as a tool's parameters, gives
//!   the same violations, and an undeclared name is an unknown tool.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use toolstream::schema::{Mismatch, Schema, Tools};

fuzz_target!(|data: &[u8]| {
    let Some((&budget, rest)) = data.split_first() else {
        return;
    };
    let Some(nul) = rest.iter().position(|&b| b == 0) else {
        return;
    };
    let (schema_text, instance_text) = (&rest[..nul], &rest[nul + 1..]);
    let Ok(schema) = serde_json::from_slice::<Value>(schema_text) else {
        return;
    };
    let Ok(instance) = serde_json::from_slice::<Value>(instance_text) else {
        return;
    };
    let compiled = match Schema::compile(&schema) {
        Ok(s) => s,
        Err(e) => {
            assert!(
                schema.pointer(&e.pointer).is_some(),
                "compile error at {:?}, which is not in the schema: {e}",
                e.pointer
            );
            return;
        }
    };
    let full = compiled.validate(&instance);
    let out_of_budget = full.iter().any(|v| v.keyword == "budget");
    if out_of_budget {
        assert_eq!(full.len(), 1, "a budget violation comes alone: {full:?}");
    }
    for v in &full {
        assert!(
            v.keyword == "budget" || instance.pointer(&v.path).is_some(),
            "violation at {:?}, which is not in the instance: {v}",
            v.path
        );
    }

    let small = compiled.clone().with_budget(usize::from(budget) * 4);
    let partial = small.validate(&instance);
    if !(partial.len() == 1 && partial[0].keyword == "budget") {
        assert_eq!(
            partial, full,
            "a small budget that sufficed changed the answer"
        );
    }

    if !out_of_budget && !schema_text.windows(4).any(|w| w == b"$ref") {
        let not = Schema::compile(&json!({ "not": schema }))
            .expect("a schema that compiles compiles under `not`");
        let negated = not.validate(&instance);
        if !negated.iter().any(|v| v.keyword == "budget") {
            assert_eq!(
                negated.is_empty(),
                !full.is_empty(),
                "`not` did not negate: {full:?} / {negated:?}"
            );
        }
    }

    let request =
        json!({"tools": [{"type": "function", "function": {"name": "f", "parameters": schema}}]});
    if let Ok(tools) = Tools::from_request(&request) {
        match tools.check("f", instance_text) {
            Ok(()) => assert!(full.is_empty(), "check passed, validate found {full:?}"),
            Err(Mismatch::Invalid(v)) => assert_eq!(v, full),
            Err(m) => panic!("check of parsed arguments failed otherwise: {m:?}"),
        }
        assert!(matches!(
            tools.check("g", instance_text),
            Err(Mismatch::UnknownTool { .. })
        ));
    }
});
