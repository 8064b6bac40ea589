//! Bedrock through the pipeline with well-framed messages: the fuzzer chooses each message's
//! kind, event name and payload, the target frames them (so the checksums are right and
//! the Bedrock decoder is reached, which byte-level mutation of a checksummed stream rarely
//! does), then cuts the stream. Oracles: no panic, the same events and the same turn to send
//! back however the stream is cut, buffered memory under the limits.
#![no_main]

use arbitrary::Arbitrary;
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use toolstream::assemble::Policy;
use toolstream::eventstream::encode;
use toolstream::json::Limits;
use toolstream::sse;

const EVENTS: &[&str] = &[
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
    "chunk",
    "throttlingException",
    "modelStreamErrorException",
];

#[derive(Arbitrary, Debug)]
struct Message {
    /// 0: event, 1: exception, 2: error, else an unknown kind.
    kind: u8,
    /// An index into EVENTS, or (past its end) `name`.
    event: u8,
    name: String,
    payload: Vec<u8>,
}

#[derive(Arbitrary, Debug)]
struct Input {
    messages: Vec<Message>,
    cuts: Vec<u16>,
}

fuzz_target!(|input: Input| {
    let mut stream = Vec::new();
    for m in &input.messages {
        let name = EVENTS
            .get(m.event as usize)
            .copied()
            .unwrap_or(m.name.as_str());
        let headers: Vec<(&str, &str)> = match m.kind {
            0 => vec![(":message-type", "event"), (":event-type", name)],
            1 => vec![(":message-type", "exception"), (":exception-type", name)],
            2 => vec![
                (":message-type", "error"),
                (":error-code", name),
                (":error-message", "boom"),
            ],
            _ => vec![(":message-type", name)],
        };
        if name.len() > 255 {
            continue; // a header name or value this long cannot be framed
        }
        stream.extend_from_slice(&encode(&headers, &m.payload));
    }
    let data = Bytes::from(stream);
    let cuts = toolstream_fuzz::cut_points(&input.cuts, data.len());
    let policy = Policy {
        json: Limits::default().max_depth(8).max_value_bytes(128),
        max_calls: 4,
        preview: true,
        ..Policy::default()
    };
    let framing = sse::Limits::default().max_event_bytes(1024);
    // The message being framed, 4 calls (and their views) of at most 128 bytes each (+1
    // for the byte that failed), 128 bytes of reasoning details.
    let bound = 1024 + 2 * 4 * 129 + 128;
    let run = |cuts: &[usize]| toolstream_fuzz::run_pipeline(&data, cuts, policy, framing, bound);
    assert_eq!(run(&cuts), run(&[]), "chunking changed the result");
});
