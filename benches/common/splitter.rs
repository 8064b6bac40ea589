//! The splitter corpus and the two chunked drivers, shared by `benches/splitter.rs` and
//! `benches/instructions.rs` (which counts instructions on the same bytes).

use bytes::Bytes;
use toolstream::json::{Mode, Splitter};

use super::Rng;

/// Escape text as the body of a JSON string (quotes, backslashes, control bytes), leaving
/// non-ASCII raw.
pub fn escape(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
}

pub const CODE: &str = "fn main() {\n    let path = \"src/lib.rs\";\n    println!(\"hello, {}\\n\", path);\n\tif x > 0 && y < 10 { return Err(\"bad \\\"input\\\"\".into()); }\n}\n";
pub const PROSE: &str = "The quick brown fox jumps over the lazy dog. Les élèves étudient à la bibliothèque; 東京の天気は晴れです。 Zürich — naïve café. ";

pub fn object(rng: &mut Rng, target: usize) -> String {
    let kind = rng.below(4);
    object_of(rng, kind, target)
}

/// An object of one kind: 0 a shell command, 1 a file's contents, 2 an edit list, 3 an
/// array of numbers.
pub fn object_of(rng: &mut Rng, kind: u64, target: usize) -> String {
    let mut s = String::new();
    match kind {
        0 => {
            s.push_str("{\"command\":\"");
            while s.len() < target {
                escape(
                    "grep -rn \"fn main\" src/ | sed 's/\\t/ /g' > out.txt && echo \"done\"; ",
                    &mut s,
                );
            }
            s.push_str("\",\"timeout\":30,\"cwd\":\"/work\"}");
        }
        1 => {
            s.push_str("{\"path\":\"src/generated.rs\",\"content\":\"");
            while s.len() < target {
                match rng.below(3) {
                    0 => escape(CODE, &mut s),
                    1 => escape(PROSE, &mut s),
                    _ => s.push_str("caf\\u00e9 \\ud83d\\ude00 \\u00fcber "),
                }
            }
            s.push_str("\",\"overwrite\":true}");
        }
        2 => {
            s.push_str("{\"edits\":[");
            let mut first = true;
            while s.len() < target {
                if !first {
                    s.push(',');
                }
                first = false;
                s.push_str(&format!("{{\"line\":{},\"old\":\"", rng.below(5000)));
                escape("let x = foo(\"a\", 'b');", &mut s);
                s.push_str("\",\"new\":\"");
                escape("let x = bar(\"a\", 'b', é);", &mut s);
                s.push_str("\",\"range\":{\"start\":[12,4],\"end\":[12,30]}}");
            }
            s.push_str("],\"dry_run\":false}");
        }
        _ => {
            s.push_str("{\"values\":[");
            let mut first = true;
            while s.len() < target {
                if !first {
                    s.push(',');
                }
                first = false;
                match rng.below(4) {
                    0 => s.push_str(&rng.below(1_000_000).to_string()),
                    1 => s.push_str(&format!("-{}.{}", rng.below(1000), rng.below(100000))),
                    2 => s.push_str(&format!("{}e-{}", rng.below(100), rng.below(20))),
                    _ => s.push_str("null"),
                }
            }
            s.push_str("],\"threshold\":0.75,\"label\":\"metrics\"}");
        }
    }
    s
}

/// Objects of 100 B..64 KiB (log-uniform), `}{`-glued or newline-separated.
pub fn corpus(bytes: usize, ndjson: bool) -> (Bytes, usize) {
    corpus_of(bytes, ndjson, None)
}

/// [`corpus`], or with `Some(kind)` only objects of that kind ([`object_of`]), of the same
/// sizes: for profiles by kind.
pub fn corpus_of(bytes: usize, ndjson: bool, kind: Option<u64>) -> (Bytes, usize) {
    let mut rng = Rng(0x0DDB_1A5E_5BAD_5EED);
    let mut out = String::with_capacity(bytes + 70_000);
    let mut n = 0;
    while out.len() < bytes {
        let target = (100.0 * 655.36f64.powf(rng.below(1000) as f64 / 1000.0)) as usize;
        let k = rng.below(4);
        out.push_str(&object_of(&mut rng, kind.unwrap_or(k), target));
        if ndjson {
            out.push('\n');
        }
        n += 1;
    }
    (Bytes::from(out), n)
}

pub fn toolstream_chunks(input: &Bytes, chunk: usize) -> usize {
    toolstream_fed(input, chunk, false)
}

/// [`toolstream_chunks`] through `push_slice`: chunks as slices of the input (no `Bytes`
/// per chunk), as a caller reading into a buffer of its own feeds them, and as actson
/// takes them.
pub fn toolstream_slices(input: &Bytes, chunk: usize) -> usize {
    toolstream_fed(input, chunk, true)
}

#[inline(always)]
fn toolstream_fed(input: &Bytes, chunk: usize, slices: bool) -> usize {
    let mut s = Splitter::new(Mode::Objects);
    let mut out = Vec::new();
    let mut n = 0;
    let mut i = 0;
    while i < input.len() {
        let j = (i + chunk).min(input.len());
        if slices {
            s.push_slice(&input[i..j], &mut out).expect("valid corpus");
        } else {
            s.push(input.slice(i..j), &mut out).expect("valid corpus");
        }
        n += out.len();
        out.clear();
        i = j;
    }
    assert!(s.finish().expect("clean end").is_none());
    n
}

/// The plain byte-at-a-time loop: depth, in-string and escape state carried across
/// chunks; counts top-level values. No validation at all.
#[derive(Default)]
pub struct ByteLoop {
    depth: u32,
    in_string: bool,
    escape: bool,
    values: usize,
}

impl ByteLoop {
    #[inline(never)]
    fn push(&mut self, chunk: &[u8]) {
        for &b in chunk {
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if b == b'\\' {
                    self.escape = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
            } else {
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            self.values += 1;
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

pub fn byte_loop_chunks(input: &Bytes, chunk: usize) -> usize {
    let mut l = ByteLoop::default();
    let mut i = 0;
    while i < input.len() {
        let j = (i + chunk).min(input.len());
        l.push(&input.slice(i..j));
        i = j;
    }
    l.values
}

/// The plain byte loop that also hands back every value's bytes, as a splitter must: a
/// value inside one chunk as a slice of it, a value spanning chunks copied once into one
/// buffer. The least a splitter does per byte at small chunks (the `ByteLoop` above does
/// not keep the bytes); still no validation at all.
#[derive(Default)]
pub struct ByteLoopValues {
    depth: u32,
    in_string: bool,
    escape: bool,
    /// The bytes of a value that started in an earlier chunk.
    buf: Vec<u8>,
}

impl ByteLoopValues {
    #[inline(never)]
    fn push(&mut self, chunk: &Bytes, out: &mut Vec<Bytes>) {
        // Where the open value's bytes in this chunk start (0 when it started before).
        let mut start = 0;
        for (i, &b) in chunk.iter().enumerate() {
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if b == b'\\' {
                    self.escape = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
            } else {
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => {
                        if self.depth == 0 {
                            start = i;
                        }
                        self.depth += 1;
                    }
                    b'}' | b']' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            if self.buf.is_empty() {
                                out.push(chunk.slice(start..i + 1));
                            } else {
                                self.buf.extend_from_slice(&chunk[..i + 1]);
                                out.push(Bytes::from(std::mem::take(&mut self.buf)));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        if self.depth > 0 {
            // Byte by byte when short: cheaper than a call to `memcpy` (toolstream's
            // splitter appends the same way).
            let rest = &chunk[start..];
            if rest.len() <= 4 {
                for &b in rest {
                    self.buf.push(b);
                }
            } else {
                self.buf.extend_from_slice(rest);
            }
        }
    }
}

/// [`ByteLoopValues`] over `input` cut into `chunk`-byte pieces: the number of values.
pub fn byte_loop_values_chunks(input: &Bytes, chunk: usize) -> usize {
    let mut l = ByteLoopValues::default();
    let mut out = Vec::new();
    let mut n = 0;
    let mut i = 0;
    while i < input.len() {
        let j = (i + chunk).min(input.len());
        l.push(&input.slice(i..j), &mut out);
        n += out.len();
        out.clear();
        i = j;
    }
    n
}
