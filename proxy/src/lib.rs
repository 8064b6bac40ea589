//! `toolstream proxy`: an HTTP proxy between an agent and its LLM provider.
//!
//! Point the agent's base URL at it. OpenAI chat completions (streaming and not) and
//! Anthropic messages are rewritten through toolstream's pipeline: each tool call goes to
//! the client whole, validated, the moment its arguments close; glued calls are split,
//! duplicates dropped, failed calls forwarded as the provider sent them and annotated. The
//! request's history is repaired before it is forwarded (arguments that are not one JSON
//! object are wrapped losslessly), and every error the upstream sends is forwarded with the
//! classifier's verdict in headers. Everything else passes through.

#![deny(missing_docs)]

pub mod rewrite;
pub mod text;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, Semaphore};
use toolstream::classify::{classify_response, Action, Policy, Provider, Verdict};

use rewrite::{AnthropicRewriter, Counts, OpenAiRewriter};
use text::{declared_tools, TextCalls, TextSetting};

/// What the proxy is told.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where requests go: `scheme://host[:port][/prefix]`; the request's path is appended.
    pub upstream: Uri,
    /// Who the upstream is, for the classifier (`None`: OpenAI for OpenAI paths, Anthropic
    /// for `/messages`).
    pub provider: Option<Provider>,
    /// Keep the provider's `stop` when calls were delivered (default: `tool_calls`).
    pub keep_finish_reason: bool,
    /// Repair the request's history before forwarding it (default on).
    pub repair_requests: bool,
    /// Take the calls a model wrote into the text of OpenAI chat content out of it, as
    /// tool calls (default off); only calls to the tools the request declared.
    pub text_calls: TextCalls,
    /// The largest request body taken.
    pub max_request_bytes: usize,
    /// The largest error or non-streaming body read to rewrite or classify.
    pub max_response_bytes: usize,
    /// Streams served at once; past it, a 503 the classifier calls `overloaded`.
    pub max_streams: usize,
    /// To connect to the upstream.
    pub connect_timeout: Duration,
    /// From sending the request to the response's head.
    pub first_byte_timeout: Duration,
    /// Between two pieces of a response body.
    pub idle_timeout: Duration,
}

impl Config {
    /// The defaults, for this upstream.
    pub fn new(upstream: Uri) -> Self {
        Config {
            upstream,
            provider: None,
            keep_finish_reason: false,
            repair_requests: true,
            text_calls: TextCalls::Off,
            max_request_bytes: 32 << 20,
            max_response_bytes: 16 << 20,
            max_streams: 1024,
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(300),
            idle_timeout: Duration::from_secs(300),
        }
    }
}

/// Pieces of a rewritten body in flight to the client: a slow client makes the proxy stop
/// reading the upstream once this many wait (memory per stream stays bounded).
const CHANNEL_DEPTH: usize = 8;

/// Request bodies repaired at once: their trees are the proxy's largest allocations.
const PARSING: usize = 4;

/// The most of an upstream frame rewritten before its output is sent.
const PIECE: usize = 16 << 10;

type HttpsClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

struct State {
    config: Config,
    client: HttpsClient,
    streams: Arc<Semaphore>,
    /// Request bodies read as trees at once (see `handle`).
    parsing: Semaphore,
    next_id: AtomicU64,
}

/// Serve on `listener` until the task is dropped.
pub async fn serve(listener: TcpListener, config: Config) -> std::io::Result<()> {
    let mut http = HttpConnector::new();
    http.set_connect_timeout(Some(config.connect_timeout));
    http.enforce_http(false);
    http.set_nodelay(true);
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_webpki_roots()
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    let client = Client::builder(TokioExecutor::new()).build(https);
    let state = Arc::new(State {
        streams: Arc::new(Semaphore::new(config.max_streams)),
        parsing: Semaphore::new(PARSING),
        config,
        client,
        next_id: AtomicU64::new(1),
    });
    loop {
        let (socket, peer) = listener.accept().await?;
        let _ = socket.set_nodelay(true);
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let state = state.clone();
                async move { Ok::<_, Infallible>(handle(state, req, peer).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(socket), service);
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection ended");
            }
        });
    }
}

/// What an endpoint is, for the rewriting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Chat,
    Messages,
    Responses,
    Other,
}

fn kind(method: &Method, path: &str) -> Kind {
    if method != Method::POST {
        return Kind::Other;
    }
    if path.ends_with("/chat/completions") {
        Kind::Chat
    } else if path.ends_with("/messages") {
        Kind::Messages
    } else if path.ends_with("/responses") {
        Kind::Responses
    } else {
        Kind::Other
    }
}

async fn handle(state: Arc<State>, req: Request<Incoming>, peer: SocketAddr) -> Response<Body> {
    let id = state.next_id.fetch_add(1, Ordering::Relaxed);
    let start = Instant::now();
    if req.method() == Method::GET && req.uri().path() == "/healthz" {
        return plain(StatusCode::OK, "ok\n");
    }
    let path = req.uri().path().to_string();
    let kind = kind(req.method(), &path);
    let provider = state.config.provider.unwrap_or(match kind {
        Kind::Messages => Provider::Anthropic,
        _ => Provider::Openai,
    });
    let Ok(permit) = state.streams.clone().try_acquire_owned() else {
        tracing::warn!(id, %path, "too many streams");
        return local_error(
            StatusCode::SERVICE_UNAVAILABLE,
            provider,
            "the proxy serves its maximum of concurrent streams",
            Some(1),
        );
    };
    let (parts, body) = req.into_parts();
    let limit = state.config.max_request_bytes;
    let body = match read_limited(body, limit, state.config.idle_timeout).await {
        Ok(b) => b,
        Err(e) => {
            return local_error(StatusCode::PAYLOAD_TOO_LARGE, provider, &e, None);
        }
    };
    // The request's history, repaired.
    let mut repairs = Vec::new();
    // Only a body with calls in its history is read as a tree (a tree of an attacker's
    // numbers costs many times their bytes), and only a few at once: memory for repairs is
    // bounded whatever arrives. Without repairs the body goes out byte for byte.
    let has_calls = ["\"tool_calls\"", "\"tool_use\"", "\"function_call\""]
        .iter()
        .any(|k| memchr::memmem::find(&body, k.as_bytes()).is_some());
    let body = if state.config.repair_requests && kind != Kind::Other && has_calls {
        let _parsing = state.parsing.acquire().await;
        let raw = body.clone();
        // Off the executor's threads: a large body takes milliseconds to read.
        let parsed = tokio::task::spawn_blocking(move || {
            serde_json::from_slice::<serde_json::Value>(&raw)
                .ok()
                .map(|mut v| {
                    let found = toolstream::request::repair(&mut v);
                    (v.to_string(), found)
                })
        })
        .await
        .ok()
        .flatten();
        match parsed {
            Some((text, found)) if !found.is_empty() => {
                repairs = found;
                Bytes::from(text)
            }
            _ => body,
        }
    } else {
        body
    };
    // The tools the request declared: the allow-list of calls taken out of the text.
    let text = if state.config.text_calls != TextCalls::Off
        && kind == Kind::Chat
        && memchr::memmem::find(&body, b"\"tools\"").is_some()
    {
        let raw = body.clone();
        let tools = tokio::task::spawn_blocking(move || declared_tools(&raw))
            .await
            .unwrap_or_default();
        TextSetting::new(state.config.text_calls, tools)
    } else {
        None
    };
    let uri = match upstream_uri(&state.config.upstream, &parts.uri) {
        Ok(u) => u,
        Err(e) => return local_error(StatusCode::BAD_REQUEST, provider, &e, None),
    };
    let mut up = Request::builder().method(parts.method.clone()).uri(uri);
    for (name, value) in &parts.headers {
        if !hop_by_hop(name)
            && name != http::header::HOST
            && name != http::header::CONTENT_LENGTH
            && name != http::header::ACCEPT_ENCODING
        {
            up = up.header(name, value);
        }
    }
    // The body is read to rewrite it: not compressed.
    up = up.header(http::header::ACCEPT_ENCODING, "identity");
    let up = match up.body(Full::new(body)) {
        Ok(r) => r,
        Err(e) => return local_error(StatusCode::BAD_REQUEST, provider, &e.to_string(), None),
    };
    let sent =
        tokio::time::timeout(state.config.first_byte_timeout, state.client.request(up)).await;
    let response = match sent {
        Err(_) => {
            tracing::warn!(id, %path, "upstream first-byte timeout");
            return local_error(
                StatusCode::GATEWAY_TIMEOUT,
                provider,
                "upstream timed out before answering",
                None,
            );
        }
        Ok(Err(e)) => {
            let v = toolstream::classify::classify_error(&e, 0, &Policy::default());
            tracing::warn!(id, %path, verdict = %v, "upstream unreachable");
            return local_error(StatusCode::BAD_GATEWAY, provider, &v.message, None);
        }
        Ok(Ok(r)) => r,
    };
    let status = response.status();
    let (up_parts, up_body) = response.into_parts();
    let mut headers = HeaderMap::new();
    for (name, value) in &up_parts.headers {
        if !hop_by_hop(name) && name != http::header::CONTENT_LENGTH {
            headers.append(name.clone(), value.clone());
        }
    }
    if !repairs.is_empty() {
        let text: Vec<String> = repairs.iter().map(|r| r.to_string()).collect();
        if let Ok(v) = HeaderValue::from_str(&truncate(&text.join("; "), 4000)) {
            headers.insert("toolstream-repaired", v);
        }
    }
    let streaming = up_parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    let log = Log {
        id,
        peer,
        path: path.clone(),
        status: status.as_u16(),
        repairs: repairs.len(),
        start,
    };
    if status.as_u16() >= 400 {
        let body = read_limited(
            up_body,
            state.config.max_response_bytes,
            state.config.idle_timeout,
        )
        .await
        .unwrap_or_default();
        let v = classify_response(
            provider,
            status.as_u16(),
            &up_parts.headers,
            &body,
            0,
            &Policy::default(),
        );
        annotate(&mut headers, &v);
        log.done(Counts::default(), Some(&v));
        return respond(status, headers, Body::full(body));
    }
    if streaming && matches!(kind, Kind::Chat | Kind::Messages) {
        let rewriter = match kind {
            Kind::Chat => Rewriter::OpenAi(OpenAiRewriter::new(
                provider,
                state.config.keep_finish_reason,
                text,
            )),
            _ => Rewriter::Anthropic(AnthropicRewriter::new()),
        };
        let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
        let idle = state.config.idle_timeout;
        tokio::spawn(async move {
            let counts = pump(up_body, rewriter, tx, idle).await;
            log.done(counts, None);
            drop(permit);
        });
        return respond(status, headers, Body::channel(rx));
    }
    if kind == Kind::Chat && !streaming {
        let body = match read_limited(
            up_body,
            state.config.max_response_bytes,
            state.config.idle_timeout,
        )
        .await
        {
            Ok(b) => b,
            Err(e) => return local_error(StatusCode::BAD_GATEWAY, provider, &e, None),
        };
        let (body, counts) =
            rewrite::rewrite_completion(&body, state.config.keep_finish_reason, text.as_ref())
                .unwrap_or((body, Counts::default()));
        log.done(counts, None);
        return respond(status, headers, Body::full(body));
    }
    // Everything else streams through as it is.
    let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
    let idle = state.config.idle_timeout;
    tokio::spawn(async move {
        let counts = pump(up_body, Rewriter::None, tx, idle).await;
        log.done(counts, None);
        drop(permit);
    });
    respond(status, headers, Body::channel(rx))
}

/// The request's facts, logged when the response is done.
struct Log {
    id: u64,
    peer: SocketAddr,
    path: String,
    status: u16,
    repairs: usize,
    start: Instant,
}

impl Log {
    fn done(self, c: Counts, verdict: Option<&Verdict>) {
        tracing::info!(
            id = self.id,
            peer = %self.peer,
            path = %self.path,
            upstream_status = self.status,
            calls = c.calls,
            splits = c.splits,
            duplicates = c.duplicates,
            failures = c.failures,
            text_calls = c.text_calls,
            stream_errors = c.errors,
            repairs = self.repairs,
            reason = verdict.map(|v| v.reason.as_str()),
            action = verdict.map(|v| v.action.as_str()),
            ms = self.start.elapsed().as_millis() as u64,
            "done"
        );
    }
}

enum Rewriter {
    OpenAi(OpenAiRewriter),
    Anthropic(AnthropicRewriter),
    None,
}

/// Read the upstream body frame by frame, rewrite, and send each piece to the client as
/// soon as it is known. Stops when the client goes away (the send fails).
async fn pump(
    mut body: Incoming,
    mut rewriter: Rewriter,
    tx: mpsc::Sender<Bytes>,
    idle: Duration,
) -> Counts {
    let mut out = BytesMut::new();
    let mut cut: Option<String> = None;
    loop {
        let frame = match tokio::time::timeout(idle, body.frame()).await {
            Err(_) => {
                cut = Some("the upstream was idle too long".into());
                break;
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                cut = Some(e.to_string());
                break;
            }
            Ok(Some(Ok(f))) => f,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        // A large frame is rewritten a piece at a time, each piece's output sent before
        // the next is read: the client's first byte does not wait for the whole frame.
        let mut at = 0;
        while at < data.len() {
            let piece = data.slice(at..data.len().min(at + PIECE));
            at += piece.len();
            match &mut rewriter {
                Rewriter::OpenAi(r) => r.push(piece, &mut out),
                Rewriter::Anthropic(r) => r.push(piece, &mut out),
                Rewriter::None => out.extend_from_slice(&piece),
            }
            if !out.is_empty() && tx.send(out.split().freeze()).await.is_err() {
                // The client went away: dropping the upstream body closes that connection.
                return counts(&rewriter);
            }
        }
    }
    let counts = match rewriter {
        Rewriter::OpenAi(r) => r.finish(cut.as_deref(), &mut out),
        Rewriter::Anthropic(r) => r.finish(cut.as_deref(), &mut out),
        Rewriter::None => Counts::default(),
    };
    if !out.is_empty() {
        let _ = tx.send(out.freeze()).await;
    }
    counts
}

fn counts(r: &Rewriter) -> Counts {
    match r {
        Rewriter::OpenAi(r) => r.counts(),
        Rewriter::Anthropic(r) => r.counts(),
        Rewriter::None => Counts::default(),
    }
}

/// Read a whole body, at most `limit` bytes.
async fn read_limited(mut body: Incoming, limit: usize, idle: Duration) -> Result<Bytes, String> {
    let mut buf = BytesMut::new();
    loop {
        match tokio::time::timeout(idle, body.frame()).await {
            Err(_) => return Err("the body was idle too long".into()),
            Ok(None) => return Ok(buf.freeze()),
            Ok(Some(Err(e))) => return Err(e.to_string()),
            Ok(Some(Ok(f))) => {
                if let Ok(d) = f.into_data() {
                    if buf.len() + d.len() > limit {
                        return Err(format!("the body is over the limit of {limit} bytes"));
                    }
                    buf.extend_from_slice(&d);
                }
            }
        }
    }
}

fn upstream_uri(base: &Uri, request: &Uri) -> Result<Uri, String> {
    let prefix = base.path().trim_end_matches('/');
    let pq = request.path_and_query().map_or("/", |p| p.as_str());
    let mut parts = base.clone().into_parts();
    parts.path_and_query = Some(
        format!("{prefix}{pq}")
            .parse()
            .map_err(|e| format!("bad path: {e}"))?,
    );
    Uri::from_parts(parts).map_err(|e| format!("bad upstream URL: {e}"))
}

fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
    )
}

fn truncate(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The classifier's verdict as headers: `toolstream-reason`, `toolstream-action`, and the
/// provider's delay as `retry-after` (seconds, rounded up) when it gave one and the
/// response has none.
fn annotate(headers: &mut HeaderMap, v: &Verdict) {
    headers.insert(
        "toolstream-reason",
        HeaderValue::from_static(v.reason.as_str()),
    );
    headers.insert(
        "toolstream-action",
        HeaderValue::from_static(v.action.as_str()),
    );
    if let Some(d) = v.retry_after {
        if !headers.contains_key(http::header::RETRY_AFTER) {
            let secs = d.as_millis().div_ceil(1000);
            if let Ok(h) = HeaderValue::from_str(&secs.to_string()) {
                headers.insert(http::header::RETRY_AFTER, h);
            }
        }
    }
}

/// An error the proxy itself answers, in the provider's error shape, with its verdict.
fn local_error(
    status: StatusCode,
    provider: Provider,
    message: &str,
    retry_after: Option<u64>,
) -> Response<Body> {
    let body = if provider == Provider::Anthropic {
        serde_json::json!({"type": "error", "error": {"type": "api_error", "message": message}})
    } else {
        serde_json::json!({"error": {"message": message, "type": "proxy_error", "code": status.as_u16()}})
    };
    let body = Bytes::from(body.to_string());
    let mut headers = HeaderMap::new();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Some(s) = retry_after {
        headers.insert(http::header::RETRY_AFTER, HeaderValue::from(s));
    }
    let pairs: Vec<(String, String)> = headers
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let mut v = classify_response(
        provider,
        status.as_u16(),
        pairs,
        &body,
        0,
        &Policy::default(),
    );
    if status == StatusCode::BAD_GATEWAY {
        let t = toolstream::classify::classify_transport(message, 0, &Policy::default());
        v.reason = t.reason;
        v.action = t.action;
    }
    annotate(&mut headers, &v);
    if v.action == Action::Retry && retry_after.is_none() {
        headers.remove(http::header::RETRY_AFTER);
    }
    respond(status, headers, Body::full(body))
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut headers = HeaderMap::new();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain"),
    );
    respond(
        status,
        headers,
        Body::full(Bytes::from_static(text.as_bytes())),
    )
}

fn respond(status: StatusCode, headers: HeaderMap, body: Body) -> Response<Body> {
    let mut r = Response::new(body);
    *r.status_mut() = status;
    *r.headers_mut() = headers;
    r
}

/// A response body: whole, or pieces from the task that rewrites the upstream's.
pub struct Body {
    inner: Inner,
}

enum Inner {
    Full(Option<Bytes>),
    Channel(mpsc::Receiver<Bytes>),
}

impl Body {
    fn full(b: Bytes) -> Self {
        Body {
            inner: Inner::Full(Some(b)),
        }
    }
    fn channel(rx: mpsc::Receiver<Bytes>) -> Self {
        Body {
            inner: Inner::Channel(rx),
        }
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.inner {
            Inner::Full(b) => Poll::Ready(
                b.take()
                    .filter(|b| !b.is_empty())
                    .map(|b| Ok(Frame::data(b))),
            ),
            Inner::Channel(rx) => rx.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(&self.inner, Inner::Full(None))
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match &self.inner {
            Inner::Full(Some(b)) => hyper::body::SizeHint::with_exact(b.len() as u64),
            Inner::Full(None) => hyper::body::SizeHint::with_exact(0),
            Inner::Channel(_) => hyper::body::SizeHint::default(),
        }
    }
}
