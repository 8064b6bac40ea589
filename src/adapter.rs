//! The pipeline behind async interfaces: [`Events`] turns a stream of byte chunks (a
//! `reqwest::Response::bytes_stream()`, a hyper body's frames, anything that implements
//! `futures_core::Stream<Item = Result<impl Into<Bytes>, E>>`) into a stream of
//! [`Event`]s (feature `futures`), and [`EventCodec`] is the same as a
//! `tokio_util::codec::Decoder` for a `FramedRead` over any `AsyncRead` (feature
//! `tokio-util`).
//!
//! Both are thin: each chunk is pushed as it arrives and the events it completed are
//! handed out before the next chunk is read, so a call is out the moment its arguments
//! object closed, not at the end of the stream. Dropping either drops the pipeline: no
//! task, no thread, nothing keeps running.
//!
//! ```
//! # #[cfg(feature = "futures")] {
//! use bytes::Bytes;
//! use toolstream::assemble::Event;
//! use toolstream::pipeline::Stream;
//!
//! // Any stream of chunks; here two, from a vector.
//! struct Chunks(Vec<Result<Bytes, std::io::Error>>);
//! impl futures_core::Stream for Chunks {
//!     type Item = Result<Bytes, std::io::Error>;
//!     fn poll_next(
//!         mut self: std::pin::Pin<&mut Self>,
//!         _: &mut std::task::Context<'_>,
//!     ) -> std::task::Poll<Option<Self::Item>> {
//!         std::task::Poll::Ready((!self.0.is_empty()).then(|| self.0.remove(0)))
//!     }
//! }
//! let chunks = Chunks(vec![
//!     Ok(Bytes::from_static(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n")),
//!     Ok(Bytes::from_static(b"data: [DONE]\n\n")),
//! ]);
//! let mut events = Stream::new(None).events(chunks);
//! // In an async fn: `while let Some(event) = events.next().await { ... }`
//! # let _ = &mut events;
//! # }
//! ```

use std::collections::VecDeque;

use bytes::Bytes;

use crate::assemble::Event;
use crate::pipeline::Stream;

/// What was decoded and not yet handed out, and the pipeline until its end.
#[derive(Debug)]
struct Queue {
    stream: Option<Stream>,
    ready: VecDeque<Event>,
    scratch: Vec<Event>,
}

impl Queue {
    fn new(stream: Stream) -> Self {
        Queue {
            stream: Some(stream),
            ready: VecDeque::new(),
            scratch: Vec::new(),
        }
    }

    fn push(&mut self, chunk: Bytes) {
        if let Some(s) = self.stream.as_mut() {
            s.push(chunk, &mut self.scratch);
            self.ready.extend(self.scratch.drain(..));
        }
    }

    /// Runs `finish` once; false if it already ran.
    fn finish(&mut self) -> bool {
        match self.stream.take() {
            Some(s) => {
                s.finish(&mut self.scratch);
                self.ready.extend(self.scratch.drain(..));
                true
            }
            None => false,
        }
    }
}

#[cfg(feature = "futures")]
mod futures_stream {
    use super::*;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A stream of [`Event`]s from a stream of byte chunks: see the [module](super)
    /// docs. Made by [`Stream::events`].
    ///
    /// An error of the inner stream is passed through as it is, in its place among the
    /// events; the inner stream is then polled on, as its own contract says. When it
    /// ends, the pipeline's [`Stream::finish`] runs and its events (the calls cut off,
    /// what was dropped, [`Event::End`]) come last.
    #[derive(Debug)]
    #[must_use = "a stream does nothing unless polled"]
    pub struct Events<S> {
        inner: Pin<Box<S>>,
        queue: Queue,
    }

    impl Stream {
        /// This pipeline over an async stream of chunks (feature `futures`).
        pub fn events<S, B, E>(self, inner: S) -> Events<S>
        where
            S: futures_core::Stream<Item = Result<B, E>>,
            B: Into<Bytes>,
        {
            Events {
                // Boxed once, so that any stream works (no `Unpin` asked) with no unsafe.
                inner: Box::pin(inner),
                queue: Queue::new(self),
            }
        }
    }

    impl<S, B, E> futures_core::Stream for Events<S>
    where
        S: futures_core::Stream<Item = Result<B, E>>,
        B: Into<Bytes>,
    {
        type Item = Result<Event, E>;

        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            let this = &mut *self;
            loop {
                if let Some(e) = this.queue.ready.pop_front() {
                    return Poll::Ready(Some(Ok(e)));
                }
                if this.queue.stream.is_none() {
                    return Poll::Ready(None);
                }
                match this.inner.as_mut().poll_next(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(Ok(chunk))) => this.queue.push(chunk.into()),
                    Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e))),
                    Poll::Ready(None) => {
                        this.queue.finish();
                    }
                }
            }
        }

        fn size_hint(&self) -> (usize, Option<usize>) {
            let n = self.queue.ready.len();
            (
                n,
                if self.queue.stream.is_none() {
                    Some(n)
                } else {
                    None
                },
            )
        }
    }
}

#[cfg(feature = "futures")]
pub use futures_stream::Events;

#[cfg(feature = "tokio-util")]
mod codec {
    use super::*;
    use bytes::BytesMut;

    /// The pipeline as a `tokio_util::codec::Decoder` (feature `tokio-util`): every byte
    /// read is pushed, events come out one per `decode` call, and at the end of the input
    /// `decode_eof` runs the pipeline's `finish` and hands out what it adds.
    ///
    /// ```
    /// # #[cfg(feature = "tokio-util")] {
    /// use tokio_util::codec::FramedRead;
    /// use toolstream::adapter::EventCodec;
    /// use toolstream::pipeline::Stream;
    ///
    /// let input: &[u8] = b"data: [DONE]\n\n"; // any AsyncRead: a socket, a file, a body
    /// let events = FramedRead::new(input, EventCodec::new(Stream::new(None)));
    /// # let _ = events;
    /// # }
    /// ```
    #[derive(Debug)]
    pub struct EventCodec {
        queue: Queue,
    }

    impl EventCodec {
        /// A codec around this pipeline.
        pub fn new(stream: Stream) -> Self {
            EventCodec {
                queue: Queue::new(stream),
            }
        }
    }

    impl tokio_util::codec::Decoder for EventCodec {
        type Item = Event;
        type Error = std::io::Error;

        fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Event>, std::io::Error> {
            if !src.is_empty() {
                self.queue.push(src.split().freeze());
            }
            Ok(self.queue.ready.pop_front())
        }

        fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Event>, std::io::Error> {
            if let Some(e) = self.decode(src)? {
                return Ok(Some(e));
            }
            self.queue.finish();
            Ok(self.queue.ready.pop_front())
        }
    }
}

#[cfg(feature = "tokio-util")]
pub use codec::EventCodec;
