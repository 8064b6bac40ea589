//! The rewriters as a tower [`Layer`](tower_layer::Layer) (feature `tower`): a Rust
//! gateway that already forwards requests with a tower service (hyper-util's client, an
//! axum handler's inner service, reqwest through a tower adapter) gets the fixes the
//! proxy applies by adding one layer.
//!
//! The layer wraps a service whose responses come from the upstream. For each request it
//! picks the API by the request's path ([`Api::from_path`]; or one fixed with
//! [`RewriteLayer::api`]); each successful `text/event-stream` response of that API gets
//! its body wrapped in a [`RewriteBody`], which rewrites the upstream's bytes frame by
//! frame as they arrive (push-based, no task, nothing buffered beyond what the rewriter
//! holds). Any other response passes as it is (its body wrapped, untouched). The body's
//! `content-length` is removed from a rewritten response (its length changes).
//!
//! Calls written into the text are taken out when the request carries a [`TextSetting`]
//! in its extensions: the gateway, which holds the request's body, puts
//! `TextSetting::new(mode, declared_tools(&body))` there
//! ([`super::text::declared_tools`]).
//!
//! An error of the upstream body ends the client's stream as a cut: the API's error event
//! (`stream_interrupted`, which the SDKs raise on) is the body's last bytes, as in the
//! proxy. (The error itself is not passed on after it: an HTTP server aborts the
//! connection on a body error and the event would be lost.) A body the layer does not
//! rewrite passes its errors on as they come.
//!
//! ```
//! use toolstream::rewrite::tower::RewriteLayer;
//! use tower_layer::Layer;
//!
//! // Any service of `http::Request<B>` to `http::Response<Body>`; here one answering a
//! // glued call in one chunk.
//! #[derive(Clone)]
//! struct Upstream;
//! impl tower_service::Service<http::Request<()>> for Upstream {
//!     type Response = http::Response<String>;
//!     type Error = std::convert::Infallible;
//!     type Future = std::future::Ready<Result<Self::Response, Self::Error>>;
//!     fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
//!         std::task::Poll::Ready(Ok(()))
//!     }
//!     fn call(&mut self, _: http::Request<()>) -> Self::Future {
//!         let body = concat!(
//!             r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","#,
//!             r#""type":"function","function":{"name":"f","arguments":"{\"x\":1}{\"x\":2}"}}]},"#,
//!             r#""finish_reason":null}]}"#, "\n\ndata: [DONE]\n\n");
//!         std::future::ready(Ok(http::Response::builder()
//!             .header("content-type", "text/event-stream")
//!             .body(body.to_string())
//!             .unwrap()))
//!     }
//! }
//! let mut service = RewriteLayer::new().layer(Upstream);
//! let request = http::Request::post("/v1/chat/completions").body(()).unwrap();
//! // In a gateway: `let response = service.call(request).await?;` and the response goes
//! // to the client. Here the futures are ready at once: polled by hand.
//! use std::future::Future;
//! use std::task::{Context, Poll, Waker};
//! use tower_service::Service;
//! let mut cx = Context::from_waker(Waker::noop());
//! let mut call = std::pin::pin!(service.call(request));
//! let Poll::Ready(Ok(response)) = call.as_mut().poll(&mut cx) else { panic!() };
//! let mut body = std::pin::pin!(response.into_body());
//! let mut client = String::new();
//! while let Poll::Ready(Some(Ok(frame))) = http_body::Body::poll_frame(body.as_mut(), &mut cx) {
//!     client.push_str(std::str::from_utf8(frame.data_ref().unwrap()).unwrap());
//! }
//! // Two calls, one chunk each.
//! assert!(client.contains(r#""arguments":"{\"x\":1}""#));
//! assert!(client.contains(r#""arguments":"{\"x\":2}""#));
//! assert!(client.ends_with("data: [DONE]\n\n"));
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};

use super::text::TextSetting;
use super::{Api, Continuation, Counts, Rewriter};
use crate::classify::Provider;

/// What is called when a rewritten body ends: the counts, and the calls a Responses
/// rewriter made (for a follow-up request, [`super::continue_request`]).
pub type OnFinish = Arc<dyn Fn(Counts, Option<Continuation>) + Send + Sync>;

/// The rewriters as a tower layer. See the [module](self) docs.
#[derive(Clone, Default)]
pub struct RewriteLayer {
    config: Config,
}

#[derive(Clone)]
struct Config {
    api: Option<Api>,
    provider: Provider,
    keep_finish_reason: bool,
    on_finish: Option<OnFinish>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            api: None,
            provider: Provider::Openai,
            keep_finish_reason: false,
            on_finish: None,
        }
    }
}

impl std::fmt::Debug for RewriteLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RewriteLayer")
            .field("api", &self.config.api)
            .field("provider", &self.config.provider)
            .field("keep_finish_reason", &self.config.keep_finish_reason)
            .finish_non_exhaustive()
    }
}

impl RewriteLayer {
    /// A layer that picks the API by each request's path, classifies chat errors as
    /// OpenAI's, and makes a chat `stop` `tool_calls` when calls were delivered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every response is of `api`, whatever the path.
    pub fn api(mut self, api: Api) -> Self {
        self.config.api = Some(api);
        self
    }

    /// Whose errors the chat rewriter classifies (the upstream's provider).
    pub fn provider(mut self, provider: Provider) -> Self {
        self.config.provider = provider;
        self
    }

    /// Leave a chat `stop` as it is when calls were delivered.
    pub fn keep_finish_reason(mut self, keep: bool) -> Self {
        self.config.keep_finish_reason = keep;
        self
    }

    /// Called when a rewritten body ends, with what was counted and the calls made (for
    /// logs, metrics, or a follow-up's [`super::continue_request`]).
    pub fn on_finish(
        mut self,
        f: impl Fn(Counts, Option<Continuation>) + Send + Sync + 'static,
    ) -> Self {
        self.config.on_finish = Some(Arc::new(f));
        self
    }
}

impl<S> tower_layer::Layer<S> for RewriteLayer {
    type Service = RewriteService<S>;

    fn layer(&self, inner: S) -> RewriteService<S> {
        RewriteService {
            inner,
            config: self.config.clone(),
        }
    }
}

/// The service [`RewriteLayer`] makes.
#[derive(Clone)]
pub struct RewriteService<S> {
    inner: S,
    config: Config,
}

impl<S: std::fmt::Debug> std::fmt::Debug for RewriteService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RewriteService")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<S, ReqBody, ResBody> tower_service::Service<http::Request<ReqBody>> for RewriteService<S>
where
    S: tower_service::Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    ResBody: Body,
{
    type Response = http::Response<RewriteBody<ResBody>>;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<ReqBody>) -> Self::Future {
        let api = self.config.api.or_else(|| Api::from_path(req.uri().path()));
        let text = req.extensions().get::<TextSetting>().cloned();
        ResponseFuture {
            inner: Box::pin(self.inner.call(req)),
            api,
            text,
            config: self.config.clone(),
        }
    }
}

/// The future of [`RewriteService`]'s response.
#[must_use = "futures do nothing unless polled"]
pub struct ResponseFuture<F> {
    inner: Pin<Box<F>>,
    api: Option<Api>,
    text: Option<TextSetting>,
    config: Config,
}

impl<F, B, E> Future for ResponseFuture<F>
where
    F: Future<Output = Result<http::Response<B>, E>>,
    B: Body,
{
    type Output = Result<http::Response<RewriteBody<B>>, E>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let response = match this.inner.as_mut().poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Ready(Ok(r)) => r,
        };
        let (mut parts, body) = response.into_parts();
        let rewriter = this.api.filter(|_| rewritable(&parts)).map(|api| {
            Rewriter::new(
                api,
                this.config.provider,
                this.config.keep_finish_reason,
                this.text.take(),
            )
        });
        if rewriter.is_some() {
            parts.headers.remove(http::header::CONTENT_LENGTH);
        }
        let body = RewriteBody {
            inner: Box::pin(body),
            rewriter,
            out: BytesMut::new(),
            done: false,
            trailers: None,
            on_finish: this.config.on_finish.clone(),
        };
        Poll::Ready(Ok(http::Response::from_parts(parts, body)))
    }
}

/// A successful event stream, not compressed (a compressed body cannot be read; it
/// passes as it is).
fn rewritable(parts: &http::response::Parts) -> bool {
    let streaming = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.trim_start().starts_with("text/event-stream"));
    let encoded = parts
        .headers
        .get(http::header::CONTENT_ENCODING)
        .is_some_and(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"));
    parts.status.is_success() && streaming && !encoded
}

/// A response body, rewritten frame by frame when its response is one the layer
/// rewrites, else passed as it is. See the [module](self) docs.
pub struct RewriteBody<B: Body> {
    inner: Pin<Box<B>>,
    rewriter: Option<Rewriter>,
    out: BytesMut,
    /// The inner body failed: the rewriter's error event was its last bytes.
    done: bool,
    /// The inner body's trailers, handed out after the rewriter's last bytes.
    trailers: Option<http::HeaderMap>,
    on_finish: Option<OnFinish>,
}

// Its fields are never pinned (the inner body is, in its own box).
impl<B: Body> Unpin for RewriteBody<B> {}

impl<B: Body> RewriteBody<B> {
    /// A body passed as it is.
    pub fn passthrough(body: B) -> Self {
        RewriteBody {
            inner: Box::pin(body),
            rewriter: None,
            out: BytesMut::new(),
            done: false,
            trailers: None,
            on_finish: None,
        }
    }

    /// A body rewritten by `rewriter`.
    pub fn rewriting(body: B, rewriter: Rewriter) -> Self {
        RewriteBody {
            rewriter: Some(rewriter),
            ..Self::passthrough(body)
        }
    }

    fn finish(&mut self, cut: Option<&str>) {
        if let Some(r) = self.rewriter.take() {
            let (counts, cont) = r.finish(cut, &mut self.out);
            if let Some(f) = &self.on_finish {
                f(counts, cont);
            }
        }
    }
}

impl<B> Body for RewriteBody<B>
where
    B: Body,
    B::Error: std::fmt::Display,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = &mut *self;
        loop {
            if !this.out.is_empty() {
                return Poll::Ready(Some(Ok(Frame::data(this.out.split().freeze()))));
            }
            if this.done {
                return Poll::Ready(None);
            }
            if let Some(t) = this.trailers.take() {
                return Poll::Ready(Some(Ok(Frame::trailers(t))));
            }
            let rewriting = this.rewriter.is_some();
            match this.inner.as_mut().poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    this.finish(None);
                    if this.out.is_empty() {
                        return Poll::Ready(None);
                    }
                }
                Poll::Ready(Some(Err(e))) => {
                    if !rewriting {
                        return Poll::Ready(Some(Err(e)));
                    }
                    // The API's error event says it, and the body ends there: an error
                    // frame after it would make the server drop the connection with the
                    // event still unsent.
                    this.finish(Some(&e.to_string()));
                    this.done = true;
                }
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(mut data) => {
                        let bytes = data.copy_to_bytes(data.remaining());
                        match this.rewriter.as_mut() {
                            Some(r) => r.push(bytes, &mut this.out),
                            None => return Poll::Ready(Some(Ok(Frame::data(bytes)))),
                        }
                    }
                    Err(frame) => {
                        // Trailers end the body: passed on after what the rewriter
                        // still had.
                        if let Ok(trailers) = frame.into_trailers() {
                            this.finish(None);
                            this.trailers = Some(trailers);
                        }
                    }
                },
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.rewriter.is_none()
            && self.out.is_empty()
            && self.trailers.is_none()
            && (self.done || self.inner.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        if self.rewriter.is_some() || !self.out.is_empty() {
            SizeHint::default()
        } else {
            self.inner.size_hint()
        }
    }
}
