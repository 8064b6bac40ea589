//! The SSE benches' corpus and the decoders they compare, shared with the
//! instruction-count example (`benches/instructions.rs`, mode `sse`).

use std::convert::Infallible;
use std::hint::black_box;

use bytes::Bytes;
use futures::StreamExt;

use super::Rng;

pub const FRAGMENTS: &[&str] = &[
    "{\\\"",
    "path",
    "\\\": \\\"",
    "src/main.rs",
    "\\\", \\\"content\\\": \\\"",
    "fn main() {\\\\n    println!(\\\\\\\"hello\\\\\\\");\\\\n}",
    "caf\\u00e9 ",
    "\\\"}",
    " the quick brown fox",
    "\\\\t",
    "12345",
];

/// The SSE corpus and its number of `data` events.
pub fn sse_corpus(bytes: usize) -> (Bytes, usize) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut out = String::with_capacity(bytes + 1024);
    let mut events = 0;
    while out.len() < bytes {
        if rng.next().is_multiple_of(64) {
            out.push_str(": OPENROUTER PROCESSING\n\n");
        }
        let frag = rng.pick(FRAGMENTS);
        out.push_str(
            "data: {\"id\":\"chatcmpl-AbC123\",\"object\":\"chat.completion.chunk\",\"created\":1733000000,\"model\":\"gpt-4o-2024-08-06\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"",
        );
        out.push_str(frag);
        out.push_str("\"}}]},\"logprobs\":null,\"finish_reason\":null}]}\n\n");
        events += 1;
    }
    out.push_str("data: [DONE]\n\n");
    (Bytes::from(out), events + 1)
}

pub fn cut(input: &Bytes, size: usize) -> Vec<Bytes> {
    (0..input.len())
        .step_by(size)
        .map(|i| input.slice(i..(i + size).min(input.len())))
        .collect()
}

pub fn toolstream_sse(chunks: &[Bytes]) -> usize {
    let mut d = toolstream::sse::Decoder::new();
    let mut n = 0;
    for c in chunks {
        d.feed(c.clone());
        while let Some(it) = d.next_item() {
            if let toolstream::sse::Item::Event(e) = it {
                black_box(e.data());
                n += 1;
            }
        }
    }
    assert!(d.finish(&mut Vec::new()).is_ok());
    n
}

pub fn sse_stream_peer(chunks: &[Bytes]) -> usize {
    let s = futures::stream::iter(chunks.iter().cloned().map(Ok::<Bytes, std::io::Error>));
    futures::executor::block_on(
        sse_stream::SseByteStream::new(s)
            .filter(|r| futures::future::ready(matches!(r, Ok(e) if e.data.is_some())))
            .count(),
    )
}

pub fn eventsource_stream_peer(chunks: &[Bytes]) -> usize {
    use eventsource_stream::Eventsource;
    let s = futures::stream::iter(chunks.iter().cloned().map(Ok::<Bytes, Infallible>));
    futures::executor::block_on(
        s.eventsource()
            .filter(|r| futures::future::ready(r.is_ok()))
            .count(),
    )
}
