//! One rewriter for whichever API a response speaks, and the same over an async stream.

use bytes::{Bytes, BytesMut};

use super::text::TextSetting;
use super::{AnthropicRewriter, Continuation, Counts, OpenAiRewriter, ResponsesRewriter};
use crate::classify::Provider;

/// The API a response speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Api {
    /// OpenAI chat completions (`/v1/chat/completions`) and the servers that speak it.
    Chat,
    /// Anthropic Messages (`/v1/messages`).
    Messages,
    /// The OpenAI Responses API (`/v1/responses`).
    Responses,
}

impl Api {
    /// `chat`, `messages` (or `anthropic`), `responses`.
    pub fn from_name(name: &str) -> Option<Api> {
        match name {
            "chat" => Some(Api::Chat),
            "messages" | "anthropic" => Some(Api::Messages),
            "responses" => Some(Api::Responses),
            _ => None,
        }
    }

    /// The API of a request path: one ending in `/chat/completions`, `/messages` or
    /// `/responses` (the query aside); `None` for any other (embeddings, models, ...).
    pub fn from_path(path: &str) -> Option<Api> {
        let path = path.split('?').next().unwrap_or(path).trim_end_matches('/');
        if path.ends_with("/chat/completions") || path == "chat/completions" {
            Some(Api::Chat)
        } else if path.ends_with("/messages") && !path.ends_with("/count_tokens/messages") {
            Some(Api::Messages)
        } else if path.ends_with("/responses") {
            Some(Api::Responses)
        } else {
            None
        }
    }
}

/// The rewriter of one streamed response, whichever its API: [`OpenAiRewriter`],
/// [`AnthropicRewriter`] or [`ResponsesRewriter`] behind one interface.
///
/// ```
/// use bytes::{Bytes, BytesMut};
/// use toolstream::classify::Provider;
/// use toolstream::rewrite::{Api, Rewriter};
///
/// let mut r = Rewriter::new(Api::Chat, Provider::Openai, false, None);
/// let mut out = BytesMut::new();
/// r.push(Bytes::from_static(br#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"x\":1}{\"x\":2}"}}]},"finish_reason":null}]}
///
/// "#), &mut out);
/// r.push(Bytes::from_static(b"data: [DONE]\n\n"), &mut out);
/// let (counts, _) = r.finish(None, &mut out);
/// assert_eq!((counts.calls, counts.splits), (2, 1));
/// ```
pub enum Rewriter {
    /// OpenAI chat completions.
    Chat(Box<OpenAiRewriter>),
    /// Anthropic Messages.
    Messages(Box<AnthropicRewriter>),
    /// The Responses API.
    Responses(Box<ResponsesRewriter>),
}

impl Rewriter {
    /// A rewriter for one response of `api`. `provider` names whose errors the chat
    /// rewriter classifies (the others know theirs); `keep_finish_reason` leaves a chat
    /// `stop` as it is when calls were delivered; `text` takes the calls written into the
    /// text out of it.
    pub fn new(
        api: Api,
        provider: Provider,
        keep_finish_reason: bool,
        text: Option<TextSetting>,
    ) -> Self {
        match api {
            Api::Chat => Rewriter::Chat(Box::new(OpenAiRewriter::new(
                provider,
                keep_finish_reason,
                text,
            ))),
            Api::Messages => Rewriter::Messages(Box::new(AnthropicRewriter::with_text(text))),
            Api::Responses => Rewriter::Responses(Box::new(ResponsesRewriter::with_text(text))),
        }
    }

    /// This rewriter repairing closed-form mistakes in failed calls' arguments
    /// ([`crate::repair`]): a repaired call goes out valid, after an SSE comment that lists
    /// every change. Call before any byte is pushed.
    pub fn with_repair(self, repair: crate::repair::RepairPolicy) -> Self {
        self.with_call_repair(&super::CallRepair {
            policy: repair,
            schemas: None,
        })
    }

    /// [`Rewriter::with_repair`], and with the request's declared tools
    /// ([`CallRepair::schemas`](super::CallRepair)) a call that does not match its tool's
    /// schema only because a string stands where the schema says another type is coerced
    /// ([`crate::repair::coerce_call`]) when the policy allows
    /// [`coerce`](crate::repair::RepairKind::Coerce); the SSE comment lists those changes
    /// too. Call before any byte is pushed.
    pub fn with_call_repair(mut self, repair: &super::CallRepair) -> Self {
        match &mut self {
            Rewriter::Chat(r) => r.core.set_repair(repair),
            Rewriter::Messages(r) => r.core.set_repair(repair),
            Rewriter::Responses(r) => r.core.set_repair(repair),
        }
        self
    }

    /// Feed upstream bytes; what the client gets is appended to `out`.
    pub fn push(&mut self, chunk: Bytes, out: &mut BytesMut) {
        match self {
            Rewriter::Chat(r) => r.push(chunk, out),
            Rewriter::Messages(r) => r.push(chunk, out),
            Rewriter::Responses(r) => r.push(chunk, out),
        }
    }

    /// What was counted so far.
    pub fn counts(&self) -> Counts {
        match self {
            Rewriter::Chat(r) => r.counts(),
            Rewriter::Messages(r) => r.counts(),
            Rewriter::Responses(r) => r.counts(),
        }
    }

    /// The end of the upstream body (`cut`: why it was cut, when it was); the rest of what
    /// the client gets is appended to `out`. A Responses rewriter also gives the calls it
    /// made, for a follow-up request ([`super::continue_request`]).
    pub fn finish(self, cut: Option<&str>, out: &mut BytesMut) -> (Counts, Option<Continuation>) {
        match self {
            Rewriter::Chat(r) => (r.finish(cut, out), None),
            Rewriter::Messages(r) => (r.finish(cut, out), None),
            Rewriter::Responses(r) => r.finish_with_calls(cut, out),
        }
    }
}

#[cfg(feature = "futures")]
mod futures_stream {
    use super::*;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// The client's bytes from a stream of the upstream's byte chunks (feature
    /// `futures`), made by [`Rewriter::stream`]. Each chunk is rewritten as it arrives and
    /// what it gives is handed out before the next is read. An error of the inner stream
    /// ends the rewriting as a cut (the client's bytes end with the API's error event,
    /// never a clean end) and is then handed out itself; nothing is read after it.
    #[must_use = "a stream does nothing unless polled"]
    pub struct RewriteStream<S, E> {
        inner: Pin<Box<S>>,
        rewriter: Option<Rewriter>,
        out: BytesMut,
        /// The inner stream's error, handed out after the bytes its cut gave.
        error: Option<E>,
        /// What the rewriter counted, once it finished.
        done: Option<(Counts, Option<Continuation>)>,
    }

    impl Rewriter {
        /// This rewriter over an async stream of the upstream's chunks (feature
        /// `futures`): a stream of the client's bytes.
        pub fn stream<S, B, E>(self, inner: S) -> RewriteStream<S, E>
        where
            S: futures_core::Stream<Item = Result<B, E>>,
            B: Into<Bytes>,
        {
            RewriteStream {
                inner: Box::pin(inner),
                rewriter: Some(self),
                out: BytesMut::new(),
                error: None,
                done: None,
            }
        }
    }

    // Its fields are never pinned (the inner stream is, in its own box).
    impl<S, E> Unpin for RewriteStream<S, E> {}

    impl<S, E> RewriteStream<S, E> {
        /// What the rewriter counted, and the calls a Responses rewriter made, once the
        /// stream has ended (`None` before).
        pub fn outcome(&self) -> Option<&(Counts, Option<Continuation>)> {
            self.done.as_ref()
        }
    }

    impl<S, B, E> futures_core::Stream for RewriteStream<S, E>
    where
        S: futures_core::Stream<Item = Result<B, E>>,
        B: Into<Bytes>,
        E: std::fmt::Display,
    {
        type Item = Result<Bytes, E>;

        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
            let this = &mut *self;
            loop {
                if !this.out.is_empty() {
                    return Poll::Ready(Some(Ok(this.out.split().freeze())));
                }
                if let Some(e) = this.error.take() {
                    return Poll::Ready(Some(Err(e)));
                }
                let Some(r) = this.rewriter.as_mut() else {
                    return Poll::Ready(None);
                };
                match this.inner.as_mut().poll_next(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(Ok(chunk))) => r.push(chunk.into(), &mut this.out),
                    Poll::Ready(Some(Err(e))) => {
                        let r = this.rewriter.take().expect("rewriter");
                        this.done = Some(r.finish(Some(&e.to_string()), &mut this.out));
                        this.error = Some(e);
                    }
                    Poll::Ready(None) => {
                        let r = this.rewriter.take().expect("rewriter");
                        this.done = Some(r.finish(None, &mut this.out));
                    }
                }
            }
        }
    }
}

#[cfg(feature = "futures")]
pub use futures_stream::RewriteStream;
