//! The integration tests, built as one binary (one link, and the crate's generic code
//! instantiated once, instead of once per file). Each file is a module named after it:
//! `cargo test --test suite -- splitter::` runs `tests/splitter.rs`.

mod common;

/// Every test runs under the counting allocator (per thread), so that a test can assert
/// what a run cost in memory (`common::alloc::measure`).
#[global_allocator]
static ALLOC: common::alloc::Counting = common::alloc::Counting;

#[path = "adapter.rs"]
mod adapter;

#[path = "adversarial.rs"]
mod adversarial;

#[path = "assemble.rs"]
mod assemble;

#[path = "bedrock.rs"]
mod bedrock;

#[path = "captures.rs"]
mod captures;

#[path = "classify.rs"]
mod classify;

#[path = "classify_threads.rs"]
mod classify_threads;

#[path = "cli.rs"]
mod cli;

#[path = "conformance.rs"]
mod conformance;

#[path = "cut.rs"]
mod cut;

#[path = "envelopes.rs"]
mod envelopes;

#[path = "eventstream.rs"]
mod eventstream;

#[path = "glue.rs"]
mod glue;

#[path = "hostile.rs"]
mod hostile;

#[path = "ndjson.rs"]
mod ndjson;

#[path = "preview.rs"]
mod preview;

#[path = "properties.rs"]
mod properties;

#[path = "repair.rs"]
mod repair;

#[path = "replay.rs"]
mod replay;

#[path = "request.rs"]
mod request;

#[path = "rewrite_chunks.rs"]
mod rewrite_chunks;
#[path = "rewrite_invariance.rs"]
mod rewrite_invariance;

#[path = "rewrite_stream.rs"]
mod rewrite_stream;

#[path = "scalar_arrays.rs"]
mod scalar_arrays;

#[path = "schema.rs"]
mod schema;

#[path = "shared_captures.rs"]
mod shared_captures;

#[path = "simd_paths.rs"]
mod simd_paths;

#[path = "splitter.rs"]
mod splitter;

#[path = "sse.rs"]
mod sse;

#[path = "text_calls.rs"]
mod text_calls;

/// Every file in `tests/` is a module of this binary (with `autotests = false`, a file
/// left out would silently never run).
#[test]
fn every_test_file_is_in_the_suite() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let suite = std::fs::read_to_string(dir.join("suite.rs")).expect("tests/suite.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("tests/") {
        let name = entry
            .expect("entry")
            .file_name()
            .into_string()
            .expect("UTF-8 name");
        if let Some(stem) = name.strip_suffix(".rs") {
            let wired = format!("#[path = \"{name}\"]\nmod {stem};");
            if stem != "suite" && !suite.contains(&wired) {
                missing.push(name);
            }
        }
    }
    assert!(missing.is_empty(), "not in tests/suite.rs: {missing:?}");
}

#[path = "repair_peers.rs"]
mod repair_peers;
