//! Oracle: the SSE decoder gives the same items and end report however the input is cut,
//! and skips what the standard's line-by-line reading with the same limits drops
//! (`toolstream_fuzz::sse_reference`, written apart from the decoder): as many events, and
//! as many over-long comment lines.
#![no_main]

use arbitrary::Arbitrary;
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use toolstream::sse::{Decoder, Limits};

#[derive(Arbitrary, Debug)]
struct Input {
    data: Vec<u8>,
    cuts: Vec<u16>,
    small_limits: bool,
}

fuzz_target!(|input: Input| {
    let limits = if input.small_limits {
        Limits::default().max_line_bytes(16).max_event_bytes(48)
    } else {
        Limits::default()
    };
    let data = Bytes::from(input.data);
    let cuts = toolstream_fuzz::cut_points(&input.cuts, data.len());
    let run = |cuts: &[usize]| {
        let mut d = Decoder::with_limits(limits);
        let mut items = Vec::new();
        let mut prev = 0;
        for &c in cuts.iter().chain(std::iter::once(&data.len())) {
            d.push(data.slice(prev..c.max(prev)), &mut items);
            assert!(d.buffered() as u64 <= limits.line_bytes() + limits.event_bytes());
            prev = c.max(prev);
        }
        let end = d.finish(&mut items);
        (items, end)
    };
    let whole = run(&[]);
    assert_eq!(run(&cuts), whole, "chunking changed the result");
    let (items, end) = whole;
    let skipped = |comment: bool| {
        items
            .iter()
            .filter(|i| {
                matches!(i, toolstream::sse::Item::Skipped(s)
                if (s.reason == toolstream::sse::SkipReason::CommentTooLong) == comment)
            })
            .count()
    };
    let want = toolstream_fuzz::sse_reference(&data, &limits);
    let got = toolstream_fuzz::SseDrops {
        dropped: skipped(false) + usize::from(end.is_err_and(|e| e.skipped.is_some())),
        comments: skipped(true),
    };
    assert_eq!(
        got, want,
        "the decoder's skips differ from the standard's reading"
    );
});
