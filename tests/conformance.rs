//! JSONTestSuite (`test_parsing`), in `Mode::Any`: every `y_` file accepted, every `n_` file
//! rejected, every `i_` file either way without a panic — each fed whole, one byte at a time
//! and split at every offset, through the fast and the reference machine, with identical
//! results. "Accepted" means exactly one value and a clean `finish()`, so `[][]` or `{}}`
//! count as rejected.
//!
//! The suite is shipped in `tests/data/JSONTestSuite` (MIT, its licence beside it).

use crate::common;

use common::check_chunkings;
use toolstream::json::{Limits, Mode};

fn accepted(input: &[u8]) -> bool {
    check_chunkings(Mode::Any, Limits::default(), input).one_clean_value()
}

#[test]
fn json_test_suite() {
    let dir = common::data_dir("JSONTestSuite/test_parsing");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("read test_parsing")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(
        files.len() > 300,
        "expected the full suite, found {} files",
        files.len()
    );
    let (mut y, mut n, mut i_acc, mut i_rej) = (0, 0, 0, 0);
    let mut wrong = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let input = std::fs::read(path).expect("read file");
        let ok = accepted(&input);
        common::check_token_path(&input);
        match name.as_bytes()[0] {
            b'y' => {
                y += 1;
                if !ok {
                    wrong.push(format!("rejected {name}"));
                }
            }
            b'n' => {
                n += 1;
                if ok {
                    wrong.push(format!("accepted {name}"));
                }
            }
            _ => {
                if ok {
                    i_acc += 1
                } else {
                    i_rej += 1
                }
            }
        }
    }
    eprintln!(
        "JSONTestSuite: {y} y_ accepted, {n} n_ rejected, i_: {i_acc} accepted / {i_rej} rejected"
    );
    assert!(
        wrong.is_empty(),
        "conformance failures:\n{}",
        wrong.join("\n")
    );
}

/// A small suite of hand-written cases beside the shipped one.
#[test]
fn in_repo_conformance_cases() {
    let yes: &[&[u8]] = &[
        b"[]",
        b"{}",
        b" [1] ",
        b"\"\"",
        b"0",
        b"-0.0e-0",
        b"[1E22]",
        b"{\"a\":[null,true,false]}",
        b"[\"\\u0000\"]",
        b"[\"\\uD834\\uDD1E\"]",
        b"[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]",
        "[\"\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}\"]".as_bytes(),
        b"\xEF\xBB\xBF{}",
        b"{\"a\":{\"a\":{\"a\":[[[[1]]]]}}}",
        b"123456789012345678901234567890",
    ];
    let no: &[&[u8]] = &[
        b"",
        b" ",
        b"[",
        b"[][]",
        b"{}}",
        b"[1,]",
        b"[01]",
        b"[.1]",
        b"[1.]",
        b"[-]",
        b"[NaN]",
        b"[Infinity]",
        b"['a']",
        b"[\"\\x\"]",
        b"[\"\\uD800\"]",
        b"[\"\\uDC00\\uD800\"]",
        b"[\"\t\"]",
        b"[\"\xC0\xAF\"]",
        b"[\"\xED\xA0\x80\"]",
        b"[\"\xF5\x80\x80\x80\"]",
        b"{\"a\" 1}",
        // Compact forms: the byte right after a key or a comma is read without `next!`'s
        // whitespace test on the token path.
        b"{\"a\";1}",
        b"{\"a\"1}",
        b"{\"a\":1,1}",
        b"{\"a\":1;\"b\":2}",
        b"{\"a\":1,\"b\"}",
        b"{\"a\":1,\"b\",2}",
        b"{\"a\":1,}",
        b"[1 2]",
        b"1 2",
        b"\xEF\xBB\xBF\xEF\xBB\xBF{}",
        b"\xEF\xBB{}",
        b"{\"a\":1}x",
        b"[true false]",
        b"tru",
        b"nulll",
    ];
    for input in yes {
        assert!(accepted(input), "must accept {:?}", common::show(input));
        common::check_token_path(input);
    }
    for input in no {
        assert!(!accepted(input), "must reject {:?}", common::show(input));
        common::check_token_path(input);
    }
}
