//! Opt-in repair of broken tool-call arguments: closed-form mistakes only, each change
//! reported with its kind and byte offset, never a guess about content.
//!
//! [`repair`] reads a call's raw arguments once, left to right, and writes the repaired
//! text as it goes: linear in the input, memory in proportion to it, at most
//! [`MAX_REPAIRS`] changes. Each kind of mistake is a [`RepairKind`], switchable in the
//! [`RepairPolicy`]. What it writes is then checked by the strict splitter as one JSON
//! object; valid input comes out byte for byte, with no repairs.
//!
//! **Repaired** (each only where it cannot mean anything else):
//!
//! | kind | from | to |
//! |---|---|---|
//! | `fence` | `` ```json\n{...}\n``` `` | `{...}` |
//! | `prose` | `Sure! {...} Hope it helps` | `{...}` |
//! | `trailing_comma` | `{"a":1,}`, `[1,2,]`, `{"a":1},` | `{"a":1}`, `[1,2]`, `{"a":1}` |
//! | `single_quotes` | `{'a': 'it\'s'}` | `{"a": "it's"}` |
//! | `unquoted_key` | `{path: "x"}`, `{2: "x"}` | `{"path": "x"}`, `{"2": "x"}` |
//! | `literal` | `True`, `False`, `None`, `undefined` | `true`, `false`, `null`, `null` |
//! | `comment` | `// ...`, `/* ... */` outside strings | removed |
//! | `control_char` | a raw newline or tab inside a string | `\n`, `\t` |
//! | `escape` | `\'`, `\x41` inside a string | `'`, `\u0041` |
//! | `double_encoded` | `"{\"a\":1}"` (the object as a JSON string) | `{"a":1}` |
//!
//! **Refused** ([`Refusal`]; the call stays a failure, with the repairs that were tried):
//!
//! - *truncated* arguments (the text ends inside a string, an object or an array): completing
//!   them invents content — a path cut at `"src/ma` is not `"src/ma"`;
//! - *unbalanced* brackets (`{"a": [1, 2}`): which one is wrong is a guess;
//! - an *ambiguous quote*: a quote inside a string that ends it early (`{"cmd": "echo "hi""}`,
//!   `{'msg': 'it's'}`): where the string ends is a guess, and a wrong guess runs a command
//!   with other arguments;
//! - `NaN`, `Infinity`: JSON has no such number, and `null` would invent a value;
//! - a bare word that is no literal, a missing comma or colon, an invalid escape other than
//!   `\'` and `\xHH`: not closed-form;
//! - anything whose result is not one JSON object (two objects in the prose, an array, a
//!   number), and an object that is part of another value: prose around it holding a
//!   bracket, or a quote or comma next to it (`[{...}]`, `"{...}"`, `{...}, "b": 2}`):
//!   dropping what is around it would change the value, not fix its spelling.

//!
//! **Why, from the peers' threads.** Each refusal is a place where a whole-text repair
//! library guessed and a tool ran with other arguments than the model's:
//!
//! - *truncated*: `{"commands": ["npm install", "npm test"` closes as a valid two-element
//!   list, indistinguishable from the list the model meant to finish (cline/cline#13001);
//!   a `write` cut by `max_tokens` and closed writes half a file (GCWing/OpenBitFun#643
//!   gates it to file writes and flags it). Only the stream knows the call was cut: the
//!   assembler never repairs a call the stream cut, and [`repair`] refuses text that ends
//!   inside a value.
//! - *ambiguous quote*: `{'name': 'Jack O'Sullivan, 'id': '5'}` became
//!   `{"name": "Jack O", "id": "5"}` (mangiucugna/json_repair#56); `["samsung 32" display"]`
//!   became two elements (json_repair#152); the JS library's end-quote heuristic still
//!   fails on `"You can try 65", which are good television"` (josdejong/jsonrepair#116).
//! - *inside strings*: a regex repair run over the whole text turned a bash command's
//!   `assert x is None` into `assert x is null` and a written file's `x = True` into
//!   `x = true` (nathansutton/chad#58). Here a literal is only ever a bare word where a
//!   value goes; a string's bytes change only where an escape or a raw control character
//!   must be written as JSON writes it.
//! - *non-finite numbers*: `null` for `NaN` hands the tool a value the model did not give.
//! - *part of another value*: `[{...}]` is not `{...}`, and `{"a": 1}, "b": 2}` is not
//!   `{"a": 1}`: dropping what surrounds the object would drop arguments.

use crate::json::{Mode, Splitter};
use bytes::Bytes;

/// The most changes one call's arguments may need: past it they are no closed-form
/// mistake (and a hostile input cannot make the report outgrow it).
pub const MAX_REPAIRS: usize = 1024;

/// The deepest nesting read.
pub const MAX_DEPTH: usize = 512;

/// A kind of mistake repaired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RepairKind {
    /// A markdown code fence around the object.
    Fence,
    /// Prose before or after the object.
    Prose,
    /// A comma before `}` or `]`.
    TrailingComma,
    /// A single-quoted string or key.
    SingleQuotes,
    /// An identifier as a key.
    UnquotedKey,
    /// `True`, `False`, `None`, `undefined`.
    Literal,
    /// A `//` or `/* */` comment.
    Comment,
    /// A raw control character inside a string.
    ControlChar,
    /// `\'` or `\xHH` inside a string.
    Escape,
    /// The object encoded as a JSON string.
    DoubleEncoded,
    /// A string where the declared schema says another type, holding exactly a value of
    /// it ([`coerce`]).
    Coerce,
}

impl RepairKind {
    /// Every kind.
    pub const ALL: [RepairKind; 11] = [
        RepairKind::Fence,
        RepairKind::Prose,
        RepairKind::TrailingComma,
        RepairKind::SingleQuotes,
        RepairKind::UnquotedKey,
        RepairKind::Literal,
        RepairKind::Comment,
        RepairKind::ControlChar,
        RepairKind::Escape,
        RepairKind::DoubleEncoded,
        RepairKind::Coerce,
    ];

    /// Its name (`trailing_comma`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            RepairKind::Fence => "fence",
            RepairKind::Prose => "prose",
            RepairKind::TrailingComma => "trailing_comma",
            RepairKind::SingleQuotes => "single_quotes",
            RepairKind::UnquotedKey => "unquoted_key",
            RepairKind::Literal => "literal",
            RepairKind::Comment => "comment",
            RepairKind::ControlChar => "control_char",
            RepairKind::Escape => "escape",
            RepairKind::DoubleEncoded => "double_encoded",
            RepairKind::Coerce => "coerce",
        }
    }

    /// The kind of this name.
    pub fn from_name(name: &str) -> Option<RepairKind> {
        RepairKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// Which kinds of mistakes are repaired. [`RepairPolicy::default`] repairs none (strict, as
/// every entry point is unless told); [`RepairPolicy::all`] every kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RepairPolicy {
    kinds: u16,
}

impl RepairPolicy {
    /// Every kind on.
    pub fn all() -> Self {
        RepairPolicy {
            kinds: RepairKind::ALL.iter().fold(0, |k, r| k | r.bit()),
        }
    }

    /// This policy with `kind` on or off.
    pub fn with(mut self, kind: RepairKind, on: bool) -> Self {
        if on {
            self.kinds |= kind.bit();
        } else {
            self.kinds &= !kind.bit();
        }
        self
    }

    /// Whether `kind` is repaired.
    pub fn allows(self, kind: RepairKind) -> bool {
        self.kinds & kind.bit() != 0
    }

    /// Whether anything is repaired.
    pub fn is_on(self) -> bool {
        self.kinds != 0
    }
}

/// One change made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repair {
    /// What was wrong.
    pub kind: RepairKind,
    /// Where, in the raw arguments (bytes).
    pub offset: usize,
    /// The bytes replaced (as text; lossy where they were not UTF-8, which is refused).
    pub replaced: String,
    /// What replaced them.
    pub with: String,
    /// For a coercion, the value's JSON Pointer in the arguments (`/count`).
    pub path: Option<String>,
}

/// As `inspect --json` and Python write it: `kind`, `offset`, `replaced`, `with`, and
/// `path` for a coercion.
impl serde::Serialize for Repair {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("kind", self.kind.as_str())?;
        m.serialize_entry("offset", &self.offset)?;
        m.serialize_entry("replaced", &self.replaced)?;
        m.serialize_entry("with", &self.with)?;
        if let Some(p) = &self.path {
            m.serialize_entry("path", p)?;
        }
        m.end()
    }
}

/// Why arguments were not repaired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The text ends inside a string, an object or an array.
    Truncated,
    /// A closing bracket of the wrong kind, or one with nothing open.
    Unbalanced,
    /// A quote inside a string that ends it where it cannot end.
    AmbiguousQuote,
    /// `NaN` or `Infinity`.
    NonFinite,
    /// Something no closed-form repair covers (a bare word, a missing comma or colon, an
    /// invalid escape, a bad number).
    NotRepairable,
    /// A mistake of a kind the policy leaves unrepaired.
    KindOff,
    /// The result is not one JSON object (none, several, or another value).
    NotOneObject,
    /// Past [`MAX_REPAIRS`] changes or [`MAX_DEPTH`] nesting.
    TooMany,
    /// The bytes are not UTF-8.
    NotUtf8,
}

impl Refusal {
    /// Its name (`truncated`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Truncated => "truncated",
            Refusal::Unbalanced => "unbalanced",
            Refusal::AmbiguousQuote => "ambiguous_quote",
            Refusal::NonFinite => "non_finite",
            Refusal::NotRepairable => "not_repairable",
            Refusal::KindOff => "kind_off",
            Refusal::NotOneObject => "not_one_object",
            Refusal::TooMany => "too_many",
            Refusal::NotUtf8 => "not_utf8",
        }
    }
}

/// Arguments not repaired: why, where, and the repairs made before the refusal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// Why.
    pub reason: Refusal,
    /// Where, in the raw arguments (bytes).
    pub offset: usize,
    /// The repairs made before it.
    pub tried: Vec<Repair>,
}

/// Repaired arguments: one strictly valid JSON object, and every change made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Repaired {
    /// The arguments (the raw ones, byte for byte, when nothing was repaired).
    pub arguments: Bytes,
    /// The changes, in the order of the bytes they name.
    pub repairs: Vec<Repair>,
}

/// Repair `raw` arguments by `policy`. See the [module](self) docs.
///
/// ```
/// use toolstream::repair::{repair, RepairKind, RepairPolicy};
///
/// let r = repair(b"{'path': 'a.rs', lines: [1, 2,],}", RepairPolicy::all()).unwrap();
/// assert_eq!(&r.arguments[..], br#"{"path": "a.rs", "lines": [1, 2]}"#);
/// let kinds: Vec<_> = r.repairs.iter().map(|r| r.kind).collect();
/// assert_eq!(kinds, [RepairKind::SingleQuotes, RepairKind::SingleQuotes,
///     RepairKind::UnquotedKey, RepairKind::TrailingComma, RepairKind::TrailingComma]);
/// assert_eq!(r.repairs[2].offset, 17); // `lines`
///
/// // A cut string is never completed.
/// assert!(repair(br#"{"path": "src/ma"#, RepairPolicy::all()).is_err());
/// ```
pub fn repair(raw: &[u8], policy: RepairPolicy) -> Result<Repaired, Refused> {
    let refuse = |reason, offset, tried| {
        Err(Refused {
            reason,
            offset,
            tried,
        })
    };
    if strictly_one_object(raw) {
        return Ok(Repaired {
            arguments: Bytes::copy_from_slice(raw),
            repairs: Vec::new(),
        });
    }
    let Ok(text) = std::str::from_utf8(raw) else {
        return refuse(Refusal::NotUtf8, 0, Vec::new());
    };
    let mut w = Writer {
        src: text.as_bytes(),
        out: Vec::with_capacity(raw.len() + 16),
        repairs: Vec::new(),
        policy,
    };
    // The object encoded as a JSON string.
    let trimmed = text.trim_matches(is_ws_char);
    if trimmed.starts_with('"') {
        if let Ok(inner) = serde_json::from_str::<String>(trimmed) {
            if strictly_one_object(inner.as_bytes()) {
                let at = text.len() - text.trim_start_matches(is_ws_char).len();
                if let Err(r) = w.note(RepairKind::DoubleEncoded, at, trimmed, &inner) {
                    return refuse(r, at, w.repairs);
                }
                return Ok(Repaired {
                    arguments: Bytes::from(inner),
                    repairs: w.repairs,
                });
            }
        }
    }
    match w.run() {
        Ok(()) => {}
        Err((reason, offset)) => return refuse(reason, offset, w.repairs),
    }
    if !strictly_one_object(&w.out) {
        return refuse(Refusal::NotRepairable, 0, w.repairs);
    }
    Ok(Repaired {
        arguments: Bytes::from(w.out),
        repairs: w.repairs,
    })
}

/// Whether `bytes` are exactly one JSON object (whitespace around it aside), by the
/// strict splitter.
fn strictly_one_object(bytes: &[u8]) -> bool {
    let mut s = Splitter::new(Mode::Objects);
    let mut out = Vec::new();
    if s.push(Bytes::copy_from_slice(bytes), &mut out).is_err() {
        return false;
    }
    matches!(s.finish(), Ok(None)) && out.len() == 1
}

type Fail = (Refusal, usize);

/// Where the first byte from `at` on that a string's run stops at is: its `quote`, a
/// backslash, a control byte, or (in a single-quoted string) a double quote; `src.len()`
/// when there is none. Eight bytes at a time (the lowest byte each test flags is a true
/// match: a borrow only flags bytes above one); [`string_stop_bytewise`] is the reference.
fn string_stop(src: &[u8], at: usize, quote: u8, single: bool) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(LO) & !x & HI;
    let mut i = at;
    while let Some(word) = src.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
        let mut m = zero(w ^ (LO * u64::from(quote)))
            | zero(w ^ (LO * u64::from(b'\\')))
            | (w.wrapping_sub(LO * 0x20) & !w & HI);
        if single {
            m |= zero(w ^ (LO * u64::from(b'"')));
        }
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    string_stop_bytewise(src, i, quote, single)
}

/// [`string_stop`] a byte at a time.
fn string_stop_bytewise(src: &[u8], at: usize, quote: u8, single: bool) -> usize {
    src[at..]
        .iter()
        .position(|&b| b == quote || b == b'\\' || b < 0x20 || (single && b == b'"'))
        .map_or(src.len(), |n| at + n)
}

/// What prose around the object may not hold.
const BRACKETS: [char; 4] = ['{', '}', '[', ']'];

/// What is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Open {
    Object,
    Array,
}

struct Writer<'a> {
    src: &'a [u8],
    out: Vec<u8>,
    repairs: Vec<Repair>,
    policy: RepairPolicy,
}

impl<'a> Writer<'a> {
    /// A change at `at`: noted when its kind is on and the count allows.
    fn note(
        &mut self,
        kind: RepairKind,
        at: usize,
        replaced: &str,
        with: &str,
    ) -> Result<(), Refusal> {
        if !self.policy.allows(kind) {
            return Err(Refusal::KindOff);
        }
        if self.repairs.len() >= MAX_REPAIRS {
            return Err(Refusal::TooMany);
        }
        self.repairs.push(Repair {
            kind,
            offset: at,
            replaced: replaced.to_string(),
            with: with.to_string(),
            path: None,
        });
        Ok(())
    }

    /// Source text (the source is UTF-8, and ranges fall on characters' bounds).
    fn text(&self, r: std::ops::Range<usize>) -> &'a str {
        std::str::from_utf8(&self.src[r]).unwrap_or("")
    }

    /// The whole input: a fence or prose around one object, the object repaired.
    fn run(&mut self) -> Result<(), Fail> {
        let src = self.src;
        let mut at = 0;
        while at < src.len() && is_ws(src[at]) {
            at += 1;
        }
        let mut fenced = false;
        if src[at..].starts_with(b"```") {
            // The fence's line, its language tag with it, up to the object when the fence
            // and the object share the line.
            let line = memchr::memchr(b'\n', &src[at..]).map_or(src.len(), |n| at + n + 1);
            let end = memchr::memchr(b'{', &src[at..line]).map_or(line, |n| at + n);
            let fence = self.text(at..end).to_string();
            self.note(RepairKind::Fence, at, &fence, "")
                .map_err(|r| (r, at))?;
            at = end;
            fenced = true;
        }
        let Some(open) = memchr::memchr(b'{', &src[at..]).map(|n| at + n) else {
            return Err((Refusal::NotOneObject, at));
        };
        let before = self.text(at..open).trim_matches(is_ws_char).to_string();
        // JSON next to the object, or brackets in the prose: the object is part of another
        // value (`[{...}]`, `"{...}"`, `[]{...}`), which dropping the rest would change.
        if before.contains(BRACKETS) || before.ends_with(['"', '\'', ',']) {
            return Err((Refusal::NotOneObject, at));
        }
        if !before.is_empty() {
            let start = at
                + (self.text(at..open).len()
                    - self.text(at..open).trim_start_matches(is_ws_char).len());
            self.note(RepairKind::Prose, start, &before, "")
                .map_err(|r| (r, start))?;
        }
        let end = self.object(open)?;
        // What follows the object: whitespace, the closing fence, prose without another
        // value.
        let mut rest_at = end;
        let mut rest = self.text(end..src.len());
        // A comma after the object, as a model that copied it from a list leaves it.
        let t = rest.trim_start_matches(is_ws_char);
        if let Some(after) = t.strip_prefix(',') {
            let comma_at = end + (rest.len() - t.len());
            let more = after.trim_start_matches(is_ws_char);
            if more.is_empty() || more.starts_with("```") {
                self.note(RepairKind::TrailingComma, comma_at, ",", "")
                    .map_err(|r| (r, comma_at))?;
                rest_at = comma_at + 1;
                rest = after;
            }
        }
        if fenced {
            let t = rest.trim_start_matches(is_ws_char);
            if let Some(after) = t.strip_prefix("```") {
                // Counted from where `rest` starts (past a comma taken above).
                let fence_at = rest_at + (rest.len() - t.len());
                self.note(RepairKind::Fence, fence_at, "```", "")
                    .map_err(|r| (r, fence_at))?;
                rest_at = fence_at + 3;
                rest = after;
            }
        }
        let after = rest.trim_matches(is_ws_char);
        if !after.is_empty() {
            let start = rest_at + (rest.len() - rest.trim_start_matches(is_ws_char).len());
            // A closing bracket with nothing open: which bracket is wrong is a guess.
            if after.starts_with(['}', ']']) {
                return Err((Refusal::Unbalanced, start));
            }
            if after.contains(BRACKETS) || after.starts_with(['"', '\'', ',', ':']) {
                return Err((Refusal::NotOneObject, start));
            }
            let after = after.to_string();
            self.note(RepairKind::Prose, start, &after, "")
                .map_err(|r| (r, start))?;
        }
        Ok(())
    }

    /// The object at `start` (its `{`), written repaired; where it ends.
    fn object(&mut self, start: usize) -> Result<usize, Fail> {
        let src = self.src;
        let mut stack: Vec<Open> = Vec::new();
        let mut i = start;
        // What may come next: a value, a key (or `}` right after `{`), a colon, a comma or
        // the end of what is open.
        #[derive(PartialEq)]
        enum Want {
            Value,
            KeyOrEnd,
            Key,
            Colon,
            CommaOrEnd,
            ValueOrEnd,
        }
        let mut want = Want::Value;
        loop {
            i = self.space(i)?;
            let Some(&b) = src.get(i) else {
                return Err((Refusal::Truncated, i));
            };
            match want {
                Want::Value | Want::ValueOrEnd => {
                    if want == Want::ValueOrEnd && b == b']' {
                        self.close(&mut stack, Open::Array, i)?;
                        i += 1;
                        if stack.is_empty() {
                            return Ok(i);
                        }
                        want = Want::CommaOrEnd;
                        continue;
                    }
                    match b {
                        b'{' | b'[' => {
                            if stack.len() >= MAX_DEPTH {
                                return Err((Refusal::TooMany, i));
                            }
                            let open = if b == b'{' { Open::Object } else { Open::Array };
                            stack.push(open);
                            self.out.push(b);
                            i += 1;
                            want = if b == b'{' {
                                Want::KeyOrEnd
                            } else {
                                Want::ValueOrEnd
                            };
                            continue;
                        }
                        _ if stack.is_empty() => return Err((Refusal::NotOneObject, i)),
                        b'"' => i = self.string(i, false)?,
                        b'\'' => i = self.string(i, true)?,
                        b'-' | b'0'..=b'9' => i = self.number(i)?,
                        b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'$' => i = self.word(i)?,
                        b'}' | b']' => return Err((Refusal::NotRepairable, i)),
                        _ => return Err((Refusal::NotRepairable, i)),
                    }
                    want = Want::CommaOrEnd;
                }
                Want::KeyOrEnd | Want::Key => {
                    match b {
                        b'}' if want == Want::KeyOrEnd => {
                            self.close(&mut stack, Open::Object, i)?;
                            i += 1;
                            if stack.is_empty() {
                                return Ok(i);
                            }
                            want = Want::CommaOrEnd;
                            continue;
                        }
                        b'"' => i = self.string(i, false)?,
                        b'\'' => i = self.string(i, true)?,
                        b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'$' | b'0'..=b'9' => i = self.key(i)?,
                        _ => return Err((Refusal::NotRepairable, i)),
                    }
                    want = Want::Colon;
                }
                Want::Colon => {
                    if b != b':' {
                        return Err((Refusal::NotRepairable, i));
                    }
                    self.out.push(b':');
                    i += 1;
                    want = Want::Value;
                }
                Want::CommaOrEnd => match b {
                    b',' => {
                        // A comma before the end of what is open is dropped.
                        let next = self.peek_past_space(i + 1)?;
                        let trailing = matches!(src.get(next), Some(b'}' | b']'));
                        if trailing {
                            self.note(RepairKind::TrailingComma, i, ",", "")
                                .map_err(|r| (r, i))?;
                        } else {
                            self.out.push(b',');
                        }
                        i += 1;
                        want = match (stack.last(), trailing) {
                            (Some(Open::Object), true) => Want::KeyOrEnd,
                            (Some(Open::Object), false) => Want::Key,
                            (_, true) => Want::ValueOrEnd,
                            (_, false) => Want::Value,
                        };
                    }
                    b'}' | b']' => {
                        let kind = if b == b'}' { Open::Object } else { Open::Array };
                        self.close(&mut stack, kind, i)?;
                        i += 1;
                        if stack.is_empty() {
                            return Ok(i);
                        }
                    }
                    _ => return Err((Refusal::NotRepairable, i)),
                },
            }
        }
    }

    fn close(&mut self, stack: &mut Vec<Open>, kind: Open, at: usize) -> Result<(), Fail> {
        if stack.pop() != Some(kind) {
            return Err((Refusal::Unbalanced, at));
        }
        self.out
            .push(if kind == Open::Object { b'}' } else { b']' });
        Ok(())
    }

    /// Whitespace (written) and comments (dropped) from `i`; where the next byte is.
    fn space(&mut self, mut i: usize) -> Result<usize, Fail> {
        let src = self.src;
        loop {
            match src.get(i) {
                Some(b) if is_ws(*b) => {
                    self.out.push(*b);
                    i += 1;
                }
                Some(b'/') => {
                    let end = comment_end(src, i).ok_or((Refusal::Truncated, i))?;
                    if end == i {
                        return Ok(i);
                    }
                    let text = self.text(i..end).to_string();
                    self.note(RepairKind::Comment, i, &text, "")
                        .map_err(|r| (r, i))?;
                    i = end;
                }
                _ => return Ok(i),
            }
        }
    }

    /// Where the next byte after whitespace and comments is, writing nothing.
    fn peek_past_space(&self, mut i: usize) -> Result<usize, Fail> {
        let src = self.src;
        loop {
            match src.get(i) {
                Some(b) if is_ws(*b) => i += 1,
                Some(b'/') => {
                    let end = comment_end(src, i).ok_or((Refusal::Truncated, i))?;
                    if end == i {
                        return Ok(i);
                    }
                    i = end;
                }
                _ => return Ok(i),
            }
        }
    }

    /// A string at `i` (double- or single-quoted), written double-quoted and valid; where
    /// it ends.
    fn string(&mut self, start: usize, single: bool) -> Result<usize, Fail> {
        let src = self.src;
        let quote = if single { b'\'' } else { b'"' };
        let mark = self.out.len();
        self.out.push(b'"');
        let mut i = start + 1;
        // Where the bytes not yet written start: a run of bytes that need nothing done,
        // valid simple escapes among them, is written at once.
        let mut from = i;
        loop {
            let run = string_stop(src, i, quote, single);
            if src.get(run) == Some(&b'\\')
                && matches!(
                    src.get(run + 1),
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
                )
            {
                i = run + 2;
                continue;
            }
            self.out.extend_from_slice(&src[from..run]);
            i = run;
            let Some(&b) = src.get(i) else {
                return Err((Refusal::Truncated, i));
            };
            match b {
                _ if b == quote => {
                    self.out.push(b'"');
                    i += 1;
                    break;
                }
                b'"' => {
                    // Inside single quotes: escaped.
                    self.out.extend_from_slice(b"\\\"");
                    i += 1;
                }
                b'\\' => i = self.escape(i, single)?,
                _ => {
                    let with = match b {
                        b'\n' => "\\n".to_string(),
                        b'\t' => "\\t".to_string(),
                        b'\r' => "\\r".to_string(),
                        _ => format!("\\u{:04x}", b),
                    };
                    if !single {
                        let replaced = (b as char).to_string();
                        self.note(RepairKind::ControlChar, i, &replaced, &with)
                            .map_err(|r| (r, i))?;
                    }
                    self.out.extend_from_slice(with.as_bytes());
                    i += 1;
                }
            }
            from = i;
        }
        // Where a string ends only a colon, a comma or an end may follow: anything else
        // means a quote inside it ended it early.
        let next = self.peek_past_space(i)?;
        if !matches!(src.get(next), Some(b':' | b',' | b'}' | b']') | None) {
            return Err((Refusal::AmbiguousQuote, i - 1));
        }
        if single {
            let replaced = self.text(start..i).to_string();
            let with = String::from_utf8_lossy(&self.out[mark..]).into_owned();
            self.note(RepairKind::SingleQuotes, start, &replaced, &with)
                .map_err(|r| (r, start))?;
        }
        Ok(i)
    }

    /// An escape at `i` (its backslash), written valid; where it ends.
    fn escape(&mut self, i: usize, single: bool) -> Result<usize, Fail> {
        let src = self.src;
        let Some(&e) = src.get(i + 1) else {
            return Err((Refusal::Truncated, i));
        };
        match e {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                self.out.extend_from_slice(&src[i..i + 2]);
                Ok(i + 2)
            }
            b'u' => {
                let hex = src.get(i + 2..i + 6).ok_or((Refusal::Truncated, i))?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return Err((Refusal::NotRepairable, i));
                }
                self.out.extend_from_slice(&src[i..i + 6]);
                Ok(i + 6)
            }
            b'\'' => {
                if !single {
                    self.note(RepairKind::Escape, i, "\\'", "'")
                        .map_err(|r| (r, i))?;
                }
                self.out.push(b'\'');
                Ok(i + 2)
            }
            b'x' => {
                let hex = src.get(i + 2..i + 4).ok_or((Refusal::Truncated, i))?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return Err((Refusal::NotRepairable, i));
                }
                let with = format!("\\u00{}", self.text(i + 2..i + 4));
                let replaced = self.text(i..i + 4).to_string();
                self.note(RepairKind::Escape, i, &replaced, &with)
                    .map_err(|r| (r, i))?;
                self.out.extend_from_slice(with.as_bytes());
                Ok(i + 4)
            }
            _ => Err((Refusal::NotRepairable, i)),
        }
    }

    /// A number at `i`, written as it came (the strict check reads it); where it ends.
    fn number(&mut self, i: usize) -> Result<usize, Fail> {
        let src = self.src;
        let end = src[i..]
            .iter()
            .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .map_or(src.len(), |n| i + n);
        if src[i] == b'-' && src[end..].starts_with(b"Infinity") {
            return Err((Refusal::NonFinite, i));
        }
        self.out.extend_from_slice(&src[i..end]);
        Ok(end)
    }

    fn word_end(&self, i: usize) -> usize {
        self.src[i..]
            .iter()
            .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'$'))
            .map_or(self.src.len(), |n| i + n)
    }

    /// A bare word in a value's place: a JSON literal as it is, a Python or JS one made
    /// JSON's; where it ends.
    fn word(&mut self, i: usize) -> Result<usize, Fail> {
        let end = self.word_end(i);
        let word = self.text(i..end).to_string();
        let with = match word.as_str() {
            "true" | "false" | "null" => {
                self.out.extend_from_slice(word.as_bytes());
                return Ok(end);
            }
            "True" => "true",
            "False" => "false",
            "None" | "undefined" => "null",
            "NaN" | "Infinity" => return Err((Refusal::NonFinite, i)),
            _ => return Err((Refusal::NotRepairable, i)),
        };
        self.note(RepairKind::Literal, i, &word, with)
            .map_err(|r| (r, i))?;
        self.out.extend_from_slice(with.as_bytes());
        Ok(end)
    }

    /// An identifier or a non-negative integer (JS's `{2: "b"}`, a Python dict's integer
    /// key) in a key's place, written quoted; where it ends.
    fn key(&mut self, i: usize) -> Result<usize, Fail> {
        let end = self.word_end(i);
        let word = self.text(i..end).to_string();
        if word.starts_with(|c: char| c.is_ascii_digit())
            && (!word.bytes().all(|b| b.is_ascii_digit())
                || word.len() > 1 && word.starts_with('0'))
        {
            return Err((Refusal::NotRepairable, i));
        }
        let next = self.peek_past_space(end)?;
        if self.src.get(next) != Some(&b':') {
            return Err((Refusal::NotRepairable, i));
        }
        let with = format!("\"{word}\"");
        self.note(RepairKind::UnquotedKey, i, &word, &with)
            .map_err(|r| (r, i))?;
        self.out.extend_from_slice(with.as_bytes());
        Ok(end)
    }
}

/// Coerce `call` by its tool's declared schema in `tools` when that makes it match: its
/// arguments become [`coerce`]'s, its `repairs` gain the coercions (and `original` keeps
/// the provider's arguments). A call that matches already, a tool not declared, or a call
/// that would still not match is left as it is; whether it was coerced is returned.
pub fn coerce_call(call: &mut crate::assemble::ToolCall, tools: &crate::schema::Tools) -> bool {
    let Some(schema) = tools.get(&call.name) else {
        return false;
    };
    if tools.check(&call.name, &call.arguments).is_ok() {
        return false;
    }
    let Some(r) = coerce(&call.arguments, schema) else {
        return false;
    };
    if tools.check(&call.name, &r.arguments).is_err() {
        return false;
    }
    call.original.get_or_insert_with(|| call.arguments.clone());
    call.arguments = r.arguments;
    call.repairs.extend(r.repairs);
    true
}

/// Coerce `arguments` (one valid JSON object) by the tool's declared `schema`: a string
/// where the schema says `integer` or `number` and the string is exactly a JSON number
/// becomes the number; `"true"` / `"false"` where it says `boolean`, the boolean; a
/// string holding a JSON object or array where it says `object` or `array`, that value.
/// Only where the declared type does not allow a string, only through `properties` and
/// `items` (a value under `anyOf`, `$ref` and the like is left), each change a repair of
/// kind [`RepairKind::Coerce`] with its path; the rest of the bytes stay as they came.
/// `None` when nothing was coerced (or the arguments are not a JSON object). The caller
/// checks the result against the schema again.
///
/// ```
/// use serde_json::json;
/// use toolstream::repair::coerce;
/// use toolstream::schema::Schema;
///
/// let schema = Schema::compile(&json!({"type": "object", "properties": {
///     "count": {"type": "integer"}, "name": {"type": "string"}}})).unwrap();
/// let r = coerce(br#"{"count": "3", "name": "7"}"#, &schema).unwrap();
/// assert_eq!(&r.arguments[..], br#"{"count": 3, "name": "7"}"#);
/// assert_eq!(r.repairs[0].path.as_deref(), Some("/count"));
/// assert_eq!(r.repairs[0].offset, 10);
/// ```
pub fn coerce(arguments: &[u8], schema: &crate::schema::Schema) -> Option<Repaired> {
    let text = std::str::from_utf8(arguments).ok()?;
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    if !value.is_object() {
        return None;
    }
    let mut found = Vec::new();
    let mut path = Vec::new();
    coercions(&value, schema.declared()?, &mut path, &mut found);
    if found.is_empty() {
        return None;
    }
    let mut edits = Vec::new();
    let mut repairs = Vec::new();
    for (steps, with) in found.into_iter().take(MAX_REPAIRS) {
        let range = value_range(text, &steps)?;
        let pointer: String = steps
            .iter()
            .map(|s| match s {
                Step::Key(k) => format!("/{}", k.replace('~', "~0").replace('/', "~1")),
                Step::Index(i) => format!("/{i}"),
            })
            .collect();
        repairs.push(Repair {
            kind: RepairKind::Coerce,
            offset: range.start,
            replaced: text[range.clone()].to_string(),
            with: with.clone(),
            path: Some(pointer),
        });
        edits.push((range, with));
    }
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = Vec::with_capacity(arguments.len());
    let mut at = 0;
    for (r, with) in edits {
        out.extend_from_slice(&arguments[at..r.start]);
        out.extend_from_slice(with.as_bytes());
        at = r.end;
    }
    out.extend_from_slice(&arguments[at..]);
    repairs.sort_by_key(|r| r.offset);
    Some(Repaired {
        arguments: Bytes::from(out),
        repairs,
    })
}

/// A step of a path into a value.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// The coercions `value` needs by `schema`: each string's path and the JSON text that
/// replaces it.
fn coercions(
    value: &serde_json::Value,
    schema: &serde_json::Value,
    path: &mut Vec<Step>,
    out: &mut Vec<(Vec<Step>, String)>,
) {
    use serde_json::Value;
    if out.len() >= MAX_REPAIRS || path.len() >= MAX_DEPTH {
        return;
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    match value {
        Value::String(s) if !types.is_empty() && !types.contains(&"string") => {
            let exact = s.trim_matches(is_ws_char) == s;
            let as_json = || serde_json::from_str::<Value>(s).ok().filter(|_| exact);
            let with = match as_json() {
                Some(Value::Number(n))
                    if types.contains(&"number")
                        || (types.contains(&"integer") && (n.is_i64() || n.is_u64())) =>
                {
                    Some(s.clone())
                }
                Some(Value::Bool(_)) if types.contains(&"boolean") => Some(s.clone()),
                Some(v @ Value::Object(_)) if types.contains(&"object") => Some(v.to_string()),
                Some(v @ Value::Array(_)) if types.contains(&"array") => Some(v.to_string()),
                _ => None,
            };
            if let Some(with) = with {
                out.push((path.clone(), with));
            }
        }
        Value::Object(members) => {
            let Some(props) = schema["properties"].as_object() else {
                return;
            };
            for (k, v) in members {
                if let Some(s) = props.get(k) {
                    path.push(Step::Key(k.clone()));
                    coercions(v, s, path, out);
                    path.pop();
                }
            }
        }
        Value::Array(items) => {
            let s = &schema["items"];
            if !s.is_object() {
                return;
            }
            for (i, v) in items.iter().enumerate() {
                path.push(Step::Index(i));
                coercions(v, s, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Where the value at `path` stands in the JSON text (the last member of a key, as the
/// value tree keeps it).
fn value_range(text: &str, path: &[Step]) -> Option<std::ops::Range<usize>> {
    use crate::json::cursor::Cursor;
    let mut base = 0;
    for step in path {
        let sub = &text[base..];
        let mut c = Cursor::new(sub);
        let mut at = None;
        match step {
            Step::Key(key) => {
                let mut m = c.object().ok()?;
                while let Some(k) = c.key(&mut m).ok()? {
                    let hit = k.cow() == key.as_str();
                    let _ = c.peek();
                    let start = c.offset();
                    c.skip().ok()?;
                    if hit {
                        at = Some(start);
                    }
                }
            }
            Step::Index(i) => {
                let mut e = c.array().ok()?;
                let mut n = 0;
                while c.element(&mut e).ok()? {
                    let _ = c.peek();
                    let start = c.offset();
                    c.skip().ok()?;
                    if n == *i {
                        at = Some(start);
                    }
                    n += 1;
                }
            }
        }
        base += at?;
    }
    let mut c = Cursor::new(&text[base..]);
    let _ = c.peek();
    let start = c.offset();
    c.skip().ok()?;
    Some(base + start..base + c.offset())
}

/// JSON's whitespace (not the form feed or vertical tab that `is_ascii_whitespace` and
/// `trim` also take: after an object they are prose, inside one an error).
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn is_ws_char(c: char) -> bool {
    u8::try_from(c).is_ok_and(is_ws)
}

/// The end of a comment at `i` (a `/`): past `//...` (to the line's end) or `/*...*/`;
/// `i` itself when no comment starts there; `None` for a `/*` never closed.
fn comment_end(src: &[u8], i: usize) -> Option<usize> {
    match src.get(i + 1) {
        Some(b'/') => Some(memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |n| i + n)),
        Some(b'*') => memchr::memmem::find(&src[i + 2..], b"*/").map(|n| i + 2 + n + 2),
        _ => Some(i),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(raw: &str) -> (String, Vec<(RepairKind, usize)>) {
        let r =
            repair(raw.as_bytes(), RepairPolicy::all()).unwrap_or_else(|e| panic!("{raw}: {e:?}"));
        (
            String::from_utf8(r.arguments.to_vec()).unwrap(),
            r.repairs.iter().map(|r| (r.kind, r.offset)).collect(),
        )
    }

    fn refused(raw: &str) -> Refusal {
        repair(raw.as_bytes(), RepairPolicy::all())
            .map(|r| panic!("{raw} repaired: {r:?}"))
            .unwrap_err()
            .reason
    }

    #[test]
    fn valid_input_is_unchanged() {
        for raw in [r#"{"a":1}"#, r#"  { "a" : [1, {"b": null}] }  "#, "{}"] {
            let r = repair(raw.as_bytes(), RepairPolicy::all()).unwrap();
            assert_eq!(&r.arguments[..], raw.as_bytes());
            assert!(r.repairs.is_empty());
        }
    }

    #[test]
    fn each_closed_form_mistake_is_repaired_and_reported_at_its_offset() {
        use RepairKind::*;
        type Case<'a> = (&'a str, &'a str, &'a [(RepairKind, usize)]);
        let cases: &[Case] = &[
            (r#"{"a":1,}"#, r#"{"a":1}"#, &[(TrailingComma, 6)]),
            (
                r#"{"a":[1,2,],}"#,
                r#"{"a":[1,2]}"#,
                &[(TrailingComma, 9), (TrailingComma, 11)],
            ),
            (
                r#"{'a': 'b'}"#,
                r#"{"a": "b"}"#,
                &[(SingleQuotes, 1), (SingleQuotes, 6)],
            ),
            (
                r#"{'a': 'say "hi"'}"#,
                r#"{"a": "say \"hi\""}"#,
                &[(SingleQuotes, 1), (SingleQuotes, 6)],
            ),
            (r#"{path: "x"}"#, r#"{"path": "x"}"#, &[(UnquotedKey, 1)]),
            (
                r#"{"a": True, "b": None}"#,
                r#"{"a": true, "b": null}"#,
                &[(Literal, 6), (Literal, 17)],
            ),
            ("{\"a\": 1 // one\n}", "{\"a\": 1 \n}", &[(Comment, 8)]),
            (r#"{"a": /* x */ 1}"#, r#"{"a":  1}"#, &[(Comment, 6)]),
            (
                "{\"a\": \"l1\nl2\"}",
                r#"{"a": "l1\nl2"}"#,
                &[(ControlChar, 9)],
            ),
            (r#"{"a": "it\'s"}"#, r#"{"a": "it's"}"#, &[(Escape, 9)]),
            (r#"{"a": "\x41"}"#, r#"{"a": "\u0041"}"#, &[(Escape, 7)]),
            (
                "```json\n{\"a\":1}\n```",
                r#"{"a":1}"#,
                &[(Fence, 0), (Fence, 16)],
            ),
            (
                "Sure! {\"a\":1} Hope it helps.",
                r#"{"a":1}"#,
                &[(Prose, 0), (Prose, 14)],
            ),
            (r#""{\"a\":1}""#, r#"{"a":1}"#, &[(DoubleEncoded, 0)]),
            // The peers' published cases: a fence on the object's line, a comma after the
            // object, an integer key.
            (
                "```json{\"a\":1}```",
                r#"{"a":1}"#,
                &[(Fence, 0), (Fence, 14)],
            ),
            (r#"{"a":2},"#, r#"{"a":2}"#, &[(TrailingComma, 7)]),
            // A comma then the closing fence: the fence's offset counts the comma (found
            // by the `repair` fuzz target: it named the line break before the fence).
            (
                "```json\n{\"a\":2},\n```",
                r#"{"a":2}"#,
                &[(Fence, 0), (TrailingComma, 15), (Fence, 17)],
            ),
            (
                r#"{2: "b", 10: 1}"#,
                r#"{"2": "b", "10": 1}"#,
                &[(UnquotedKey, 1), (UnquotedKey, 9)],
            ),
        ];
        for (raw, want, repairs) in cases {
            let (got, kinds) = fixed(raw);
            assert_eq!(got.trim_matches(is_ws_char), *want, "{raw}");
            assert_eq!(kinds, *repairs, "{raw}");
        }
    }

    #[test]
    fn what_is_not_closed_form_is_refused() {
        assert_eq!(refused(r#"{"path": "src/ma"#), Refusal::Truncated);
        assert_eq!(refused(r#"{"a": [1, 2"#), Refusal::Truncated);
        assert_eq!(refused(r#"{"a": [1, 2}"#), Refusal::Unbalanced);
        assert_eq!(refused(r#"{"cmd": "echo "hi""}"#), Refusal::AmbiguousQuote);
        assert_eq!(refused(r#"{'msg': 'it's'}"#), Refusal::AmbiguousQuote);
        assert_eq!(refused(r#"{"a": NaN}"#), Refusal::NonFinite);
        assert_eq!(refused(r#"{"a": -Infinity}"#), Refusal::NonFinite);
        assert_eq!(refused(r#"{"a": maybe}"#), Refusal::NotRepairable);
        assert_eq!(refused(r#"{"a": 1 "b": 2}"#), Refusal::NotRepairable);
        assert_eq!(refused(r#"{"a": "\q"}"#), Refusal::NotRepairable);
        assert_eq!(refused(r#"{"a": 01}"#), Refusal::NotRepairable);
        assert_eq!(refused(r#"{"a":1} and {"b":2}"#), Refusal::NotOneObject);
        assert_eq!(refused("[1, 2]"), Refusal::NotOneObject);
        assert_eq!(refused("{\"a\": 1 /* open"), Refusal::Truncated);
        // An object that is part of another value: dropping the rest would change it.
        assert_eq!(refused(r#"[{"a":1}]"#), Refusal::NotOneObject);
        assert_eq!(refused(r#"[]{"a":1}"#), Refusal::NotOneObject);
        assert_eq!(refused(r#""{a:2,}""#), Refusal::NotOneObject);
        assert_eq!(refused(r#"{"a":1}, "b": 2}"#), Refusal::NotOneObject);
        assert_eq!(refused(r#"{"a":1}, {}"#), Refusal::NotOneObject);
        assert_eq!(refused(r#"{"a": 1}}"#), Refusal::Unbalanced);
        assert_eq!(refused(r#"{"a":2]"#), Refusal::Unbalanced);
        assert_eq!(refused(r#"{01: 1}"#), Refusal::NotRepairable);
        assert_eq!(refused(r#"{2a: 1}"#), Refusal::NotRepairable);
    }

    /// The word-at-a-time search against the byte loop, at every start in strings that
    /// hold each stop byte and bytes around them (borrows, bytes over 0x7f).
    #[test]
    fn string_stop_finds_what_the_byte_loop_finds() {
        let alphabet = [
            b'a', b'"', b'\'', b'\\', 0, 0x1f, 0x20, 0x21, 0x7f, 0x80, 0xff, 0x01,
        ];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for len in 0..40 {
            for _ in 0..200 {
                let src: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        // Mostly plain bytes, so that runs are long enough for words.
                        if x.is_multiple_of(4) {
                            alphabet[(x >> 8) as usize % alphabet.len()]
                        } else {
                            b'a' + (x >> 8) as u8 % 26
                        }
                    })
                    .collect();
                for at in 0..=src.len() {
                    for (quote, single) in [(b'"', false), (b'\'', true)] {
                        assert_eq!(
                            string_stop(&src, at, quote, single),
                            string_stop_bytewise(&src, at, quote, single),
                            "{src:?} from {at}"
                        );
                    }
                }
            }
        }
    }

    /// Found by fuzzing: a form feed is no JSON whitespace: after the object it is prose
    /// (said), never dropped silently.
    #[test]
    fn only_jsons_whitespace_is_whitespace() {
        let r = repair(b"{}\x0c", RepairPolicy::all()).unwrap();
        assert_eq!(&r.arguments[..], b"{}");
        assert_eq!(r.repairs[0].kind, RepairKind::Prose);
        assert!(repair(b"{}\x0c", RepairPolicy::default()).is_err());
    }

    #[test]
    fn a_kind_switched_off_is_refused_with_the_repairs_tried() {
        let policy = RepairPolicy::all().with(RepairKind::TrailingComma, false);
        let e = repair(br#"{'a': 1,}"#, policy).unwrap_err();
        assert_eq!(e.reason, Refusal::KindOff);
        assert_eq!(e.offset, 7);
        assert_eq!(e.tried.len(), 1);
        assert_eq!(e.tried[0].kind, RepairKind::SingleQuotes);
        assert!(repair(br#"{"a":1,}"#, RepairPolicy::default()).is_err());
    }

    #[test]
    fn hostile_inputs_are_refused_or_bounded() {
        let mb = 1 << 20;
        for raw in [
            ",".repeat(mb),
            "'".repeat(mb),
            "//".repeat(mb / 2),
            format!("{{{}}}", "a".repeat(mb)),
            "```".repeat(mb / 3),
            format!("{{\"a\":[{}1]}}", "1,".repeat(mb / 2)),
            format!("{{\"a\":[{}]}}", "1,,".repeat(mb / 3)),
            format!("{{\"a\":\"{}\"}}", "\n".repeat(mb)),
            format!("{}{}", "{\"a\":".repeat(MAX_DEPTH + 1), "1"),
        ] {
            match repair(raw.as_bytes(), RepairPolicy::all()) {
                Ok(r) => assert!(r.repairs.len() <= MAX_REPAIRS),
                Err(e) => assert!(e.tried.len() <= MAX_REPAIRS),
            }
        }
    }
}

#[cfg(test)]
mod coerce_tests {
    use super::*;
    use crate::schema::Schema;
    use serde_json::json;

    fn run(schema: serde_json::Value, args: &str) -> Option<(String, Vec<(String, usize)>)> {
        let s = Schema::compile(&schema).unwrap();
        coerce(args.as_bytes(), &s).map(|r| {
            (
                String::from_utf8(r.arguments.to_vec()).unwrap(),
                r.repairs
                    .iter()
                    .map(|r| (r.path.clone().unwrap(), r.offset))
                    .collect(),
            )
        })
    }

    #[test]
    fn strings_become_the_declared_scalar_or_structure_only_when_exact() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "x": {"type": "number"}, "ok": {"type": "boolean"},
            "o": {"type": "object"}, "a": {"type": "array", "items": {"type": "integer"}},
            "s": {"type": "string"}, "u": {"type": ["string", "integer"]},
            "deep": {"type": "object", "properties": {"k": {"type": "integer"}}}}});
        let (out, repairs) = run(
            schema.clone(),
            r#"{"n": "3", "x": "2.5", "ok": "true", "o": "{\"a\":1}", "a": ["1", 2], "s": "4", "u": "5", "deep": {"k": "-7"}}"#,
        )
        .unwrap();
        assert_eq!(
            out,
            r#"{"n": 3, "x": 2.5, "ok": true, "o": {"a":1}, "a": [1, 2], "s": "4", "u": "5", "deep": {"k": -7}}"#
        );
        let paths: Vec<&str> = repairs.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["/n", "/x", "/ok", "/o", "/a/0", "/deep/k"]);
        assert_eq!(repairs[0].1, 6);
        // Not exactly a value of the type: left (the schema check then says so).
        for args in [
            r#"{"n": " 3"}"#,
            r#"{"n": "3.5"}"#,
            r#"{"n": "three"}"#,
            r#"{"ok": "yes"}"#,
            r#"{"o": "[1]"}"#,
            r#"{"s": "4"}"#,
        ] {
            assert_eq!(run(schema.clone(), args), None, "{args}");
        }
        // Under anyOf: not by a declared type of the value's own.
        let any = json!({"type": "object", "properties": {"n": {"anyOf": [{"type": "integer"}]}}});
        assert_eq!(run(any, r#"{"n": "3"}"#), None);
    }

    #[test]
    fn the_last_of_duplicate_keys_is_the_one_coerced() {
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let (out, repairs) = run(schema, r#"{"n": "x", "n": "2"}"#).unwrap();
        assert_eq!(out, r#"{"n": "x", "n": 2}"#);
        assert_eq!(repairs[0].1, 16);
    }
}
