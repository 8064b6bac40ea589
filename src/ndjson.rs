//! A push-based NDJSON (JSON Lines) decoder: one JSON value per line.
//!
//! Lines end with LF; a CR before it is JSON whitespace and so ignored, which makes CRLF
//! work. Blank (whitespace-only) lines are skipped. A final line without a line end is
//! decoded by [`Decoder::finish`]. Each line is checked by a strict
//! [`json::Splitter`] in [`Mode::Any`]: a line that is not exactly
//! one valid JSON value becomes an [`Item::Error`] with its line number and absolute byte
//! offset, and decoding goes on with the next line.
//!
//! ```
//! use bytes::Bytes;
//! use toolstream::ndjson::{Decoder, Item};
//!
//! let mut d = Decoder::new();
//! let mut items = Vec::new();
//! d.push(Bytes::from_static(b"{\"a\":1}\r\n\n{\"b\":"), &mut items);
//! d.push(Bytes::from_static(b"2}\nnot json\n[3]"), &mut items);
//! d.finish(&mut items);
//! assert_eq!(items.len(), 4);
//! assert!(matches!(&items[2], Item::Error(e) if e.line() == 4 && e.offset() == 19));
//! assert!(matches!(&items[3], Item::Value(v) if &v.bytes()[..] == b"[3]" && v.line() == 5));
//! ```

use std::fmt;

use bytes::{Bytes, BytesMut};

use crate::json::{self, Mode, Splitter};

/// One decoded line's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value {
    bytes: Bytes,
    line: u64,
    offset: u64,
}

impl Value {
    /// The value's exact bytes (no surrounding whitespace). Zero-copy when the line lay
    /// inside one chunk.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }
    /// 1-based line number.
    pub fn line(&self) -> u64 {
        self.line
    }
    /// Absolute offset of the value's first byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

/// What went wrong with a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The line is not valid JSON; the splitter's kind says how.
    Json(json::ErrorKind),
    /// More than one JSON value on the line.
    MultipleValues,
    /// The line is longer than the line limit; it was skipped.
    LineTooLong,
}

/// A line that did not decode. Decoding continues with the next line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    line: u64,
    offset: u64,
    start: u64,
    raw: Bytes,
    detail: &'static str,
}

impl Error {
    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// 1-based line number.
    pub fn line(&self) -> u64 {
        self.line
    }
    /// Absolute offset of the offending byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }
    /// Absolute offset of the line's first byte.
    pub fn line_offset(&self) -> u64 {
        self.start
    }
    /// The line's bytes (empty for [`ErrorKind::LineTooLong`], which are not kept).
    pub fn raw(&self) -> &Bytes {
        &self.raw
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, byte {}: {:?}: {}",
            self.line, self.offset, self.kind, self.detail
        )
    }
}

impl std::error::Error for Error {}

/// What the decoder produces, in stream order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Item {
    /// A line's value.
    Value(Value),
    /// A line that is not one valid JSON value.
    Error(Error),
}

/// The push-based NDJSON decoder.
#[derive(Clone, Debug)]
pub struct Decoder {
    max_line: u64,
    json: json::Limits,
    offset: u64,
    line_no: u64,
    in_line: bool,
    line_start: u64,
    line_len: u64,
    line: BytesMut,
    /// Scratch for the values of one line.
    values: Vec<json::Value>,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// A decoder with a 64 MiB line limit and default [`json::Limits`].
    pub fn new() -> Self {
        Self::with_limits(64 << 20, json::Limits::default())
    }

    /// A decoder with the given line limit (at least 1) and JSON limits.
    pub fn with_limits(max_line_bytes: u64, json: json::Limits) -> Self {
        Decoder {
            max_line: max_line_bytes.max(1),
            json,
            offset: 0,
            line_no: 0,
            in_line: false,
            line_start: 0,
            line_len: 0,
            line: BytesMut::new(),
            values: Vec::new(),
        }
    }

    /// Bytes held for a line that spans chunks (bounded by the line limit).
    pub fn buffered(&self) -> usize {
        self.line.len()
    }

    /// Feed the next chunk; the items of every line it completes are appended to `out`.
    pub fn push(&mut self, chunk: Bytes, out: &mut Vec<Item>) {
        let base = self.offset;
        let n = chunk.len();
        let mut pos = 0;
        while pos < n {
            let Some(k) = memchr::memchr(b'\n', &chunk[pos..]) else {
                self.partial(&chunk[pos..], base + pos as u64, out);
                break;
            };
            let end = pos + k;
            if self.in_line {
                self.partial(&chunk[pos..end], base + pos as u64, out);
                self.end_line(out);
            } else {
                self.line_no += 1;
                let at = base + pos as u64;
                if k as u64 > self.max_line {
                    out.push(self.too_long(at));
                } else {
                    self.decode(chunk.slice(pos..end), at, out);
                }
            }
            pos = end + 1;
        }
        self.offset = base + n as u64;
    }

    /// End of stream: a last line without a line end is decoded.
    pub fn finish(mut self, out: &mut Vec<Item>) {
        if self.in_line {
            self.end_line(out);
        }
    }

    fn partial(&mut self, bytes: &[u8], at: u64, out: &mut Vec<Item>) {
        if !self.in_line {
            self.in_line = true;
            self.line_no += 1;
            self.line_start = at;
            self.line_len = 0;
        }
        let before = self.line_len;
        self.line_len += bytes.len() as u64;
        if self.line_len > self.max_line {
            if before <= self.max_line {
                self.line = BytesMut::new();
                out.push(self.too_long(self.line_start));
            }
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn end_line(&mut self, out: &mut Vec<Item>) {
        self.in_line = false;
        if self.line_len <= self.max_line {
            let line = self.line.split().freeze();
            self.decode(line, self.line_start, out);
        }
    }

    #[cold]
    fn too_long(&self, line_start: u64) -> Item {
        Item::Error(Error {
            kind: ErrorKind::LineTooLong,
            line: self.line_no,
            offset: line_start + self.max_line,
            start: line_start,
            raw: Bytes::new(),
            detail: "line exceeds the line limit",
        })
    }

    fn decode(&mut self, line: Bytes, at: u64, out: &mut Vec<Item>) {
        let mut s = Splitter::with_limits(Mode::Any, self.json);
        let mut values = std::mem::take(&mut self.values);
        values.clear();
        let result = s.push(line.clone(), &mut values).and_then(|()| {
            let last = s.finish()?;
            values.extend(last);
            Ok(())
        });
        let error = |kind, offset, detail| {
            Item::Error(Error {
                kind,
                line: self.line_no,
                offset: at + offset,
                start: at,
                raw: line.clone(),
                detail,
            })
        };
        match result {
            Err(e) => out.push(error(ErrorKind::Json(e.kind()), e.offset(), e.detail())),
            Ok(()) if values.len() > 1 => out.push(error(
                ErrorKind::MultipleValues,
                values[1].start(),
                "more than one JSON value on the line",
            )),
            Ok(()) => {
                if let Some(v) = values.pop() {
                    out.push(Item::Value(Value {
                        offset: at + v.start(),
                        bytes: v.into_bytes(),
                        line: self.line_no,
                    }));
                }
            }
        }
        // Kept for the next line: no allocation per line.
        self.values = values;
    }
}
