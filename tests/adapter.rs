//! The async adapters: the same events as the sync pipeline however the body is chunked,
//! the inner stream's errors passed through in place, and nothing left running once the
//! stream is dropped (checked over a real loopback socket).

use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use proptest::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolstream::adapter::EventCodec;
use toolstream::assemble::Event;
use toolstream::pipeline::Stream;

/// A stream of chunks from a list, that records being dropped.
struct Chunks {
    items: std::collections::VecDeque<Result<Bytes, String>>,
    dropped: Arc<AtomicBool>,
    /// Return `Pending` (and wake at once) before every item, as a socket would.
    yield_first: bool,
}

impl futures_core::Stream for Chunks {
    type Item = Result<Bytes, String>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.yield_first {
            self.yield_first = false;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        self.yield_first = true;
        Poll::Ready(self.items.pop_front())
    }
}

impl Drop for Chunks {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

fn chunks(items: Vec<Result<Bytes, String>>) -> (Chunks, Arc<AtomicBool>) {
    let dropped = Arc::new(AtomicBool::new(false));
    let c = Chunks {
        items: items.into(),
        dropped: dropped.clone(),
        yield_first: false,
    };
    (c, dropped)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn sync_events(bytes: &[u8]) -> Vec<Event> {
    let mut s = Stream::new(None);
    let mut out = Vec::new();
    s.push(Bytes::copy_from_slice(bytes), &mut out);
    s.finish(&mut out);
    out
}

fn async_events(pieces: Vec<Bytes>) -> Vec<Event> {
    let (c, _) = chunks(pieces.into_iter().map(Ok).collect());
    runtime().block_on(async {
        Stream::new(None)
            .events(c)
            .map(|e| e.unwrap())
            .collect::<Vec<_>>()
            .await
    })
}

fn cut(bytes: &[u8], cuts: &[usize]) -> Vec<Bytes> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    at.push(0);
    at.push(bytes.len());
    at.sort_unstable();
    at.windows(2)
        .map(|w| Bytes::copy_from_slice(&bytes[w[0]..w[1]]))
        .collect()
}

fn captures() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/captures");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if matches!(ext, "sse" | "ndjson" | "eventstream") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, std::fs::read(&path).unwrap()));
        }
    }
    assert!(out.len() >= 10, "only {} captures", out.len());
    out
}

#[test]
fn every_capture_gives_the_sync_events_through_the_adapter_at_every_chunk_size() {
    for (name, bytes) in captures() {
        let want = sync_events(&bytes);
        for size in [1, 7, 64, bytes.len()] {
            let pieces = bytes.chunks(size).map(Bytes::copy_from_slice).collect();
            assert_eq!(async_events(pieces), want, "{name} at {size}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_cuts_through_the_adapter_change_nothing(
        which in 0usize..64,
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let all = captures();
        let (name, bytes) = &all[which % all.len()];
        prop_assert_eq!(async_events(cut(bytes, &cuts)), sync_events(bytes), "{}", name);
    }
}

#[test]
fn an_error_of_the_inner_stream_comes_through_in_its_place() {
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/captures/openai-parallel-calls.sse"),
    )
    .unwrap();
    let (a, b) = bytes.split_at(bytes.len() / 2);
    let (c, _) = chunks(vec![
        Ok(Bytes::copy_from_slice(a)),
        Err("connection reset".to_string()),
        Ok(Bytes::copy_from_slice(b)),
    ]);
    let got: Vec<Result<Event, String>> = runtime().block_on(Stream::new(None).events(c).collect());
    let err_at = got.iter().position(Result::is_err).expect("the error");
    assert_eq!(got[err_at], Err("connection reset".to_string()));
    // The events of the first half before it, of the second after it, and in all the same
    // events as the whole stream without the error.
    let before: Vec<Event> = got[..err_at].iter().cloned().map(Result::unwrap).collect();
    let mut first = Stream::new(None);
    let mut want_before = Vec::new();
    first.push(Bytes::copy_from_slice(a), &mut want_before);
    assert_eq!(before, want_before);
    let all: Vec<Event> = got.into_iter().filter_map(Result::ok).collect();
    assert_eq!(all, sync_events(&bytes));
}

#[test]
fn dropping_the_events_drops_the_inner_stream() {
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/captures/openai-parallel-calls.sse"),
    )
    .unwrap();
    let pieces = bytes
        .chunks(16)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let (c, dropped) = chunks(pieces);
    runtime().block_on(async {
        let mut events = Stream::new(None).events(c);
        let first = events.next().await;
        assert!(matches!(first, Some(Ok(_))), "{first:?}");
        assert!(!dropped.load(Ordering::SeqCst));
        drop(events);
    });
    assert!(dropped.load(Ordering::SeqCst));
}

/// Over a real socket: a server streams an endless body; the client reads two events and
/// drops its stream. The connection closes, and the server's next write fails: nothing of
/// the client keeps reading. (Bounded: the server gives up after 10 s, which fails the test.)
#[test]
fn dropping_a_reqwest_stream_closes_the_connection() {
    runtime().block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = vec![0u8; 4096];
            let _ = socket.read(&mut head).await.unwrap();
            let head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
            socket.write_all(head).await.unwrap();
            let event = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n";
            let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
            while tokio::time::Instant::now() < deadline {
                let chunk = [format!("{:x}\r\n", event.len()).as_bytes(), event, b"\r\n"].concat();
                if socket.write_all(&chunk).await.is_err() {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            false
        });
        let response = reqwest::get(&url).await.unwrap();
        let mut events = Stream::new(None).events(response.bytes_stream());
        for _ in 0..2 {
            let e = events.next().await.unwrap().unwrap();
            assert!(matches!(e, Event::Text { .. }), "{e:?}");
        }
        drop(events);
        assert!(server.await.unwrap(), "the connection stayed open");
    });
}

#[test]
fn the_codec_gives_the_sync_events() {
    use tokio_util::codec::FramedRead;
    for (name, bytes) in captures() {
        let want = sync_events(&bytes);
        let got: Vec<Event> = runtime().block_on(async {
            FramedRead::new(&bytes[..], EventCodec::new(Stream::new(None)))
                .map(|e| e.unwrap())
                .collect()
                .await
        });
        assert_eq!(got, want, "{name}");
    }
}
