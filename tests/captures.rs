//! Every capture in examples/captures has an expected-output file, written by reading the
//! capture by hand; `toolstream inspect --json` must reproduce it at chunk sizes 1, 7, 64
//! and whole.

use crate::common;

use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_toolstream");

fn parse_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l}: {e}")))
        .collect()
}

#[test]
fn every_capture_matches_its_expected_output_at_every_chunk_size() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/captures");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !matches!(ext, "sse" | "ndjson" | "eventstream") {
            continue;
        }
        let expected_path = path.with_extension("expected.jsonl");
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|_| panic!("{} has no expected-output file", path.display()));
        let want = parse_lines(&expected);
        let mut first: Option<Vec<serde_json::Value>> = None;
        for chunk in ["1", "7", "64", "0"] {
            let mut cmd = common::cli(BIN);
            cmd.arg("inspect").arg("--json").arg(&path);
            if chunk != "0" {
                cmd.args(["--chunk", chunk]);
            }
            let out = cmd.output().unwrap();
            assert!(
                out.status.success(),
                "{}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            let got = parse_lines(&String::from_utf8(out.stdout).unwrap());
            // The made ids are the same at every chunking, and have their promised shape.
            let first = first.get_or_insert_with(|| got.clone());
            assert_eq!(&got, first, "{} at chunk {chunk}", path.display());
            let got = common::mask_made_ids(&got);
            assert_eq!(got, want, "{} at chunk {chunk}", path.display());
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} captures");
}

#[test]
fn inspect_human_output_and_exit_codes() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/captures/openai-parallel-calls.sse"
    );
    let out = common::cli(BIN).args(["inspect", path]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("tool call #0 part 1: get_weather({\"city\": \"Paris\", \"unit\": \"c\"})"),
        "{text}"
    );
    assert!(text.contains("end: complete"), "{text}");
    let bad = common::cli(BIN)
        .args(["inspect", "/nonexistent"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    let usage = common::cli(BIN)
        .args(["inspect", "--chunk", "0"])
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
    let usage = common::cli(BIN)
        .args(["inspect", "--provider", "nope"])
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
}
