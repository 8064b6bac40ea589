//! A gateway in axum that forwards every request to one upstream and applies toolstream's
//! fixes to the responses with one tower layer (`toolstream::rewrite::tower`): glued calls
//! split, duplicates dropped, broken calls annotated, cut streams ended with an error, and
//! with `--text-calls auto` the calls written into the text taken out, on the chat
//! completions, Messages and Responses APIs.
//!
//! ```text
//! cargo run -p toolstream-proxy --example axum_gateway -- 127.0.0.1:8080 http://127.0.0.1:11434 [auto]
//! ```
//!
//! The layer wraps the upstream client (hyper-util's, a tower service); the handler reads
//! the request body (to forward it, and for the tools it declares), and sends the
//! response on as it streams.

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use toolstream::rewrite::text::{declared_tools, TextCalls, TextSetting};
use toolstream::rewrite::tower::{RewriteLayer, RewriteService};
use tower_layer::Layer;
use tower_service::Service;

/// The largest request body the gateway reads.
const MAX_REQUEST: usize = 64 << 20;

#[derive(Clone)]
struct Gateway {
    upstream: String,
    text_calls: TextCalls,
    client: RewriteService<Client<HttpConnector, Body>>,
}

/// The gateway's routes: everything forwarded to `upstream` (`http://host:port`).
pub fn app(upstream: String, text_calls: TextCalls) -> Router {
    let client = Client::builder(TokioExecutor::new()).build_http();
    let client = RewriteLayer::new()
        .on_finish(|counts, _| {
            if counts.splits + counts.duplicates + counts.failures + counts.text_calls > 0 {
                eprintln!("toolstream: {counts:?}");
            }
        })
        .layer(client);
    Router::new().fallback(forward).with_state(Gateway {
        upstream: upstream.trim_end_matches('/').to_string(),
        text_calls,
        client,
    })
}

async fn forward(State(g): State<Gateway>, req: Request<Body>) -> Response {
    let (mut parts, body) = req.into_parts();
    let body = match axum::body::to_bytes(body, MAX_REQUEST).await {
        Ok(b) => b,
        Err(e) => return (StatusCode::PAYLOAD_TOO_LARGE, e.to_string()).into_response(),
    };
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    parts.uri = match format!("{}{path}", g.upstream).parse() {
        Ok(u) => u,
        Err(e) => return (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    };
    parts.headers.remove(header::HOST);
    // The rewriter reads what it forwards: no compression.
    parts
        .headers
        .insert(header::ACCEPT_ENCODING, "identity".parse().unwrap());
    // The tools the request declares: the calls to them written into the text are taken
    // out (none when text calls are off or no tool is declared).
    let text = TextSetting::new(g.text_calls, declared_tools(&body));
    let mut up = Request::from_parts(parts, Body::from(body));
    if let Some(t) = text {
        up.extensions_mut().insert(t);
    }
    let mut client = g.client.clone();
    match client.call(up).await {
        Ok(response) => response.map(Body::new),
        Err(e) => (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    }
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(listen), Some(upstream)) = (args.next(), args.next()) else {
        eprintln!("usage: axum_gateway LISTEN UPSTREAM [TEXT_CALLS]");
        std::process::exit(2);
    };
    let text_calls = args
        .next()
        .and_then(|m| TextCalls::from_name(&m))
        .unwrap_or_default();
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .expect("the listen address");
    eprintln!("forwarding {listen} to {upstream}");
    axum::serve(listener, app(upstream, text_calls))
        .await
        .expect("serve");
}
