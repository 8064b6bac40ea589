//! AWS event stream framing (`application/vnd.amazon.eventstream`), the binary framing of
//! Amazon Bedrock's `ConverseStream`: push-based and sans-IO like the SSE decoder.
//!
//! Each message is length-prefixed and checksummed:
//!
//! ```text
//! total length (u32 BE) | headers length (u32 BE) | prelude CRC32 (u32 BE, of the 8 bytes before)
//! headers (name length u8, name, value type u8, value) ... | payload | message CRC32 (u32 BE, of all before)
//! ```
//!
//! The CRCs are the gzip CRC-32. A message is handed back during the push that delivers its
//! last byte; its payload is a zero-copy slice of the chunk when the message lay inside one
//! chunk. There is no way to find the next message after a wrong length or checksum, so the
//! first one fails the stream: the decoder is then fused, and says where.

use std::fmt;

use bytes::{Buf, Bytes, BytesMut};

/// Prelude (two lengths and their CRC) plus the message CRC.
const OVERHEAD: usize = 16;

/// Bounds on what the decoder buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    max_message: u64,
}

impl Default for Limits {
    /// 24 MiB per message (Bedrock's payloads are small: deltas of text and arguments).
    fn default() -> Self {
        Limits {
            max_message: 24 << 20,
        }
    }
}

impl Limits {
    /// Maximum bytes of one message, prelude and checksums included (at least 16).
    pub fn max_message_bytes(mut self, n: u64) -> Self {
        self.max_message = n.max(OVERHEAD as u64);
        self
    }
    /// The message limit.
    pub fn message_bytes(&self) -> u64 {
        self.max_message
    }
}

/// A header's value. Strings and byte arrays are zero-copy slices of the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderValue {
    /// Types 0 and 1.
    Bool(bool),
    /// Type 2.
    Byte(i8),
    /// Type 3.
    Short(i16),
    /// Type 4.
    Int(i32),
    /// Type 5.
    Long(i64),
    /// Type 6.
    Bytes(Bytes),
    /// Type 7 (UTF-8 by the specification; not checked here).
    String(Bytes),
    /// Type 8: milliseconds since the Unix epoch.
    Timestamp(i64),
    /// Type 9.
    Uuid([u8; 16]),
}

/// One decoded message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    headers: Vec<(Bytes, HeaderValue)>,
    payload: Bytes,
    offset: u64,
}

impl Message {
    /// The headers, in order.
    pub fn headers(&self) -> &[(Bytes, HeaderValue)] {
        &self.headers
    }
    /// The value of the first header called `name`.
    pub fn header(&self, name: &str) -> Option<&HeaderValue> {
        self.headers
            .iter()
            .find(|(n, _)| n[..] == *name.as_bytes())
            .map(|(_, v)| v)
    }
    /// The value of the string header `name`, if there is one.
    pub fn str_header(&self, name: &str) -> Option<&[u8]> {
        match self.header(name)? {
            HeaderValue::String(s) => Some(s),
            _ => None,
        }
    }
    /// The payload.
    pub fn payload(&self) -> &Bytes {
        &self.payload
    }
    /// Absolute offset of the message's first byte in the stream.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

/// Why the stream cannot be read further.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The prelude's CRC does not match its lengths.
    PreludeChecksum,
    /// The message's CRC does not match its bytes.
    MessageChecksum,
    /// The lengths are impossible (shorter than the overhead, headers longer than the
    /// message).
    Length,
    /// A message longer than [`Limits::max_message_bytes`].
    TooLarge,
    /// A header runs past the headers section, or has an unknown value type.
    Header,
}

impl ErrorKind {
    /// A stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::PreludeChecksum => "prelude_checksum",
            ErrorKind::MessageChecksum => "message_checksum",
            ErrorKind::Length => "length",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::Header => "header",
        }
    }
}

/// A framing failure: its kind and the absolute offset of the message it is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    offset: u64,
}

impl Error {
    /// What went wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// Absolute offset of the first byte of the message that failed.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "event stream: {} in the message at byte {}",
            self.kind.as_str(),
            self.offset
        )
    }
}

impl std::error::Error for Error {}

/// The push-based decoder.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    limits: Limits,
    /// Bytes of a message that spans chunks.
    buf: BytesMut,
    /// Absolute offset of the next byte not yet in a message or the buffer.
    offset: u64,
    failed: Option<Error>,
}

impl Decoder {
    /// A decoder with default [`Limits`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder with the given limits.
    pub fn with_limits(limits: Limits) -> Self {
        Decoder {
            limits,
            ..Self::default()
        }
    }

    /// Bytes held for a message that spans chunks (bounded by the message limit).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Total bytes pushed so far.
    pub fn offset(&self) -> u64 {
        self.offset + self.buf.len() as u64
    }

    /// Feed the next chunk; every message completed by it is appended to `out`, in order,
    /// including those before an error in the same chunk.
    ///
    /// # Errors
    ///
    /// The first wrong length or checksum; the decoder is then fused.
    pub fn push(&mut self, mut chunk: Bytes, out: &mut Vec<Message>) -> Result<(), Error> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        // Complete the message held from earlier chunks first: its prelude, then the rest.
        if !self.buf.is_empty() {
            if self.buf.len() < 12 {
                let take = (12 - self.buf.len()).min(chunk.len());
                self.buf.extend_from_slice(&chunk[..take]);
                chunk.advance(take);
                if self.buf.len() < 12 {
                    return Ok(());
                }
            }
            let need = match self.needed(&self.buf) {
                Ok(n) => n,
                Err(e) => return Err(self.fail(e)),
            };
            let take = (need - self.buf.len()).min(chunk.len());
            self.buf.extend_from_slice(&chunk[..take]);
            chunk.advance(take);
            if self.buf.len() < need {
                return Ok(());
            }
            let whole = self.buf.split().freeze();
            let at = self.offset;
            self.offset += whole.len() as u64;
            match decode(whole, at) {
                Ok(m) => out.push(m),
                Err(e) => return Err(self.fail(e)),
            }
        }
        // Messages that lie inside the chunk: zero-copy.
        while !chunk.is_empty() {
            let need = match self.needed(&chunk) {
                Ok(n) => n,
                Err(e) => return Err(self.fail(e)),
            };
            if chunk.len() < need {
                self.buf.extend_from_slice(&chunk);
                return Ok(());
            }
            let whole = chunk.split_to(need);
            let at = self.offset;
            self.offset += need as u64;
            match decode(whole, at) {
                Ok(m) => out.push(m),
                Err(e) => return Err(self.fail(e)),
            }
        }
        Ok(())
    }

    /// The length of the message at the start of `bytes`, once its prelude is there and
    /// checked; `usize::MAX` while it is not.
    fn needed(&self, bytes: &[u8]) -> Result<usize, Error> {
        if bytes.len() < 12 {
            return Ok(usize::MAX);
        }
        let at = self.offset;
        let total = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let headers = u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        let crc = u32::from_be_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        let fail = |kind| Err(Error { kind, offset: at });
        if crc32(&bytes[..8]) != crc {
            return fail(ErrorKind::PreludeChecksum);
        }
        if (total as usize) < OVERHEAD || headers as u64 > total as u64 - OVERHEAD as u64 {
            return fail(ErrorKind::Length);
        }
        if total as u64 > self.limits.max_message {
            return fail(ErrorKind::TooLarge);
        }
        Ok(total as usize)
    }

    fn fail(&mut self, e: Error) -> Error {
        self.failed = Some(e);
        self.buf = BytesMut::new();
        e
    }

    /// End of stream.
    ///
    /// # Errors
    ///
    /// The error the decoder is fused with, or [`Incomplete`] when the stream ended inside
    /// a message.
    pub fn finish(self) -> Result<(), Finish> {
        if let Some(e) = self.failed {
            return Err(Finish::Failed(e));
        }
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(Finish::Incomplete(Incomplete {
                offset: self.offset,
                bytes: self.buf.len(),
            }))
        }
    }
}

/// A stream that ended inside a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Incomplete {
    /// Offset of the unfinished message.
    pub offset: u64,
    /// Bytes of it that arrived.
    pub bytes: usize,
}

/// How a stream did not end cleanly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// The decoder failed earlier.
    Failed(Error),
    /// The stream ended inside a message.
    Incomplete(Incomplete),
}

/// One whole message (its length and prelude checked): the message CRC, the headers.
fn decode(whole: Bytes, at: u64) -> Result<Message, Error> {
    let fail = |kind| Error { kind, offset: at };
    let n = whole.len();
    let crc = u32::from_be_bytes([whole[n - 4], whole[n - 3], whole[n - 2], whole[n - 1]]);
    if crc32(&whole[..n - 4]) != crc {
        return Err(fail(ErrorKind::MessageChecksum));
    }
    let hlen = u32::from_be_bytes([whole[4], whole[5], whole[6], whole[7]]) as usize;
    let headers_end = 12 + hlen;
    let mut headers = Vec::new();
    let mut i = 12;
    let bad = || fail(ErrorKind::Header);
    while i < headers_end {
        let name_len = usize::from(whole[i]);
        i += 1;
        if i + name_len + 1 > headers_end {
            return Err(bad());
        }
        let name = whole.slice(i..i + name_len);
        i += name_len;
        let ty = whole[i];
        i += 1;
        let (value, used) = header_value(&whole, ty, i, headers_end).ok_or_else(bad)?;
        i += used;
        headers.push((name, value));
    }
    Ok(Message {
        headers,
        payload: whole.slice(headers_end..n - 4),
        offset: at,
    })
}

/// The value of a header of type `ty` whose value starts at `whole[i]` and must end by
/// `end`, and its length; `None` for an unknown type or a value past `end`.
fn header_value(whole: &Bytes, ty: u8, i: usize, end: usize) -> Option<(HeaderValue, usize)> {
    let fixed = |k: usize| (i + k <= end).then(|| &whole[i..i + k]);
    Some(match ty {
        0 => (HeaderValue::Bool(true), 0),
        1 => (HeaderValue::Bool(false), 0),
        2 => (HeaderValue::Byte(fixed(1)?[0] as i8), 1),
        3 => {
            let b = fixed(2)?;
            (HeaderValue::Short(i16::from_be_bytes([b[0], b[1]])), 2)
        }
        4 => {
            let b = fixed(4)?;
            (
                HeaderValue::Int(i32::from_be_bytes([b[0], b[1], b[2], b[3]])),
                4,
            )
        }
        5 | 8 => {
            let b = fixed(8)?;
            let mut a = [0; 8];
            a.copy_from_slice(b);
            let v = i64::from_be_bytes(a);
            (
                if ty == 5 {
                    HeaderValue::Long(v)
                } else {
                    HeaderValue::Timestamp(v)
                },
                8,
            )
        }
        6 | 7 => {
            let b = fixed(2)?;
            let len = usize::from(u16::from_be_bytes([b[0], b[1]]));
            if i + 2 + len > end {
                return None;
            }
            let s = whole.slice(i + 2..i + 2 + len);
            (
                if ty == 6 {
                    HeaderValue::Bytes(s)
                } else {
                    HeaderValue::String(s)
                },
                2 + len,
            )
        }
        9 => {
            let b = fixed(16)?;
            let mut a = [0; 16];
            a.copy_from_slice(b);
            (HeaderValue::Uuid(a), 16)
        }
        _ => return None,
    })
}

/// The gzip CRC-32 table (reflected polynomial 0xEDB88320), built at compile time.
const CRC_TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// The gzip CRC-32 of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in bytes {
        c = CRC_TABLE[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
    }
    !c
}

/// Encode one message (for tests, fixtures and tools that write captures): string headers
/// and a payload.
pub fn encode(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::new();
    for (name, value) in headers {
        h.push(name.len() as u8);
        h.extend_from_slice(name.as_bytes());
        h.push(7);
        h.extend_from_slice(&(value.len() as u16).to_be_bytes());
        h.extend_from_slice(value.as_bytes());
    }
    frame(&h, payload)
}

/// Frame a headers section (already encoded, any value types, or deliberately malformed)
/// and a payload as one message: the lengths and both checksums.
pub fn frame(headers: &[u8], payload: &[u8]) -> Vec<u8> {
    let total = (OVERHEAD + headers.len() + payload.len()) as u32;
    let mut m = Vec::with_capacity(total as usize);
    m.extend_from_slice(&total.to_be_bytes());
    m.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&m);
    m.extend_from_slice(&prelude_crc.to_be_bytes());
    m.extend_from_slice(headers);
    m.extend_from_slice(payload);
    let crc = crc32(&m);
    m.extend_from_slice(&crc.to_be_bytes());
    m
}
