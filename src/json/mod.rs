//! Strict, push-based, streaming JSON: split a byte stream into top-level values.
//!
//! The entry point is [`Splitter`]: push [`bytes::Bytes`] chunks cut anywhere, and every
//! top-level JSON value is handed back during the push that delivers its last byte, as a
//! [`Value`] (its exact bytes, its absolute span in the stream, its index).
//!
//! * [`Mode::Objects`] accepts only objects at the top level (tool-call arguments);
//!   [`Mode::Any`] accepts any JSON value (NDJSON, conformance suites).
//! * Values need no separator: `{"a":1}{"b":2}` and `{"a":1}\n{"b":2}` both give two values.
//! * Everything emitted is RFC 8259 JSON (grammar, numbers, escapes, surrogate pairs, UTF-8):
//!   a consumer never needs to re-validate it.
//! * Every buffer is bounded by [`Limits`], and nothing recurses.
//!
//! The lower layer, the byte-level state machine, never allocates except for its container
//! stack (one bit per level); the [`Splitter`] adds the ownership of bytes on top of it.

pub(crate) mod cursor;
mod error;
pub(crate) mod escape;
mod machine;
pub(crate) mod preview;
#[doc(hidden)]
pub mod reference;
mod splitter;

pub use error::{Error, ErrorKind};
pub use preview::{Change, PathStep, Preview};
pub use splitter::{Splitter, State, Value};

/// Which top-level values a [`Splitter`] accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Every top-level value must be an object (tool-call arguments). Any other value is
    /// an [`ErrorKind::NotAnObject`] error at its first byte.
    Objects,
    /// Any JSON value is accepted at the top level.
    Any,
}

/// Bounds on what a [`Splitter`] buffers or tracks. Each has a distinct [`ErrorKind`].
///
/// Build from [`Limits::default()`] with the setters:
///
/// ```
/// use toolstream::json::Limits;
/// let limits = Limits::default().max_depth(32).max_value_bytes(1 << 20);
/// assert_eq!(limits.depth(), 32);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub(crate) max_depth: u32,
    pub(crate) max_value_bytes: u64,
    pub(crate) max_string_bytes: u64,
    pub(crate) max_number_bytes: u64,
}

impl Default for Limits {
    /// Depth 128, 64 MiB per value, 16 MiB per string, 1 KiB per number (a string limit
    /// below the value limit, so that `string_too_long` can fire at all).
    fn default() -> Self {
        Limits {
            max_depth: 128,
            max_value_bytes: 64 << 20,
            max_string_bytes: 16 << 20,
            max_number_bytes: 1024,
        }
    }
}

impl Limits {
    /// Maximum nesting depth of arrays and objects (default 128). The opening bracket that
    /// would exceed it is an [`ErrorKind::DepthLimit`] error. A value of 0 is treated as 1.
    pub fn max_depth(mut self, depth: u32) -> Self {
        self.max_depth = depth.max(1);
        self
    }
    /// Maximum bytes of one top-level value (default 64 MiB). This also bounds the buffer that
    /// assembles a value spanning chunks. The first byte past it is an
    /// [`ErrorKind::ValueTooLarge`] error. A value of 0 is treated as 1.
    pub fn max_value_bytes(mut self, bytes: u64) -> Self {
        self.max_value_bytes = bytes.max(1);
        self
    }
    /// Maximum raw bytes between the quotes of one string, escapes counted as written
    /// (default 16 MiB). The first byte past it is an [`ErrorKind::StringTooLong`] error.
    /// A value of 0 is treated as 1; `u64::MAX` (no limit) as `u64::MAX - 1`, which no
    /// stream reaches, so that the offset a string must end by never overflows.
    pub fn max_string_bytes(mut self, bytes: u64) -> Self {
        self.max_string_bytes = bytes.clamp(1, u64::MAX - 1);
        self
    }
    /// Maximum bytes of one number literal (default 1 KiB). The first byte past it is an
    /// [`ErrorKind::NumberTooLong`] error. A value of 0 is treated as 1.
    pub fn max_number_bytes(mut self, bytes: u64) -> Self {
        self.max_number_bytes = bytes.max(1);
        self
    }
    /// The nesting depth limit.
    pub fn depth(&self) -> u32 {
        self.max_depth
    }
    /// The per-value byte limit.
    pub fn value_bytes(&self) -> u64 {
        self.max_value_bytes
    }
    /// The per-string byte limit.
    pub fn string_bytes(&self) -> u64 {
        self.max_string_bytes
    }
    /// The per-number byte limit.
    pub fn number_bytes(&self) -> u64 {
        self.max_number_bytes
    }
}

/// The kind of an open container.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Container {
    /// `[ ... ]`
    Array,
    /// `{ ... }`
    Object,
}

/// Where the lexer stands: enough, with the open containers, to close a partial value
/// without re-reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Lexical {
    /// Between top-level values (or before the first one).
    BetweenValues,
    /// Just after `[`: a value or `]` comes next.
    ArrayStart,
    /// After `,` in an array, or `:` in an object: a value comes next.
    ExpectingValue,
    /// Just after `{`: a key or `}` comes next.
    ObjectStart,
    /// After `,` in an object: a key comes next.
    ExpectingKey,
    /// After a key: `:` comes next.
    ExpectingColon,
    /// After a value inside a container: `,` or the closing bracket comes next.
    AfterValue,
    /// Inside a string value (possibly in the middle of an escape or a UTF-8 sequence).
    InString,
    /// Inside an object key (possibly in the middle of an escape or a UTF-8 sequence).
    InKey,
    /// Inside a number. The number may or may not be complete yet (`1` is, `1.` is not).
    InNumber,
    /// Inside `true`, `false` or `null`.
    InLiteral,
}

impl Lexical {
    /// Whether the stream stopped inside a token (a string, key, number or literal) rather
    /// than between tokens of a container.
    pub fn in_token(self) -> bool {
        matches!(
            self,
            Lexical::InString | Lexical::InKey | Lexical::InNumber | Lexical::InLiteral
        )
    }

    /// Where this is, in words: `inside an object key`, `after a value`...
    pub fn describe(self) -> &'static str {
        match self {
            Lexical::BetweenValues => "between values",
            Lexical::ArrayStart => "just after `[`",
            Lexical::ExpectingValue => "where a value was expected",
            Lexical::ObjectStart => "just after `{`",
            Lexical::ExpectingKey => "where a key was expected",
            Lexical::ExpectingColon => "where `:` was expected",
            Lexical::AfterValue => "after a value",
            Lexical::InString => "inside a string",
            Lexical::InKey => "inside an object key",
            Lexical::InNumber => "inside a number",
            Lexical::InLiteral => "inside true, false or null",
        }
    }
}
