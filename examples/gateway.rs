//! A gateway's view of a stream, end to end over a real socket: a local server streams a
//! shipped capture in small delayed chunks (as a provider does), and a reqwest client pushes
//! the body through the pipeline and prints each tool call the moment its arguments
//! closed, with its time since the request: before the stream ends.
//!
//! ```text
//! cargo run --example gateway
//! ```

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolstream::assemble::Event;
use toolstream::classify::{classify_event, Phase, Policy, Provider};
use toolstream::pipeline::Stream;

const CAPTURE: &[u8] = include_bytes!("captures/openai-parallel-calls.sse");
/// 48-byte chunks, 20 ms apart: the capture takes about half a second to arrive.
const CHUNK: usize = 48;
const DELAY: Duration = Duration::from_millis(20);

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/v1/chat/completions", listener.local_addr()?);
    let server = tokio::spawn(serve_once(listener));

    let start = Instant::now();
    let response = reqwest::Client::new().post(&url).body("{}").send().await?;
    // The adapter: chunks in, events out.
    let mut events = Stream::new(None).events(response.bytes_stream());
    while let Some(event) = events.next().await {
        let ms = start.elapsed().as_millis();
        match event {
            Ok(Event::ToolCall(c)) => {
                let args = String::from_utf8_lossy(&c.arguments);
                println!("{ms:>5} ms  tool call #{} {}({args})", c.index, c.name);
            }
            Ok(Event::End { complete }) => println!("{ms:>5} ms  end (complete: {complete})"),
            // Everything that went wrong, in one call: what to do about it.
            Ok(e) => {
                let policy = Policy::default();
                if let Some(v) =
                    classify_event(&e, Provider::Openai, Phase::BeforeOutput, 0, &policy)
                {
                    println!("{ms:>5} ms  {v}");
                }
            }
            Err(e) => println!(
                "{ms:>5} ms  {}",
                toolstream::classify::classify_error(&e, 0, &Policy::default())
            ),
        }
    }
    server.await??;
    Ok(())
}

/// Answer one request with the capture as a chunked SSE body, a little at a time.
async fn serve_once(listener: TcpListener) -> std::io::Result<()> {
    let (mut socket, _) = listener.accept().await?;
    // Read the request head and its small body; what it says does not matter here.
    let mut request = vec![0u8; 8192];
    let _ = socket.read(&mut request).await?;
    socket
        .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        .await?;
    for chunk in CAPTURE.chunks(CHUNK) {
        tokio::time::sleep(DELAY).await;
        socket
            .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
            .await?;
        socket.write_all(chunk).await?;
        socket.write_all(b"\r\n").await?;
    }
    socket.write_all(b"0\r\n\r\n").await?;
    socket.flush().await
}
