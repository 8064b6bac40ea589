//! A live view of a JSON value while its bytes are still arriving.
//!
//! User interfaces show a tool call's arguments as they stream (the file being written, the
//! command being typed). The usual way — append each fragment, then "repair and re-parse"
//! the whole accumulated text — is quadratic in the arguments' length. [`Preview`] keeps a
//! tree instead and changes only what each chunk adds: reading it costs nothing, pushing a
//! chunk costs its own bytes plus one walk down the open containers.
//!
//! The bytes are checked by a strict [`Splitter`] first, so the tree is only ever built from
//! valid JSON; the first invalid byte stops it with the splitter's [`Error`] (offset, kind,
//! bytes), and the tree keeps what came before it.

use std::sync::Arc;

use serde_json::{Map, Number, Value as Json};

use super::{Error, Limits, Mode, Splitter, Value};

/// What [`Preview::partial`] shows of a value in progress:
///
/// * a string shows its text so far (an escape or a UTF-8 sequence cut by the chunk end
///   waits for the rest);
/// * an object shows the members whose value has begun, an array the elements that have
///   begun; an object key alone shows nothing yet;
/// * a number, `true`, `false` and `null` show once complete (a number once the byte after
///   it arrives: `1` may still become `10`).
///
/// So every view is a *prefix* of the final value: the same members and elements with equal
/// values, except that the last one begun may be a prefix of its final form (a shorter
/// string, fewer members or elements) — nothing shown is ever taken back, except where an
/// object repeats a key (the later member replaces the earlier, as `serde_json` does).
/// Once a value completes, the view is exactly what `serde_json::from_slice` gives for its
/// bytes — except for a number beyond the range of `f64` (`1e400`), which the grammar allows
/// and serde_json refuses: it shows as `null`.
///
/// Memory: the tree, bounded by the value limit as `serde_json` would be on the same bytes
/// (at most a few dozen bytes of tree per byte of input, for a run of tiny elements), and
/// an escape or a partial UTF-8 sequence of at most 12 bytes.
///
/// ```
/// use toolstream::json::{Mode, Preview};
///
/// let mut p = Preview::new(Mode::Objects);
/// let mut done = Vec::new();
/// p.push(br#"{"path": "src/ma"#, &mut done).unwrap();
/// assert_eq!(p.partial().unwrap()["path"], "src/ma");
/// p.push(br#"in.rs", "line": 4"#, &mut done).unwrap();
/// assert!(p.partial().unwrap().get("line").is_none()); // 4 may still become 42
/// p.push(b"2}", &mut done).unwrap();
/// assert_eq!(done[0]["line"], 42);
/// assert!(p.partial().is_none());
/// ```
#[derive(Debug)]
pub struct Preview {
    splitter: Splitter,
    scratch: Vec<Value>,
    builder: Builder,
}

/// One step of a path into a JSON value: an object member's key or an array element's
/// index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathStep {
    /// An object member, by its key.
    Key(String),
    /// An array element, by its index.
    Index(usize),
}

/// One change to a [`Preview`]'s view ([`Preview::push_changes`]). Applying the changes in
/// order to an empty view gives the view: `Set` puts `value` at `path` (an empty path is
/// the root; in an object it adds or replaces the member, in an array it adds the element,
/// whose index is always the array's length), and `Append` adds `text` to the string at
/// `path`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Change {
    /// A value began at `path`: an object, array or string as it starts (empty), or a
    /// number, `true`, `false` or `null` whole.
    Set {
        /// Where (shared between the changes at one place: cloning it is free).
        path: Arc<[PathStep]>,
        /// The value as it starts.
        value: Json,
    },
    /// Text was added to the string at `path`.
    Append {
        /// Where (shared between the changes at one place: cloning it is free).
        path: Arc<[PathStep]>,
        /// The text added (whole characters: an escape or a UTF-8 sequence cut by the chunk
        /// end comes with the next chunk).
        text: String,
    },
}

impl Change {
    /// Apply the change to `view` (the view as the changes before this one left it).
    /// Changes that do not fit `view` (not from the same preview, or out of order) leave it
    /// as it is.
    pub fn apply(&self, view: &mut Option<Json>) {
        match self {
            Change::Set { path, value } => {
                let Some((last, outer)) = path.split_last() else {
                    *view = Some(value.clone());
                    return;
                };
                match (view.as_mut().and_then(|v| at(v, outer)), last) {
                    (Some(Json::Object(m)), PathStep::Key(k)) => {
                        m.insert(k.clone(), value.clone());
                    }
                    (Some(Json::Array(a)), PathStep::Index(i)) if *i == a.len() => {
                        a.push(value.clone());
                    }
                    _ => {}
                }
            }
            Change::Append { path, text } => {
                if let Some(Json::String(s)) = view.as_mut().and_then(|v| at(v, path)) {
                    s.push_str(text);
                }
            }
        }
    }
}

/// The value at `path` inside `v`.
fn at<'a>(mut v: &'a mut Json, path: &[PathStep]) -> Option<&'a mut Json> {
    for step in path {
        v = match (v, step) {
            (Json::Object(m), PathStep::Key(k)) => m.get_mut(k)?,
            (Json::Array(a), PathStep::Index(i)) => a.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(v)
}

impl Preview {
    /// A preview with the default [`Limits`].
    pub fn new(mode: Mode) -> Self {
        Self::with_limits(mode, Limits::default())
    }

    /// A preview whose splitter has the given limits.
    pub fn with_limits(mode: Mode, limits: Limits) -> Self {
        Preview {
            splitter: Splitter::with_limits(mode, limits),
            scratch: Vec::new(),
            builder: Builder::default(),
        }
    }

    /// Feed the next chunk. Every value completed by it is appended to `out`, in order, as
    /// `serde_json` would read it (moved out of the tree, not re-parsed); the value still in
    /// progress is then [`Preview::partial`].
    ///
    /// # Errors
    ///
    /// The splitter's [`Error`] at the first invalid byte; the bytes before it are in the
    /// tree (and values they completed in `out`). The preview is then fused.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<Json>) -> Result<(), Error> {
        let start = self.splitter.offset();
        let checked = self.splitter.push_slice_now(chunk, &mut self.scratch);
        let before = out.len();
        self.builder
            .feed(&chunk[..accepted(start, chunk.len(), &checked)], out);
        // A number at the top level ends with the next byte, even one the splitter then
        // refuses (`-2\xE9`): the splitter has emitted it, so it is complete here too.
        if out.len() - before < self.scratch.len() {
            self.builder.end_number(out);
        }
        self.scratch.clear();
        checked
    }

    /// [`Preview::push`], and what the chunk changed in the view, in order, appended to
    /// `changes`: a value that began (an object, array or string empty, a number or
    /// literal whole) and text added to a string. Applied in order to a copy of the view
    /// (see [`Change`]), they give [`Preview::partial`] after this chunk; a value that
    /// completes comes out in `out` as with [`Preview::push`], and the next value's changes
    /// start from its root (an empty path) again. This costs what the chunk adds, not the
    /// view's size: the way to show a long string growing (a file being written) without
    /// building it again for every fragment.
    ///
    /// ```
    /// use toolstream::json::{Change, Mode, PathStep, Preview};
    ///
    /// let mut p = Preview::new(Mode::Objects);
    /// let (mut done, mut changes) = (Vec::new(), Vec::new());
    /// p.push_changes(br#"{"path": "src/ma"#, &mut done, &mut changes).unwrap();
    /// changes.clear();
    /// p.push_changes(b"in.rs", &mut done, &mut changes).unwrap();
    /// assert_eq!(
    ///     changes,
    ///     [Change::Append { path: vec![PathStep::Key("path".into())].into(), text: "in.rs".into() }]
    /// );
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Preview::push`]; the changes of the bytes before the error are in `changes`.
    pub fn push_changes(
        &mut self,
        chunk: &[u8],
        out: &mut Vec<Json>,
        changes: &mut Vec<Change>,
    ) -> Result<(), Error> {
        self.builder.record = true;
        let r = self.push(chunk, out);
        self.builder.record = false;
        changes.append(&mut self.builder.changes);
        r
    }

    /// The value in progress as it stands (see the type's docs for what shows), or `None`
    /// between values.
    pub fn partial(&self) -> Option<&Json> {
        self.builder.root.as_ref()
    }

    /// End of input: the last value if it was a number at the top level (only its end
    /// completes it).
    ///
    /// # Errors
    ///
    /// The splitter's error, [`ErrorKind::Truncated`](super::ErrorKind::Truncated) when
    /// the input ended inside a value (read [`Preview::partial`] before for what arrived).
    pub fn finish(mut self) -> Result<Option<Json>, Error> {
        match self.splitter.finish() {
            Ok(Some(_)) => {
                let mut out = Vec::new();
                self.builder.end_number(&mut out);
                Ok(out.pop())
            }
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The splitter that checks the bytes (offsets, values emitted, bytes held, its error).
    /// The lexical state it stands in is what [`Preview::partial`] shows: a preview feeds it
    /// so that it reads every chunk at once (no chunk waits, as one may in
    /// [`Splitter::push_slice`]).
    pub fn splitter(&self) -> &Splitter {
        &self.splitter
    }
}

/// How many bytes of a chunk of `len` bytes pushed at offset `start` the splitter took,
/// from the push's result: all of them, or those before the error.
pub(crate) fn accepted(start: u64, len: usize, pushed: &Result<(), Error>) -> usize {
    match pushed {
        Ok(()) => len,
        // Fused before this push: nothing of it was taken.
        Err(e) if e.offset() < start => 0,
        Err(e) => usize::try_from(e.offset() - start).map_or(len, |n| n.min(len)),
    }
}

/// Where the builder stands. The input is valid JSON (checked by the splitter), so the
/// states only say what the next significant byte means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Lex {
    /// Between top-level values.
    #[default]
    Between,
    /// A value comes next (after `[`, `:`, or `,` in an array).
    Value,
    /// A key or `}` comes next (after `{`, or `,` in an object).
    Key,
    /// Inside a key.
    InKey,
    /// After a key, before its value (the `:` and whitespace are skipped).
    Colon,
    /// After a value inside a container.
    After,
    /// Inside a string value.
    InString,
    /// Inside a number.
    InNumber,
    /// Inside `true`, `false` or `null`: the literal and how many bytes remain.
    InLiteral,
}

/// An open container: for an object, the key of the member being built; for an array,
/// how many elements have begun (the one being built is the last).
#[derive(Clone, Debug)]
struct Frame {
    object: bool,
    key: String,
    len: usize,
}

/// The string escape in progress.
#[derive(Clone, Copy, Debug, Default)]
struct Escape {
    /// After a backslash.
    backslash: bool,
    /// Inside `\uXXXX`: digits read and their value.
    hex_digits: u8,
    hex: u32,
    /// A high surrogate waiting for its low half.
    high: Option<u32>,
}

/// What one value in a view's tree is counted as costing beyond its bytes: a
/// `serde_json::Value` (32 bytes), its slot in an array or its key and entry in a map, and
/// the allocator's share.
pub(crate) const NODE_COST: u64 = 80;

/// The tree builder behind [`Preview`], fed bytes a splitter has accepted (the assembler
/// drives one per call beside the call's own splitter).
#[derive(Clone, Debug, Default)]
pub(crate) struct Builder {
    root: Option<Json>,
    /// Bytes fed in all, and where the value in progress began among them (what the tree
    /// holds is bounded by the bytes since).
    fed: u64,
    value_from: u64,
    /// Values put in the tree since the value in progress began (each costs a node).
    nodes: u64,
    frames: Vec<Frame>,
    lex: Lex,
    /// Decoded bytes of the string in progress not yet written to the tree (a key's whole
    /// text; for a value, what this push added), and a cut UTF-8 sequence kept at its end.
    text: Vec<u8>,
    esc: Escape,
    /// The number or literal in progress.
    scalar: Vec<u8>,
    literal_left: u8,
    /// Whether the changes to the tree are recorded in `changes` ([`Preview::push_changes`]).
    record: bool,
    changes: Vec<Change>,
    /// The path of the value being built, while the open containers stay as they are (a
    /// string growing push after push is reported at one shared path).
    path: Option<Arc<[PathStep]>>,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_number_byte(b: u8) -> bool {
    matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
}

impl Builder {
    /// The value in progress, if any.
    pub(crate) fn partial(&self) -> Option<&Json> {
        self.root.as_ref()
    }

    /// What the value in progress is counted as holding (0 between values): the input
    /// bytes behind it, and [`NODE_COST`] for each value in its tree (a tree of `[0,0,...]`
    /// costs far more than its bytes).
    pub(crate) fn held(&self) -> u64 {
        if self.lex == Lex::Between {
            0
        } else {
            self.fed - self.value_from + self.nodes * NODE_COST
        }
    }

    /// Valid JSON bytes in (accepted by a splitter); values they complete to `out`.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<Json>) {
        let mut i = 0;
        while i < bytes.len() {
            match self.lex {
                Lex::InString | Lex::InKey => i = self.string_bytes(bytes, i, out),
                Lex::InNumber => {
                    let run = bytes[i..]
                        .iter()
                        .take_while(|&&b| is_number_byte(b))
                        .count();
                    self.scalar.extend_from_slice(&bytes[i..i + run]);
                    i += run;
                    if i < bytes.len() {
                        self.end_number(out);
                    }
                }
                Lex::InLiteral => {
                    let take = usize::from(self.literal_left).min(bytes.len() - i);
                    self.scalar.extend_from_slice(&bytes[i..i + take]);
                    i += take;
                    self.literal_left -= take as u8;
                    if self.literal_left == 0 {
                        let v = match self.scalar[0] {
                            b't' => Json::Bool(true),
                            b'f' => Json::Bool(false),
                            _ => Json::Null,
                        };
                        self.scalar.clear();
                        self.scalar_done(v, out);
                    }
                }
                lex => {
                    if lex == Lex::Between {
                        self.value_from = self.fed + i as u64;
                        self.nodes = 0;
                    }
                    let b = bytes[i];
                    i += 1;
                    self.structural(b, out);
                }
            }
        }
        self.fed += bytes.len() as u64;
        // What this push added to a string value goes into the tree once.
        if self.lex == Lex::InString {
            self.flush_text();
        }
    }

    /// A byte outside strings, numbers and literals.
    fn structural(&mut self, b: u8, out: &mut Vec<Json>) {
        if is_ws(b) {
            return;
        }
        match (self.lex, b) {
            (Lex::Key, b'"') => {
                self.lex = Lex::InKey;
                self.text.clear();
            }
            (Lex::Key, b'}') | (Lex::After, b'}' | b']') => self.close(out),
            (Lex::Value, b']') => self.close(out), // `[]`
            (Lex::After, b',') => {
                self.lex = if self.frames.last().is_some_and(|f| f.object) {
                    Lex::Key
                } else {
                    Lex::Value
                };
            }
            (Lex::Colon, b':') => self.lex = Lex::Value,
            (Lex::Between | Lex::Value, _) => self.value_start(b),
            // Nothing else comes here on valid input.
            _ => {}
        }
    }

    fn value_start(&mut self, b: u8) {
        match b {
            b'{' => {
                self.insert(Json::Object(Map::new()));
                self.frames.push(Frame {
                    object: true,
                    key: String::new(),
                    len: 0,
                });
                self.path = None;
                self.lex = Lex::Key;
            }
            b'[' => {
                self.insert(Json::Array(Vec::new()));
                self.frames.push(Frame {
                    object: false,
                    key: String::new(),
                    len: 0,
                });
                self.path = None;
                self.lex = Lex::Value;
            }
            b'"' => {
                self.insert(Json::String(String::new()));
                self.text.clear();
                self.lex = Lex::InString;
            }
            b't' | b'n' | b'f' => {
                self.scalar.clear();
                self.scalar.push(b);
                self.literal_left = if b == b'f' { 4 } else { 3 };
                self.lex = Lex::InLiteral;
            }
            b'-' | b'0'..=b'9' => {
                self.scalar.clear();
                self.scalar.push(b);
                self.lex = Lex::InNumber;
            }
            // A byte order mark at the stream start (the splitter allows it).
            _ => {}
        }
    }

    /// A value begins: into the innermost container, or as the root.
    fn insert(&mut self, v: Json) {
        self.nodes += 1;
        if let Some(f) = self.frames.last_mut().filter(|f| !f.object) {
            f.len += 1;
            self.path = None;
        }
        if self.record {
            let path = self.path();
            self.changes.push(Change::Set {
                path,
                value: v.clone(),
            });
        }
        let Some((last, outer)) = self.frames.split_last() else {
            self.root = Some(v);
            return;
        };
        match walk(&mut self.root, outer) {
            Some(Json::Object(m)) => {
                m.insert(last.key.clone(), v);
            }
            Some(Json::Array(a)) => a.push(v),
            _ => debug_assert!(false, "no open container to insert into"),
        }
    }

    /// A number, `true`, `false` or `null` is complete.
    fn scalar_done(&mut self, v: Json, out: &mut Vec<Json>) {
        self.insert(v);
        self.value_done(out);
    }

    /// The number in progress ended (the next byte is not part of it, or the input ended).
    fn end_number(&mut self, out: &mut Vec<Json>) {
        if self.lex != Lex::InNumber {
            return;
        }
        // Checked by the splitter: serde_json reads it as it would in the whole value, or
        // refuses it when it is beyond f64's range (`1e400`): null then.
        let v = std::str::from_utf8(&self.scalar)
            .ok()
            .and_then(|s| serde_json::from_str::<Number>(s).ok())
            .map_or(Json::Null, Json::Number);
        self.scalar.clear();
        self.scalar_done(v, out);
    }

    /// A value ended: after it in its container, or out as a complete top-level value.
    fn value_done(&mut self, out: &mut Vec<Json>) {
        if self.frames.is_empty() {
            if let Some(v) = self.root.take() {
                out.push(v);
            }
            self.lex = Lex::Between;
        } else {
            self.lex = Lex::After;
        }
    }

    fn close(&mut self, out: &mut Vec<Json>) {
        self.frames.pop();
        self.path = None;
        self.value_done(out);
    }

    /// Bytes of a string from `i`: up to and including its closing quote, or to the end.
    fn string_bytes(&mut self, bytes: &[u8], mut i: usize, out: &mut Vec<Json>) -> usize {
        while i < bytes.len() {
            if self.esc.backslash || self.esc.hex_digits > 0 {
                self.escape_byte(bytes[i]);
                i += 1;
                continue;
            }
            let rest = &bytes[i..];
            match quote_or_backslash(rest) {
                None => {
                    self.text.extend_from_slice(rest);
                    return bytes.len();
                }
                Some(k) => {
                    self.text.extend_from_slice(&rest[..k]);
                    i += k + 1;
                    if rest[k] == b'\\' {
                        self.esc.backslash = true;
                    } else {
                        self.string_end(out);
                        return i;
                    }
                }
            }
        }
        i
    }

    /// One byte of an escape (after the backslash, or a hex digit of `\u`).
    fn escape_byte(&mut self, b: u8) {
        if self.esc.backslash {
            self.esc.backslash = false;
            let c = match b {
                b'n' => '\n',
                b't' => '\t',
                b'r' => '\r',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'u' => {
                    self.esc.hex_digits = 1;
                    self.esc.hex = 0;
                    return;
                }
                // `"`, `\\`, `/`.
                other => char::from(other),
            };
            self.push_char(c);
            return;
        }
        let d = char::from(b).to_digit(16).unwrap_or(0);
        self.esc.hex = self.esc.hex * 16 + d;
        self.esc.hex_digits += 1;
        if self.esc.hex_digits < 5 {
            return;
        }
        self.esc.hex_digits = 0;
        let unit = self.esc.hex;
        match (self.esc.high.take(), unit) {
            (None, 0xD800..=0xDBFF) => self.esc.high = Some(unit),
            (Some(high), 0xDC00..=0xDFFF) => {
                let c = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00);
                self.push_char(char::from_u32(c).unwrap_or('\u{FFFD}'));
            }
            // Lone surrogates are refused by the splitter.
            (_, u) => self.push_char(char::from_u32(u).unwrap_or('\u{FFFD}')),
        }
    }

    fn push_char(&mut self, c: char) {
        let mut buf = [0; 4];
        self.text
            .extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }

    /// The closing quote of a key or a string value.
    fn string_end(&mut self, out: &mut Vec<Json>) {
        if self.lex == Lex::InKey {
            let key = take_str(&mut self.text);
            if let Some(f) = self.frames.last_mut() {
                f.key = key;
            }
            self.path = None;
            self.lex = Lex::Colon;
        } else {
            self.flush_text();
            self.value_done(out);
        }
    }

    /// Append the decoded text held so far to the string value in the tree, keeping back a
    /// UTF-8 sequence cut by the chunk end.
    fn flush_text(&mut self) {
        let keep = cut_sequence(&self.text);
        let whole = self.text.len() - keep;
        if whole == 0 {
            return;
        }
        let target = match self.frames.split_last() {
            None => self.root.as_mut(),
            Some((last, outer)) => match walk(&mut self.root, outer) {
                Some(Json::Object(m)) => m.get_mut(&last.key),
                Some(Json::Array(a)) => a.last_mut(),
                _ => None,
            },
        };
        let text = match std::str::from_utf8(&self.text[..whole]) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            // Checked by the splitter; never taken on valid input.
            Err(_) => String::from_utf8_lossy(&self.text[..whole]),
        };
        if let Some(Json::String(t)) = target {
            t.push_str(&text);
        }
        if self.record {
            let text = text.into_owned();
            let path = self.path();
            self.changes.push(Change::Append { path, text });
        }
        self.text.drain(..whole);
    }

    /// Where the value being built lies: each open container's member key or element
    /// index, outermost first.
    fn path(&mut self) -> Arc<[PathStep]> {
        let frames = &self.frames;
        self.path
            .get_or_insert_with(|| {
                frames
                    .iter()
                    .map(|f| {
                        if f.object {
                            PathStep::Key(f.key.clone())
                        } else {
                            PathStep::Index(f.len.saturating_sub(1))
                        }
                    })
                    .collect()
            })
            .clone()
    }
}

/// The container that `frames` lead to from the root: each frame's open member (by its key)
/// or last element, one level at a time.
fn walk<'a>(root: &'a mut Option<Json>, frames: &[Frame]) -> Option<&'a mut Json> {
    let mut cur = root.as_mut()?;
    for f in frames {
        cur = match cur {
            Json::Object(m) => m.get_mut(&f.key)?,
            Json::Array(v) => v.last_mut()?,
            _ => return None,
        };
    }
    Some(cur)
}

/// The first `"` or `\\` in `b`. A delta is a few dozen bytes at most, as a rule: a plain
/// loop finds it there for less than the vector search's set-up costs.
#[inline]
fn quote_or_backslash(b: &[u8]) -> Option<usize> {
    if b.len() < 64 {
        b.iter().position(|&c| c == b'"' || c == b'\\')
    } else {
        memchr::memchr2(b'"', b'\\', b)
    }
}

/// Bytes at the end of `b` that begin a UTF-8 sequence not yet complete (0 to 3).
fn cut_sequence(b: &[u8]) -> usize {
    for back in 1..=b.len().min(3) {
        let lead = b[b.len() - back];
        if lead & 0xC0 == 0x80 {
            continue; // a continuation byte: look further back
        }
        let need = match lead {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if need > back { back } else { 0 };
    }
    0
}

fn take_str(text: &mut Vec<u8>) -> String {
    let bytes = std::mem::take(text);
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}
