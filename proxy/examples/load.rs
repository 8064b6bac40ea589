//! A load test on loopback: concurrent streaming requests of a fake upstream replaying a
//! ~210 KB tool-call stream at full speed, sent directly, through nginx (a plain
//! pass-through reverse proxy, `proxy_buffering off`, when `nginx` is installed) and
//! through toolstream-proxy, in the same run; the same calls on the Responses API; the
//! metrics' cost; paced streams, for what the proxy adds to each call's arrival (the
//! proxy on a CPU of its own where there are two); then the proxy's memory per idle
//! stream.
//!
//! ```text
//! cargo build --release -p toolstream-proxy --examples
//! target/release/examples/load [STREAMS] [REQUESTS]     # defaults 64 and 2048
//! ```
//!
//! Everything goes to 127.0.0.1 only, bounded in count.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The same 20 calls as a Responses API stream: each call's item added, its arguments in
/// the same 16-byte fragments, done, item done; the response created and completed.
fn responses_stream() -> Vec<u8> {
    let mut out = String::new();
    let mut seq = 0;
    let mut event = |ty: &str, body: String, out: &mut String| {
        out.push_str(&format!(
            "event: {ty}\ndata: {{\"type\":\"{ty}\",\"sequence_number\":{seq},{body}}}\n\n"
        ));
        seq += 1;
    };
    event(
        "response.created",
        r#""response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}"#
            .into(),
        &mut out,
    );
    for call in 0..20 {
        let args = format!(
            r#"{{"path":"src/file_{call}.rs","content":"{}"}}"#,
            "fn main() { println!(\\\"hi\\\"); }\\n".repeat(20)
        );
        let json_args = serde_json::to_string(&args).unwrap();
        let inner = &json_args[1..json_args.len() - 1];
        event(
            "response.output_item.added",
            format!(
                r#""output_index":{call},"item":{{"id":"fc_{call}","type":"function_call","status":"in_progress","arguments":"","call_id":"call_{call}","name":"write_file"}}"#
            ),
            &mut out,
        );
        let mut at = 0;
        while at < inner.len() {
            let mut end = (at + 16).min(inner.len());
            while inner[..end].ends_with('\\') && end < inner.len() {
                end += 1;
            }
            let piece = &inner[at..end];
            event(
                "response.function_call_arguments.delta",
                format!(r#""item_id":"fc_{call}","output_index":{call},"delta":"{piece}""#),
                &mut out,
            );
            at = end;
        }
        event(
            "response.function_call_arguments.done",
            format!(r#""item_id":"fc_{call}","output_index":{call},"arguments":{json_args}"#),
            &mut out,
        );
        event(
            "response.output_item.done",
            format!(
                r#""output_index":{call},"item":{{"id":"fc_{call}","type":"function_call","status":"completed","arguments":{json_args},"call_id":"call_{call}","name":"write_file"}}"#
            ),
            &mut out,
        );
    }
    event(
        "response.completed",
        r#""response":{"id":"resp_1","object":"response","status":"completed","output":[]}"#.into(),
        &mut out,
    );
    out.into_bytes()
}

/// ~100 KB of OpenAI chunks: 20 calls, arguments in 16-byte fragments.
fn stream() -> Vec<u8> {
    let mut out = String::new();
    let env = r#""id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m""#;
    for call in 0..20 {
        let args = format!(
            r#"{{"path":"src/file_{call}.rs","content":"{}"}}"#,
            "fn main() { println!(\\\"hi\\\"); }\\n".repeat(20)
        );
        let args = serde_json::to_string(&args).unwrap();
        let args = &args[1..args.len() - 1];
        let mut first = true;
        let mut at = 0;
        while at < args.len() {
            let mut end = (at + 16).min(args.len());
            // Never split an escape.
            while args[..end].ends_with('\\') && end < args.len() {
                end += 1;
            }
            let piece = &args[at..end];
            let head = if first {
                format!(
                    r#""id":"call_{call}","type":"function","function":{{"name":"write_file","arguments":"{piece}"}}"#
                )
            } else {
                format!(r#""function":{{"arguments":"{piece}"}}"#)
            };
            out.push_str(&format!(
                "data: {{{env},\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{call},{head}}}]}},\"finish_reason\":null}}]}}\n\n"
            ));
            first = false;
            at = end;
        }
    }
    out.push_str(&format!(
        "data: {{{env},\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\ndata: [DONE]\n\n"
    ));
    out.into_bytes()
}

/// The next request on a kept-alive connection (its head and content-length body): the
/// body, or `None` once the connection ends. `have` keeps what was read past it.
async fn next_request(
    s: &mut tokio::net::TcpStream,
    buf: &mut [u8],
    have: &mut Vec<u8>,
) -> Option<String> {
    let head_end = loop {
        if let Some(i) = have.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match s.read(buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => have.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&have[..head_end]).to_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while have.len() < head_end + len {
        match s.read(buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => have.extend_from_slice(&buf[..n]),
        }
    }
    let body = String::from_utf8_lossy(&have[head_end..head_end + len]).into_owned();
    have.drain(..head_end + len);
    Some(body)
}

/// The fake upstream: every request on a kept-alive connection gets the stream at once.
/// `stall`: send the head and one event, then hold the connection open (idle streams).
async fn upstream(body: Arc<Vec<u8>>, stall: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let _ = s.set_nodelay(true);
            let body = body.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16384];
                let mut have = Vec::new();
                loop {
                    if next_request(&mut s, &mut buf, &mut have).await.is_none() {
                        return;
                    }
                    if stall {
                        let event = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n";
                        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                        let chunk =
                            [format!("{:x}\r\n", event.len()).as_bytes(), event, b"\r\n"].concat();
                        if s.write_all(head.as_bytes()).await.is_err()
                            || s.write_all(&chunk).await.is_err()
                        {
                            return;
                        }
                        let _ = s.read(&mut buf).await;
                        return;
                    }
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n",
                        body.len()
                    );
                    if s.write_all(head.as_bytes()).await.is_err()
                        || s.write_all(&body).await.is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    url
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for(port: u16) {
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("nothing listens on {port}");
}

fn proxy_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("toolstream-proxy")
}

fn start_proxy(upstream: &str, port: u16) -> Child {
    start_proxy_with(upstream, port, &[])
}

fn start_proxy_with(upstream: &str, port: u16, extra: &[&str]) -> Child {
    spawn_proxy(Command::new(proxy_bin()), upstream, port, extra)
}

/// [`start_proxy`] with the proxy on CPU `core` alone (`taskset`, which execs it: the
/// child is the proxy).
fn start_proxy_on(upstream: &str, port: u16, core: usize) -> Child {
    let mut taskset = Command::new("taskset");
    taskset.args(["-c", &core.to_string()]).arg(proxy_bin());
    spawn_proxy(taskset, upstream, port, &[])
}

fn spawn_proxy(mut command: Command, upstream: &str, port: u16, extra: &[&str]) -> Child {
    let child = command
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--upstream",
            upstream,
        ])
        .args(extra)
        .env("RUST_LOG", "warn")
        .stderr(Stdio::null())
        .spawn()
        .expect("target/release/toolstream-proxy (cargo build --release -p toolstream-proxy)");
    wait_for(port);
    child
}

/// The CPUs this process may run on (`Cpus_allowed_list`, e.g. `0-3,6`).
fn allowed_cpus() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let Some(list) = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
    else {
        return Vec::new();
    };
    let mut cpus = Vec::new();
    for part in list.trim().split(',') {
        let mut ends = part.split('-').map(|n| n.trim().parse::<usize>());
        match (ends.next(), ends.next()) {
            (Some(Ok(a)), None) => cpus.push(a),
            (Some(Ok(a)), Some(Ok(b))) => cpus.extend(a..=b),
            _ => return Vec::new(),
        }
    }
    cpus
}

/// Every thread of this process onto `cpus` (a `taskset` list); whether that worked.
fn pin_self(cpus: &str) -> bool {
    Command::new("taskset")
        .args(["-a", "-p", "-c", cpus, &std::process::id().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn start_nginx(upstream: &str, port: u16) -> Option<(Child, tempdir::Dir)> {
    let dir = tempdir::Dir::new();
    let conf = format!(
        "daemon off; master_process on; worker_processes 2; pid {d}/nginx.pid; error_log {d}/error.log;
events {{ worker_connections 4096; }}
http {{ access_log off; client_body_temp_path {d}; proxy_temp_path {d};
  upstream up {{ server {up}; keepalive 1024; }}
  server {{ listen 127.0.0.1:{port};
    location / {{ proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection \"\";
      proxy_buffering off; }} }} }}",
        d = dir.0.display(),
        up = upstream.trim_start_matches("http://"),
    );
    let path = dir.0.join("nginx.conf");
    std::fs::write(&path, conf).unwrap();
    let child = Command::new("nginx")
        .args(["-c", path.to_str().unwrap(), "-p", dir.0.to_str().unwrap()])
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    wait_for(port);
    Some((child, dir))
}

mod tempdir {
    /// A directory removed when dropped.
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Self {
            let p = std::env::temp_dir().join(format!("toolstream-load-{}", std::process::id()));
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

struct Run {
    seconds: f64,
    bytes: usize,
    first_byte: Vec<Duration>,
    last_byte: Vec<Duration>,
}

/// The same requests with hyper-util's client (what the proxy uses upstream): the seconds
/// they took, to compare with reqwest's on the same upstream.
async fn load_hyper(url: &str, streams: usize, requests: usize) -> f64 {
    use http_body_util::{BodyExt, Full};
    use hyper_util::client::legacy::Client;
    use hyper_util::rt::TokioExecutor;
    let client: Client<_, Full<bytes::Bytes>> = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(streams)
        .build_http();
    let left = Arc::new(AtomicUsize::new(requests));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..streams {
        let (client, left) = (client.clone(), left.clone());
        let uri: http::Uri = format!("{url}/v1/chat/completions").parse().unwrap();
        tasks.push(tokio::spawn(async move {
            while left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1)).is_ok() {
                let req = http::Request::post(uri.clone())
                    .header("content-type", "application/json")
                    .body(Full::new(bytes::Bytes::from_static(
                        br#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#,
                    )))
                    .unwrap();
                let mut body = client.request(req).await.unwrap().into_body();
                while let Some(f) = body.frame().await {
                    f.unwrap();
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    start.elapsed().as_secs_f64()
}

async fn load(url: &str, streams: usize, requests: usize) -> Run {
    load_path(url, "/v1/chat/completions", streams, requests).await
}

async fn load_path(url: &str, path: &str, streams: usize, requests: usize) -> Run {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(streams)
        .build()
        .unwrap();
    let left = Arc::new(AtomicUsize::new(requests));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..streams {
        let (client, url, left) = (client.clone(), format!("{url}{path}"), left.clone());
        tasks.push(tokio::spawn(async move {
            let mut mine = (0usize, Vec::new(), Vec::new());
            while left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1)).is_ok() {
                let t = Instant::now();
                let r = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .body(r#"{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}"#)
                    .send()
                    .await
                    .unwrap();
                let mut body = r.bytes_stream();
                let mut first = None;
                while let Some(c) = body.next().await {
                    let c = c.unwrap();
                    first.get_or_insert_with(|| t.elapsed());
                    mine.0 += c.len();
                }
                mine.1.push(first.unwrap_or_default());
                mine.2.push(t.elapsed());
            }
            mine
        }));
    }
    let mut run = Run {
        seconds: 0.0,
        bytes: 0,
        first_byte: Vec::new(),
        last_byte: Vec::new(),
    };
    for t in tasks {
        let (b, f, l) = t.await.unwrap();
        run.bytes += b;
        run.first_byte.extend(f);
        run.last_byte.extend(l);
    }
    run.seconds = start.elapsed().as_secs_f64();
    run.first_byte.sort();
    run.last_byte.sort();
    run
}

fn pct(v: &[Duration], p: f64) -> f64 {
    v[((v.len() as f64 - 1.0) * p) as usize].as_secs_f64() * 1000.0
}

/// CPU time (user and system, in clock ticks) of `pid` and its children processes so far
/// (nginx's master and workers, the proxy alone).
fn cpu_ticks(pid: u32) -> u64 {
    let own = |pid: &str| -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Fields after the command's closing parenthesis; utime and stime are the 12th and
        // 13th of them.
        let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
        rest.split_whitespace()
            .skip(11)
            .take(2)
            .filter_map(|v| v.parse::<u64>().ok())
            .sum()
    };
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    own(&pid.to_string()) + children.split_whitespace().map(own).sum::<u64>()
}

fn rss_kib(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// When the paced upstream wrote each call's last fragment: (request, call) → instant.
type Written = Arc<std::sync::Mutex<std::collections::HashMap<(u64, u32), Instant>>>;

/// A paced upstream: each response is `CALLS` calls of `FRAGMENTS` argument fragments, one
/// event every `GAP`, as a model streams; it notes when each call's last fragment went out.
const CALLS: u32 = 4;
const FRAGMENTS: u32 = 10;
const GAP: Duration = Duration::from_millis(2);

/// Wakes each waiter at its instant, from a thread of its own, to the precision of the
/// system's sleep (tens of microseconds). tokio's timer ticks once a millisecond and wakes
/// every stream due within it together: paced with it, all the streams' events leave the
/// upstream in one burst each tick.
#[derive(Clone)]
struct Pacer(std::sync::mpsc::Sender<(Instant, tokio::sync::oneshot::Sender<()>)>);

impl Pacer {
    fn start() -> Self {
        let (tx, rx) = std::sync::mpsc::channel::<(Instant, tokio::sync::oneshot::Sender<()>)>();
        std::thread::spawn(move || {
            let mut waiting: Vec<(Instant, tokio::sync::oneshot::Sender<()>)> = Vec::new();
            loop {
                let now = Instant::now();
                let mut i = 0;
                while i < waiting.len() {
                    if waiting[i].0 <= now {
                        let _ = waiting.swap_remove(i).1.send(());
                    } else {
                        i += 1;
                    }
                }
                let got = match waiting.iter().map(|w| w.0).min() {
                    Some(at) => rx.recv_timeout(at.saturating_duration_since(Instant::now())),
                    None => rx
                        .recv()
                        .map_err(|_| std::sync::mpsc::RecvTimeoutError::Disconnected),
                };
                match got {
                    Ok(w) => waiting.push(w),
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                }
            }
        });
        Pacer(tx)
    }

    async fn until(&self, at: Instant) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if self.0.send((at, tx)).is_ok() {
            let _ = rx.await;
        }
    }
}

/// When a paced response's next event goes out. Aligned: `GAP` after the last one on
/// tokio's timer, so that every stream's events leave in the same tick (a burst of one
/// event a stream, the worst case). Spread: each response on its own clock, its first
/// event at a phase drawn from its request's id, as independent streams arrive.
struct Clock {
    spread: Option<(Pacer, Instant)>,
}

impl Clock {
    fn new(id: u64, spread: bool, pacer: &Pacer) -> Self {
        let phase = (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64;
        Clock {
            spread: spread.then(|| (pacer.clone(), Instant::now() + GAP.mul_f64(phase))),
        }
    }

    async fn tick(&mut self) {
        match &mut self.spread {
            Some((pacer, at)) => {
                *at += GAP;
                pacer.until(*at).await;
            }
            None => tokio::time::sleep(GAP).await,
        }
    }
}

async fn paced_upstream(written: Written) -> String {
    let pacer = Pacer::start();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let _ = s.set_nodelay(true);
            let written = written.clone();
            let pacer = pacer.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16384];
                let mut have = Vec::new();
                loop {
                    let Some(body) = next_request(&mut s, &mut buf, &mut have).await else {
                        return;
                    };
                    // `"user":"<id>"`, or `"user":"s<id>"` for a response on its own clock.
                    let user = body
                        .split("\"user\":\"")
                        .nth(1)
                        .and_then(|r| r.split('"').next())
                        .unwrap_or("");
                    let spread = user.starts_with('s');
                    let id: u64 = user.trim_start_matches('s').parse().unwrap_or(0);
                    let mut clock = Clock::new(id, spread, &pacer);
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                    if s.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    if body.contains("\"input\"") {
                        if paced_responses(&mut s, id, &written, &mut clock)
                            .await
                            .is_err()
                        {
                            return;
                        }
                        continue;
                    }
                    for call in 0..CALLS {
                        for f in 0..FRAGMENTS {
                            let piece = match f {
                                0 => r#"{\"text\":\""#,
                                f if f == FRAGMENTS - 1 => r#"done.\"}"#,
                                _ => "some words ",
                            };
                            let head = if f == 0 {
                                format!(
                                    r#""id":"call_{call}","type":"function","function":{{"name":"note","arguments":"{piece}"}}"#
                                )
                            } else {
                                format!(r#""function":{{"arguments":"{piece}"}}"#)
                            };
                            let e = format!(
                                "data: {{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{call},{head}}}]}},\"finish_reason\":null}}]}}\n\n"
                            );
                            clock.tick().await;
                            let chunk = [
                                format!("{:x}\r\n", e.len()).as_bytes(),
                                e.as_bytes(),
                                b"\r\n",
                            ]
                            .concat();
                            // Noted just before the write, so the client can never find it missing.
                            if f == FRAGMENTS - 1 {
                                written.lock().unwrap().insert((id, call), Instant::now());
                            }
                            if s.write_all(&chunk).await.is_err() {
                                return;
                            }
                        }
                    }
                    let end = "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
                    let chunk = [
                        format!("{:x}\r\n", end.len()).as_bytes(),
                        end.as_bytes(),
                        b"\r\n0\r\n\r\n",
                    ]
                    .concat();
                    if s.write_all(&chunk).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

/// The paced response on the Responses API: each call's item added, its fragments one
/// every `GAP`, then its arguments' and its item's `done` at once (as a server sends them
/// when the model's call ends).
async fn paced_responses(
    s: &mut tokio::net::TcpStream,
    id: u64,
    written: &Written,
    clock: &mut Clock,
) -> std::io::Result<()> {
    let mut seq = 0;
    let mut event = |ty: &str, body: String| {
        let e = format!(
            "event: {ty}\ndata: {{\"type\":\"{ty}\",\"sequence_number\":{seq},{body}}}\n\n"
        );
        seq += 1;
        e
    };
    for call in 0..CALLS {
        let mut args = String::new();
        for f in 0..FRAGMENTS {
            let piece = match f {
                0 => r#"{\"text\":\""#,
                f if f == FRAGMENTS - 1 => r#"done.\"}"#,
                _ => "some words ",
            };
            args.push_str(piece);
            let mut e = String::new();
            if f == 0 {
                e += &event(
                    "response.output_item.added",
                    format!(
                        r#""output_index":{call},"item":{{"id":"fc_{call}","type":"function_call","status":"in_progress","arguments":"","call_id":"call_{call}","name":"note"}}"#
                    ),
                );
            }
            e += &event(
                "response.function_call_arguments.delta",
                format!(r#""item_id":"fc_{call}","output_index":{call},"delta":"{piece}""#),
            );
            if f == FRAGMENTS - 1 {
                e += &event(
                    "response.function_call_arguments.done",
                    format!(r#""item_id":"fc_{call}","output_index":{call},"arguments":"{args}""#),
                );
                e += &event(
                    "response.output_item.done",
                    format!(
                        r#""output_index":{call},"item":{{"id":"fc_{call}","type":"function_call","status":"completed","arguments":"{args}","call_id":"call_{call}","name":"note"}}"#
                    ),
                );
            }
            clock.tick().await;
            let chunk = [
                format!("{:x}\r\n", e.len()).as_bytes(),
                e.as_bytes(),
                b"\r\n",
            ]
            .concat();
            if f == FRAGMENTS - 1 {
                written.lock().unwrap().insert((id, call), Instant::now());
            }
            s.write_all(&chunk).await?;
        }
    }
    let end = event(
        "response.completed",
        r#""response":{"id":"resp_1","object":"response","status":"completed","output":[]}"#
            .to_string(),
    );
    let chunk = [
        format!("{:x}\r\n", end.len()).as_bytes(),
        end.as_bytes(),
        b"\r\n0\r\n\r\n",
    ]
    .concat();
    s.write_all(&chunk).await
}

/// Per call, from the upstream writing its last fragment to the client holding the call
/// whole (its arguments a complete JSON object; on the Responses API, its item done), for
/// `streams` streams of `each` requests; `spread`, each response on its own clock
/// ([`Clock`]).
async fn paced(
    url: &str,
    written: Written,
    streams: usize,
    each: usize,
    first_id: u64,
    (responses, spread): (bool, bool),
) -> Vec<Duration> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(streams)
        .build()
        .unwrap();
    let mut tasks = Vec::new();
    for s in 0..streams {
        let (client, url, written) = (client.clone(), url.to_string(), written.clone());
        tasks.push(tokio::spawn(async move {
            let mut lags = Vec::new();
            for k in 0..each {
                let id = first_id + (s * each + k) as u64;
                let user = if spread {
                    format!("s{id}")
                } else {
                    id.to_string()
                };
                let (path, body) = if responses {
                    (
                        "responses",
                        format!(r#"{{"model":"m","stream":true,"user":"{user}","input":"hi"}}"#),
                    )
                } else {
                    (
                        "chat/completions",
                        format!(r#"{{"model":"m","stream":true,"user":"{user}","messages":[]}}"#),
                    )
                };
                let r = client
                    .post(format!("{url}/v1/{path}"))
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await
                    .unwrap();
                let mut body = r.bytes_stream();
                let mut buf = Vec::new();
                let mut args: std::collections::HashMap<u32, String> = Default::default();
                let mut done = std::collections::HashSet::new();
                while let Some(c) = body.next().await {
                    let now = Instant::now();
                    buf.extend_from_slice(&c.unwrap());
                    while let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
                        let event: Vec<u8> = buf.drain(..end + 2).collect();
                        let data = event
                            .split(|b| *b == b'\n')
                            .find_map(|l| l.strip_prefix(b"data: "));
                        let Some(data) = data else {
                            continue;
                        };
                        let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) else {
                            continue;
                        };
                        if v["type"] == "response.output_item.done"
                            && v["item"]["type"] == "function_call"
                        {
                            let i = v["output_index"].as_u64().unwrap() as u32;
                            if done.insert(i) {
                                let at = written.lock().unwrap().get(&(id, i)).copied();
                                if let Some(at) = at {
                                    lags.push(now.saturating_duration_since(at));
                                }
                            }
                            continue;
                        }
                        for tc in v
                            .pointer("/choices/0/delta/tool_calls")
                            .and_then(|t| t.as_array())
                            .into_iter()
                            .flatten()
                        {
                            let i = tc["index"].as_u64().unwrap() as u32;
                            let a = args.entry(i).or_default();
                            a.push_str(
                                tc.pointer("/function/arguments")
                                    .and_then(|x| x.as_str())
                                    .unwrap_or(""),
                            );
                            if serde_json::from_str::<serde_json::Value>(a).is_ok()
                                && done.insert(i)
                            {
                                let at = written.lock().unwrap().get(&(id, i)).copied();
                                if let Some(at) = at {
                                    lags.push(now.saturating_duration_since(at));
                                }
                            }
                        }
                    }
                }
            }
            lags
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort();
    all
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let streams = args.first().copied().unwrap_or(64);
    let requests = args.get(1).copied().unwrap_or(2048).max(streams);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let body = Arc::new(stream());
    let up = rt.block_on(upstream(body.clone(), false));
    let proxy_port = free_port();
    let mut proxy = start_proxy(&up, proxy_port);
    let nginx_port = free_port();
    let mut nginx = start_nginx(&up, nginx_port);
    println!(
        "{streams} concurrent streams, {requests} requests, {} KB per response; loopback, one machine; each path's best of three rounds, alternating (its CPU per request the least of three)",
        body.len() / 1000
    );
    println!();
    println!("| path | req/s | MB/s | first byte p50 / p99 (ms) | last byte p50 / p99 (ms) | its CPU per request (ms) |");
    println!("|---|---|---|---|---|---|");
    let mut rows = vec![("direct", up.clone(), None)];
    if let Some((n, _)) = &nginx {
        rows.push((
            "nginx (proxy_buffering off)",
            format!("http://127.0.0.1:{nginx_port}"),
            Some(n.id()),
        ));
    }
    rows.push((
        "toolstream-proxy",
        format!("http://127.0.0.1:{proxy_port}"),
        Some(proxy.id()),
    ));
    // Clock ticks per second (the kernel's USER_HZ: 100 on every Linux build).
    const HZ: f64 = 100.0;
    // Each path three times, the rounds alternating (direct, nginx, the proxy, then
    // again), each after a short warm-up: a path's best round is the one the host
    // disturbed least (a shared machine's noise only ever slows a run down), and no path
    // gets a quieter stretch of the run than another. Each path's row is its best round,
    // its CPU per request the least of its three.
    let mut best: Vec<(Option<Run>, f64)> = rows.iter().map(|_| (None, f64::MAX)).collect();
    for _ in 0..3 {
        for ((_, url, pid), (run, cpu_least)) in rows.iter().zip(best.iter_mut()) {
            rt.block_on(load(url, streams, streams));
            let cpu = pid.map(cpu_ticks);
            let r = rt.block_on(load(url, streams, requests));
            if let (Some(p), Some(before)) = (pid, cpu) {
                let ms = (cpu_ticks(*p) - before) as f64 / HZ * 1e3 / requests as f64;
                *cpu_least = cpu_least.min(ms);
            }
            if run.as_ref().is_none_or(|b| r.seconds < b.seconds) {
                *run = Some(r);
            }
        }
    }
    let mut rates = Vec::new();
    for ((name, _, _), (run, cpu)) in rows.iter().zip(best) {
        let r = run.expect("three rounds");
        let cpu = if cpu == f64::MAX {
            "-".into()
        } else {
            format!("{cpu:.3}")
        };
        let rps = requests as f64 / r.seconds;
        rates.push((name.to_string(), rps));
        println!(
            "| {name} | {rps:.0} | {:.0} | {:.2} / {:.2} | {:.2} / {:.2} | {cpu} |",
            r.bytes as f64 / r.seconds / 1e6,
            pct(&r.first_byte, 0.5),
            pct(&r.first_byte, 0.99),
            pct(&r.last_byte, 0.5),
            pct(&r.last_byte, 0.99),
        );
    }
    // The upstream client, chosen by measurement: reqwest and hyper-util's client on the
    // direct path, alternating, best of three each.
    let (mut reqwest_s, mut hyper_s) = (f64::MAX, f64::MAX);
    for _ in 0..3 {
        reqwest_s = reqwest_s.min(rt.block_on(load(&up, streams, requests)).seconds);
        hyper_s = hyper_s.min(rt.block_on(load_hyper(&up, streams, requests)));
    }
    println!();
    println!(
        "HTTP clients on the direct path, best of three: reqwest {:.0} req/s, hyper-util {:.0} req/s ({:.2}×)",
        requests as f64 / reqwest_s,
        requests as f64 / hyper_s,
        reqwest_s / hyper_s
    );
    let proxy_rate = rates.last().unwrap().1;
    // The same calls on the Responses API: direct and through the proxy, the proxy's share
    // of the direct rate beside chat completions'.
    let responses = Arc::new(responses_stream());
    let responses_up = rt.block_on(upstream(responses.clone(), false));
    let responses_proxy_port = free_port();
    let mut responses_proxy = start_proxy(&responses_up, responses_proxy_port);
    let through = format!("http://127.0.0.1:{responses_proxy_port}");
    // Best of three each, the runs alternating: direct Responses, Responses through the
    // proxy, chat completions through the proxy (the same 20 calls).
    let proxy_url = format!("http://127.0.0.1:{proxy_port}");
    let mut best = (f64::MAX, f64::MAX, f64::MAX);
    // The proxy's CPU time on each API, least of three.
    let mut cpu = (u64::MAX, u64::MAX);
    for _ in 0..3 {
        rt.block_on(load_path(&responses_up, "/v1/responses", streams, streams));
        best.0 = best.0.min(
            rt.block_on(load_path(&responses_up, "/v1/responses", streams, requests))
                .seconds,
        );
        rt.block_on(load_path(&through, "/v1/responses", streams, streams));
        let before = cpu_ticks(responses_proxy.id());
        best.1 = best.1.min(
            rt.block_on(load_path(&through, "/v1/responses", streams, requests))
                .seconds,
        );
        cpu.0 = cpu.0.min(cpu_ticks(responses_proxy.id()) - before);
        rt.block_on(load(&proxy_url, streams, streams));
        let before = cpu_ticks(proxy.id());
        best.2 = best
            .2
            .min(rt.block_on(load(&proxy_url, streams, requests)).seconds);
        cpu.1 = cpu.1.min(cpu_ticks(proxy.id()) - before);
    }
    println!();
    println!(
        "Responses API (the same 20 calls, {} KB per response against {} KB as chat chunks): direct {:.0} req/s; through toolstream-proxy {:.0} req/s on Responses, {:.0} req/s on chat completions: Responses ÷ chat through the proxy {:.2}×",
        responses.len() / 1000,
        body.len() / 1000,
        requests as f64 / best.0,
        requests as f64 / best.1,
        requests as f64 / best.2,
        best.2 / best.1,
    );
    println!(
        "the proxy's CPU per response, least of three: {:.3} ms on Responses, {:.3} ms on chat completions ({:.2}×)",
        cpu.0 as f64 / HZ * 1e3 / requests as f64,
        cpu.1 as f64 / HZ * 1e3 / requests as f64,
        cpu.0 as f64 / cpu.1 as f64,
    );
    let _ = responses_proxy.kill();
    let _ = responses_proxy.wait();
    // The metrics' cost: the same build with `--no-metrics` beside the proxy above, best
    // of three each, alternating; rate and CPU per response.
    let bare_port = free_port();
    let mut bare = start_proxy_with(&up, bare_port, &["--no-metrics"]);
    let bare_url = format!("http://127.0.0.1:{bare_port}");
    let (mut with, mut without) = ((f64::MAX, u64::MAX), (f64::MAX, u64::MAX));
    for _ in 0..3 {
        for (url, pid, best) in [
            (&proxy_url, proxy.id(), &mut with),
            (&bare_url, bare.id(), &mut without),
        ] {
            rt.block_on(load(url, streams, streams));
            let before = cpu_ticks(pid);
            let seconds = rt.block_on(load(url, streams, requests)).seconds;
            *best = (best.0.min(seconds), best.1.min(cpu_ticks(pid) - before));
        }
    }
    println!();
    println!(
        "metrics on / off, best of three alternating: {:.0} / {:.0} req/s ({:.2}×), CPU per response {:.3} / {:.3} ms",
        requests as f64 / with.0,
        requests as f64 / without.0,
        without.0 / with.0,
        with.1 as f64 / HZ * 1e3 / requests as f64,
        without.1 as f64 / HZ * 1e3 / requests as f64,
    );
    let _ = bare.kill();
    let _ = bare.wait();
    if let Some((_, n)) = rates.iter().find(|(n, _)| n.starts_with("nginx")) {
        println!();
        println!(
            "toolstream-proxy ÷ nginx throughput: {:.2}×",
            proxy_rate / n
        );
    }
    println!(
        "toolstream-proxy peak RSS under load: {} KiB",
        rss_kib(proxy.id(), "VmHWM:")
    );
    let _ = proxy.kill();
    let _ = proxy.wait();
    if let Some((n, _)) = nginx.as_mut() {
        // SIGTERM, so that the master takes its workers down with it (SIGKILL would leave
        // them running).
        let _ = Command::new("kill").arg(n.id().to_string()).status();
        let _ = n.wait();
    }

    // Paced streams, as models stream: what the proxy adds to each call's arrival. The
    // proxy on a core of its own and the load generator (client and upstream) on the
    // others, where there are two: sharing every core, a call's tail was the proxy's
    // thread waiting for a core behind the load generator's, not the proxy's work.
    let written: Written = Default::default();
    let paced_up = rt.block_on(paced_upstream(written.clone()));
    let port = free_port();
    let cores = allowed_cpus();
    let split = match cores.split_last() {
        Some((last, rest)) if !rest.is_empty() => {
            let rest = rest
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",");
            pin_self(&rest).then_some(*last)
        }
        _ => None,
    };
    let mut proxy = match split {
        Some(core) => start_proxy_on(&paced_up, port, core),
        None => start_proxy(&paced_up, port),
    };
    println!();
    println!(
        "{streams} paced streams ({CALLS} calls of {FRAGMENTS} fragments a response, one event every {} ms), from the upstream writing a call's last fragment to the client holding the call whole; each path's round of least p99 of three, alternating; {}. Paced on tokio's timer, every stream's event leaves in the same millisecond tick (a burst of {streams} events each time); \"streams spread\": each response on its own clock, at a phase of its own:",
        GAP.as_millis(),
        match split {
            Some(core) => format!("the proxy on CPU {core}, the load generator on the others"),
            None => "the proxy and the load generator sharing the CPUs (one CPU, or no `taskset`)".into(),
        }
    );
    println!();
    println!("| path | p50 (ms) | p99 (ms) | p99 of each round (ms) | calls |");
    println!("|---|---|---|---|---|");
    let each = 4;
    let mut added = Vec::new();
    for (api, kind, first) in [
        ("chat completions", (false, false), 1),
        ("Responses", (true, false), 2_000_000),
        ("chat completions, streams spread", (false, true), 4_000_000),
        ("Responses, streams spread", (true, true), 6_000_000),
    ] {
        // Three rounds, direct and through the proxy alternating; each path's round of
        // least p99 is kept. A round is a third of a second: one stall of the host (a
        // shared machine's steal) in it delays a whole burst of calls and sets its p99,
        // whichever path it falls on; the least of three is what the path itself costs.
        let mut direct: Option<Vec<Duration>> = None;
        let mut through: Option<Vec<Duration>> = None;
        // Every round's p99, direct and through the proxy, for the table.
        let mut rounds = (Vec::new(), Vec::new());
        for round in 0..3u64 {
            let d = rt.block_on(paced(
                &paced_up,
                written.clone(),
                streams,
                each,
                first + round * 200_000,
                kind,
            ));
            let t = rt.block_on(paced(
                &format!("http://127.0.0.1:{port}"),
                written.clone(),
                streams,
                each,
                first + 1_000_000 + round * 200_000,
                kind,
            ));
            rounds.0.push(format!("{:.2}", pct(&d, 0.99)));
            rounds.1.push(format!("{:.2}", pct(&t, 0.99)));
            for (best, v) in [(&mut direct, d), (&mut through, t)] {
                if best.as_ref().is_none_or(|b| pct(&v, 0.99) < pct(b, 0.99)) {
                    *best = Some(v);
                }
            }
        }
        let (direct, through) = (
            direct.expect("three rounds"),
            through.expect("three rounds"),
        );
        for (name, v, all) in [
            ("direct", &direct, &rounds.0),
            ("toolstream-proxy", &through, &rounds.1),
        ] {
            println!(
                "| {api}, {name} | {:.3} | {:.3} | {} | {} |",
                pct(v, 0.5),
                pct(v, 0.99),
                all.join(" / "),
                v.len()
            );
        }
        added.push((
            api,
            pct(&through, 0.5) - pct(&direct, 0.5),
            pct(&through, 0.99) - pct(&direct, 0.99),
        ));
    }
    println!();
    for (api, p50, p99) in added {
        println!("added by the proxy on {api}: p50 {p50:.3} ms, p99 {p99:.3} ms");
    }
    let _ = proxy.kill();
    let _ = proxy.wait();
    if split.is_some() {
        let all = cores.iter().map(usize::to_string).collect::<Vec<_>>();
        pin_self(&all.join(","));
    }

    // Idle streams: each upstream sends its head and one event, then waits.
    let idle_up = rt.block_on(upstream(body, true));
    let port = free_port();
    let mut proxy = start_proxy(&idle_up, port);
    let idle = 512;
    let before = rss_kib(proxy.id(), "VmRSS:");
    let held = rt.block_on(async {
        let client = reqwest::Client::new();
        let mut held = Vec::new();
        for _ in 0..idle {
            let r = client
                .post(format!("http://127.0.0.1:{port}/v1/chat/completions"))
                .body("{}")
                .send()
                .await
                .unwrap();
            let mut s = r.bytes_stream();
            s.next().await;
            held.push(s);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        held
    });
    let after = rss_kib(proxy.id(), "VmRSS:");
    println!(
        "toolstream-proxy memory per idle stream: {} KiB ({idle} streams open: RSS {before} → {after} KiB)",
        after.saturating_sub(before) / idle as u64
    );
    drop(held);
    let _ = proxy.kill();
    let _ = proxy.wait();
}
