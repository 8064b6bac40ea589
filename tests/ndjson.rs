//! The NDJSON decoder: table cases fed whole, one byte at a time and split at every offset.

use bytes::Bytes;
use toolstream::json::{self, ErrorKind as J};
use toolstream::ndjson::{Decoder, ErrorKind, Item};

fn render(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .map(|it| match it {
            Item::Value(v) => format!(
                "V{}@{} {}",
                v.line(),
                v.offset(),
                String::from_utf8_lossy(v.bytes())
            ),
            Item::Error(e) => format!("E{}@{} {:?}", e.line(), e.offset(), e.kind()),
            _ => "?".into(),
        })
        .collect()
}

fn run(max_line: u64, input: &Bytes, cuts: &[usize]) -> Vec<String> {
    let mut d = Decoder::with_limits(max_line, json::Limits::default());
    let mut items = Vec::new();
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&input.len())) {
        d.push(input.slice(prev..c.max(prev)), &mut items);
        prev = c.max(prev);
    }
    d.finish(&mut items);
    render(&items)
}

fn check_with(max_line: u64, input: &[u8], want: &[&str]) {
    let input = Bytes::copy_from_slice(input);
    let whole = run(max_line, &input, &[]);
    assert_eq!(whole, want, "input {:?}", String::from_utf8_lossy(&input));
    let ones: Vec<usize> = (1..input.len()).collect();
    assert_eq!(run(max_line, &input, &ones), whole);
    for k in 0..=input.len() {
        assert_eq!(run(max_line, &input, &[k]), whole, "split at {k}");
    }
}

fn check(input: &[u8], want: &[&str]) {
    check_with(1 << 20, input, want)
}

#[test]
fn lines_and_line_ends() {
    check(
        b"{\"a\":1}\n{\"b\":2}\n",
        &["V1@0 {\"a\":1}", "V2@8 {\"b\":2}"],
    );
    check(b"{\"a\":1}\r\n[2]\r\n", &["V1@0 {\"a\":1}", "V2@9 [2]"]);
    check(b"\n\n  \n{}\n\r\n", &["V4@5 {}"]);
    check(b"1\n\"x\"\nnull", &["V1@0 1", "V2@2 \"x\"", "V3@6 null"]); // final line without LF
    check(b"42", &["V1@0 42"]);
    check(b"", &[]);
    check("{\"é\":\"😀\"}\n".as_bytes(), &["V1@0 {\"é\":\"😀\"}"]);
}

#[test]
fn bad_lines_are_errors_and_decoding_goes_on() {
    check(
        b"{\"a\":1}\nnot json\n{\"b\":\n{}\n",
        &[
            "V1@0 {\"a\":1}",
            "E2@9 Json(Syntax)",
            "E3@22 Json(Truncated)",
            "V4@23 {}",
        ],
    );
    check(b"{}{}\n[1]\n", &["E1@2 MultipleValues", "V2@5 [1]"]);
    check(
        b"{\"a\":\"\xFF\"}\n1\n",
        &["E1@6 Json(InvalidUtf8)", "V2@10 1"],
    );
    check(b"[1,]\n", &["E1@3 Json(Syntax)"]);
}

#[test]
fn long_lines_are_skipped() {
    check_with(
        4,
        b"[1]\n[1,2,3]\n[4]\n",
        &["V1@0 [1]", "E2@8 LineTooLong", "V3@12 [4]"],
    );
    check_with(4, b"[1,2,3]", &["E1@4 LineTooLong"]);
}

#[test]
fn error_kinds_are_reported() {
    let mut d = Decoder::new();
    let mut items = Vec::new();
    d.push(Bytes::from_static(b"{\"a\":01}\n"), &mut items);
    let Item::Error(e) = &items[0] else {
        panic!("{items:?}")
    };
    assert_eq!(e.kind(), ErrorKind::Json(J::InvalidNumber));
    assert_eq!(&e.raw()[..], b"{\"a\":01}");
    assert!(e.to_string().contains("line 1, byte 6"), "{e}");
}

/// The pipeline's NDJSON line limit is its own: a line over it is dropped and reported,
/// whatever the SSE line limit, and an SSE line limit below the line leaves it alone.
#[test]
fn the_pipelines_ndjson_line_limit_is_set_apart_from_the_sse_ones() {
    use toolstream::assemble::{DropReason, Event, Policy};
    use toolstream::pipeline::{FramingLimits, Stream};
    use toolstream::provider::Format;
    let line = format!(
        "{{\"message\":{{\"role\":\"assistant\",\"content\":\"{}\"}},\"done\":false}}\n",
        "x".repeat(100)
    );
    let run = |limits: FramingLimits| {
        let mut s = Stream::with_limits(Some(Format::Ollama), Policy::default(), limits);
        let mut out = Vec::new();
        s.push(bytes::Bytes::from(line.clone()), &mut out);
        s.finish(&mut out);
        out
    };
    let dropped = |events: &[Event]| {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Dropped(d) => Some((d.reason, d.bytes)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let ndjson_small = run(FramingLimits::default().ndjson_line_bytes(64));
    assert_eq!(dropped(&ndjson_small), [(DropReason::LineTooLong, 65)]);
    let sse_small =
        run(FramingLimits::default().sse(toolstream::sse::Limits::default().max_line_bytes(64)));
    assert_eq!(dropped(&sse_small), []);
    assert!(sse_small
        .iter()
        .any(|e| matches!(e, Event::Text { text, .. } if text.len() == 100)));
}
