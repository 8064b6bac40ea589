//! The rewriters as a tower layer, in the example axum gateway
//! (`examples/axum_gateway.rs`), over loopback sockets: an upstream answering with a
//! scripted body, the gateway in front of it, and an HTTP client.

#[path = "../examples/axum_gateway.rs"]
#[allow(dead_code)]
mod gateway;

use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolstream::rewrite::text::TextCalls;

/// An upstream answering every request with `body` (of `content_type`) in 7-byte chunks;
/// `cut`: the connection closes after that many bytes, the body unended.
async fn upstream(content_type: &'static str, body: String, cut: Option<usize>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                // The request: its head, then its body by content-length.
                let mut buf = Vec::new();
                let mut tmp = [0u8; 8192];
                loop {
                    let n = socket.read(&mut tmp).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&tmp[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..i]).to_lowercase();
                        let len: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse().ok())
                            .unwrap_or(0);
                        if buf.len() >= i + 4 + len {
                            break;
                        }
                    }
                }
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let bytes = body.as_bytes();
                let bytes = &bytes[..cut.unwrap_or(bytes.len()).min(bytes.len())];
                for piece in bytes.chunks(7) {
                    let chunk =
                        [format!("{:x}\r\n", piece.len()).as_bytes(), piece, b"\r\n"].concat();
                    if socket.write_all(&chunk).await.is_err() {
                        return;
                    }
                }
                if cut.is_none() {
                    let _ = socket.write_all(b"0\r\n\r\n").await;
                }
                let _ = socket.shutdown().await;
            });
        }
    });
    url
}

/// The example gateway in front of `upstream`.
async fn gateway(upstream: String, text_calls: TextCalls) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        axum::serve(listener, gateway::app(upstream, text_calls))
            .await
            .unwrap();
    });
    url
}

/// POST `body` to `url`; the response body as far as it came, and whether it ended
/// cleanly.
async fn post(url: &str, body: Value) -> (String, bool) {
    let response = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let mut stream = response.bytes_stream();
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(c) => out.extend_from_slice(&c),
            Err(_) => return (String::from_utf8(out).unwrap(), false),
        }
    }
    (String::from_utf8(out).unwrap(), true)
}

fn sse(payloads: &[Value]) -> String {
    let mut s: String = payloads.iter().map(|p| format!("data: {p}\n\n")).collect();
    s.push_str("data: [DONE]\n\n");
    s
}

/// The chat calls a client accumulates: (id, name, arguments).
fn chat_calls(out: &str) -> Vec<(String, String, String)> {
    let mut calls = Vec::new();
    for data in out.split("\n\n").filter_map(|e| e.strip_prefix("data: ")) {
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        for tc in v
            .pointer("/choices/0/delta/tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            calls.push((
                tc["id"].as_str().unwrap().to_string(),
                tc["function"]["name"].as_str().unwrap().to_string(),
                tc["function"]["arguments"].as_str().unwrap().to_string(),
            ));
        }
    }
    calls
}

fn glued_chat() -> String {
    sse(&[
        json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant",
            "tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}{\"city\""}}]}, "finish_reason": null}]}),
        json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {
            "tool_calls": [{"index": 0, "function": {"arguments": ":\"Rome\"}"}}]}, "finish_reason": null}]}),
        json!({"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ])
}

#[tokio::test]
async fn glued_calls_reach_the_client_as_two_calls() {
    let up = upstream("text/event-stream", glued_chat(), None).await;
    let gw = gateway(up, TextCalls::Off).await;
    let (out, clean) = post(
        &format!("{gw}/v1/chat/completions"),
        json!({"model": "m", "stream": true}),
    )
    .await;
    assert!(clean, "{out}");
    let calls = chat_calls(&out);
    assert_eq!(calls.len(), 2, "{out}");
    assert_eq!(calls[0].0, "call_a");
    assert_eq!(calls[0].2, r#"{"city":"Paris"}"#);
    assert_eq!(calls[1].2, r#"{"city":"Rome"}"#);
    assert_ne!(calls[1].0, calls[0].0);
    assert!(out.ends_with("data: [DONE]\n\n"));
}

#[tokio::test]
async fn a_cut_upstream_ends_the_client_stream_with_the_api_error_event() {
    let body = glued_chat();
    let cut = body.find("Rome").unwrap();
    let up = upstream("text/event-stream", body, Some(cut)).await;
    let gw = gateway(up, TextCalls::Off).await;
    let (out, _) = post(&format!("{gw}/v1/chat/completions"), json!({"model": "m"})).await;
    // The last event is the error (which the SDKs raise on), never [DONE].
    let last = out.trim_end().rsplit("\n\n").next().unwrap();
    assert!(last.contains("\"stream_interrupted\""), "{out}");
    assert!(!out.contains("[DONE]"), "{out}");
    // The call cut off is sent as the provider sent it, annotated.
    assert!(out.contains("toolstream tool_call_error"), "{out}");
}

#[tokio::test]
async fn calls_written_into_a_messages_text_become_tool_use_blocks() {
    let ev = |v: Value| format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap());
    let body = [
        ev(json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "content": [], "model": "m", "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 1}}})),
        ev(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
        ev(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta",
            "text": "Checking. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>"}})),
        ev(json!({"type": "content_block_stop", "index": 0})),
        ev(json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}})),
        ev(json!({"type": "message_stop"})),
    ]
    .concat();
    let up = upstream("text/event-stream", body, None).await;
    let gw = gateway(up, TextCalls::Auto).await;
    let request = json!({"model": "m", "stream": true, "max_tokens": 10,
        "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}],
        "messages": [{"role": "user", "content": "weather?"}]});
    let (out, clean) = post(&format!("{gw}/v1/messages"), request).await;
    assert!(clean, "{out}");
    assert!(out.contains(r#""type":"tool_use""#), "{out}");
    assert!(
        out.contains(r#""partial_json":"{\"city\": \"Oslo\"}""#),
        "{out}"
    );
    assert!(out.contains(r#""stop_reason":"tool_use""#), "{out}");
    assert!(!out.contains("<tool_call>"), "{out}");
}

#[tokio::test]
async fn other_responses_pass_byte_for_byte() {
    let body = r#"{"object":"list","data":[{"embedding":[0.1,0.2]}],"x":"{\"a\":1}{\"b\":2}"}"#;
    let up = upstream("application/json", body.to_string(), None).await;
    let gw = gateway(up, TextCalls::Auto).await;
    let (out, clean) = post(&format!("{gw}/v1/embeddings"), json!({"input": "x"})).await;
    assert!(clean);
    assert_eq!(out, body);
    // A chat stream the gateway would rewrite, on a path that is not a chat API's.
    let up = upstream("text/event-stream", glued_chat(), None).await;
    let gw = gateway(up, TextCalls::Off).await;
    let (out, _) = post(&format!("{gw}/v1/other"), json!({})).await;
    assert_eq!(out, glued_chat());
}
