//! `Rewriter::stream` (feature `futures`): the rewriter over an async stream of chunks
//! gives the same bytes as pushing the chunks by hand, and an error of the inner stream
//! ends the bytes with the API's error event, then is handed out.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use toolstream::classify::Provider;
use toolstream::rewrite::{Api, Rewriter};

struct Chunks(Vec<Result<Bytes, String>>);

impl Stream for Chunks {
    type Item = Result<Bytes, String>;
    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Poll::Ready((!self.0.is_empty()).then(|| self.0.remove(0)))
    }
}

/// Everything the stream hands out (it is always ready).
fn drain(mut s: impl Stream<Item = Result<Bytes, String>> + Unpin) -> Vec<Result<Bytes, String>> {
    let mut cx = Context::from_waker(Waker::noop());
    let mut out = Vec::new();
    while let Poll::Ready(Some(item)) = Pin::new(&mut s).poll_next(&mut cx) {
        out.push(item);
    }
    out
}

const GLUED: &str = concat!(
    r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","#,
    r#""function":{"name":"f","arguments":"{\"x\":1}{\"x\":2}"}}]},"finish_reason":null}]}"#,
    "\n\ndata: [DONE]\n\n"
);

#[test]
fn the_stream_gives_what_pushing_gives() {
    let pieces: Vec<Bytes> = GLUED
        .as_bytes()
        .chunks(5)
        .map(Bytes::copy_from_slice)
        .collect();
    let mut by_hand = BytesMut::new();
    let mut r = Rewriter::new(Api::Chat, Provider::Openai, false, None);
    for p in &pieces {
        r.push(p.clone(), &mut by_hand);
    }
    let (counts, _) = r.finish(None, &mut by_hand);
    assert_eq!((counts.calls, counts.splits), (2, 1));

    let s = Rewriter::new(Api::Chat, Provider::Openai, false, None)
        .stream(Chunks(pieces.into_iter().map(Ok).collect()));
    let got: Vec<u8> = drain(s)
        .into_iter()
        .flat_map(|b| b.expect("no error").to_vec())
        .collect();
    assert_eq!(got, by_hand.to_vec());
}

#[test]
fn an_error_of_the_inner_stream_ends_with_the_error_event_then_the_error() {
    let half = Bytes::copy_from_slice(&GLUED.as_bytes()[..40]);
    let mut s = Rewriter::new(Api::Chat, Provider::Openai, false, None)
        .stream(Chunks(vec![Ok(half), Err("reset".into())]));
    let items = drain(&mut s);
    let (last, bytes) = items.split_last().unwrap();
    assert_eq!(last, &Err("reset".to_string()));
    let text: String = bytes
        .iter()
        .map(|b| String::from_utf8(b.clone().unwrap().to_vec()).unwrap())
        .collect();
    assert!(
        text.contains("stream_interrupted") && text.contains("reset"),
        "{text}"
    );
    assert!(!text.contains("[DONE]"));
    assert!(s.outcome().is_some(), "the counts are there once it ended");
}
