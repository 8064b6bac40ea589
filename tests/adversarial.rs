//! Inputs built to hurt: deep nesting a byte at a time, huge values and lines, floods of
//! tiny events, thousands of call slots, invalid UTF-8 in every layer, chunks cut at the
//! worst places. Memory is asserted through each layer's `buffered()` counter, which stays
//! under its limit.

use bytes::Bytes;
use toolstream::assemble::{Event, Policy};
use toolstream::json::{ErrorKind, Limits, Mode, Splitter};
use toolstream::pipeline::Stream;
use toolstream::provider::Format;
use toolstream::sse;

#[test]
fn one_mib_of_open_objects_one_byte_at_a_time() {
    let unit = b"{\"a\":";
    let mut s = Splitter::new(Mode::Objects);
    let mut out = Vec::new();
    let mut error = None;
    for i in 0..(1 << 20) {
        let b = unit[i % unit.len()];
        if let Err(e) = s.push(Bytes::copy_from_slice(&[b]), &mut out) {
            error.get_or_insert(e);
        }
    }
    let e = error.expect("depth limit");
    assert_eq!(e.kind(), ErrorKind::DepthLimit);
    assert_eq!(e.offset(), 128 * 5);
    assert!(s.buffered() <= 128 * 5 + 1);
}

#[test]
fn a_100_mb_string_is_cut_at_the_value_limit_in_any_chunking() {
    let limit = 1 << 20;
    for chunk in [1usize, 7, 4096, 1 << 20] {
        let mut s = Splitter::with_limits(Mode::Objects, Limits::default().max_value_bytes(limit));
        let mut out = Vec::new();
        s.push(Bytes::from_static(b"{\"content\":\""), &mut out)
            .unwrap();
        let block = Bytes::from(vec![b'a'; chunk]);
        let mut fed = 12u64;
        let mut err = None;
        while fed < 100_000_000 {
            match s.push(block.clone(), &mut out) {
                Ok(()) => assert!(s.buffered() as u64 <= limit),
                Err(e) => {
                    err = Some(e);
                    break; // fused: every later push returns the same error
                }
            }
            fed += chunk as u64;
        }
        let e = err.expect("value limit");
        assert_eq!(
            (e.kind(), e.offset()),
            (ErrorKind::ValueTooLarge, limit),
            "chunk {chunk}"
        );
        assert!(e.raw().len() as u64 <= limit + 1);
    }
}

#[test]
fn an_sse_stream_without_newlines_stays_bounded() {
    let limits = sse::Limits::default().max_line_bytes(64 << 10);
    let mut d = sse::Decoder::with_limits(limits);
    let mut items = Vec::new();
    let block = Bytes::from(vec![b'x'; 1 << 20]);
    for _ in 0..100 {
        d.push(block.clone(), &mut items);
        assert!(d.buffered() <= 64 << 10, "buffered {}", d.buffered());
    }
    assert!(items.is_empty());
    d.push(Bytes::from_static(b"\n\ndata: ok\n\n"), &mut items);
    assert!(
        matches!(&items[..], [sse::Item::Skipped(_), sse::Item::Event(_)]),
        "{items:?}"
    );
}

#[test]
fn a_million_tiny_events() {
    let one = b"data: x\n\n";
    let wire = Bytes::from(one.repeat(1_000_000));
    let mut d = sse::Decoder::new();
    d.feed(wire);
    let mut n = 0;
    while let Some(it) = d.next_item() {
        assert!(matches!(it, sse::Item::Event(_)));
        n += 1;
    }
    assert_eq!(n, 1_000_000);
    assert!(d.finish(&mut Vec::new()).is_ok());
}

#[test]
fn ten_thousand_call_slots_hit_the_call_limit() {
    let mut wire = String::new();
    for i in 0..10_000 {
        wire.push_str(&format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{i},\"id\":\"c{i}\",\"function\":{{\"name\":\"f\",\"arguments\":\"{{\\\"a\\\":\"}}}}]}}}}]}}\n\n"
        ));
    }
    let mut s = Stream::with_policy(
        Some(Format::OpenAiChat),
        Policy {
            max_calls: 128,
            ..Policy::default()
        },
    );
    let mut out = Vec::new();
    s.push(Bytes::from(wire), &mut out);
    let limit_failures = out
        .iter()
        .filter(|e| matches!(e, Event::ToolCallFailed(f) if f.kind == toolstream::assemble::FailureKind::Limit))
        .count();
    assert_eq!(limit_failures, 1);
    assert!(s.buffered() <= 128 * 8, "buffered {}", s.buffered());
}

#[test]
fn pipeline_memory_stays_under_small_limits() {
    let policy = Policy {
        json: Limits::default().max_depth(8).max_value_bytes(128),
        max_calls: 4,
        ..Policy::default()
    };
    let framing = sse::Limits::default()
        .max_line_bytes(64)
        .max_event_bytes(256);
    let mut s = Stream::with_limits(Some(Format::OpenAiChat), policy, framing);
    let mut out = Vec::new();
    let big = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"c\",\"function\":{{\"name\":\"f\",\"arguments\":\"{}\"}}}}]}}}}]}}\n\n",
        "x".repeat(10_000)
    );
    for _ in 0..50 {
        s.push(Bytes::from(big.clone()), &mut out);
        s.push(Bytes::from_static(b"data: {\"choices\":[]}"), &mut out);
        assert!(
            s.buffered() <= 64 + 256 + 4 * 128,
            "buffered {}",
            s.buffered()
        );
        s.push(Bytes::from_static(b"\n\n"), &mut out);
    }
}

#[test]
fn invalid_utf8_in_every_layer() {
    // Splitter: an error with its offset.
    let mut s = Splitter::new(Mode::Objects);
    let e = s
        .push(Bytes::from_static(b"{\"a\":\"\xC3\x28\"}"), &mut Vec::new())
        .unwrap_err();
    assert_eq!((e.kind(), e.offset()), (ErrorKind::InvalidUtf8, 7));
    // SSE: decoded with replacement, never stalls.
    let mut d = sse::Decoder::new();
    let mut items = Vec::new();
    d.push(
        Bytes::from_static(b"data: \xFF\xFE\n\ndata: ok\n\n"),
        &mut items,
    );
    assert_eq!(items.len(), 2);
    // NDJSON: an error item, then the next line.
    let mut n = toolstream::ndjson::Decoder::new();
    let mut lines = Vec::new();
    n.push(
        Bytes::from_static(b"{\"a\":\"\xFF\"}\n{\"b\":1}\n"),
        &mut lines,
    );
    assert!(matches!(
        &lines[..],
        [
            toolstream::ndjson::Item::Error(_),
            toolstream::ndjson::Item::Value(_)
        ]
    ));
    // Pipeline: an undecodable envelope is a provider error, and decoding goes on; what it
    // carried is lost, so the stream is not complete.
    let mut p = Stream::new(Some(Format::OpenAiChat));
    let mut out = Vec::new();
    p.push(
        Bytes::from_static(
            b"data: {\"choices\":[{\"delta\":{\"content\":\"\xFF\"}}]}\n\ndata: [DONE]\n\n",
        ),
        &mut out,
    );
    p.finish(&mut out);
    assert!(
        matches!(out.first(), Some(Event::ProviderError { .. })),
        "{out:?}"
    );
    assert_eq!(out.last(), Some(&Event::End { complete: false }));
}

/// Chunks that end on a backslash, inside `\u12`, inside a UTF-8 character, on a CR, and
/// inside a BOM: the same result as one chunk.
#[test]
fn chunks_cut_at_the_worst_places() {
    let doc = "\u{FEFF}{\"a\":\"x\\\"y\\u1234z é😀\"}".as_bytes();
    let whole = {
        let mut s = Splitter::new(Mode::Objects);
        let mut out = Vec::new();
        s.push(Bytes::copy_from_slice(doc), &mut out).unwrap();
        out[0].bytes().clone()
    };
    let find = |pat: &[u8]| doc.windows(pat.len()).position(|w| w == pat).unwrap();
    let cuts = [
        1,                         // inside the BOM
        find(b"\\\"") + 1,         // right after a backslash
        find(b"\\u12") + 4,        // inside \u12
        find("é".as_bytes()) + 1,  // inside é
        find("😀".as_bytes()) + 2, // inside 😀
    ];
    for cut in cuts {
        let mut s = Splitter::new(Mode::Objects);
        let mut out = Vec::new();
        s.push(Bytes::copy_from_slice(&doc[..cut]), &mut out)
            .unwrap();
        s.push(Bytes::copy_from_slice(&doc[cut..]), &mut out)
            .unwrap();
        assert_eq!(out[0].bytes(), &whole, "cut at {cut}");
    }
    // SSE: a CR at the end of a chunk, its LF in the next.
    let mut d = sse::Decoder::new();
    let mut items = Vec::new();
    d.push(Bytes::from_static(b"data: a\r"), &mut items);
    d.push(Bytes::from_static(b"\n\r"), &mut items);
    d.push(Bytes::from_static(b"\n"), &mut items);
    assert_eq!(items.len(), 1);
}
