//! The proxy over real loopback sockets: a fake upstream that replays the shipped captures
//! (in 1-, 7-, 64- and 4096-byte writes, or cut), the proxy, and reqwest as the client.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolstream::pipeline::Stream;
use toolstream::provider::Format;
use toolstream::proxy::{serve, Config};

/// What the fake upstream answers.
#[derive(Clone)]
struct Script {
    status: u16,
    content_type: &'static str,
    headers: Vec<(&'static str, String)>,
    body: Bytes,
    /// Bytes per write.
    write: usize,
    /// Close the connection this many bytes into the body, without ending it.
    cut_at: Option<usize>,
}

impl Script {
    fn sse(body: Bytes, write: usize) -> Self {
        Script {
            status: 200,
            content_type: "text/event-stream",
            headers: Vec::new(),
            body,
            write,
            cut_at: None,
        }
    }
}

/// A fake upstream: answers every request with the script, and keeps each request's body.
async fn upstream(script: Script) -> (String, Arc<Mutex<Vec<Vec<u8>>>>) {
    upstream_seq(vec![script]).await
}

/// A fake upstream that answers its nth request with `scripts[n]` (the last one from then
/// on), and keeps each request's body.
async fn upstream_seq(scripts: Vec<Script>) -> (String, Arc<Mutex<Vec<Vec<u8>>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let scripts = scripts.clone();
            let kept = kept.clone();
            tokio::spawn(async move {
                let Some(body) = read_request(&mut socket).await else {
                    return;
                };
                let script = {
                    let mut kept = kept.lock().unwrap();
                    kept.push(body);
                    scripts[(kept.len() - 1).min(scripts.len() - 1)].clone()
                };
                // One response a connection, and said so: a client that pooled the
                // connection would send its next request into the closing socket (and
                // count a network error and a retry where the test counts attempts).
                let mut head = format!(
                    "HTTP/1.1 {} X\r\ncontent-type: {}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n",
                    script.status, script.content_type
                );
                for (n, v) in &script.headers {
                    head.push_str(&format!("{n}: {v}\r\n"));
                }
                head.push_str("\r\n");
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let body = match script.cut_at {
                    Some(n) => &script.body[..n.min(script.body.len())],
                    None => &script.body[..],
                };
                for piece in body.chunks(script.write.max(1)) {
                    let chunk =
                        [format!("{:x}\r\n", piece.len()).as_bytes(), piece, b"\r\n"].concat();
                    if socket.write_all(&chunk).await.is_err() {
                        return;
                    }
                }
                if script.cut_at.is_none() {
                    let _ = socket.write_all(b"0\r\n\r\n").await;
                }
                let _ = socket.shutdown().await;
            });
        }
    });
    (url, seen)
}

/// One HTTP/1.1 request's body (by content-length).
async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    Some(buf[head_end..].to_vec())
}

/// The proxy in front of `upstream`.
async fn proxy(upstream: &str) -> String {
    proxy_with(Config::new(upstream.parse().unwrap())).await
}

/// The proxy with `config`.
async fn proxy_with(config: Config) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(serve(listener, config));
    url
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn captures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/captures")
}

/// The calls a capture must give (name, arguments), from its hand-written expected file:
/// each call, and each failed call with the bytes the provider sent (forwarded as they
/// came, so that the agent's own handling applies).
fn expected_calls(name: &str) -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(captures().join(format!("{name}.expected.jsonl"))).unwrap();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            let name = v["name"].as_str().unwrap_or_default().to_string();
            match v["type"].as_str() {
                Some("tool_call") => Some((name, v["arguments"].clone())),
                Some("tool_call_error") => Some((name, parsed(v["raw"].as_str().unwrap()))),
                _ => None,
            }
        })
        .collect()
}

fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::String(text.to_string()))
}

/// The SSE events of a body: (event type, data).
fn sse_events(body: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(body);
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut ty = String::new();
        let mut data = Vec::new();
        for line in block.lines() {
            if let Some(t) = line.strip_prefix("event: ") {
                ty = t.to_string();
            } else if let Some(d) = line.strip_prefix("data: ") {
                data.push(d);
            }
        }
        if !data.is_empty() {
            out.push((ty, data.join("\n")));
        }
    }
    out
}

/// OpenAI chunks accumulated as the SDKs do: tool calls by index (id and name set once,
/// arguments appended).
fn openai_calls(body: &[u8]) -> Vec<(String, String, String)> {
    let mut calls: Vec<(String, String, String)> = Vec::new();
    for (_, data) in sse_events(body) {
        let Ok(v) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        for tc in v
            .pointer("/choices/0/delta/tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let i = tc["index"].as_u64().unwrap() as usize;
            if calls.len() <= i {
                calls.resize(i + 1, Default::default());
            }
            if let Some(id) = tc["id"].as_str() {
                calls[i].0 = id.to_string();
            }
            if let Some(n) = tc.pointer("/function/name").and_then(Value::as_str) {
                calls[i].1.push_str(n);
            }
            if let Some(a) = tc.pointer("/function/arguments").and_then(Value::as_str) {
                calls[i].2.push_str(a);
            }
        }
    }
    calls
}

/// Anthropic events accumulated as the SDK does: tool_use blocks by index.
fn anthropic_calls(body: &[u8]) -> Vec<(String, String, String)> {
    let mut calls: std::collections::BTreeMap<u64, (String, String, String)> = Default::default();
    for (ty, data) in sse_events(body) {
        let Ok(v) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        match ty.as_str() {
            "content_block_start" if v["content_block"]["type"] == "tool_use" => {
                let b = &v["content_block"];
                calls.insert(
                    v["index"].as_u64().unwrap(),
                    (
                        b["id"].as_str().unwrap().into(),
                        b["name"].as_str().unwrap().into(),
                        String::new(),
                    ),
                );
            }
            "content_block_delta" if v["delta"]["type"] == "input_json_delta" => {
                let c = calls
                    .get_mut(&v["index"].as_u64().unwrap())
                    .expect("delta of a started block");
                c.2.push_str(v["delta"]["partial_json"].as_str().unwrap());
            }
            _ => {}
        }
    }
    calls.into_values().collect()
}

async fn post(url: &str, body: Value) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let r = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let mut body = Vec::new();
    let mut s = r.bytes_stream();
    while let Some(c) = s.next().await {
        match c {
            Ok(c) => body.extend_from_slice(&c),
            Err(_) => break,
        }
    }
    (status, headers, body)
}

/// Each OpenAI-shaped and Anthropic capture through the proxy at every write size: the
/// calls a client accumulates are the expected calls, whole, one per index.
#[test]
fn every_capture_gives_its_expected_calls_through_the_proxy_at_every_write_size() {
    let rt = runtime();
    let mut checked = 0;
    for entry in std::fs::read_dir(captures()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("sse") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bytes = Bytes::from(std::fs::read(&path).unwrap());
        let mut s = Stream::new(None);
        let mut events = Vec::new();
        s.push(bytes.clone(), &mut events);
        let route = match s.format() {
            Some(Format::OpenAiChat) => "/v1/chat/completions",
            Some(Format::Anthropic) => "/v1/messages",
            _ => continue,
        };
        let want = expected_calls(&name);
        let mut seen_bodies = Vec::new();
        for write in [1, 7, 64, 4096] {
            let got = rt.block_on(async {
                let (up, _) = upstream(Script::sse(bytes.clone(), write)).await;
                let url = proxy(&up).await;
                let (status, _, body) =
                    post(&format!("{url}{route}"), json!({"stream": true})).await;
                assert_eq!(status, 200, "{name}");
                body
            });
            let calls = if route == "/v1/messages" {
                anthropic_calls(&got)
            } else {
                openai_calls(&got)
            };
            let named: Vec<(String, Value)> = calls
                .iter()
                .map(|(_, n, a)| (n.clone(), parsed(a)))
                .collect();
            assert_eq!(named, want, "{name} at {write}-byte writes");
            let ids: std::collections::HashSet<_> = calls.iter().map(|c| c.0.clone()).collect();
            assert_eq!(ids.len(), calls.len(), "{name}: ids unique");
            assert!(
                calls.iter().all(|c| !c.0.is_empty()),
                "{name}: every call has an id"
            );
            // The same events whatever the writes (minted ids aside).
            seen_bodies.push(named);
        }
        assert!(seen_bodies.windows(2).all(|w| w[0] == w[1]), "{name}");
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} captures");
}

#[test]
fn glued_calls_are_split_and_stop_becomes_tool_calls() {
    let rt = runtime();
    let stream = concat!(
        "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Looking.\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}{\\\"a\\\":2}\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let body = rt.block_on(async {
        let (up, _) = upstream(Script::sse(Bytes::from_static(stream.as_bytes()), 5)).await;
        let url = proxy(&up).await;
        post(
            &format!("{url}/v1/chat/completions"),
            json!({"stream": true}),
        )
        .await
        .2
    });
    let calls = openai_calls(&body);
    assert_eq!(
        calls,
        [
            ("c1".to_string(), "f".to_string(), r#"{"a":1}"#.to_string()),
            (
                toolstream::ids::derive("c1", 2, 0),
                "f".to_string(),
                r#"{"a":2}"#.to_string()
            ),
        ]
    );
    // The client is told which id was made, and from what.
    let text = String::from_utf8_lossy(&body);
    assert!(
        text.contains(&format!(
            ": toolstream id {} made for a call split from c1's arguments",
            toolstream::ids::derive("c1", 2, 0)
        )),
        "{text}"
    );
    let events = sse_events(&body);
    let text = events
        .iter()
        .find(|(_, d)| d.contains("Looking."))
        .expect("the text, as it came");
    assert!(text.1.contains("\"content\":\"Looking.\""));
    assert!(
        events
            .iter()
            .any(|(_, d)| d.contains("\"finish_reason\":\"tool_calls\"")),
        "{events:?}"
    );
    assert_eq!(events.last().unwrap().1, "[DONE]");
}

#[test]
fn a_cut_upstream_ends_the_client_stream_with_an_error_and_no_done() {
    let rt = runtime();
    let bytes = Bytes::from(std::fs::read(captures().join("openai-parallel-calls.sse")).unwrap());
    for cut in [300, 700, 1500] {
        let body = rt.block_on(async {
            let mut script = Script::sse(bytes.clone(), 64);
            script.cut_at = Some(cut);
            let (up, _) = upstream(script).await;
            let url = proxy(&up).await;
            post(
                &format!("{url}/v1/chat/completions"),
                json!({"stream": true}),
            )
            .await
            .2
        });
        let events = sse_events(&body);
        assert!(
            !events.iter().any(|(_, d)| d == "[DONE]"),
            "cut at {cut}: {events:?}"
        );
        let last: Value = serde_json::from_str(&events.last().unwrap().1).unwrap();
        assert_eq!(last["error"]["type"], "stream_interrupted", "cut at {cut}");
    }
    // Anthropic: an error event, no message_stop.
    let bytes = Bytes::from(std::fs::read(captures().join("anthropic-tool-use.sse")).unwrap());
    let body = rt.block_on(async {
        let mut script = Script::sse(bytes.clone(), 64);
        script.cut_at = Some(bytes.len() / 2);
        let (up, _) = upstream(script).await;
        let url = proxy(&up).await;
        post(&format!("{url}/v1/messages"), json!({"stream": true}))
            .await
            .2
    });
    let events = sse_events(&body);
    assert!(!events.iter().any(|(t, _)| t == "message_stop"));
    assert_eq!(events.last().unwrap().0, "error");
}

#[test]
fn a_request_with_broken_arguments_in_its_history_reaches_the_upstream_repaired() {
    let rt = runtime();
    let stream = Bytes::from(std::fs::read(captures().join("openai-parallel-calls.sse")).unwrap());
    let request = json!({"model": "m", "stream": true, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}{\"x\":2}"}},
            {"id": "b", "type": "function", "function": {"name": "g", "arguments": "[1]"}},
            {"id": "c", "type": "function", "function": {"name": "h", "arguments": "{\"ok\":1}"}},
        ]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "tool", "tool_call_id": "b", "content": "2"},
        {"role": "tool", "tool_call_id": "c", "content": "3"},
    ]});
    let (headers, seen) = rt.block_on(async {
        let (up, seen) = upstream(Script::sse(stream, 4096)).await;
        let url = proxy(&up).await;
        let (_, headers, _) = post(&format!("{url}/v1/chat/completions"), request).await;
        (headers, seen)
    });
    let sent: Value = serde_json::from_slice(&seen.lock().unwrap()[0]).unwrap();
    let args = |i: usize| {
        sent["messages"][1]["tool_calls"][i]["function"]["arguments"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        serde_json::from_str::<Value>(&args(0)).unwrap(),
        json!({"INVALID_JSON": "{\"x\":1}{\"x\":2}"})
    );
    assert_eq!(
        serde_json::from_str::<Value>(&args(1)).unwrap(),
        json!({"INVALID_JSON": "[1]"})
    );
    assert_eq!(args(2), "{\"ok\":1}");
    let note = headers["toolstream-repaired"].to_str().unwrap();
    assert!(
        note.contains("/messages/1/tool_calls/0/function/arguments (glued"),
        "{note}"
    );
    assert!(
        note.contains("/messages/1/tool_calls/1/function/arguments (not_object"),
        "{note}"
    );
}

#[test]
fn errors_pass_through_with_the_verdict_in_headers() {
    let rt = runtime();
    let cases = [
        (
            429,
            r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#,
            vec![("retry-after-ms", "2500".to_string())],
            "rate_limit",
            // Its retries spent (none allowed here), and no other upstream: the client's.
            "fallback",
            Some("3"),
        ),
        (
            400,
            r#"{"error":{"message":"invalid tool call arguments"}}"#,
            vec![],
            "model_output",
            // No retries allowed: the model's output is surfaced (with retries left, the
            // verdict is retry_with_feedback, the origin story's test below).
            "surface",
            None,
        ),
        (
            401,
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#,
            vec![],
            "auth",
            "fallback",
            None,
        ),
    ];
    for (status, body, headers, reason, action, retry_after) in cases {
        let (got_status, got_headers, got_body) = rt.block_on(async {
            let script = Script {
                status,
                content_type: "application/json",
                headers,
                body: Bytes::from_static(body.as_bytes()),
                write: 4096,
                cut_at: None,
            };
            let (up, _) = upstream(script).await;
            // No retries: the verdict as the client would act on it.
            let mut config = Config::new(up.parse().unwrap());
            config.decisions.max_retries = 0;
            let url = proxy_with(config).await;
            post(
                &format!("{url}/v1/chat/completions"),
                json!({"stream": true}),
            )
            .await
        });
        assert_eq!(got_status, status);
        assert_eq!(got_body, body.as_bytes(), "the body unchanged");
        assert_eq!(got_headers["toolstream-reason"], reason, "{body}");
        assert_eq!(got_headers["toolstream-action"], action, "{body}");
        assert_eq!(
            got_headers.get("retry-after").map(|v| v.to_str().unwrap()),
            retry_after,
            "{body}"
        );
    }
}

#[test]
fn an_error_inside_the_stream_is_annotated() {
    let rt = runtime();
    let bytes =
        Bytes::from(std::fs::read(captures().join("anthropic-overloaded-midstream.sse")).unwrap());
    let body = rt.block_on(async {
        let (up, _) = upstream(Script::sse(bytes, 64)).await;
        let url = proxy(&up).await;
        post(&format!("{url}/v1/messages"), json!({"stream": true}))
            .await
            .2
    });
    let text = String::from_utf8_lossy(&body);
    let note = text
        .find(": toolstream error reason=overloaded")
        .expect("annotated");
    let error = text.find("event: error").expect("the error forwarded");
    assert!(note < error, "the note comes before the error");
}

#[test]
fn healthz_and_an_unreachable_upstream() {
    let rt = runtime();
    rt.block_on(async {
        // A port nobody listens on: port 1 (tcpmux), refused on any machine that runs no
        // such service. (A port bound and let go could be taken at once by another test's
        // listener, running in parallel, whose answer would not be a refusal.)
        let dead_url = if tokio::net::TcpStream::connect("127.0.0.1:1").await.is_err() {
            "http://127.0.0.1:1".to_string()
        } else {
            let dead = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}", dead.local_addr().unwrap());
            drop(dead);
            url
        };
        let url = proxy(&dead_url).await;
        let r = reqwest::get(format!("{url}/healthz")).await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.text().await.unwrap(), "ok\n");
        let (status, headers, _) = post(&format!("{url}/v1/chat/completions"), json!({})).await;
        assert_eq!(status, 502);
        assert_eq!(headers["toolstream-reason"], "connection");
        // Retried twice (the default), then the client's to take elsewhere.
        assert_eq!(headers["toolstream-action"], "fallback");
        assert_eq!(headers["toolstream-attempts"], "3");
    });
}

/// A client that reads nothing: the proxy stops reading the upstream once a few pieces
/// wait, so what it holds stays bounded however much the upstream has to send. (Bounded in
/// time: the client waits 2 s.)
#[test]
fn a_slow_client_does_not_make_the_proxy_buffer_the_upstream() {
    let rt = runtime();
    let written = rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let up = format!("http://{}", listener.local_addr().unwrap());
        let written = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let w = written.clone();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            read_request(&mut socket).await;
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
            socket.write_all(head.as_bytes()).await.unwrap();
            let event = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}]}\n\n";
            let piece = event.repeat(400);
            let chunk = [format!("{:x}\r\n", piece.len()).as_bytes(), piece.as_bytes(), b"\r\n"].concat();
            // Up to 256 MiB, as fast as the proxy takes it.
            while w.load(std::sync::atomic::Ordering::Relaxed) < 256 << 20 {
                if socket.write_all(&chunk).await.is_err() {
                    return;
                }
                w.fetch_add(chunk.len(), std::sync::atomic::Ordering::Relaxed);
            }
        });
        let url = proxy(&up).await;
        let r = reqwest::Client::new()
            .post(format!("{url}/v1/chat/completions"))
            .body(json!({"stream": true}).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        tokio::time::sleep(Duration::from_secs(2)).await;
        let n = written.load(std::sync::atomic::Ordering::Relaxed);
        drop(r);
        n
    });
    // Socket buffers on both sides (a few MiB each on loopback) plus the proxy's few pieces.
    assert!(
        written < 48 << 20,
        "the upstream wrote {written} bytes to a client that read none"
    );
}

/// A server that ends with a finish reason and no `[DONE]` (some do): a clean end, byte
/// for byte, with no error added.
#[test]
fn a_finish_without_done_is_a_clean_end() {
    let rt = runtime();
    let stream = concat!(
        "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    );
    let body = rt.block_on(async {
        let (up, _) = upstream(Script::sse(Bytes::from_static(stream.as_bytes()), 7)).await;
        let url = proxy(&up).await;
        post(
            &format!("{url}/v1/chat/completions"),
            json!({"stream": true}),
        )
        .await
        .2
    });
    assert_eq!(String::from_utf8_lossy(&body), stream);
}

/// A request with nothing to repair reaches the upstream byte for byte (never re-serialised),
/// and so does one whose calls are all well formed.
#[test]
fn a_request_with_nothing_to_repair_is_forwarded_byte_for_byte() {
    let rt = runtime();
    let stream = Bytes::from(std::fs::read(captures().join("openai-parallel-calls.sse")).unwrap());
    let bodies = [
        "{ \"stream\" : true,\n  \"model\": \"m\", \"messages\": [{\"role\":\"user\",\"content\":\"caf\\u00e9\"}] }",
        "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\": 1}\"}}]}],  \"stream\":true}",
    ];
    for body in bodies {
        let seen = rt.block_on(async {
            let (up, seen) = upstream(Script::sse(stream.clone(), 4096)).await;
            let url = proxy(&up).await;
            let r = reqwest::Client::new()
                .post(format!("{url}/v1/chat/completions"))
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            assert!(r.headers().get("toolstream-repaired").is_none());
            r.bytes().await.unwrap();
            seen
        });
        assert_eq!(seen.lock().unwrap()[0], body.as_bytes());
    }
}

/// A compressed upstream body (sent although the proxy asked for identity) reaches the
/// client untouched, with its content-encoding: never decoded as an event stream and
/// answered in plain text under a gzip header. (At 91c7367 the rewriter read the gzip
/// bytes as SSE and sent an error event in plain text under `content-encoding: gzip`.)
#[test]
fn a_compressed_upstream_body_passes_untouched() {
    let rt = runtime();
    // A gzip member's header and some deflate bytes: what matters is that they are not SSE.
    let gz = Bytes::from_static(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xcbH\xcd\xc9\xc9\x07\x00\x86\xa6\x106\x05\x00\x00\x00");
    let (status, headers, body) = rt.block_on(async {
        let mut script = Script::sse(gz.clone(), 7);
        script.headers.push(("content-encoding", "gzip".into()));
        let (up, _) = upstream(script).await;
        let url = proxy(&up).await;
        let r = reqwest::Client::new()
            .post(format!("{url}/v1/chat/completions"))
            .body(json!({"stream": true}).to_string())
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        (status, headers, r.bytes().await.unwrap().to_vec())
    });
    assert_eq!(status, 200);
    assert_eq!(headers.get("content-encoding").unwrap(), "gzip");
    assert_eq!(body, gz.to_vec());
}

/// A history with broken arguments and, elsewhere, what serde_json refuses (a lone
/// surrogate escape, `1e400`, 130 nested arrays) is repaired all the same, the rest byte
/// for byte; a body that is not JSON goes out as it came, and the response says the repair
/// failed. (At 91c7367 both went out unrepaired, with no header and no log line.)
#[test]
fn request_repair_reads_what_serde_refuses_and_says_when_it_cannot() {
    let rt = runtime();
    let stream = Bytes::from(std::fs::read(captures().join("openai-parallel-calls.sse")).unwrap());
    let deep = format!("{}{}", "[".repeat(130), "]".repeat(130));
    let body = format!(
        r#"{{"model":"m","stream":true,"n":1e400,"d":{deep},"messages":[{{"role":"user","content":"cut \ud83d"}},{{"role":"assistant","tool_calls":[{{"id":"a","type":"function","function":{{"name":"f","arguments":"{{\"x\":1"}}}}]}}]}}"#
    );
    let send = |body: String| {
        let stream = stream.clone();
        rt.block_on(async move {
            let (up, seen) = upstream(Script::sse(stream, 4096)).await;
            let url = proxy(&up).await;
            let r = reqwest::Client::new()
                .post(format!("{url}/v1/chat/completions"))
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            let note = r.headers()["toolstream-repaired"]
                .to_str()
                .unwrap()
                .to_string();
            r.bytes().await.unwrap();
            let sent = seen.lock().unwrap()[0].clone();
            (note, sent)
        })
    };
    let (note, sent) = send(body.clone());
    assert!(
        note.contains("/messages/1/tool_calls/0/function/arguments (invalid"),
        "{note}"
    );
    let want = body.replace(
        r#""arguments":"{\"x\":1""#,
        r#""arguments":"{\"INVALID_JSON\":\"{\\\"x\\\":1\"}""#,
    );
    assert_eq!(String::from_utf8(sent).unwrap(), want);
    let broken = r#"{"model":"m","messages":[{"tool_calls":[{"function":{"arguments":"#;
    let (note, sent) = send(broken.to_string());
    assert!(note.starts_with("failed: "), "{note}");
    assert_eq!(sent, broken.as_bytes());
}

/// An error response of `status` with an OpenAI-shaped `body` and `headers`.
fn error_script(status: u16, body: &'static str, headers: Vec<(&'static str, String)>) -> Script {
    Script {
        status,
        content_type: "application/json",
        headers,
        body: Bytes::from_static(body.as_bytes()),
        write: 4096,
        cut_at: None,
    }
}

/// The proxy with `upstreams` (the first, then the rest as `--fallback`s in order),
/// `retries` of a transient failure; one streaming chat request through it: its status,
/// headers and body.
async fn decided(upstreams: &[&str], retries: u32) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let mut config = Config::new(upstreams[0].parse().unwrap());
    config.upstreams = upstreams
        .iter()
        .map(|u| toolstream::proxy::Upstream::from(u.parse::<http::Uri>().unwrap()))
        .collect();
    config.decisions.max_retries = retries;
    let url = proxy_with(config).await;
    post(
        &format!("{url}/v1/chat/completions"),
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await
}

/// The origin story: the model's own broken tool-call JSON, with two other upstreams
/// configured, is sent nowhere else and not retried: one attempt, the error to the client
/// at once with its verdict.
#[test]
fn the_models_broken_output_is_never_retried_elsewhere() {
    let rt = runtime();
    rt.block_on(async {
        let bad =
            r#"{"error":{"message":"invalid tool call arguments","type":"invalid_request_error"}}"#;
        let (a, a_seen) = upstream(error_script(400, bad, vec![])).await;
        let ok = Bytes::from(std::fs::read(captures().join("openai-parallel-calls.sse")).unwrap());
        let (b, b_seen) = upstream(Script::sse(ok.clone(), 4096)).await;
        let (c, c_seen) = upstream(Script::sse(ok, 4096)).await;
        let (status, headers, body) = decided(&[&a, &b, &c], 2).await;
        assert_eq!(status, 400);
        assert_eq!(body, bad.as_bytes());
        assert_eq!(headers["toolstream-reason"], "model_output");
        assert_eq!(headers["toolstream-action"], "retry_with_feedback");
        assert!(headers.get("toolstream-attempts").is_none());
        let seen = |s: &Arc<Mutex<Vec<Vec<u8>>>>| s.lock().unwrap().len();
        assert_eq!((seen(&a_seen), seen(&b_seen), seen(&c_seen)), (1, 0, 0));
    });
}

/// A rate limit with `retry-after: 1`: one wait on the same upstream, then its answer; the
/// client gets the stream, and the number of attempts in a header.
#[test]
fn a_rate_limit_within_the_budget_is_waited_out_on_the_same_upstream() {
    let rt = runtime();
    rt.block_on(async {
        let limited = r#"{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}"#;
        let ok = Bytes::from(std::fs::read(captures().join("openai-parallel-calls.sse")).unwrap());
        let (a, a_seen) = upstream_seq(vec![
            error_script(429, limited, vec![("retry-after", "1".to_string())]),
            Script::sse(ok.clone(), 4096),
        ])
        .await;
        let (b, b_seen) = upstream(Script::sse(ok.clone(), 4096)).await;
        let (status, headers, body) = decided(&[&a, &b], 2).await;
        assert_eq!(status, 200);
        assert_eq!(headers["toolstream-attempts"], "2");
        assert!(String::from_utf8_lossy(&body).contains("[DONE]"));
        assert_eq!(a_seen.lock().unwrap().len(), 2);
        assert_eq!(b_seen.lock().unwrap().len(), 0);
    });
}

/// Quota exhausted, a bad key, a refused connection: the next upstream at once (no retry of
/// what a retry does not fix; a refused connection after its retries, none here), the
/// client's request as it sent it.
#[test]
fn quota_auth_and_a_dead_upstream_fall_back_in_order() {
    let rt = runtime();
    let quota = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#;
    let auth = r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#;
    rt.block_on(async {
        let ok = Bytes::from(std::fs::read(captures().join("openai-parallel-calls.sse")).unwrap());
        let (a, a_seen) = upstream(error_script(429, quota, vec![])).await;
        let (b, b_seen) = upstream(error_script(401, auth, vec![])).await;
        let dead = "http://127.0.0.1:1";
        let (d, d_seen) = upstream(Script::sse(ok, 4096)).await;
        let (status, headers, body) = decided(&[&a, &b, dead, &d], 0).await;
        assert_eq!(status, 200);
        assert_eq!(headers["toolstream-attempts"], "4");
        assert!(String::from_utf8_lossy(&body).contains("[DONE]"));
        let seen = |s: &Arc<Mutex<Vec<Vec<u8>>>>| s.lock().unwrap().clone();
        assert_eq!((seen(&a_seen).len(), seen(&b_seen).len()), (1, 1));
        // The same request everywhere.
        assert_eq!(seen(&d_seen), seen(&a_seen));
        // Without a fallback: the quota error goes to the client after one attempt.
        let (a, a_seen) = upstream(error_script(429, quota, vec![])).await;
        let (status, headers, _) = decided(&[&a], 2).await;
        assert_eq!(status, 429);
        assert_eq!(headers["toolstream-reason"], "quota_exhausted");
        assert_eq!(a_seen.lock().unwrap().len(), 1);
    });
}

/// `GET /metrics` after a run of requests: each counter says what the test sent, in the
/// OpenMetrics text format (the families' TYPE lines, `# EOF` last).
#[test]
fn metrics_count_what_was_sent() {
    let rt = runtime();
    rt.block_on(async {
        let ok = Bytes::from(std::fs::read(captures().join("openai-parallel-calls.sse")).unwrap());
        let quota = r#"{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","code":"insufficient_quota"}}"#;
        let (a, _) = upstream(error_script(429, quota, vec![])).await;
        let (b, _) = upstream(Script::sse(ok, 64)).await;
        let mut config = Config::new(a.parse().unwrap());
        config
            .upstreams
            .push(toolstream::proxy::Upstream::from(b.parse::<http::Uri>().unwrap()));
        let url = proxy_with(config).await;
        for _ in 0..3 {
            let (status, _, _) = post(
                &format!("{url}/v1/chat/completions"),
                json!({"model": "m", "stream": true, "messages": []}),
            )
            .await;
            assert_eq!(status, 200);
        }
        let text = reqwest::get(format!("{url}/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let value = |series: &str| -> f64 {
            text.lines()
                .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {series} in\n{text}"))
        };
        assert_eq!(
            value(r#"toolstream_proxy_requests_total{route="chat",upstream="1",status="200"}"#),
            3.0
        );
        assert_eq!(
            value(r#"toolstream_proxy_attempts_failed_total{reason="quota_exhausted",action="fallback",decision="fallback"}"#),
            3.0
        );
        // The capture's calls, three times.
        let calls = value(r#"toolstream_proxy_calls_total{outcome="delivered"}"#);
        assert!(calls >= 3.0 && calls % 3.0 == 0.0, "{calls}");
        assert_eq!(value("toolstream_proxy_streams_open"), 0.0);
        assert!(value("toolstream_proxy_upstream_read_bytes_total") > 0.0);
        assert_eq!(value("toolstream_proxy_duration_seconds_count"), 3.0);
        assert!(text.contains("# TYPE toolstream_proxy_first_byte_seconds histogram"));
        // Each delivered call's hand-over timed.
        assert_eq!(value("toolstream_proxy_call_latency_seconds_count"), calls);
        assert!(text.trim_end().ends_with("# EOF"));
    });
}

/// With `--no-repair` a request goes out as it came; when the upstream refuses its history
/// for arguments that are not one JSON object, the proxy repairs it and sends it once more
/// to the same upstream, and says so; a second refusal goes to the client.
#[test]
fn a_refused_history_is_repaired_and_sent_once_more() {
    let rt = runtime();
    let refusal = r#"{"error":{"message":"Invalid 'messages[1].tool_calls[0].function.arguments': the function.arguments must be valid JSON.","type":"invalid_request_error","param":"messages"}}"#;
    let request = json!({"model": "m", "stream": true, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "f", "arguments": "{\"a\":1,}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"}]});
    rt.block_on(async {
        let ok = Bytes::from(std::fs::read(captures().join("openai-parallel-calls.sse")).unwrap());
        let (up, seen) = upstream_seq(vec![
            error_script(400, refusal, vec![]),
            Script::sse(ok, 4096),
        ])
        .await;
        let mut config = Config::new(up.parse().unwrap());
        config.repair_requests = false;
        let url = proxy_with(config).await;
        let (status, headers, _) =
            post(&format!("{url}/v1/chat/completions"), request.clone()).await;
        assert_eq!(status, 200);
        assert_eq!(headers["toolstream-attempts"], "2");
        assert!(headers.contains_key("toolstream-repaired"));
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 2);
        let sent = |k: usize| -> Value { serde_json::from_slice(&seen[k]).unwrap() };
        assert_eq!(sent(0), request, "first as it came");
        let args = sent(1)["messages"][1]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            serde_json::from_str::<Value>(&args).unwrap().is_object(),
            "{args}"
        );
        // Refused again: the client gets the refusal, after the two attempts.
        let (up, seen) = upstream(error_script(400, refusal, vec![])).await;
        let mut config = Config::new(up.parse().unwrap());
        config.repair_requests = false;
        let url = proxy_with(config).await;
        let (status, headers, _) = post(&format!("{url}/v1/chat/completions"), request).await;
        assert_eq!(status, 400);
        assert_eq!(headers["toolstream-reason"], "request_repair");
        assert_eq!(headers["toolstream-attempts"], "2");
        assert_eq!(seen.lock().unwrap().len(), 2);
    });
}

/// Upstreams per route: a request goes to the upstreams that serve its route, in order; a
/// route none serves gets a 502 in the provider's shape.
#[test]
fn each_route_goes_to_its_own_upstreams() {
    let rt = runtime();
    rt.block_on(async {
        let chat =
            Bytes::from(std::fs::read(captures().join("openai-parallel-calls.sse")).unwrap());
        let messages =
            Bytes::from(std::fs::read(captures().join("anthropic-tool-use.sse")).unwrap());
        let (a, a_seen) = upstream(Script::sse(messages, 4096)).await;
        let (b, b_seen) = upstream(Script::sse(chat, 4096)).await;
        let mut config = Config::new(a.parse().unwrap());
        config.upstreams[0].routes = vec!["messages".into()];
        let mut second = toolstream::proxy::Upstream::from(b.parse::<http::Uri>().unwrap());
        second.routes = vec!["chat".into()];
        config.upstreams.push(second);
        let url = proxy_with(config).await;
        let (status, _, body) = post(
            &format!("{url}/v1/chat/completions"),
            json!({"stream": true}),
        )
        .await;
        assert_eq!(status, 200);
        assert!(String::from_utf8_lossy(&body).contains("[DONE]"));
        let (status, _, body) = post(&format!("{url}/v1/messages"), json!({"stream": true})).await;
        assert_eq!(status, 200);
        assert!(String::from_utf8_lossy(&body).contains("message_stop"));
        let (a_n, b_n) = (a_seen.lock().unwrap().len(), b_seen.lock().unwrap().len());
        assert_eq!((a_n, b_n), (1, 1));
        let (status, _, body) = post(&format!("{url}/v1/responses"), json!({"stream": true})).await;
        assert_eq!(status, 502);
        assert!(String::from_utf8_lossy(&body)
            .contains("no upstream is configured for the responses route"));
    });
}

/// The decision for each reason an HTTP error can carry, with two retries allowed, waits
/// capped at zero (`max_wait` 0: a retry goes at once, and a rate limit with any delay
/// falls back) and a second upstream configured: the attempts each upstream got, and the
/// reason the client sees when the error is surfaced. Counts only, no clock.
#[test]
fn every_reason_gets_its_decision() {
    let rt = runtime();
    // (status, body, reason, attempts on the first upstream, on the second).
    let cases: &[(u16, &'static str, &str, usize, usize)] = &[
        (
            500,
            r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}"#,
            "server_error",
            3,
            1,
        ),
        (
            503,
            r#"{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error"}}"#,
            "overloaded",
            3,
            1,
        ),
        (
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            "overloaded",
            3,
            1,
        ),
        (
            504,
            r#"{"error":{"message":"Gateway timeout","type":"timeout"}}"#,
            "timeout",
            3,
            1,
        ),
        (
            429,
            r#"{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}"#,
            "rate_limit",
            3,
            1,
        ),
        (
            429,
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#,
            "quota_exhausted",
            1,
            1,
        ),
        (
            401,
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#,
            "auth",
            1,
            1,
        ),
        (
            404,
            r#"{"error":{"message":"The model `gpt-9` does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}}"#,
            "model_not_found",
            1,
            1,
        ),
        (
            400,
            r#"{"error":{"message":"invalid tool call arguments"}}"#,
            "model_output",
            1,
            0,
        ),
        (
            400,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
            "context_overflow",
            1,
            0,
        ),
        (
            413,
            r#"{"error":{"message":"Request too large","type":"invalid_request_error"}}"#,
            "payload_too_large",
            1,
            0,
        ),
        (
            400,
            r#"{"error":{"message":"Your request was rejected as a result of our safety system.","type":"invalid_request_error","code":"content_policy_violation"}}"#,
            "content_policy",
            1,
            0,
        ),
        (
            400,
            r#"{"error":{"message":"Invalid value for 'temperature': must be between 0 and 2.","type":"invalid_request_error","param":"temperature"}}"#,
            "invalid_request",
            1,
            0,
        ),
    ];
    for &(status, body, reason, on_a, on_b) in cases {
        rt.block_on(async {
            let ok =
                Bytes::from(std::fs::read(captures().join("openai-parallel-calls.sse")).unwrap());
            let (a, a_seen) = upstream(error_script(status, body, vec![])).await;
            let (b, b_seen) = upstream(Script::sse(ok, 4096)).await;
            let mut config = Config::new(a.parse().unwrap());
            config.upstreams.push(toolstream::proxy::Upstream::from(
                b.parse::<http::Uri>().unwrap(),
            ));
            config.decisions.max_retries = 2;
            config.decisions.wait_budget = Duration::ZERO;
            let url = proxy_with(config).await;
            let (got, headers, _) = post(
                &format!("{url}/v1/chat/completions"),
                json!({"model": "m", "stream": true, "messages": []}),
            )
            .await;
            let seen = (a_seen.lock().unwrap().len(), b_seen.lock().unwrap().len());
            assert_eq!(seen, (on_a, on_b), "{reason}: attempts on each upstream");
            if on_b == 0 {
                assert_eq!(got, status, "{reason}");
                assert_eq!(headers["toolstream-reason"], reason, "{body}");
            } else {
                assert_eq!(got, 200, "{reason}");
                let attempts = headers["toolstream-attempts"].to_str().unwrap().to_string();
                assert_eq!(attempts, (on_a + on_b).to_string(), "{reason}");
            }
        });
    }
}
