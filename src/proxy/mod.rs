//! `toolstream proxy`: an HTTP proxy between an agent and its LLM provider.
//!
//! Point the agent's base URL at it. OpenAI chat completions, Responses and Anthropic
//! messages (streaming and not) are rewritten by [`crate::rewrite`]: each tool
//! call goes to
//! the client whole, validated, the moment its arguments close; glued calls are split,
//! duplicates dropped, failed calls forwarded as the provider sent them and annotated. The
//! request's history is repaired before it is forwarded (arguments that are not one JSON
//! object are wrapped losslessly), and every error the upstream sends is forwarded with the
//! classifier's verdict in headers. Everything else passes through.

#![forbid(unsafe_code)]

mod cli;
mod metrics;

pub use cli::main;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::classify::{classify_response, Action, Policy, Provider, Verdict};
use bytes::{Bytes, BytesMut};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, Semaphore};

use crate::rewrite::text::{declared_tools, TextCalls, TextSetting};
use crate::rewrite::{
    continue_request, previous_response_id, Api, Continuation, Counts, MadeCall, Rewriter,
};

/// What the proxy is told.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where requests go, in order: of those that serve the request's route
    /// ([`Upstream::routes`]), the first always, the next ones when the classifier says to
    /// fall back (see [`Config::decisions`]); each request's path is appended to the
    /// upstream's URL. Never empty ([`Config::new`] makes it one).
    pub upstreams: Vec<Upstream>,
    /// Who the upstream is, for the classifier (`None`: OpenAI for OpenAI paths, Anthropic
    /// for `/messages`).
    pub provider: Option<Provider>,
    /// Keep the provider's `stop` when calls were delivered (default: `tool_calls`).
    pub keep_finish_reason: bool,
    /// Repair the request's history before forwarding it (default on).
    pub repair_requests: bool,
    /// Repair closed-form mistakes in streamed calls' arguments (default off).
    pub repair_calls: bool,
    /// Take the calls a model wrote into the text of OpenAI chat content out of it, as
    /// tool calls (default off); only calls to the tools the request declared.
    pub text_calls: TextCalls,
    /// The largest request body taken.
    pub max_request_bytes: usize,
    /// The largest error or non-streaming body read to rewrite or classify.
    pub max_response_bytes: usize,
    /// Streams served at once; past it, a 503 the classifier calls `overloaded`. Lowered
    /// at start to fit the process's file-descriptor limit (see [`Limits`]).
    pub max_streams: usize,
    /// Client connections open at once; past it, each request on a new connection gets a
    /// 503 and the connection is closed. Lowered at start to fit the file-descriptor limit.
    pub max_connections: usize,
    /// To read a request's head (its line and headers), from the connection's first byte
    /// or the end of the request before on it.
    pub header_timeout: Duration,
    /// To connect to the upstream.
    pub connect_timeout: Duration,
    /// From sending the request to the response's head.
    pub first_byte_timeout: Duration,
    /// Between two pieces of a response body.
    pub idle_timeout: Duration,
    /// Serve `GET /metrics` and keep its counts (default on).
    pub metrics: bool,
    /// After a shutdown is asked for ([`serve_until`]): how long open requests may take
    /// to finish before each stream still open is ended with an error event (default 30 s).
    pub drain: Duration,
    /// How errors become decisions before the client has a byte of the answer:
    /// `max_retries` of a transient failure on the same upstream, `wait_budget` the longest
    /// wait for one (the classifier's [`Policy`]; default 2 and 30 s).
    pub decisions: Policy,
}

/// One upstream: where, who, and whose credentials.
#[derive(Clone)]
pub struct Upstream {
    /// `scheme://host[:port][/prefix]`.
    pub uri: Uri,
    /// Who it is, for the classifier (`None`: [`Config::provider`]).
    pub provider: Option<Provider>,
    /// A key sent in place of the client's credentials (`Authorization: Bearer`, or
    /// `x-api-key` to Anthropic), read from the environment at start; `None`: the
    /// client's own headers go through.
    pub key: Option<String>,
    /// The routes it serves, of `chat`, `messages`, `responses` and `other` (empty: all).
    pub routes: Vec<String>,
}

impl Upstream {
    fn serves(&self, kind: Kind) -> bool {
        self.routes.is_empty() || self.routes.iter().any(|r| r == kind.as_str())
    }
}

impl From<Uri> for Upstream {
    fn from(uri: Uri) -> Self {
        Upstream {
            uri,
            provider: None,
            key: None,
            routes: Vec::new(),
        }
    }
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is never printed.
        f.debug_struct("Upstream")
            .field("uri", &self.uri)
            .field("provider", &self.provider)
            .field("key", &self.key.as_ref().map(|_| "(set)"))
            .field("routes", &self.routes)
            .finish()
    }
}

impl Config {
    /// The defaults, for this upstream.
    pub fn new(upstream: Uri) -> Self {
        Config {
            upstreams: vec![Upstream::from(upstream)],
            provider: None,
            keep_finish_reason: false,
            repair_calls: false,
            repair_requests: true,
            text_calls: TextCalls::Off,
            max_request_bytes: 32 << 20,
            max_response_bytes: 16 << 20,
            max_streams: 1024,
            max_connections: 4096,
            header_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(10),
            first_byte_timeout: Duration::from_secs(300),
            idle_timeout: Duration::from_secs(300),
            decisions: Policy::default(),
            metrics: true,
            drain: Duration::from_secs(30),
        }
    }
}

/// The request's history repaired on its bytes ([`crate::request::repair_bytes`]), as
/// [`parse_off_thread`] places the work (a large body takes milliseconds).
async fn repair_history(
    state: &State,
    body: Bytes,
) -> Result<Result<crate::request::Repaired, crate::request::ReadError>, tokio::task::JoinError> {
    let len = body.len();
    parse_off_thread(state, len, move || crate::request::repair_bytes(&body)).await
}

/// `work` on a body of `len` bytes: where it is for a body of at most [`INLINE_PARSE`]
/// bytes (tens of microseconds, less than the two thread hops and their context
/// switches), else on the blocking pool under a parsing permit that goes with the work
/// (a client that leaves does not free it early).
async fn parse_off_thread<T: Send + 'static>(
    state: &State,
    len: usize,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    if len <= INLINE_PARSE {
        return Ok(work());
    }
    let parsing = state.parsing.clone().acquire_owned().await;
    tokio::task::spawn_blocking(move || {
        let _parsing = parsing;
        work()
    })
    .await
}

/// What the proxy did to the request, in the response's headers: the calls it added to a
/// follow-up, the attempts it made when more than one, the history it repaired.
fn note_request(
    headers: &mut HeaderMap,
    continued: usize,
    attempts: u32,
    repair_failed: &Option<String>,
    repairs: &[impl std::fmt::Display],
) {
    if continued > 0 {
        headers.insert("toolstream-continued", HeaderValue::from(continued as u64));
    }
    if attempts > 1 {
        headers.insert("toolstream-attempts", HeaderValue::from(attempts));
    }
    if let Some(why) = repair_failed {
        if let Ok(v) = HeaderValue::from_str(&truncate(&format!("failed: {why}"), 4000)) {
            headers.insert("toolstream-repaired", v);
        }
    } else if !repairs.is_empty() {
        let text: Vec<String> = repairs.iter().map(|r| r.to_string()).collect();
        if let Ok(v) = HeaderValue::from_str(&truncate(&text.join("; "), 4000)) {
            headers.insert("toolstream-repaired", v);
        }
    }
}

/// What a failed attempt gives the client if it is the last.
enum Failed {
    /// An error the proxy answers itself (the upstream did not answer).
    Local(StatusCode, String),
    /// The upstream's error response, its body read.
    Upstream(Box<http::response::Parts>, Bytes),
}

/// What the proxy does with a failed attempt, before the client has a byte of the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// The same upstream again, after this wait.
    Retry(Duration),
    /// The next upstream.
    Fallback,
    /// The failure goes to the client.
    Surface,
}

/// The decision on `v`, the verdict on attempt `tries` (counted from 0) on upstream `at`
/// of `upstreams`: a retry while the classifier says retry (it says fall back once
/// `max_retries` are spent), after the provider's `retry_after` or an exponential backoff
/// with jitter, capped by the wait budget; a fallback only where the classifier says one
/// helps (never for the model's own output, a content policy, a context overflow, an
/// invalid request or a request to change) and another upstream is configured; else the
/// client gets the failure with its verdict.
fn decide(
    v: &Verdict,
    tries: u32,
    at: usize,
    upstreams: usize,
    policy: &Policy,
    salt: u64,
) -> Next {
    match v.action {
        crate::classify::Action::Retry if tries < policy.max_retries => {
            let backoff = || {
                // 0.5 s, 1 s, 2 s, ... each scaled by a factor in [0.5, 1.5).
                let base = 500u64 << tries.min(10);
                let jitter = (salt ^ u64::from(tries)).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54;
                Duration::from_millis(base / 2 + base * jitter / 1024)
            };
            Next::Retry(
                v.retry_after
                    .unwrap_or_else(backoff)
                    .min(policy.wait_budget),
            )
        }
        _ if v.should_fallback && at + 1 < upstreams => Next::Fallback,
        _ => Next::Surface,
    }
}

/// Pieces of a rewritten body in flight to the client: a slow client makes the proxy stop
/// reading the upstream once this many wait (memory per stream stays bounded).
const CHANNEL_DEPTH: usize = 8;

/// Request bodies repaired at once: their trees are the proxy's largest allocations.
const PARSING: usize = 4;

/// The largest body read on the executor's thread (a request's repair or declared tools, a
/// whole response's rewrite): a larger one goes to the blocking pool under a [`PARSING`]
/// permit.
const INLINE_PARSE: usize = 16 << 10;

/// The most of an upstream frame rewritten before its output is sent.
const PIECE: usize = 16 << 10;

type HttpsClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Full<Bytes>>;

struct State {
    config: Config,
    /// One client (and pool of upstream connections) per worker: a connection made on a
    /// worker is driven by that worker's reactor, so a request reuses its own worker's.
    clients: Vec<HttpsClient>,
    streams: Arc<Semaphore>,
    /// Request bodies read as trees at once (see `handle`); each permit goes into the
    /// blocking task that reads, so a client that leaves does not free it early.
    parsing: Arc<Semaphore>,
    next_id: AtomicU64,
    /// The calls the Responses rewriter made, by response, for follow-up requests.
    made: Arc<MadeCalls>,
    /// What `GET /metrics` says (`None`: off).
    metrics: Option<Arc<metrics::Metrics>>,
    /// A shutdown was asked for: `/healthz` answers 503.
    draining: std::sync::atomic::AtomicBool,
    /// Set once the drain deadline passed: every stream still open ends with an error.
    cut_all: tokio::sync::watch::Receiver<bool>,
}

/// The calls the Responses rewriter made in recent responses (each response's
/// [`Continuation`]), so that a follow-up request that names the response in
/// `previous_response_id` and answers those calls can be given them
/// ([`crate::rewrite::continue_request`]): the upstream stored the response as it sent it,
/// without them. Bounded: the oldest are forgotten past [`MADE_RESPONSES`] responses or
/// [`MADE_BYTES`] bytes of arguments.
#[derive(Default)]
struct MadeCalls {
    held: std::sync::Mutex<(std::collections::VecDeque<Continuation>, usize)>,
}

/// The most responses whose made calls are kept.
const MADE_RESPONSES: usize = 4096;

/// The most bytes of made calls kept.
const MADE_BYTES: usize = 32 << 20;

impl MadeCalls {
    fn size(c: &Continuation) -> usize {
        c.response_id.len()
            + c.calls
                .iter()
                .map(|m| m.call_id.len() + m.name.len() + m.arguments.len() + 64)
                .sum::<usize>()
    }

    fn insert(&self, c: Continuation) {
        let size = Self::size(&c);
        if size > MADE_BYTES {
            return;
        }
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let (list, bytes) = &mut *held;
        *bytes += size;
        list.push_back(c);
        while list.len() > MADE_RESPONSES || *bytes > MADE_BYTES {
            let Some(old) = list.pop_front() else { break };
            *bytes -= Self::size(&old);
        }
    }

    fn is_empty(&self) -> bool {
        self.held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .is_empty()
    }

    fn get(&self, response_id: &str) -> Option<Vec<MadeCall>> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.0
            .iter()
            .rev()
            .find(|c| c.response_id == response_id)
            .map(|c| c.calls.clone())
    }
}

/// File descriptors kept back from connections and streams: the standard streams, the
/// listener, the runtime's own, the upstream connections kept idle for reuse
/// ([`IDLE_UPSTREAM`]) and name lookups.
pub const FD_RESERVE: u64 = 64;

/// Upstream connections kept open, idle, for reuse.
pub const IDLE_UPSTREAM: usize = 32;

/// The most of a request head (line and headers) one connection may send; past it, a 431.
pub const MAX_HEAD_BYTES: usize = 64 << 10;

/// The most of a request read from a connection answered with a 503.
const BUSY_DRAIN: usize = 64 << 10;

/// Connections past [`Limits::connections`] held at once to answer them with a 503; past
/// these too, the proxy stops accepting until one closes (the rest wait in the listen
/// queue, as with nginx at its `worker_connections`).
pub const BUSY_CONNECTIONS: u64 = 64;

/// What the proxy serves at once, the configured limits fitted to the process's
/// file-descriptor limit `fds`. A stream holds two descriptors (the client's connection and
/// the upstream's), an idle connection one; with `r` = [`FD_RESERVE`] and
/// `b` = [`BUSY_CONNECTIONS`]: `streams = min(max_streams, (fds - r - b) / 2)` and
/// `connections = min(max_connections, fds - r - b - streams)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Streams at once.
    pub streams: usize,
    /// Client connections served at once.
    pub connections: usize,
}

impl Limits {
    /// The limits of `config` under a file-descriptor limit of `fds`.
    pub fn new(config: &Config, fds: u64) -> Limits {
        let room = fds.saturating_sub(FD_RESERVE + BUSY_CONNECTIONS).max(2);
        let streams = (config.max_streams as u64).min(room / 2).max(1);
        let connections = (config.max_connections as u64).min(room - streams).max(1);
        Limits {
            streams: streams as usize,
            connections: connections as usize,
        }
    }

    /// The limits of `config` under this process's file-descriptor limit (its soft limit,
    /// which [`raise_fd_limit`] may have raised).
    pub fn of_process(config: &Config) -> Limits {
        let fds = rlimit::getrlimit(rlimit::Resource::NOFILE).map_or(1024, |(soft, _)| soft);
        Limits::new(config, fds)
    }
}

/// Raise this process's soft file-descriptor limit to its hard limit (many systems start
/// processes at 1024 whatever the hard limit allows); the limit in force after.
pub fn raise_fd_limit() -> std::io::Result<u64> {
    rlimit::increase_nofile_limit(u64::MAX)
}

/// How many workers serve the connections: one a core (`TOOLSTREAM_WORKERS` overrides).
fn worker_count() -> usize {
    std::env::var("TOOLSTREAM_WORKERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
}

thread_local! {
    /// The worker this thread is (0 off the workers).
    static WORKER: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The runtimes the connections run on, one thread each, as nginx's workers: a
/// connection, its request's tasks and its upstream connection stay on one thread, so the
/// wakes between them (a piece of body read, rewritten, written) are never across threads.
/// Under load the work-stealing runtime spent about a sixth of the proxy's CPU on moving
/// and waking tasks between its threads. Connections go to the workers in turn. The
/// threads end when this is dropped (each finishes its runtime's tasks' current step).
struct Workers {
    handles: Vec<tokio::runtime::Handle>,
    next: AtomicU64,
    _stop: Vec<tokio::sync::oneshot::Sender<()>>,
}

impl Workers {
    fn start(n: usize) -> std::io::Result<Workers> {
        let mut handles = Vec::with_capacity(n);
        let mut stop = Vec::with_capacity(n);
        for i in 0..n {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            handles.push(rt.handle().clone());
            let (tx, rx) = tokio::sync::oneshot::channel::<()>();
            stop.push(tx);
            std::thread::Builder::new()
                .name(format!("toolstream-worker-{i}"))
                .spawn(move || {
                    WORKER.with(|w| w.set(i));
                    rt.block_on(async {
                        let _ = rx.await;
                    });
                })?;
        }
        Ok(Workers {
            handles,
            next: AtomicU64::new(0),
            _stop: stop,
        })
    }

    fn len(&self) -> usize {
        self.handles.len()
    }

    fn spawn(&self, f: impl std::future::Future<Output = ()> + Send + 'static) {
        let i = self.next.fetch_add(1, Ordering::Relaxed) as usize % self.handles.len();
        self.handles[i].spawn(f);
    }
}

impl State {
    /// This worker's client.
    fn client(&self) -> &HttpsClient {
        &self.clients[WORKER.with(std::cell::Cell::get) % self.clients.len()]
    }
}

/// Serve on `listener` until the task is dropped. No error ends it: a failed `accept()`
/// (out of file descriptors, a connection reset before it was taken) is logged and the
/// loop goes on after a pause.
pub async fn serve(listener: TcpListener, config: Config) -> std::io::Result<()> {
    serve_until(listener, config, std::future::pending()).await
}

/// [`serve`] until `shutdown` completes, then drain: no new connection is taken,
/// `/healthz` answers 503 on the connections open, the requests in flight get up to
/// [`Config::drain`] to finish, and each stream still open after that ends with an error
/// event in the provider's shape (a pass-through body is cut), never a clean end. Returns
/// once every request is done (or a few seconds after the deadline, for clients too slow
/// to take their last bytes).
pub async fn serve_until(
    listener: TcpListener,
    config: Config,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()> {
    let limits = Limits::of_process(&config);
    tracing::info!(
        streams = limits.streams,
        connections = limits.connections,
        "limits"
    );
    let mut http = HttpConnector::new();
    http.set_connect_timeout(Some(config.connect_timeout));
    http.enforce_http(false);
    http.set_nodelay(true);
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_webpki_roots()
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    let workers = Workers::start(worker_count())?;
    let clients = (0..workers.len())
        .map(|_| {
            Client::builder(TokioExecutor::new())
                .pool_max_idle_per_host(IDLE_UPSTREAM)
                .build(https.clone())
        })
        .collect();
    let connections = Arc::new(Semaphore::new(limits.connections));
    let open = Arc::new(Semaphore::new(
        limits.connections + BUSY_CONNECTIONS as usize,
    ));
    let (cut_tx, cut_all) = tokio::sync::watch::channel(false);
    let state = Arc::new(State {
        streams: Arc::new(Semaphore::new(limits.streams)),
        parsing: Arc::new(Semaphore::new(PARSING)),
        clients,
        next_id: AtomicU64::new(1),
        made: Arc::default(),
        metrics: config.metrics.then(|| Arc::new(metrics::Metrics::new())),
        draining: std::sync::atomic::AtomicBool::new(false),
        cut_all,
        config,
    });
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            biased;
            _ = &mut shutdown => break,
            accepted = async {
                let slot = open.clone().acquire_owned().await;
                (slot, listener.accept().await)
            } => accepted,
        };
        let (Ok(slot), accepted) = accepted else {
            return Ok(());
        };
        let (socket, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // EMFILE and ENFILE clear when a connection closes; ECONNABORTED at once.
                tracing::warn!(error = %e, "accept failed; the proxy goes on");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = socket.set_nodelay(true);
        // Handed to a worker: the socket leaves this runtime's reactor for the worker's.
        let Ok(socket) = socket.into_std() else {
            continue;
        };
        let state = state.clone();
        let permit = connections.clone().try_acquire_owned().ok();
        workers.spawn(async move {
            let Ok(socket) = tokio::net::TcpStream::from_std(socket) else {
                return;
            };
            let busy = permit.is_none();
            let header_timeout = state.config.header_timeout;
            let service = hyper::service::service_fn(move |req| {
                let state = state.clone();
                async move {
                    if busy {
                        let provider = provider_of(&state.config, req.uri().path());
                        // The request is read (a little of it, briefly) before the answer:
                        // closing on unread bytes would reset the connection, and the
                        // client would never see the 503.
                        let (_, body) = req.into_parts();
                        let _ = read_limited(body, BUSY_DRAIN, Duration::from_secs(1)).await;
                        tracing::warn!(%peer, "too many connections");
                        let mut r = local_error(
                            StatusCode::SERVICE_UNAVAILABLE,
                            provider,
                            "the proxy holds its maximum of client connections",
                            Some(1),
                        );
                        r.headers_mut()
                            .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
                        return Ok::<_, Infallible>(r);
                    }
                    Ok::<_, Infallible>(handle(state, req, peer).await)
                }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout)
                .max_buf_size(MAX_HEAD_BYTES)
                .keep_alive(!busy)
                .serve_connection(TokioIo::new(socket), service);
            if let Err(e) = conn.await {
                tracing::debug!(%peer, error = %e, "connection ended");
            }
            drop(permit);
            drop(slot);
        });
    }
    // Draining: no new connection, the requests in flight (each holds a stream permit)
    // given until the deadline, then every stream still open cut with an error event.
    drop(listener);
    state.draining.store(true, Ordering::Relaxed);
    let in_flight = || limits.streams - state.streams.available_permits();
    tracing::info!(in_flight = in_flight(), drain = ?state.config.drain, "draining");
    let deadline = Instant::now() + state.config.drain;
    while in_flight() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if in_flight() > 0 {
        tracing::warn!(open = in_flight(), "drain deadline passed: ending the rest");
        let _ = cut_tx.send(true);
        let grace = Instant::now() + DRAIN_GRACE;
        while in_flight() > 0 && Instant::now() < grace {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    tracing::info!("drained");
    Ok(())
}

/// After the drain deadline, how long the streams cut get to send their error event.
const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// Who the upstream is for a request to `path`: as configured, else by the path.
fn provider_of(config: &Config, path: &str) -> Provider {
    config.provider.unwrap_or(if path.ends_with("/messages") {
        Provider::Anthropic
    } else {
        Provider::Openai
    })
}

/// What an endpoint is, for the rewriting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Chat,
    Messages,
    Responses,
    Other,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Chat => "chat",
            Kind::Messages => "messages",
            Kind::Responses => "responses",
            Kind::Other => "other",
        }
    }
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
        if state.draining.load(Ordering::Relaxed) {
            return plain(StatusCode::SERVICE_UNAVAILABLE, "draining\n");
        }
        return plain(StatusCode::OK, "ok\n");
    }
    if let (true, Some(m)) = (
        req.method() == Method::GET && req.uri().path() == "/metrics",
        &state.metrics,
    ) {
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        );
        return respond(StatusCode::OK, headers, Body::full(Bytes::from(m.encode())));
    }
    let path = req.uri().path().to_string();
    let kind = kind(req.method(), &path);
    let provider = provider_of(&state.config, &path);
    if state.draining.load(Ordering::Relaxed) {
        // A request on a connection opened before the shutdown: elsewhere, please.
        let mut r = local_error(
            StatusCode::SERVICE_UNAVAILABLE,
            provider,
            "the proxy is shutting down",
            Some(1),
        );
        r.headers_mut()
            .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
        return r;
    }
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
    // The request's history, repaired on its bytes (`request::repair_bytes`: what is not
    // repaired goes out byte for byte, memory in proportion to the body), a few at once,
    // off the executor's threads: a large body takes milliseconds. The permit goes with
    // the work: a client that leaves drops this handler, not the work. A body that cannot
    // be read goes out as it came, and the response says so.
    let mut repairs = Vec::new();
    let mut repair_failed = None;
    let body = if state.config.repair_requests && kind != Kind::Other {
        match repair_history(&state, body.clone()).await {
            Ok(Ok(r)) => {
                repairs = r.found;
                r.body.map_or(body, Bytes::from)
            }
            Ok(Err(e)) => {
                tracing::warn!(id, %path, error = %e, "the request's history could not be read; sent as it came");
                repair_failed = Some(e.to_string());
                body
            }
            Err(e) => {
                repair_failed = Some(e.to_string());
                body
            }
        }
    } else {
        body
    };
    // The tools the request declared: the allow-list of calls taken out of the text, and
    // with --repair the schemas calls are coerced by.
    let declares = matches!(kind, Kind::Chat | Kind::Messages | Kind::Responses)
        && memchr::memmem::find(&body, b"\"tools\"").is_some();
    let want_text = declares && state.config.text_calls != TextCalls::Off;
    let want_schemas = declares && state.config.repair_calls;
    let (text, schemas) = if want_text || want_schemas {
        let raw = body.clone();
        let (tools, schemas) = parse_off_thread(&state, raw.len(), move || {
            (
                want_text.then(|| declared_tools(&raw)),
                want_schemas
                    .then(|| crate::rewrite::text::declared_schemas(&raw))
                    .flatten(),
            )
        })
        .await
        .unwrap_or_default();
        (
            tools.and_then(|t| TextSetting::new(state.config.text_calls, t)),
            schemas.map(Arc::new),
        )
    } else {
        (None, None)
    };
    let call_repair = state
        .config
        .repair_calls
        .then(|| crate::rewrite::CallRepair {
            policy: crate::repair::RepairPolicy::all(),
            schemas,
        });
    // A follow-up on a Responses response whose calls the proxy made: those calls go into
    // the input, so that the upstream, which stored the response as it sent it, knows
    // every call the client answers.
    // Read only when some response had calls made (rare), off the executor's threads as
    // the repair is: a body can be large.
    let mut continued = 0;
    let body = if kind == Kind::Responses && !state.made.is_empty() {
        let (raw, made) = (body.clone(), state.made.clone());
        let done = parse_off_thread(&state, raw.len(), move || {
            let calls = made.get(&previous_response_id(&raw)?)?;
            continue_request(&raw, &calls)
        })
        .await;
        match done {
            Ok(Some((b, n))) => {
                continued = n;
                Bytes::from(b)
            }
            _ => body,
        }
    } else {
        body
    };
    // The attempts: each upstream in turn as the verdicts say, until one answers or a
    // failure is the client's to see.
    // The upstreams that serve this route, in order.
    let upstreams: Vec<&Upstream> = state
        .config
        .upstreams
        .iter()
        .filter(|u| u.serves(kind))
        .collect();
    if upstreams.is_empty() {
        return local_error(
            StatusCode::BAD_GATEWAY,
            provider,
            &format!("no upstream is configured for the {} route", kind.as_str()),
            None,
        );
    }
    let policy = state.config.decisions;
    let (mut at, mut tries, mut attempts) = (0usize, 0u32, 0u32);
    let mut body = body;
    // Whether the history was repaired after an upstream refused it (once at most).
    let mut repaired_after = false;
    let response = loop {
        attempts += 1;
        let upstream = upstreams[at];
        let uri = match upstream_uri(&upstream.uri, &parts.uri) {
            Ok(u) => u,
            Err(e) => return local_error(StatusCode::BAD_REQUEST, provider, &e, None),
        };
        let provider = upstream.provider.unwrap_or(provider);
        let mut up = Request::builder().method(parts.method.clone()).uri(uri);
        for (name, value) in &parts.headers {
            // An upstream with its own key gets none of the client's credentials.
            let credential = name == http::header::AUTHORIZATION || name == "x-api-key";
            if !hop_by_hop(name)
                && name != http::header::HOST
                && name != http::header::CONTENT_LENGTH
                && name != http::header::ACCEPT_ENCODING
                && !(credential && upstream.key.is_some())
            {
                up = up.header(name, value);
            }
        }
        if let Some(key) = &upstream.key {
            up = if provider == Provider::Anthropic {
                up.header("x-api-key", key.as_str())
            } else {
                up.header(http::header::AUTHORIZATION, format!("Bearer {key}"))
            };
        }
        // The body is read to rewrite it: not compressed.
        up = up.header(http::header::ACCEPT_ENCODING, "identity");
        let up = match up.body(Full::new(body.clone())) {
            Ok(r) => r,
            Err(e) => return local_error(StatusCode::BAD_REQUEST, provider, &e.to_string(), None),
        };
        let sent =
            tokio::time::timeout(state.config.first_byte_timeout, state.client().request(up)).await;
        // A failed attempt: its verdict, and what the client gets if it is the last.
        let (v, failed) = match sent {
            Err(_) => {
                let message = "upstream timed out before answering";
                let v = crate::classify::classify_transport(message, tries, &policy);
                (
                    v,
                    Failed::Local(StatusCode::GATEWAY_TIMEOUT, message.to_string()),
                )
            }
            Ok(Err(e)) => {
                let v = crate::classify::classify_error(&e, tries, &policy);
                let message = v.message.clone();
                (v, Failed::Local(StatusCode::BAD_GATEWAY, message))
            }
            Ok(Ok(r)) if r.status().as_u16() >= 400 => {
                let (up_parts, up_body) = r.into_parts();
                let body = read_limited(
                    up_body,
                    state.config.max_response_bytes,
                    state.config.idle_timeout,
                )
                .await
                .unwrap_or_default();
                let encoded = up_parts
                    .headers
                    .get(http::header::CONTENT_ENCODING)
                    .is_some_and(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"));
                let readable: &[u8] = if encoded { b"" } else { &body };
                let v = classify_response(
                    provider,
                    up_parts.status.as_u16(),
                    &up_parts.headers,
                    readable,
                    tries,
                    &policy,
                );
                (v, Failed::Upstream(Box::new(up_parts), body))
            }
            Ok(Ok(r)) => {
                if let Some(m) = &state.metrics {
                    m.first_byte(start.elapsed());
                }
                break r;
            }
        };
        // A history the upstream refused for what the library repairs (arguments that
        // are not one JSON object), when it was not repaired before it went out
        // (--no-repair): repaired now and sent once more to the same upstream.
        if v.reason == crate::classify::Reason::RequestRepair
            && !state.config.repair_requests
            && !repaired_after
            && kind != Kind::Other
        {
            repaired_after = true;
            if let Ok(Ok(r)) = repair_history(&state, body.clone()).await {
                if let (Some(fixed), false) = (r.body, r.found.is_empty()) {
                    tracing::info!(id, %path, repairs = r.found.len(), "refused history repaired; sent again");
                    if let Some(m) = &state.metrics {
                        m.attempt(metrics::AttemptLabels {
                            reason: v.reason.as_str(),
                            action: v.action.as_str(),
                            decision: "repair_request",
                        });
                    }
                    body = Bytes::from(fixed);
                    repairs = r.found;
                    continue;
                }
            }
        }
        let next = decide(&v, tries, at, upstreams.len(), &policy, id);
        if let Some(m) = &state.metrics {
            m.attempt(metrics::AttemptLabels {
                reason: v.reason.as_str(),
                action: v.action.as_str(),
                decision: match next {
                    Next::Retry(_) => "retry",
                    Next::Fallback => "fallback",
                    Next::Surface => "surface",
                },
            });
        }
        tracing::info!(
            id,
            %path,
            upstream = at,
            reason = v.reason.as_str(),
            action = v.action.as_str(),
            next = ?next,
            "attempt {attempts} failed"
        );
        match next {
            Next::Retry(wait) => {
                tokio::time::sleep(wait).await;
                tries += 1;
            }
            Next::Fallback => {
                at += 1;
                tries = 0;
            }
            Next::Surface => {
                let mut response = match failed {
                    Failed::Local(status, message) => local_error(status, provider, &message, None),
                    Failed::Upstream(up_parts, body) => {
                        let mut headers = HeaderMap::new();
                        for (name, value) in &up_parts.headers {
                            if !hop_by_hop(name) && name != http::header::CONTENT_LENGTH {
                                headers.append(name.clone(), value.clone());
                            }
                        }
                        respond(up_parts.status, headers, Body::full(body))
                    }
                };
                let headers = response.headers_mut();
                annotate(headers, &v);
                note_request(headers, continued, attempts, &repair_failed, &repairs);
                let log = Log {
                    id,
                    peer,
                    path: path.clone(),
                    status: response.status().as_u16(),
                    repairs: repairs.len(),
                    start,
                    route: kind.as_str(),
                    upstream: at,
                    metrics: state.metrics.clone(),
                };
                log.done(Counts::default(), Some(&v));
                drop(permit);
                return response;
            }
        }
    };
    // The answering upstream's provider, for the rewriters and the log.
    let provider = upstreams[at].provider.unwrap_or(provider);
    let status = response.status();
    let (up_parts, up_body) = response.into_parts();
    let mut headers = HeaderMap::new();
    for (name, value) in &up_parts.headers {
        if !hop_by_hop(name) && name != http::header::CONTENT_LENGTH {
            headers.append(name.clone(), value.clone());
        }
    }
    note_request(&mut headers, continued, attempts, &repair_failed, &repairs);
    let streaming = up_parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    // A body the upstream compressed although asked not to is not read: it goes to the
    // client untouched, with its content-encoding (decoding it for the rewriters and
    // sending it plain would be the other consistent way; this one keeps the bytes).
    let encoded = up_parts
        .headers
        .get(http::header::CONTENT_ENCODING)
        .is_some_and(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"));
    let log = Log {
        id,
        peer,
        path: path.clone(),
        status: status.as_u16(),
        repairs: repairs.len(),
        start,
        route: kind.as_str(),
        upstream: at,
        metrics: state.metrics.clone(),
    };
    if streaming && !encoded && matches!(kind, Kind::Chat | Kind::Messages | Kind::Responses) {
        let api = match kind {
            Kind::Chat => Api::Chat,
            Kind::Responses => Api::Responses,
            _ => Api::Messages,
        };
        let mut rewriter = Rewriter::new(api, provider, state.config.keep_finish_reason, text);
        if let Some(r) = &call_repair {
            rewriter = rewriter.with_call_repair(r);
        }
        let rewriter = Some(rewriter);
        let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
        let idle = state.config.idle_timeout;
        let metrics = state.metrics.clone();
        let cut_all = state.cut_all.clone();
        let made = (kind == Kind::Responses).then(|| state.made.clone());
        tokio::spawn(async move {
            let counts = pump(up_body, rewriter, tx, idle, made, metrics, cut_all).await;
            log.done(counts, None);
            drop(permit);
        });
        return respond(status, headers, Body::channel(rx));
    }
    if matches!(kind, Kind::Chat | Kind::Messages | Kind::Responses) && !streaming && !encoded {
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
        // Off the executor's threads unless small: a large body takes milliseconds to
        // rewrite, and under the request permits, as a request body's tree is.
        let keep = state.config.keep_finish_reason;
        let raw = body.clone();
        let rewritten = parse_off_thread(&state, raw.len(), move || {
            let repair = call_repair.as_ref();
            match kind {
                Kind::Chat => crate::rewrite::rewrite_completion(&raw, keep, text.as_ref(), repair)
                    .map(|(b, c)| (b, c, None)),
                Kind::Messages => {
                    crate::rewrite::rewrite_message(&raw, text.as_ref()).map(|(b, c)| (b, c, None))
                }
                _ => crate::rewrite::rewrite_response(&raw, text.as_ref(), repair),
            }
        })
        .await
        .ok()
        .flatten();
        let (body, counts) = match rewritten {
            Some((b, c, cont)) => {
                if let Some(cont) = cont {
                    state.made.insert(cont);
                }
                (b, c)
            }
            None => (body, Counts::default()),
        };
        // The body has no room for a note: the calls repaired are counted in a header
        // (a stream says each repair in a comment before its call instead).
        if counts.repaired > 0 {
            headers.insert(
                "toolstream-calls-repaired",
                HeaderValue::from(counts.repaired),
            );
        }
        log.done(counts, None);
        return respond(status, headers, Body::full(body));
    }
    // Everything else streams through as it is.
    let (tx, rx) = mpsc::channel(CHANNEL_DEPTH);
    let idle = state.config.idle_timeout;
    let metrics = state.metrics.clone();
    let cut_all = state.cut_all.clone();
    tokio::spawn(async move {
        let counts = pump(up_body, None, tx, idle, None, metrics, cut_all).await;
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
    /// The route, and which upstream answered (for the metrics).
    route: &'static str,
    upstream: usize,
    metrics: Option<Arc<metrics::Metrics>>,
}

impl Log {
    fn done(self, c: Counts, verdict: Option<&Verdict>) {
        if let Some(m) = &self.metrics {
            m.done(
                metrics::RequestLabels {
                    route: self.route,
                    upstream: self.upstream.min(usize::from(u16::MAX)) as u16,
                    status: self.status,
                },
                &c,
                self.repairs > 0,
                self.start.elapsed(),
            );
        }
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
            repaired = c.repaired,
            stream_errors = c.errors,
            repairs = self.repairs,
            reason = verdict.map(|v| v.reason.as_str()),
            action = verdict.map(|v| v.action.as_str()),
            ms = self.start.elapsed().as_millis() as u64,
            "done"
        );
    }
}

/// Read the upstream body frame by frame, rewrite, and send each piece to the client as
/// soon as it is known. Stops when the client goes away, whatever the upstream is doing
/// (sending call fragments that produce no output yet, or nothing): dropping the upstream
/// body closes that connection. A pass-through body the upstream cut is cut for the client
/// too (the body ends with an error, so the client sees no clean end).
async fn pump(
    mut body: Incoming,
    mut rewriter: Option<Rewriter>,
    tx: mpsc::Sender<Piece>,
    idle: Duration,
    made: Option<Arc<MadeCalls>>,
    metrics: Option<Arc<metrics::Metrics>>,
    mut cut_all: tokio::sync::watch::Receiver<bool>,
) -> Counts {
    /// The open-streams gauge, down again however the pump ends.
    struct Open(Option<Arc<metrics::Metrics>>);
    impl Drop for Open {
        fn drop(&mut self) {
            if let Some(m) = &self.0 {
                m.stream_closed();
            }
        }
    }
    if let Some(m) = &metrics {
        m.stream_opened();
    }
    let _open = Open(metrics.clone());
    let mut out = BytesMut::new();
    let mut cut: Option<String> = None;
    // Made once for the stream, not once a frame: the client's departure, the shutdown
    // and the idle deadline each wait registered once (a waiter on a channel shared by
    // every stream, a timer), the deadline moved on only when it comes.
    let client_gone = tx.closed();
    tokio::pin!(client_gone);
    let shutdown = cut_all.wait_for(|cut| *cut);
    tokio::pin!(shutdown);
    let mut last = tokio::time::Instant::now();
    let deadline = tokio::time::sleep_until(last + idle);
    tokio::pin!(deadline);
    loop {
        let next = tokio::select! {
            biased;
            _ = &mut client_gone => return counts(&rewriter),
            _ = &mut shutdown => {
                cut = Some("the proxy is shutting down".into());
                break;
            }
            next = body.frame() => next,
            _ = &mut deadline => {
                if last.elapsed() >= idle {
                    cut = Some("the upstream was idle too long".into());
                    break;
                }
                deadline.as_mut().reset(last + idle);
                continue;
            }
        };
        last = tokio::time::Instant::now();
        let frame = match next {
            None => break,
            Some(Err(e)) => {
                cut = Some(e.to_string());
                break;
            }
            Some(Ok(f)) => f,
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
            let read = piece.len();
            // Calls that closed in this piece: from its arrival to their hand-over to the
            // client's connection (measured when metrics are on).
            let arrived = metrics
                .as_ref()
                .map(|_| (Instant::now(), counts(&rewriter).calls));
            match &mut rewriter {
                Some(r) => r.push(piece, &mut out),
                None => out.extend_from_slice(&piece),
            }
            if let Some(m) = &metrics {
                m.bytes(read, out.len());
            }
            if !out.is_empty() && tx.send(Ok(out.split().freeze())).await.is_err() {
                return counts(&rewriter);
            }
            if let (Some(m), Some((at, before))) = (&metrics, arrived) {
                let closed = counts(&rewriter).calls.saturating_sub(before);
                for _ in 0..closed {
                    m.call_latency(at.elapsed());
                }
            }
        }
        // The upstream is idle from here (a slow client's backpressure above is not its).
        last = tokio::time::Instant::now();
    }
    let counts = match rewriter {
        Some(r) => {
            let (counts, cont) = r.finish(cut.as_deref(), &mut out);
            if let (Some(c), Some(made)) = (cont, made) {
                made.insert(c);
            }
            counts
        }
        None => {
            if let Some(why) = cut {
                // Not rewritten: nothing of the provider's shape to say it in. The body
                // is cut, as the upstream's was.
                let _ = tx.send(Err(Cut(why))).await;
            }
            Counts::default()
        }
    };
    if !out.is_empty() {
        let _ = tx.send(Ok(out.freeze())).await;
    }
    counts
}

/// A piece of a response body, or the error that cuts it.
type Piece = Result<Bytes, Cut>;

/// The upstream cut its body: the client's is cut too.
#[derive(Debug)]
pub struct Cut(String);

impl std::fmt::Display for Cut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the upstream body was cut: {}", self.0)
    }
}

impl std::error::Error for Cut {}

fn counts(r: &Option<Rewriter>) -> Counts {
    r.as_ref().map_or_else(Counts::default, Rewriter::counts)
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
        let t = crate::classify::classify_transport(message, 0, &Policy::default());
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
    Channel(mpsc::Receiver<Piece>),
}

impl Body {
    fn full(b: Bytes) -> Self {
        Body {
            inner: Inner::Full(Some(b)),
        }
    }
    fn channel(rx: mpsc::Receiver<Piece>) -> Self {
        Body {
            inner: Inner::Channel(rx),
        }
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Cut;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Cut>>> {
        match &mut self.inner {
            Inner::Full(b) => Poll::Ready(
                b.take()
                    .filter(|b| !b.is_empty())
                    .map(|b| Ok(Frame::data(b))),
            ),
            Inner::Channel(rx) => rx.poll_recv(cx).map(|o| o.map(|p| p.map(Frame::data))),
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
