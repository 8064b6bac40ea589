//! Tells the tests whether the project's shared test data is next to the crate: the tests
//! that need it are then ignored, with the reason, in cargo's own summary, instead of
//! passing without having run. Nothing else: the library does not depend on it.

use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(toolstream_no_json_test_suite)");
    println!("cargo::rustc-check-cfg=cfg(toolstream_no_shared_captures)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=TOOLSTREAM_SHARED");
    let shared = match std::env::var_os("TOOLSTREAM_SHARED") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap()).join("../shared"),
    };
    if !shared
        .join("conformance/JSONTestSuite/test_parsing")
        .is_dir()
    {
        println!("cargo::rustc-cfg=toolstream_no_json_test_suite");
    }
    if !shared.join("captures/vercel-ai").is_dir() {
        println!("cargo::rustc-cfg=toolstream_no_shared_captures");
    }
}
