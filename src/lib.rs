//! # toolstream
//!
//! Turn the raw bytes of an LLM provider's streaming response into validated tool calls the
//! moment each arguments object closes — push-based, sans-IO, chunked anywhere.
//!
//! This release provides the core layer, [`json::Splitter`]: a strict, incremental JSON
//! splitter that emits every top-level value the moment its last byte arrives, carrying
//! its state (depth, string, escape, UTF-8, number) across chunk boundaries and never
//! re-scanning a byte. Glued values such as `{"a":1}{"b":2}` split losslessly.
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
//! None yet: the crate builds with `bytes` and `memchr` only.
//!
//! ## Compile-time configuration
//!
//! `--cfg toolstream_disable_simd` will switch off the vector code paths (reserved for the
//! SIMD scanner; today every path is scalar and safe).

#![deny(missing_docs)]
#![deny(unsafe_code)]

pub mod assemble;
pub mod classify;
pub mod json;
pub mod ndjson;
pub mod pipeline;
pub mod provider;
#[allow(unsafe_code)]
pub mod scan;
pub mod sse;

// The README's Rust examples are compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
