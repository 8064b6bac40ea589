//! The SSE decoder against the WHATWG rules: a table of byte-level cases, each fed whole,
//! one byte at a time and split at every offset (and at every pair of offsets for short
//! inputs), with identical results; plus a property test over random event sequences.

use bytes::Bytes;
use proptest::prelude::*;
use toolstream::sse::{Decoder, Item, Limits, SkipReason};

/// Items as compact strings: `E type|data|id`, `C text`, `R ms`, `S reason@offset+dropped`;
/// then the end: `END ok` or `END incomplete discarded/unterminated/data`.
fn render(items: &[Item], end: Result<(), toolstream::sse::Incomplete>) -> Vec<String> {
    let mut v: Vec<String> = items
        .iter()
        .map(|it| match it {
            Item::Event(e) => format!(
                "E {}|{}|{}",
                String::from_utf8_lossy(e.event_type()),
                e.data_lossy(),
                String::from_utf8_lossy(e.last_event_id())
            ),
            Item::Comment(c) => format!("C {}", String::from_utf8_lossy(c)),
            Item::Retry(ms) => format!("R {ms}"),
            Item::Skipped(s) => format!(
                "S {}@{}+{}",
                match s.reason {
                    SkipReason::LineTooLong => "line",
                    SkipReason::EventTooLarge => "event",
                    SkipReason::CommentTooLong => "comment",
                    _ => "other",
                },
                s.offset,
                s.dropped
            ),
            _ => "?".into(),
        })
        .collect();
    v.push(match end {
        Ok(()) => "END ok".into(),
        Err(i) => format!(
            "END incomplete {}/{}/{}",
            i.discarded,
            i.unterminated_line,
            String::from_utf8_lossy(&i.data)
        ),
    });
    v
}

fn run(limits: Limits, input: &Bytes, cuts: &[usize]) -> Vec<String> {
    let mut d = Decoder::with_limits(limits);
    let mut items = Vec::new();
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&input.len())) {
        let c = c.clamp(prev, input.len());
        d.push(input.slice(prev..c), &mut items);
        prev = c;
    }
    {
        let end = d.finish(&mut items);
        render(&items, end)
    }
}

fn check_with(limits: Limits, input: &[u8], want: &[&str]) {
    let input = Bytes::copy_from_slice(input);
    let whole = run(limits, &input, &[]);
    assert_eq!(
        whole,
        want,
        "whole input {:?}",
        String::from_utf8_lossy(&input)
    );
    let ones: Vec<usize> = (1..input.len()).collect();
    assert_eq!(
        run(limits, &input, &ones),
        whole,
        "1-byte chunks on {input:?}"
    );
    for k in 0..=input.len() {
        assert_eq!(
            run(limits, &input, &[k]),
            whole,
            "split at {k} on {input:?}"
        );
        if input.len() <= 40 {
            for j in k..=input.len() {
                assert_eq!(
                    run(limits, &input, &[k, j]),
                    whole,
                    "split at {k},{j} on {input:?}"
                );
            }
        }
    }
}

fn check(input: &[u8], want: &[&str]) {
    check_with(Limits::default(), input, want)
}

#[test]
fn basic_and_field_parsing() {
    check(b"data: hello\n\n", &["E message|hello|", "END ok"]);
    check(b"data:a\n\n", &["E message|a|", "END ok"]);
    check(b"data:  a\n\n", &["E message| a|", "END ok"]); // one space stripped
    check(b"data\n\n", &["E message||", "END ok"]); // no colon: empty value
    check(b"data:\n\n", &["E message||", "END ok"]);
    check(b"data\ndata\n\n", &["E message|\n|", "END ok"]);
    check(
        b"data: a\ndata: b\ndata: c\n\n",
        &["E message|a\nb\nc|", "END ok"],
    );
    check(b"event: x\n\n", &["END ok"]); // no data: nothing dispatched
    check(
        b"event: x\ndata: 1\n\ndata: 2\n\n",
        &["E x|1|", "E message|2|", "END ok"],
    );
    check(b"event:\ndata: 1\n\n", &["E message|1|", "END ok"]);
    check(b"Data: a\nDATA: b\n\n", &["END ok"]); // names are case-sensitive
    check(b"data : a\n\n", &["END ok"]); // the field is "data "
    check(b"foo: bar\ndata: a\n\n", &["E message|a|", "END ok"]); // unknown ignored
    check(b"data: a:b: c\n\n", &["E message|a:b: c|", "END ok"]);
    check(b"\n\n\ndata: a\n\n\n", &["E message|a|", "END ok"]);
}

#[test]
fn line_ends() {
    check(b"data: a\r\n\r\n", &["E message|a|", "END ok"]);
    check(
        b"data: a\r\rdata: b\r\r",
        &["E message|a|", "E message|b|", "END ok"],
    );
    check(
        b"data: a\n\rdata: b\r\n\n",
        &["E message|a|", "E message|b|", "END ok"],
    );
    // A CR at the end of a chunk ends the line at once; the LF after it is swallowed.
    check(
        b"data: A\r\ndata: B\rdata: C\r\n\n",
        &["E message|A\nB\nC|", "END ok"],
    );
    // Gemini alt=sse uses CRLF pairs.
    check(
        b"data: {\"candidates\":[]}\r\n\r\ndata: {\"x\":1}\r\n\r\n",
        &[
            "E message|{\"candidates\":[]}|",
            "E message|{\"x\":1}|",
            "END ok",
        ],
    );
    // U+2028 and U+0085 are not line ends.
    check(
        "data: a\u{2028}b\u{85}c\n\n".as_bytes(),
        &["E message|a\u{2028}b\u{85}c|", "END ok"],
    );
}

#[test]
fn cr_then_lf_in_the_next_chunk_is_one_line_end() {
    let mut d = Decoder::new();
    let mut items = Vec::new();
    d.push(Bytes::from_static(b"data: A\r"), &mut items);
    d.push(Bytes::from_static(b"\ndata: B\r"), &mut items);
    d.push(Bytes::from_static(b"\r"), &mut items);
    // Dispatched during the push that delivered the second CR: no waiting for an LF.
    assert_eq!(items.len(), 1);
    d.push(Bytes::from_static(b"\n"), &mut items);
    assert_eq!(
        {
            let end = d.finish(&mut items);
            render(&items, end)
        },
        ["E message|A\nB|", "END ok"]
    );
}

#[test]
fn byte_order_mark() {
    check(b"\xEF\xBB\xBFdata: a\n\n", &["E message|a|", "END ok"]);
    // A second BOM is data (it makes the field name unknown here).
    check(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n", &["END ok"]);
    check(
        b"data: \xEF\xBB\xBFa\n\n",
        &["E message|\u{FEFF}a|", "END ok"],
    );
    // Not a BOM after all: the bytes are line content.
    check(b"\xEF\xBBdata: a\n\n", &["END ok"]);
    check(b"\xEF\n\ndata: a\n\n", &["E message|a|", "END ok"]);
    check(b"\xEF\xBB", &["END incomplete 2/true/"]);
}

#[test]
fn utf8_and_invalid_utf8() {
    check("data: é😀\n\n".as_bytes(), &["E message|é😀|", "END ok"]);
    check(b"data: a\xFFb\n\n", &["E message|a\u{FFFD}b|", "END ok"]);
    check(b"data: \xE2\x82\n\n", &["E message|\u{FFFD}|", "END ok"]);
    check(b"\xFF: x\ndata: 1\n\n", &["E message|1|", "END ok"]);
}

#[test]
fn comments() {
    check(
        b": OPENROUTER PROCESSING\n\n",
        &["C OPENROUTER PROCESSING", "END ok"],
    );
    check(
        b":ping\ndata: a\n:  two\n\n",
        &["C ping", "C  two", "E message|a|", "END ok"],
    );
    check(b":\n\n", &["C ", "END ok"]);
}

#[test]
fn ids() {
    check(
        b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n",
        &["E message|a|1", "E message|b|1", "E message|c|", "END ok"],
    );
    check(
        b"id: 7\ndata: a\n\nid: 8\0x\ndata: b\n\n",
        &["E message|a|7", "E message|b|7", "END ok"],
    );
    check(b"id: 3\n\ndata: a\n\n", &["E message|a|3", "END ok"]); // set even without data
}

#[test]
fn retry() {
    check(b"retry: 1500\n\n", &["R 1500", "END ok"]);
    check(b"retry:0\n\n", &["R 0", "END ok"]);
    for bad in [
        &b"retry: +5\n\n"[..],
        b"retry: 1e3\n\n",
        b"retry: -1\n\n",
        b"retry: 10 \n\n",
        b"retry:\n\n",
        b"retry: 1.5\n\n",
    ] {
        check(bad, &["END ok"]);
    }
    check(
        b"retry: 99999999999999999999999\n\n",
        &["R 18446744073709551615", "END ok"],
    );
}

#[test]
fn end_of_stream() {
    check(
        b"data: a\n\ndata: b\n",
        &["E message|a|", "END incomplete 7/false/b"],
    );
    check(
        b"data: a\n\ndata: {\"error\"",
        &["E message|a|", "END incomplete 14/true/{\"error\""],
    );
    check(b"data: a", &["END incomplete 7/true/a"]);
    check(b"event: error\ndata: x\n", &["END incomplete 19/false/x"]);
    check(b"data: a\n\n", &["E message|a|", "END ok"]);
    check(b"", &["END ok"]);
}

#[test]
fn openai_done_marker() {
    check(
        b"data: {\"choices\":[]}\n\ndata: [DONE]\n\n",
        &["E message|{\"choices\":[]}|", "E message|[DONE]|", "END ok"],
    );
}

#[test]
fn limits_skip_and_resynchronise() {
    let l = Limits::default().max_line_bytes(8).max_event_bytes(16);
    check_with(l, b"data: 12\n\n", &["E message|12|", "END ok"]);
    check_with(
        l,
        b"data: 123\n\ndata: ok\n\n",
        &["S line@8+10", "E message|ok|", "END ok"],
    );
    check_with(
        l,
        b"data: a\ndata: 123456789\ndata: x\n\ndata: ok\n\n",
        &["S line@16+32", "E message|ok|", "END ok"],
    );
    check_with(
        l,
        b"data: 12\ndata: 34\ndata: 5\n\ndata: ok\n\n",
        &["S event@18+26", "E message|ok|", "END ok"],
    );
    check_with(l, b"data: 1234567890", &["END incomplete 16/true/"]);
    // A comment over the line limit is skipped alone: the event around it goes on. (At
    // 91c7367 it dropped that event and the calls open in it.)
    check_with(
        l,
        b"data: a
:123456789
data: b

data: ok

",
        &[
            "S comment@16+10",
            "E message|a\nb|",
            "E message|ok|",
            "END ok",
        ],
    );
    check_with(
        l,
        b":0123456789abcdef

data: ok

",
        &["S comment@8+17", "E message|ok|", "END ok"],
    );
    check_with(
        l,
        b"data: a

:0123456789",
        &["E message|a|", "END incomplete 11/true/"],
    );
    // An `event` line counts towards the event's size before a lone `data:` line (whose
    // one-step path, whole or cut by a chunk end, must count it too).
    let l = Limits::default().max_line_bytes(16).max_event_bytes(20);
    check_with(
        l,
        b"event: abcdefgh\ndata: 12345678\n\ndata:ok\n\n",
        &["S event@21+31", "E message|ok|", "END ok"],
    );
    check_with(
        l,
        b"event: abc\ndata:12345\n\n",
        &["E abc|12345|", "END ok"],
    );
    // The one-step path for `event:` + `data:` keeps each line's limit too.
    check_with(
        l,
        b"event: a\ndata: 0123456789abcdef\n\ndata:ok\n\n",
        &["S line@25+32", "E message|ok|", "END ok"],
    );
}

#[test]
fn single_line_data_is_zero_copy() {
    let chunk = Bytes::from_static(b"data: {\"a\":1}\n\n");
    let mut d = Decoder::new();
    let mut items = Vec::new();
    d.push(chunk.clone(), &mut items);
    let Item::Event(e) = &items[0] else { panic!() };
    let p = e.data().as_ptr() as usize;
    assert_eq!(p, chunk.as_ptr() as usize + 6);
}

/// Memory stays bounded on a stream that never ends a line.
#[test]
fn no_newline_for_a_long_time_is_bounded() {
    let l = Limits::default().max_line_bytes(1024);
    let mut d = Decoder::with_limits(l);
    let mut items = Vec::new();
    let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
    for _ in 0..256 {
        d.push(chunk.clone(), &mut items); // 16 MiB in all
    }
    assert!(items.is_empty());
    d.push(Bytes::from_static(b"\n\ndata: ok\n\n"), &mut items);
    assert_eq!(
        {
            let end = d.finish(&mut items);
            render(&items, end)
        },
        ["S line@1024+16777217", "E message|ok|", "END ok"]
    );
}

#[derive(Clone, Debug)]
struct Ev {
    event: Option<String>,
    data: Vec<String>,
    id: Option<String>,
    comment: Option<String>,
}

fn arb_text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 {}\":,é😀\u{2028}]{0,12}"
}

fn arb_event() -> impl Strategy<Value = Ev> {
    (
        prop::option::of("[a-z]{1,6}"),
        prop::collection::vec(arb_text(), 1..4),
        prop::option::of("[0-9a-z]{0,4}"),
        prop::option::of("[a-z ]{0,8}"),
    )
        .prop_map(|(event, data, id, comment)| Ev {
            event,
            data,
            id,
            comment,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Random events serialised with random line ends and cut at random points decode to
    /// the same events as written.
    #[test]
    fn random_events_any_line_ends_any_cuts(
        events in prop::collection::vec(arb_event(), 0..8),
        ends in prop::collection::vec(0u8..3, 1..16),
        fracs in prop::collection::vec(any::<u16>(), 0..12),
    ) {
        let mut k = 0;
        // A lone CR followed by a lone LF would be one CRLF line end: avoid writing that.
        let mut prev_cr = false;
        let mut eol = || {
            k += 1;
            let e = match ends[k % ends.len()] { 0 if !prev_cr => "\n", 0 | 1 => "\r", _ => "\r\n" };
            prev_cr = e == "\r";
            e
        };
        let mut wire = String::new();
        let mut want = Vec::new();
        let mut last_id = String::new();
        for e in &events {
            if let Some(c) = &e.comment { wire += &format!(": {c}{}", eol()); want.push(format!("C {c}")); }
            if let Some(t) = &e.event { wire += &format!("event: {t}{}", eol()); }
            if let Some(id) = &e.id { wire += &format!("id: {id}{}", eol()); last_id = id.clone(); }
            for d in &e.data {
                // One leading space is stripped, so write one before data starting with a space.
                wire += &format!("data: {d}{}", eol());
            }
            wire += eol();
            want.push(format!("E {}|{}|{}", e.event.clone().unwrap_or("message".into()), e.data.join("\n"), last_id));
        }
        want.push("END ok".into());
        let bytes = Bytes::from(wire);
        let mut cuts: Vec<usize> = fracs.iter().map(|&f| f as usize * (bytes.len() + 1) / 65536).collect();
        cuts.sort_unstable();
        prop_assert_eq!(run(Limits::default(), &bytes, &[]), want.clone());
        prop_assert_eq!(run(Limits::default(), &bytes, &cuts), want);
    }
}

#[test]
fn pull_api_is_lazy_and_loses_nothing() {
    let mut d = Decoder::new();
    d.feed(Bytes::from_static(b"data: 1\n\ndata: 2\n\ndata: 3"));
    let Some(Item::Event(e)) = d.next_item() else {
        panic!()
    };
    assert_eq!(&e.data()[..], b"1");
    // Feeding again before the rest was taken keeps the untaken items, in order.
    d.feed(Bytes::from_static(b"\n\n"));
    let mut items = Vec::new();
    while let Some(it) = d.next_item() {
        items.push(it);
    }
    let end = d.finish(&mut items);
    assert_eq!(
        render(&items, end),
        ["E message|2|", "E message|3|", "END ok"]
    );

    // finish() hands over whatever was fed but not taken.
    let mut d = Decoder::new();
    d.feed(Bytes::from_static(b"data: x\n\n"));
    let mut items = Vec::new();
    let end = d.finish(&mut items);
    assert_eq!(render(&items, end), ["E message|x|", "END ok"]);
}
