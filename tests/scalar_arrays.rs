//! Arrays of numbers and `null`s, which the token path checks a 64-byte block at a time
//! (`scalar_run` in `src/json/machine/fast.rs`, where SIMD classifies the bytes): every
//! rule of the number grammar broken at every position of a block, and generated arrays
//! of valid and broken scalars with every kind of separator, against the reference
//! machine (whole, per byte, at every split point) and serde_json.

use crate::common;

use common::{check_chunkings, show};
use proptest::prelude::*;
use toolstream::json::{Limits, Mode};

/// Values the block check must accept.
const VALID: &[&str] = &[
    "0",
    "-0",
    "7",
    "-7",
    "10",
    "1234567890",
    "0.5",
    "-0.5",
    "12.25",
    "1e5",
    "1E5",
    "1e+5",
    "1e-5",
    "1.5e10",
    "-1.5E-10",
    "0e0",
    "0.0e-0",
    "null",
    "123456789012345678901234567890",
];

/// Values it must refuse (the reference machine says where).
const INVALID: &[&str] = &[
    "01",
    "-01",
    "00",
    "1.",
    ".5",
    "-",
    "--1",
    "+1",
    "1e",
    "1e+",
    "1E-",
    "1.2.3",
    "1e2e3",
    "1e2.3",
    "1.2e3.4",
    "1.e5",
    "-e5",
    "1-2",
    "1+2",
    "1e5-3",
    "nul",
    "nulll",
    "nulL",
    "Null",
    "nu11",
    "n",
    "nullnull",
    "null1",
    "1null",
    "0x10",
    "1_000",
    "e",
    "u",
    "l",
    "5u",
    "5l",
    "-null",
    "1ee5",
    "1e--5",
    "Infinity",
    "NaN",
    "2.",
    "-.5",
    "e5",
    "E1",
    "ee",
    "u1",
    "l5",
    ".",
    "-0.",
    "0.e1",
    "1e5e",
    "nulle5",
    "1.5e3e4",
    "-0.5E-3e+1",
    "1.5e3E",
];

/// `{"v":[` + `pad` filler values + the value under test + more values, so that the
/// value lands on every position of a block.
/// Also returns where the value starts.
fn placed(value: &str, pad: usize, sep: &str) -> (String, usize) {
    let mut s = String::from("{\"v\":[");
    for k in 0..pad {
        s.push_str(["1", "22", "null", "-3.5"][k % 4]);
        s.push_str(sep);
    }
    let at = s.len();
    s.push_str(value);
    for k in 0..24 {
        s.push_str(sep);
        s.push_str(["4", "-0.25", "null", "6e7"][k % 4]);
    }
    s.push_str("]}");
    (s, at)
}

fn serde_accepts(doc: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(doc).is_ok()
}

#[test]
fn every_value_at_every_position_of_a_block() {
    for sep in [",", ", ", " , ", ",\n\t"] {
        for pad in 0..40 {
            for v in VALID {
                let (doc, _) = placed(v, pad, sep);
                let out = check_chunkings(Mode::Objects, Limits::default(), doc.as_bytes());
                assert!(
                    out.one_clean_value(),
                    "{v} refused in {}: {out:?}",
                    show(doc.as_bytes())
                );
                assert!(serde_accepts(&doc), "{doc}");
            }
            for v in INVALID {
                let (doc, at) = placed(v, pad, sep);
                let out = check_chunkings(Mode::Objects, Limits::default(), doc.as_bytes());
                let (_, offset) = out.error.unwrap_or_else(|| panic!("{v} accepted in {doc}"));
                // The error lies in or just after the value under test.
                assert!(
                    (at as u64..=(at + v.len() + sep.len()) as u64).contains(&offset),
                    "{v}: error at {offset}, value at {at} in {doc}"
                );
                assert!(!serde_accepts(&doc), "{doc}");
            }
        }
    }
}

#[test]
fn separators_and_ends_of_a_run() {
    let body = "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25";
    for (tail, ok) in [
        ("]}", true),
        (" ]}", true),
        ("\n]}", true),
        (",]}", false),
        (",,1]}", false),
        (" 1]}", false),
        ("]]", false),
        ("}", false),
        (
            ",\"s\",3,{\"a\":[4,5]},[6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21]]}",
            true,
        ),
        (",true,false,null,1]}", true),
        (",truee]}", false),
        (",1]", false),
    ] {
        for pre in ["", "0,", "0, ", "null ,\t"] {
            let doc = format!("{{\"v\":[{pre}{body}{tail}");
            let out = check_chunkings(Mode::Objects, Limits::default(), doc.as_bytes());
            assert_eq!(out.one_clean_value(), ok, "{doc}: {out:?}");
            assert_eq!(serde_accepts(&doc), ok, "{doc}");
        }
    }
}

#[test]
fn the_number_limit_still_applies() {
    let long = "9".repeat(40);
    let doc = format!("{{\"v\":[1,2,3,4,{long},5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]}}");
    for max in [39, 40, 63, 64] {
        let limits = Limits::default().max_number_bytes(max);
        let out = check_chunkings(Mode::Objects, limits, doc.as_bytes());
        assert_eq!(out.one_clean_value(), max >= 40, "limit {max}: {out:?}");
    }
}

/// A piece of an array: a value (valid or not) or a separator.
fn piece() -> impl Strategy<Value = String> {
    let valid = prop::sample::select(VALID).prop_map(str::to_string);
    let invalid = prop::sample::select(INVALID).prop_map(str::to_string);
    let number =
        (any::<i32>(), 0u32..1000, -30i32..30, 0u8..4).prop_map(|(i, f, e, shape)| match shape {
            0 => i.to_string(),
            1 => format!("{i}.{f}"),
            2 => format!("{i}e{e}"),
            _ => format!("{}.{f}E+{}", i / 7, e.unsigned_abs()),
        });
    let other = prop::sample::select(
        &[
            "true",
            "false",
            "\"s\"",
            "[]",
            "[1,2]",
            "{}",
            "{\"a\":1}",
            "]",
            "}",
            ":",
            "x",
        ][..],
    )
    .prop_map(str::to_string);
    prop_oneof![
        6 => number,
        4 => valid,
        1 => invalid,
        1 => other,
    ]
}

fn separator() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        20 => Just(","),
        3 => Just(", "),
        2 => Just(" ,"),
        2 => Just(",\n  "),
        1 => Just(""),
        1 => Just(",,"),
        1 => Just(" "),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn generated_arrays_agree_with_the_reference_and_serde(
        pieces in prop::collection::vec((piece(), separator()), 8..90),
        close in prop_oneof![6 => Just("]}"), 1 => Just(" ]}"), 1 => Just(",]}"), 1 => Just("")],
    ) {
        let mut doc = String::from("{\"v\":[");
        for (k, (p, sep)) in pieces.iter().enumerate() {
            if k > 0 {
                doc.push_str(sep);
            }
            doc.push_str(p);
        }
        doc.push_str(close);
        let out = check_chunkings(Mode::Objects, Limits::default(), doc.as_bytes());
        // serde_json also refuses a number beyond f64's range, which JSON's grammar allows
        // (the reference machine, inside `check_chunkings`, is the oracle for those).
        let serde = serde_json::from_str::<serde_json::Value>(&doc);
        if !matches!(&serde, Err(e) if e.to_string().starts_with("number out of range")) {
            prop_assert_eq!(out.one_clean_value(), serde.is_ok(), "{} {:?}", doc, out);
        }
    }
}

#[test]
fn top_level_arrays_glued_and_on_lines() {
    let a: Vec<String> = (0..40).map(|k| format!("{}", k * 37 - 500)).collect();
    let one = format!("[{}]", a.join(","));
    for sep in ["", "\n", " ", "\r\n"] {
        let doc = format!("{one}{sep}{one}{sep}[null,{}]", a.join(", "));
        let out = check_chunkings(Mode::Any, Limits::default(), doc.as_bytes());
        assert_eq!(out.values.len(), 3, "{doc}: {out:?}");
        assert!(out.error.is_none(), "{doc}: {out:?}");
    }
    // A broken value in the second array: the first is still handed out.
    let doc = format!("{one}[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,1.2.3,17]");
    let out = check_chunkings(Mode::Any, Limits::default(), doc.as_bytes());
    assert_eq!(out.values.len(), 1, "{out:?}");
    let (_, offset) = out.error.expect("an error");
    assert_eq!(offset as usize, doc.find("1.2.3").unwrap() + 3, "{out:?}");
}
