//! # toolstream
//!
//! Turn the raw bytes of an LLM provider's streaming response into validated tool calls the
//! moment each arguments object closes — push-based, sans-IO, chunked anywhere.
//!
//! The layers, bottom-up, each usable alone, each sans-IO and push-based:
//!
//! | module | what it does |
//! |---|---|
//! | [`scan`] | 64-byte block classification (AVX-512 / AVX2 / SSE2 / NEON / scalar): the only `unsafe` code |
//! | [`json`] | [`json::Splitter`]: strict, incremental JSON; each top-level value out on its last byte; glued `{"a":1}{"b":2}` split losslessly. [`json::Preview`]: a live view of a value still arriving, extended by each chunk, never re-parsed |
//! | [`sse`], [`ndjson`], [`eventstream`] | WHATWG Server-Sent Events, JSON Lines and AWS event stream (Bedrock) framing |
//! | [`provider`] | OpenAI chat (and compatibles), OpenAI Responses, Anthropic, Gemini, Ollama → [`provider::Delta`] |
//! | [`assemble`] | [`assemble::ToolCallAssembler`]: one strict splitter per call, calls out as their objects close |
//! | [`pipeline`] | [`pipeline::Stream`]: all of the above behind one `push` / `finish` |
//! | [`replay`] | [`replay::Turn`]: the assistant turn a tool loop sends back, with the reasoning and signatures the provider checks |
//! | [`request`] | [`request::repair`]: tool calls in a request's history whose arguments a provider would refuse, repaired losslessly |
//! | [`schema`] | [`schema::Tools`]: is a call's name declared, and do its arguments match the tool's JSON Schema? Precise violations for the model |
//! | [`text_calls`] | [`text_calls::Extractor`]: calls a model wrote into its text, per model family, taken out as they stream; only the declared tools' (fail-closed) |
//! | [`rewrite`] | [`rewrite::OpenAiRewriter`], [`rewrite::AnthropicRewriter`]: a provider's stream in, the same stream out with every call whole and validated, glued calls split, cuts ended with an error — what a gateway sends its client |
//! | `proxy` (feature `proxy`) | the HTTP proxy `toolstream proxy` runs: the rewriters, request repair and the classifier's verdicts on a hyper server |
//! | [`classify`] | every failure becomes a decision: retry, retry with feedback, compress, repair the request, fall back, surface |
//!
//! Most users want [`pipeline::Stream`]:
//!
//! ```
//! use bytes::Bytes;
//! use toolstream::assemble::Event;
//! use toolstream::pipeline::Stream;
//!
//! let mut stream = Stream::new(None); // the format is detected from the first frames
//! let mut events = Vec::new();
//! // Network chunks, cut anywhere (here: inside the arguments' escaped JSON).
//! for chunk in [
//!     &b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\","[..],
//!     b"\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Pa",
//!     b"ris\\\"}\"}}]}}]}\n\ndata: [DONE]\n\n",
//! ] {
//!     stream.push(Bytes::copy_from_slice(chunk), &mut events);
//! }
//! stream.finish(&mut events);
//! let call = events.iter().find_map(|e| match e {
//!     Event::ToolCall(c) => Some(c),
//!     _ => None,
//! });
//! assert_eq!(&call.unwrap().arguments[..], br#"{"city":"Paris"}"#);
//! assert_eq!(events.last(), Some(&Event::End { complete: true }));
//! ```
//!
//! The splitter alone:
//!
//! ```
//! use bytes::Bytes;
//! use toolstream::json::{Mode, Splitter};
//!
//! // Three network chunks. The first cut falls inside the escape `\"` (the chunk ends
//! // on the backslash), the second inside a key of the second, glued object.
//! let chunks = [
//!     Bytes::from_static(br#"{"cmd": "echo \"#),
//!     Bytes::from_static(br#""hi\"", "n": 1}{"ci"#),
//!     Bytes::from_static(br#"ty": "Paris"}"#),
//! ];
//! let mut splitter = Splitter::new(Mode::Objects);
//! let mut values = Vec::new();
//! let mut seen = Vec::new();
//! for chunk in chunks {
//!     splitter.push(chunk, &mut values)?;
//!     for v in values.drain(..) {
//!         let text = std::str::from_utf8(v.bytes()).expect("emitted JSON is UTF-8");
//!         println!("value {} at bytes {}..{}: {text}", v.index(), v.start(), v.end());
//!         seen.push(text.to_owned());
//!     }
//! }
//! splitter.finish()?; // Ok(None): a clean end, nothing truncated
//! assert_eq!(seen, [r#"{"cmd": "echo \"hi\"", "n": 1}"#, r#"{"city": "Paris"}"#]);
//! # Ok::<(), toolstream::json::Error>(())
//! ```
//!
//! ## Crate features
//!
//! | feature | default | what it adds | dependencies it adds |
//! |---|---|---|---|
//! | `bedrock` | on | [`eventstream`] (the binary AWS event stream framing) and Bedrock's ConverseStream and InvokeModelWithResponseStream (`provider::bedrock`, `Format::Bedrock`) | `base64` (InvokeModel chunks) |
//! | `futures` | off | `pipeline::Stream::events`: any `futures_core::Stream` of byte chunks as a stream of events (`adapter`) | `futures-core` |
//! | `tokio-util` | off | `adapter::EventCodec`: the pipeline as a `tokio_util::codec::Decoder` | `tokio-util` (and `tokio`) |
//!
//! Always: `bytes` (zero-copy chunks and values), `memchr` (the framings' line and
//! delimiter search), `serde` and `serde_json` (provider envelopes, error bodies, schemas;
//! `Serialize` for events and verdicts), `simdutf8` (UTF-8 validation of string content).
//! `default-features = false` leaves out Bedrock: a zero first byte is then read as SSE,
//! and reported as no event stream.
//!
//! ## Compile-time configuration
//!
//! `--cfg toolstream_disable_simd` switches off the vector code in [`scan`] (the portable
//! scalar classifier is used instead). Miri runs that way; CI runs the whole test suite both
//! ways.

#![deny(missing_docs)]
#![deny(unsafe_code)]

#[cfg(any(feature = "futures", feature = "tokio-util"))]
pub mod adapter;
pub mod assemble;
pub mod classify;
#[cfg(feature = "bedrock")]
pub mod eventstream;
pub mod ids;
pub mod json;
pub mod ndjson;
pub mod pipeline;
pub mod provider;
#[cfg(feature = "proxy")]
pub mod proxy;
pub mod repair;
pub mod replay;
pub mod request;
pub mod rewrite;
#[allow(unsafe_code)]
pub mod scan;
pub mod schema;
mod serialize;
pub mod sse;
pub mod text_calls;

// The README's Rust examples are compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
