//! Table-driven splitter cases, written by hand. Each case runs whole, one byte at a time,
//! split at every offset, and through the reference machine (see `common`).

use crate::common;

use common::{check_chunkings, Outcome};
use toolstream::json::ErrorKind::{self, *};
use toolstream::json::{Limits, Mode};

fn case(
    mode: Mode,
    limits: Limits,
    input: &[u8],
    values: &[&str],
    error: Option<(ErrorKind, u64)>,
) {
    let got = check_chunkings(mode, limits, input);
    let got_values: Vec<String> = got
        .values
        .iter()
        .map(|(_, _, b)| String::from_utf8_lossy(b).into_owned())
        .collect();
    assert_eq!(
        (got_values, got.error),
        (
            values.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            error
        ),
        "input {:?}",
        common::show(input)
    );
}

fn objects(input: &[u8], values: &[&str], error: Option<(ErrorKind, u64)>) {
    case(Mode::Objects, Limits::default(), input, values, error)
}

fn any(input: &[u8], values: &[&str], error: Option<(ErrorKind, u64)>) {
    case(Mode::Any, Limits::default(), input, values, error)
}

#[test]
fn objects_split_with_and_without_separators() {
    objects(b"{}", &["{}"], None);
    objects(b"{\"a\":1}{\"b\":2}", &["{\"a\":1}", "{\"b\":2}"], None);
    objects(b"{\"a\":1}\n{\"b\":2}\n", &["{\"a\":1}", "{\"b\":2}"], None);
    objects(
        b" \t\r\n{\"a\":[1,2,{\"b\":null}],\"c\":{}} ",
        &["{\"a\":[1,2,{\"b\":null}],\"c\":{}}"],
        None,
    );
    objects(b"", &[], None);
    objects(b" \n\t\r ", &[], None);
    objects(
        b"{ \"k\" : [ true , false , null , -0.5e+3 , \"x\" ] }",
        &["{ \"k\" : [ true , false , null , -0.5e+3 , \"x\" ] }"],
        None,
    );
}

#[test]
fn byte_order_mark_only_at_the_very_start() {
    objects(b"\xEF\xBB\xBF{\"a\":1}", &["{\"a\":1}"], None);
    objects(b"{\"a\":1}\xEF\xBB\xBF", &["{\"a\":1}"], Some((Syntax, 7)));
    objects(b" \xEF\xBB\xBF{}", &[], Some((Syntax, 1)));
    any(b"\xEF\xBB", &[], Some((Truncated, 2)));
    any(b"\xEF\xBB{}", &[], Some((Syntax, 2)));
    any(b"\xEF\xBB\xBF\xEF\xBB\xBF1", &[], Some((Syntax, 3)));
}

#[test]
fn objects_mode_rejects_other_values() {
    objects(b"[1]", &[], Some((NotAnObject, 0)));
    objects(b"{\"a\":1} 42", &["{\"a\":1}"], Some((NotAnObject, 8)));
    objects(b"\"s\"", &[], Some((NotAnObject, 0)));
    objects(b"null", &[], Some((NotAnObject, 0)));
    objects(b"{\"a\":1}}", &["{\"a\":1}"], Some((Syntax, 7)));
    objects(b"{\"a\":1},{\"b\":2}", &["{\"a\":1}"], Some((Syntax, 7)));
}

#[test]
fn grammar_errors_point_at_the_offending_byte() {
    objects(b"{\"a\" 1}", &[], Some((Syntax, 5)));
    objects(b"{\"a\":}", &[], Some((Syntax, 5)));
    objects(b"{\"a\":1,}", &[], Some((Syntax, 7)));
    objects(b"{,}", &[], Some((Syntax, 1)));
    objects(b"{\"a\":1 \"b\":2}", &[], Some((Syntax, 7)));
    objects(b"{\"a\":[1 2]}", &[], Some((Syntax, 8)));
    objects(b"{\"a\":[1,]}", &[], Some((Syntax, 8)));
    objects(b"{\"a\":[}", &[], Some((Syntax, 6)));
    objects(b"{\"a\":1]", &[], Some((Syntax, 6)));
    objects(b"{1:2}", &[], Some((Syntax, 1)));
    objects(b"{\"a\":tru}", &[], Some((Syntax, 8)));
    objects(b"{\"a\":nul}", &[], Some((Syntax, 8)));
    objects(b"{\"a\":NaN}", &[], Some((Syntax, 5)));
    objects(b"{\"a\":'x'}", &[], Some((Syntax, 5)));
    objects(b"{\"a\":\xC3\xA9}", &[], Some((Syntax, 5)));
}

/// The error's message says what was expected where the wrong byte stands, and does not
/// depend on the chunking: the inputs are long enough for the token-level path to read them
/// whole (it hands the byte machine back the state it stopped in, and that state picks the
/// message), and `check_chunkings` compares the message across every cut.
#[test]
fn error_messages_name_what_was_expected() {
    let pad = "\"padding key\":\"padding value\"";
    let cases: [(String, &str); 9] = [
        (format!("{{1, {pad}}}"), "expected a string key or '}'"),
        (format!("{{{pad},1}}"), "expected a string key"),
        (format!("{{{pad},}}"), "expected a string key"),
        (format!("{{{pad}:1}}"), "expected ',' or '}'"),
        (
            format!("{{\"k\" 1, {pad}}}"),
            "expected ':' after an object key",
        ),
        (format!("{{\"k\":[1 2], {pad}}}"), "expected ',' or ']'"),
        (format!("{{\"k\":[,], {pad}}}"), "expected a JSON value"),
        (
            format!("{{\"k\":{{\"a\":1,2}}, {pad}}}"),
            "expected a string key",
        ),
        (
            format!("{{\"k\":{{2}}, {pad}}}"),
            "expected a string key or '}'",
        ),
    ];
    for (input, detail) in cases {
        let got = check_chunkings(Mode::Objects, Limits::default(), input.as_bytes());
        assert_eq!(got.detail, Some(detail), "on {input}");
    }
}

#[test]
fn numbers_are_strict() {
    any(
        b"0 -0 1 -1 1.5 -0.0 1e5 1E+5 1e-5 123.456e789",
        &[
            "0",
            "-0",
            "1",
            "-1",
            "1.5",
            "-0.0",
            "1e5",
            "1E+5",
            "1e-5",
            "123.456e789",
        ],
        None,
    );
    objects(b"{\"a\":01}", &[], Some((InvalidNumber, 6)));
    objects(b"{\"a\":-01}", &[], Some((InvalidNumber, 7)));
    objects(b"{\"a\":-}", &[], Some((InvalidNumber, 6)));
    objects(b"{\"a\":1.}", &[], Some((InvalidNumber, 7)));
    objects(b"{\"a\":.5}", &[], Some((Syntax, 5)));
    objects(b"{\"a\":1e}", &[], Some((InvalidNumber, 7)));
    objects(b"{\"a\":1e+}", &[], Some((InvalidNumber, 8)));
    objects(b"{\"a\":1.e5}", &[], Some((InvalidNumber, 7)));
    objects(b"{\"a\":-Infinity}", &[], Some((InvalidNumber, 6)));
    objects(b"{\"a\":+1}", &[], Some((Syntax, 5)));
    objects(b"{\"a\":1x}", &[], Some((Syntax, 6)));
    objects(b"{\"a\":0x1}", &[], Some((Syntax, 6)));
}

#[test]
fn escapes_and_surrogates() {
    objects(
        br#"{"a":"\" \\ \/ \b \f \n \r \t \u0041 \u00e9 \uD83D\uDE00"}"#,
        &[r#"{"a":"\" \\ \/ \b \f \n \r \t \u0041 \u00e9 \uD83D\uDE00"}"#],
        None,
    );
    objects(br#"{"a":"\x"}"#, &[], Some((InvalidEscape, 7)));
    objects(br#"{"a":"\U0041"}"#, &[], Some((InvalidEscape, 7)));
    objects(br#"{"a":"\u12G4"}"#, &[], Some((InvalidEscape, 10)));
    objects(br#"{"a":"\ud800"}"#, &[], Some((InvalidEscape, 12)));
    objects(br#"{"a":"\ud800x"}"#, &[], Some((InvalidEscape, 12)));
    objects(br#"{"a":"\ud800\n"}"#, &[], Some((InvalidEscape, 13)));
    objects(br#"{"a":"\udc00"}"#, &[], Some((InvalidEscape, 11)));
    objects(br#"{"a":"\ude00\ud83d"}"#, &[], Some((InvalidEscape, 11)));
    objects(br#"{"a":"\ud800\u0041"}"#, &[], Some((InvalidEscape, 17)));
    objects(br#"{"a":"\ud800\ud800"}"#, &[], Some((InvalidEscape, 17)));
    objects(br#"{"\ud83d\ude00":1}"#, &[r#"{"\ud83d\ude00":1}"#], None);
}

#[test]
fn control_bytes_and_utf8() {
    objects(b"{\"a\":\"tab\there\"}", &[], Some((ControlCharacter, 9)));
    objects(b"{\"a\":\"nl\n\"}", &[], Some((ControlCharacter, 8)));
    objects(b"{\"a\":\"\x00\"}", &[], Some((ControlCharacter, 6)));
    objects(b"{\"a\":\"\x7F\"}", &["{\"a\":\"\x7F\"}"], None);
    objects(
        "{\"a\":\"é😀 – ü\"}".as_bytes(),
        &["{\"a\":\"é😀 – ü\"}"],
        None,
    );
    objects(b"{\"a\":\"\xC0\x80\"}", &[], Some((InvalidUtf8, 6)));
    objects(b"{\"a\":\"\xC1\xBF\"}", &[], Some((InvalidUtf8, 6)));
    objects(b"{\"a\":\"\xE0\x80\x80\"}", &[], Some((InvalidUtf8, 7)));
    objects(b"{\"a\":\"\xED\xA0\x80\"}", &[], Some((InvalidUtf8, 7)));
    objects(b"{\"a\":\"\xF0\x80\x80\x80\"}", &[], Some((InvalidUtf8, 7)));
    objects(b"{\"a\":\"\xF4\x90\x80\x80\"}", &[], Some((InvalidUtf8, 7)));
    objects(b"{\"a\":\"\xF5\x80\x80\x80\"}", &[], Some((InvalidUtf8, 6)));
    objects(b"{\"a\":\"\xFF\"}", &[], Some((InvalidUtf8, 6)));
    objects(b"{\"a\":\"\x80\"}", &[], Some((InvalidUtf8, 6)));
    objects(b"{\"a\":\"\xE9\"}", &[], Some((InvalidUtf8, 7)));
    objects(b"{\"a\":\"\xE2\x82\"}", &[], Some((InvalidUtf8, 8)));
    objects(b"{\"\xFF\":1}", &[], Some((InvalidUtf8, 2)));
    objects(
        "{\"a\":\"\u{10FFFF}\"}".as_bytes(),
        &["{\"a\":\"\u{10FFFF}\"}"],
        None,
    );
}

#[test]
fn truncation_at_finish() {
    objects(b"{\"a\":1", &[], Some((Truncated, 6)));
    objects(b"{\"a\":\"abc", &[], Some((Truncated, 9)));
    objects(b"{\"a\":\"\\", &[], Some((Truncated, 7)));
    objects(b"{\"a\":\"\\u00", &[], Some((Truncated, 10)));
    objects(b"{\"a\":\"\xE2\x82", &[], Some((Truncated, 8)));
    objects(b"{\"a\":1}{", &["{\"a\":1}"], Some((Truncated, 8)));
    objects(b"{\"a\":tr", &[], Some((Truncated, 7)));
    any(b"-", &[], Some((Truncated, 1)));
    any(b"1.", &[], Some((Truncated, 2)));
    any(b"1e+", &[], Some((Truncated, 3)));
    any(b"[1", &[], Some((Truncated, 2)));
}

#[test]
fn any_mode_top_level_scalars() {
    any(b"42", &["42"], None);
    any(b"1 2\n3", &["1", "2", "3"], None);
    any(b"true false null", &["true", "false", "null"], None);
    any(b"\"a\"\"b\"", &["\"a\"", "\"b\""], None);
    any(b"1\"a\"", &["1", "\"a\""], None);
    any(b"1[2]3{}", &["1", "[2]", "3", "{}"], None);
    any(b"[1]2", &["[1]", "2"], None);
    any(b"[][]", &["[]", "[]"], None);
    // Like serde_json's stream reader: a top-level number or literal needs whitespace or
    // one of `{ [ "` after it.
    any(b"1true", &["1"], Some((Syntax, 1)));
    any(b"truefalse", &["true"], Some((Syntax, 4)));
    any(b"1-2", &["1"], Some((Syntax, 1)));
    any(b"1,2", &["1"], Some((Syntax, 1)));
    any(b"null]", &["null"], Some((Syntax, 4)));
    any(b"1 ]", &["1"], Some((Syntax, 2)));
}

#[test]
fn limits_have_distinct_errors() {
    let l = Limits::default;
    case(Mode::Any, l().max_depth(2), b"[[1]]", &["[[1]]"], None);
    case(
        Mode::Any,
        l().max_depth(2),
        b"[[[1]]]",
        &[],
        Some((DepthLimit, 2)),
    );
    case(
        Mode::Objects,
        l().max_depth(1),
        b"{\"a\":{}}",
        &[],
        Some((DepthLimit, 5)),
    );
    case(
        Mode::Objects,
        l().max_value_bytes(7),
        b"{\"a\":1}{\"a\":12}",
        &["{\"a\":1}"],
        Some((ValueTooLarge, 14)),
    );
    case(
        Mode::Objects,
        l().max_value_bytes(5),
        b"{\"a\":1}",
        &[],
        Some((ValueTooLarge, 5)),
    );
    // The byte that ends a top-level number is not part of the value.
    case(
        Mode::Any,
        l().max_value_bytes(2),
        b"12 34",
        &["12", "34"],
        None,
    );
    case(
        Mode::Any,
        l().max_value_bytes(2),
        b"123",
        &[],
        Some((ValueTooLarge, 2)),
    );
    case(
        Mode::Any,
        l().max_value_bytes(2),
        b"[12]",
        &[],
        Some((ValueTooLarge, 2)),
    );
    case(
        Mode::Any,
        l().max_string_bytes(3),
        b"[\"abc\"]",
        &["[\"abc\"]"],
        None,
    );
    case(
        Mode::Any,
        l().max_string_bytes(3),
        b"[\"abcd\"]",
        &[],
        Some((StringTooLong, 5)),
    );
    case(
        Mode::Any,
        l().max_string_bytes(3),
        b"[\"ab\\n\"]",
        &[],
        Some((StringTooLong, 5)),
    );
    case(
        Mode::Objects,
        l().max_string_bytes(3),
        b"{\"abcd\":1}",
        &[],
        Some((StringTooLong, 5)),
    );
    case(
        Mode::Any,
        l().max_number_bytes(3),
        b"[123]",
        &["[123]"],
        None,
    );
    case(
        Mode::Any,
        l().max_number_bytes(3),
        b"[1234]",
        &[],
        Some((NumberTooLong, 4)),
    );
    case(
        Mode::Any,
        l().max_number_bytes(3),
        b"-1.5",
        &[],
        Some((NumberTooLong, 3)),
    );
    case(Mode::Any, l().max_number_bytes(3), b"-15 ", &["-15"], None);
}

/// The largest limits mean "no limit": nothing overflows working out where a string,
/// number or value must end, however far from offset 0 it starts.
#[test]
fn the_largest_limits_limit_nothing() {
    let max = Limits::default()
        .max_value_bytes(u64::MAX)
        .max_string_bytes(u64::MAX)
        .max_number_bytes(u64::MAX)
        .max_depth(u32::MAX);
    let input = b"{\"key\":[\"a string\",-12.5e3,{\"k\":\"\\u00e9\\n\"}]} {\"b\":\"x\"}";
    case(
        Mode::Objects,
        max,
        input,
        &[
            "{\"key\":[\"a string\",-12.5e3,{\"k\":\"\\u00e9\\n\"}]}",
            "{\"b\":\"x\"}",
        ],
        None,
    );
    case(
        Mode::Any,
        max,
        b"\"top\" 12 [\"s\"]",
        &["\"top\"", "12", "[\"s\"]"],
        None,
    );
}

#[test]
fn deep_nesting_is_a_depth_error_not_a_crash() {
    let arrays = vec![b'['; 100_000];
    let mut mixed = Vec::new();
    while mixed.len() < 250_000 {
        mixed.extend_from_slice(b"[{\"\":");
    }
    for (input, mode) in [
        (&arrays, Mode::Any),
        (&mixed, Mode::Any),
        (&mixed, Mode::Objects),
    ] {
        let bytes = bytes::Bytes::from(input.clone());
        let whole = common::run_cuts(mode, Limits::default(), &bytes, &[]);
        let ones: Vec<usize> = (1..input.len()).collect();
        let bytewise = common::run_cuts(mode, Limits::default(), &bytes, &ones);
        let want_kind = if mode == Mode::Objects && input[0] == b'[' {
            NotAnObject
        } else {
            DepthLimit
        };
        assert_eq!(whole.error.map(|e| e.0), Some(want_kind));
        assert_eq!(whole, bytewise);
        assert_eq!(
            whole.without_detail(),
            common::run_reference(mode, Limits::default(), input)
        );
    }
    // Depth 128 is allowed, 129 is not.
    let ok = format!("{}{}", "[".repeat(128), "]".repeat(128));
    any(ok.as_bytes(), &[ok.as_str()], None);
    let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
    any(deep.as_bytes(), &[], Some((DepthLimit, 128)));
}

#[test]
fn error_carries_raw_bytes_and_value_index() {
    use bytes::Bytes;
    use toolstream::json::Splitter;
    let mut s = Splitter::new(Mode::Objects);
    let mut out = Vec::new();
    s.push(Bytes::from_static(b"{\"a\":1} {\"b\":"), &mut out)
        .unwrap();
    let e = s.push(Bytes::from_static(b" tru }"), &mut out).unwrap_err();
    assert_eq!(out.len(), 1);
    assert_eq!(e.kind(), Syntax);
    assert_eq!(e.offset(), 17);
    assert_eq!(e.value_index(), 1);
    assert_eq!(&e.raw()[..], b"{\"b\": tru ");
    assert_eq!(e.raw_offset(), 8);
    assert!(e.to_string().contains("byte 17"), "{e}");
    // Fused: the same error, nothing consumed.
    assert_eq!(s.push(Bytes::from_static(b"{}"), &mut out), Err(e.clone()));
    assert_eq!(s.finish(), Err(e));

    let mut s = Splitter::new(Mode::Objects);
    s.push(Bytes::from_static(b"{\"a\":[1,{\"b\":\"x"), &mut out)
        .unwrap();
    let e = s.finish().unwrap_err();
    assert_eq!(e.kind(), Truncated);
    let t = e.truncation().expect("truncation detail");
    assert_eq!(t.depth, 3);
    assert_eq!(t.lexical, toolstream::json::Lexical::InString);
    assert_eq!(&e.raw()[..], b"{\"a\":[1,{\"b\":\"x");
}

#[test]
fn values_inside_one_chunk_are_zero_copy() {
    use bytes::Bytes;
    use toolstream::json::Splitter;
    let chunk = Bytes::from_static(b"{\"a\":1} {\"b\":2}{\"c\"");
    let mut s = Splitter::new(Mode::Objects);
    let mut out = Vec::new();
    s.push(chunk.clone(), &mut out).unwrap();
    for v in &out {
        let p = v.bytes().as_ptr() as usize;
        let base = chunk.as_ptr() as usize;
        assert!(
            p >= base && p < base + chunk.len(),
            "value {v:?} must point into the chunk"
        );
    }
    s.push(Bytes::from_static(b":3}"), &mut out).unwrap();
    assert_eq!(&out[2].bytes()[..], b"{\"c\":3}");
}

#[test]
fn state_is_inspectable() {
    use bytes::Bytes;
    use toolstream::json::{Container, Lexical, Splitter};
    let mut s = Splitter::new(Mode::Objects);
    let mut out = Vec::new();
    let steps: &[(&[u8], &[Container], Lexical)] = &[
        (b"", &[], Lexical::BetweenValues),
        (b"{", &[Container::Object], Lexical::ObjectStart),
        (b"\"k", &[Container::Object], Lexical::InKey),
        (b"\"", &[Container::Object], Lexical::ExpectingColon),
        (b":", &[Container::Object], Lexical::ExpectingValue),
        (
            b"[",
            &[Container::Object, Container::Array],
            Lexical::ArrayStart,
        ),
        (
            b"1",
            &[Container::Object, Container::Array],
            Lexical::InNumber,
        ),
        (
            b",",
            &[Container::Object, Container::Array],
            Lexical::ExpectingValue,
        ),
        (
            b"\"x\\",
            &[Container::Object, Container::Array],
            Lexical::InString,
        ),
        (
            b"n\"",
            &[Container::Object, Container::Array],
            Lexical::AfterValue,
        ),
        (b"]", &[Container::Object], Lexical::AfterValue),
        (b",", &[Container::Object], Lexical::ExpectingKey),
        (b"\"z\":nu", &[Container::Object], Lexical::InLiteral),
        (b"ll}", &[], Lexical::BetweenValues),
    ];
    for (chunk, containers, lexical) in steps {
        s.push(Bytes::from_static(chunk), &mut out).unwrap();
        let st = s.state();
        assert_eq!(
            st.containers().collect::<Vec<_>>(),
            *containers,
            "after {:?}",
            common::show(chunk)
        );
        assert_eq!(st.lexical(), *lexical, "after {:?}", common::show(chunk));
    }
    assert_eq!(out.len(), 1);
}

#[allow(dead_code)]
fn _outcome_is_used(o: Outcome) -> bool {
    o.one_clean_value()
}

/// Short chunks inside a container that hold no `}` or `]` may wait unread (see
/// `Splitter::push`): their error comes from the call that reads them, with the wrong
/// byte's own offset, and the splitter is fused from there.
#[test]
fn an_error_in_a_waiting_chunk_comes_from_the_call_that_reads_it() {
    use bytes::Bytes;
    use toolstream::json::{Lexical, Splitter};
    let push = |s: &mut Splitter, c: &'static [u8]| s.push(Bytes::from_static(c), &mut Vec::new());

    // Read at the next chunk with a closer.
    let mut s = Splitter::new(Mode::Objects);
    push(&mut s, b"{\"a\":").unwrap();
    let waited = push(&mut s, b"tx");
    let e = match waited {
        Ok(()) => push(&mut s, b"}").unwrap_err(),
        Err(e) => e,
    };
    assert_eq!((e.kind(), e.offset()), (Syntax, 6));
    assert_eq!(&e.raw()[..], b"{\"a\":tx");
    assert_eq!(push(&mut s, b"{}"), Err(e.clone()));

    // Read by `state`, which then shows where the bytes left the machine.
    let mut s = Splitter::new(Mode::Objects);
    push(&mut s, b"{\"a\":[1,").unwrap();
    push(&mut s, b"2").unwrap();
    push(&mut s, b", \"x").unwrap();
    assert_eq!(s.offset(), 13);
    assert_eq!(s.state().lexical(), Lexical::InString);
    assert_eq!(s.state().depth(), 2);
    push(&mut s, b"\x01").unwrap_or(());
    assert!(!s.state().in_value(), "fused by the control byte");
    let e = s.error().expect("fused").clone();
    assert_eq!((e.kind(), e.offset()), (ControlCharacter, 13));

    // Read by `finish`: a truncation still says where the input stopped.
    let mut s = Splitter::new(Mode::Objects);
    push(&mut s, b"{\"k\":\"v").unwrap();
    push(&mut s, b"al").unwrap();
    let e = s.finish().unwrap_err();
    assert_eq!((e.kind(), e.offset()), (Truncated, 9));
    assert_eq!(e.truncation().map(|t| t.lexical), Some(Lexical::InString));

    // `push_slice`: a chunk of 17 bytes to 1 KiB waits the same way, and its error comes
    // from the call that reads it, here a short chunk (read at once, after the wait).
    let mut s = Splitter::new(Mode::Objects);
    let mut out = Vec::new();
    s.push_slice(b"{\"a\":[", &mut out).unwrap();
    let long = b"1,2,3,4,5,6,7,8,9,x,";
    s.push_slice(long, &mut out)
        .expect("the chunk waits unread");
    assert_eq!(
        s.buffered(),
        6 + long.len(),
        "the chunk waits in the buffer"
    );
    let e = s.push_slice(b"1", &mut out).unwrap_err();
    assert_eq!((e.kind(), e.offset()), (Syntax, 24));
    assert_eq!(&e.raw()[..], b"{\"a\":[1,2,3,4,5,6,7,8,9,x");
    assert!(out.is_empty());
}

/// Values far longer than the splitter's wait (64 KiB), of the kinds that take its three
/// ways to wait — chunks without a closer (a long string, a number array), chunks whose
/// closers the tracker follows (an edit list, code with braces inside a string), and a
/// value whose first waits test for a closer and whose later ones follow every chunk —
/// glued back to back, at chunk sizes around each of its thresholds: every chunking gives
/// the reference machine's values (and `run_cuts` checks that each comes out of the push
/// with its last byte, and zero-copy where it lies in one chunk). Then the same with one
/// byte made wrong deep inside a wait, at the same offset in every chunking.
#[test]
fn long_values_wait_and_are_read_at_every_chunk_size() {
    let mut doc = String::new();
    doc.push_str("{\"command\":\"");
    while doc.len() < 150_000 {
        doc.push_str(r#"grep -rn \"fn main\" src/ | sed 's/\\t/ /g' && echo \"done\"; "#);
    }
    doc.push_str("\",\"timeout\":30}");
    doc.push_str("{\"content\":\"");
    while doc.len() < 300_000 {
        doc.push_str(r#"fn main() {\n    if x > 0 { return Err(\"bad \\\"input\\\"\".into()); }\n}\n[1, 2]\n"#);
    }
    doc.push_str("\"}{\"edits\":[");
    let mut k = 0;
    while doc.len() < 450_000 {
        if k > 0 {
            doc.push(',');
        }
        doc.push_str(&format!(
            r#"{{"line":{k},"old":"let x = foo(\"a\");","range":{{"start":[12,4],"end":[12,30]}}}}"#
        ));
        k += 1;
    }
    doc.push_str("],\"dry_run\":false}{\"values\":[");
    let start = doc.len();
    while doc.len() - start < 100_000 {
        doc.push_str("12,-3.5,1e-7,null,");
    }
    doc.push_str("0],\"label\":\"x\"}");
    // A string whose first closer comes late, then a run of closers that end no value.
    doc.push_str("{\"a\":\"");
    doc.push_str(&"x".repeat(70_000));
    doc.push_str("\",\"b\":[[[]]],\"c\":\"");
    doc.push_str(&"y".repeat(70_000));
    doc.push_str("\"}");
    let input = bytes::Bytes::from(doc.into_bytes());
    let limits = Limits::default();
    let want = common::run_reference(Mode::Objects, limits, &input);
    assert_eq!(want.values.len(), 5);
    assert_eq!(want.error, None);
    let cut = |n: usize| -> Vec<usize> { (n..input.len()).step_by(n).collect() };
    // Through `push` and through `push_slice`, whose chunks of 17 bytes to 1 KiB wait too.
    for n in [1, 2, 7, 16, 17, 31, 63, 64, 65, 100, 1000, 1024, 1025, 5000] {
        for slices in [false, true] {
            let got = common::run_cuts_with(Mode::Objects, limits, &input, &cut(n), slices);
            assert_eq!(got.without_detail(), want, "chunks of {n}, slices {slices}");
        }
    }
    // Chunks of n cut so that each value's closing byte starts one (and its chunk is n
    // long): the closer test must look at a chunk's first byte too.
    for n in [17, 64, 1024] {
        let mut cuts = Vec::new();
        let mut pos = 0;
        for &(_, end, _) in &want.values {
            let closer = end as usize - 1;
            cuts.extend((pos + n..closer).step_by(n));
            cuts.push(closer);
            pos = closer;
        }
        for slices in [false, true] {
            let got = common::run_cuts_with(Mode::Objects, limits, &input, &cuts, slices);
            assert_eq!(
                got.without_detail(),
                want,
                "chunks of {n}, each closer first, slices {slices}"
            );
        }
    }
    // One wrong byte (a raw control byte in a string) deep inside the edit list.
    let mut bad = input.to_vec();
    let at = 420_000 + bad[420_000..].iter().position(|&b| b == b'"').unwrap_or(0);
    bad[at + 1] = 0x01;
    let bad = bytes::Bytes::from(bad);
    let want = common::run_reference(Mode::Objects, limits, &bad);
    assert!(want.error.is_some());
    for n in [1, 7, 16, 17, 64, 65, 1024, 1025] {
        for slices in [false, true] {
            let got = common::run_cuts_with(Mode::Objects, limits, &bad, &cut(n), slices);
            assert_eq!(
                got.without_detail(),
                want,
                "chunks of {n}, a wrong byte at {}, slices {slices}",
                at + 1
            );
        }
    }
}

/// A string limit whose bound falls at every byte of strings with escapes, quotes and
/// non-ASCII bytes, padded so that the fast paths' windows and blocks take them (whole, a
/// byte at a time, at every split, against the reference machine with the same limits).
/// A backslash as the last byte before the bound must enter the escape, not be consumed:
/// planted in the short-string scanner, that defect gave a value whole and
/// `string_too_long` a byte at a time, and no test with the default limits saw it.
#[test]
fn a_string_limit_at_every_byte_of_escapes() {
    for body in [r#"ab\"cd"#, r#"a\\b\"c"#, r#"\u00e9x\n"#, "é\\\"ü"] {
        for pad in [0, 40, 70] {
            let input = format!("{{\"k\":\"{body}\"}}{}", " ".repeat(pad));
            for max in 1..=body.len() as u64 + 1 {
                let limits = Limits::default().max_string_bytes(max);
                check_chunkings(Mode::Objects, limits, input.as_bytes());
            }
        }
    }
}
