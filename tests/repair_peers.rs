//! The repair cases of two peers' published test suites — Python `json_repair` and JS
//! `jsonrepair` — run through [`toolstream::repair::repair`] (every kind on), as data
//! (`tests/data/repair/*.jsonl`, taken by `extract.py` there: each assertion's input and
//! expected output). Each case is one of: **same** (the same JSON value as the peer),
//! **refused** by one of the documented rules, or a **difference** listed below with the
//! reason. A repaired value the peer does not give, unlisted, fails the test; so does a
//! listed difference that is one no more.

use std::collections::BTreeMap;

use toolstream::repair::{repair, RepairPolicy};

/// One case: the input, and the peer's output as JSON text (`None`: it gives up).
struct Case {
    input: String,
    expected: Option<String>,
    at: String,
}

fn cases(jsonl: &str) -> Vec<Case> {
    jsonl
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a case");
            Case {
                input: v["input"].as_str().expect("input").to_string(),
                expected: v["expected"].as_str().map(str::to_string),
                at: v["at"].as_str().expect("at").to_string(),
            }
        })
        .collect()
}

/// What became of a case.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone)]
enum Outcome {
    Same,
    Refused(&'static str),
    /// Repaired to another value than the peer's (or where the peer gives up).
    Different(String),
}

fn outcome(case: &Case) -> Outcome {
    match repair(case.input.as_bytes(), RepairPolicy::all()) {
        Err(r) => Outcome::Refused(r.reason.as_str()),
        Ok(r) => {
            let ours: serde_json::Value =
                serde_json::from_slice(&r.arguments).expect("repaired arguments are JSON");
            let theirs = case
                .expected
                .as_deref()
                .and_then(|e| serde_json::from_str::<serde_json::Value>(e).ok());
            if theirs.as_ref() == Some(&ours) {
                Outcome::Same
            } else {
                Outcome::Different(String::from_utf8_lossy(&r.arguments).into_owned())
            }
        }
    }
}

/// Where a repair differs from the peer's, on purpose: (suite, case, why ours is right).
const DIFFERENCES: &[(&str, &str, &str)] = &[
    (
        "json_repair",
        "tests/test_parse_string.py:182",
        "a raw newline inside a key: ours escapes it (control_char), the key keeps its \
         bytes; the peer drops it, which changes the key",
    ),
    (
        "jsonrepair",
        "src/index.test.ts#249",
        "`callback {}`: prose before one object (prose); the peer gives up on the bare word",
    ),
    (
        "jsonrepair",
        "src/index.test.ts#422",
        "`{\"a\":2}foo`: prose after one object (prose); the peer gives up on the bare word",
    ),
];

/// At least this many cases of each suite give the peer's very value (the counts of
/// CONTRIBUTING.md's table): fewer means a repair was lost.
const SAME_AT_LEAST: &[(&str, usize)] = &[("json_repair", 40), ("jsonrepair", 54)];

/// Runs a suite: its counts by outcome, and the problems found.
fn run(name: &str, jsonl: &str, problems: &mut Vec<String>) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    let mut listed: Vec<&str> = DIFFERENCES
        .iter()
        .filter(|d| d.0 == name)
        .map(|d| d.1)
        .collect();
    for case in cases(jsonl) {
        let key = match outcome(&case) {
            Outcome::Same => "same".to_string(),
            // Arguments are one object: a case whose peer value is none is out of scope.
            Outcome::Refused(_)
                if !case
                    .expected
                    .as_deref()
                    .is_some_and(|e| e.trim_start().starts_with('{')) =>
            {
                "no object on either side".to_string()
            }
            Outcome::Refused(r) => format!("refused: {r}"),
            Outcome::Different(ours) => {
                if let Some(at) = listed.iter().position(|&a| a == case.at) {
                    listed.remove(at);
                } else {
                    problems.push(format!(
                        "{name} {}: {:?} repaired to {ours:?}, the peer gives {:?}",
                        case.at, case.input, case.expected
                    ));
                }
                "different".to_string()
            }
        };
        *counts.entry(key).or_insert(0) += 1;
    }
    for at in listed {
        problems.push(format!("{name} {at}: listed as a difference, and is none"));
    }
    let same = counts.get("same").copied().unwrap_or(0);
    if let Some((_, least)) = SAME_AT_LEAST.iter().find(|s| s.0 == name) {
        if same < *least {
            problems.push(format!(
                "{name}: {same} cases give the peer's value, {least} did"
            ));
        }
    }
    counts
}

#[test]
fn peer_suites_agree_or_refuse_by_rule() {
    let mut problems = Vec::new();
    let py = run(
        "json_repair",
        include_str!("data/repair/json_repair.jsonl"),
        &mut problems,
    );
    let js = run(
        "jsonrepair",
        include_str!("data/repair/jsonrepair.jsonl"),
        &mut problems,
    );
    // The table, for CONTRIBUTING.md (`cargo test --test suite peer_suites -- --nocapture`).
    for (name, counts) in [("json_repair", &py), ("jsonrepair", &js)] {
        let total: usize = counts.values().sum();
        eprintln!("{name}: {total} cases: {counts:?}");
        assert!(total > 150, "{name}: only {total} cases read");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
