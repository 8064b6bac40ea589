//! The splitter's error: a small public category plus the position and the bytes involved.

use std::fmt;

use bytes::Bytes;

use super::Lexical;

/// What went wrong. New kinds may be added in minor releases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A byte that the JSON grammar does not allow where it stands.
    Syntax,
    /// A bad escape in a string: unknown escape character, a non-hex digit in `\u`, or a
    /// lone or inverted UTF-16 surrogate.
    InvalidEscape,
    /// A string contains bytes that are not UTF-8 (overlong forms, encoded surrogates,
    /// bytes `0xF5..=0xFF`, bad continuation bytes).
    InvalidUtf8,
    /// A raw control byte (`0x00..=0x1F`) inside a string.
    ControlCharacter,
    /// A malformed number: `01`, `-`, `1.`, `1e`, `-x`.
    InvalidNumber,
    /// [`Mode::Objects`](super::Mode::Objects) and a top-level value that is not an object.
    NotAnObject,
    /// Nesting deeper than [`Limits::max_depth`](super::Limits::max_depth).
    DepthLimit,
    /// A value longer than [`Limits::max_value_bytes`](super::Limits::max_value_bytes).
    ValueTooLarge,
    /// A string longer than [`Limits::max_string_bytes`](super::Limits::max_string_bytes).
    StringTooLong,
    /// A number longer than [`Limits::max_number_bytes`](super::Limits::max_number_bytes).
    NumberTooLong,
    /// The stream ended inside a value. [`Error::truncation`] says where.
    Truncated,
}

impl ErrorKind {
    /// A stable snake_case name, as used in logs and the CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax",
            ErrorKind::InvalidEscape => "invalid_escape",
            ErrorKind::InvalidUtf8 => "invalid_utf8",
            ErrorKind::ControlCharacter => "control_character",
            ErrorKind::InvalidNumber => "invalid_number",
            ErrorKind::NotAnObject => "not_an_object",
            ErrorKind::DepthLimit => "depth_limit",
            ErrorKind::ValueTooLarge => "value_too_large",
            ErrorKind::StringTooLong => "string_too_long",
            ErrorKind::NumberTooLong => "number_too_long",
            ErrorKind::Truncated => "truncated",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the stream stopped when it ended inside a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Truncation {
    /// Open containers at the end of the stream.
    pub depth: usize,
    /// The lexical state at the end of the stream.
    pub lexical: Lexical,
}

/// A failure to split, with everything needed to log it, show it to a model or store it.
///
/// `offset` is the absolute byte offset in the stream (counting every pushed byte, a
/// leading BOM included) of the byte that could not be accepted; for
/// [`ErrorKind::Truncated`] it is the length of the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub(crate) kind: ErrorKind,
    pub(crate) offset: u64,
    pub(crate) value_index: u64,
    pub(crate) raw: Bytes,
    pub(crate) raw_offset: u64,
    pub(crate) truncation: Option<Truncation>,
    pub(crate) detail: &'static str,
}

impl Error {
    /// The category of the failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// Absolute byte offset of the offending byte (the stream length for a truncation).
    pub fn offset(&self) -> u64 {
        self.offset
    }
    /// Index of the value that failed: the number of values emitted before it.
    pub fn value_index(&self) -> u64 {
        self.value_index
    }
    /// The raw bytes of the failed value from its first byte up to and including the
    /// offending byte (for a truncation: everything that arrived). When the error is outside
    /// any value, the offending byte alone. Bounded by
    /// [`Limits::max_value_bytes`](super::Limits::max_value_bytes) plus one byte.
    pub fn raw(&self) -> &Bytes {
        &self.raw
    }
    /// Absolute offset of the first byte of [`Error::raw`].
    pub fn raw_offset(&self) -> u64 {
        self.raw_offset
    }
    /// For [`ErrorKind::Truncated`]: what was open when the stream ended.
    pub fn truncation(&self) -> Option<Truncation> {
        self.truncation
    }
    /// A short human-readable explanation, e.g. `"expected ':' after an object key"`.
    pub fn detail(&self) -> &'static str {
        self.detail
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at byte {} of value {}: {}",
            self.kind, self.offset, self.value_index, self.detail
        )?;
        if let Some(t) = self.truncation {
            if !t.lexical.in_token() {
                write!(f, ", {}", t.lexical.describe())?;
            }
            match t.depth {
                0 => {}
                1 => f.write_str(" (1 container open)")?,
                n => write!(f, " ({n} containers open)")?,
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// The machine-level failure before the wrapper attaches bytes and indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ErrorAt {
    pub(crate) kind: ErrorKind,
    pub(crate) offset: u64,
    pub(crate) detail: &'static str,
}
