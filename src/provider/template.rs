//! Payload templates: while a response streams one text, one reasoning block or one call's
//! arguments, its consecutive payloads are the same bytes around one string (the text or
//! the argument fragment), sometimes with other members that the decoder ignores and that
//! change too (OpenAI's random `obfuscation` string, the Responses API's
//! `sequence_number`). After a payload that decoded to exactly one text, reasoning or call
//! delta read from one string, a decoder
//! keeps the payload's bytes with that string (the hole) and the ignored members' values
//! (the gaps) taken out; a payload that is those very bytes around one valid JSON string in
//! the hole and, in each gap, one valid JSON string or non-negative integer (whichever the
//! gap held) decodes to the same delta with the new string, since the grammar reads a token
//! in place of another of its kind the same way and the decoder ignores what the gaps
//! hold. Only the new tokens are read and checked (escapes, control bytes, surrogate pairs,
//! UTF-8, an integer's digits); anything else, down to one byte, goes through the decoder's
//! whole reader. The bytes are compared, never assumed.

use super::Delta;
use crate::json::cursor::{simple_string_onto, string_token, Cursor, Str};

/// What [`Templates::read_lane`] read.
pub(crate) enum Lane<'p> {
    /// A call's argument fragment and nothing else: its text went to the buffer given.
    Fragment {
        /// The call's choice.
        choice: u32,
        /// The call's index, as the delta would have it.
        index: Option<u32>,
        /// The fragment as it stands in the payload (escaped).
        raw: &'p str,
        /// Whether `raw` is of the simple kind: the escaper's own text of the fragment
        /// ([`simple_string_onto`]).
        simple: bool,
    },
    /// Any other delta.
    Delta(Delta),
}

/// After this many payloads in a row that decoded to one text, reasoning or call delta but did not
/// fit the template, a decoder keeps no more templates for the stream (a provider that
/// changes other bytes in every payload would otherwise have each payload's string read
/// twice). Payloads that decode to nothing (keep-alives, reasoning deltas the decoder
/// ignores) do not count.
const GIVE_UP: u8 = 4;

/// At most this many gaps in a template.
pub(crate) const GAPS: usize = 4;

/// A decoder's template, if it has one, and how it has been doing.
#[derive(Clone, Debug, Default)]
pub(crate) struct Templates {
    template: Option<Template>,
    /// Whether the decoder has read a payload before: a decoder made for one payload keeps
    /// no template (that would cost it a copy of the payload for nothing).
    warm: bool,
    /// Whether the template was tried on the payload being decoded and did not fit.
    tried: bool,
    /// Payloads in a row that the template was tried on and did not fit, though they
    /// decoded to one text, reasoning or call delta.
    misses: u8,
}

/// What a template's slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// The string the delta's text or arguments come from.
    Hole,
    /// An ignored member's string value.
    Str,
    /// An ignored member's non-negative integer value.
    Int,
}

/// The bytes of a payload around its hole and gaps, in one buffer reused while the stream
/// keeps giving templates (a decoder made for one payload makes none).
#[derive(Clone, Debug)]
struct Template {
    /// The key (what else the decoder was given with the payload: the SSE event type, say),
    /// then the payload's bytes with the hole's and the gaps' tokens taken out.
    bytes: Vec<u8>,
    /// Where the key ends in `bytes`.
    key: usize,
    /// Where in `bytes` each slot's token comes, in order (the first `slots_n`; one is the
    /// hole).
    slots: [(usize, Slot); GAPS + 1],
    slots_n: usize,
    /// The delta, with an empty text or arguments: the hole's string goes there.
    delta: Delta,
    /// Whether the payload's bytes outside the hole and gaps hold no line end (CR or LF).
    one_line: bool,
    /// Where the call delta's index stands in `bytes` (its digits, which are part of the
    /// bytes compared), when the decoder said where it was: [`Templates::learn_indexed`].
    index_at: Option<(usize, usize)>,
}

impl Templates {
    /// The delta of `payload` (given with `key`) if it fits the template — but a call's
    /// argument fragment with nothing else (no id, no name, not the call's end: the most
    /// frequent payload of a stream of calls) is not made a [`Delta`]: its arguments are
    /// decoded into `args` (cleared first), and [`Lane::Fragment`] says whose they are, as
    /// the delta would, with the fragment as it stands in the payload (escaped).
    pub(crate) fn read_lane<'p>(
        &mut self,
        key: &[u8],
        payload: &'p [u8],
        args: &mut String,
    ) -> Option<Lane<'p>> {
        let (t, (s, decoded)) = self.token(key, payload, Some(&mut *args))?;
        Some(match t.delta {
            Delta::Call {
                choice,
                index,
                id: None,
                name: None,
                complete: false,
                ..
            } => {
                if !decoded {
                    s.decode_into(args);
                }
                Lane::Fragment {
                    choice,
                    index,
                    raw: s.raw,
                    simple: decoded,
                }
            }
            ref d => {
                let string = if decoded {
                    args.clone()
                } else {
                    s.cow().into_owned()
                };
                Lane::Delta(with_string(d, Some(string)))
            }
        })
    }

    /// A call's argument fragment and nothing else at the start of `bytes` (given with the
    /// template's key, [`Templates::key`]), read as [`Templates::read_lane`] reads the
    /// payload that ends where the template's bytes do: that end, whose fragment it is,
    /// and the text as it stands in `bytes` (escaped), decoded onto what `args` holds
    /// (which is as it was on `None`), with whether that text is of the simple kind
    /// (printable ASCII, only the escapes an escaper writes: [`simple_string_onto`]). Only
    /// for a template whose bytes hold no line end, so that the payload is one line of
    /// `bytes` (the new tokens hold none: control bytes are no JSON text). Nothing else
    /// here changes: a caller that takes the fragment says so with [`Templates::took`].
    pub(crate) fn fragment_at<'p>(
        &self,
        bytes: &'p [u8],
        args: &mut String,
    ) -> Option<(usize, super::Fragment, &'p str, bool)> {
        let t = self.template.as_ref().filter(|t| t.one_line)?;
        let Delta::Call {
            choice,
            index,
            id: None,
            name: None,
            complete: false,
            ..
        } = t.delta
        else {
            return None;
        };
        let mark = args.len();
        let Some((end, (s, decoded))) = t.token_at(bytes, Some(&mut *args)) else {
            args.truncate(mark);
            return None;
        };
        if !decoded {
            args.truncate(mark);
            s.decode_onto(args);
        }
        Some((end, super::Fragment { choice, index }, s.raw, decoded))
    }

    /// The key of the template's payloads, if there is a template.
    pub(crate) fn key(&self) -> Option<&[u8]> {
        self.template.as_ref().map(|t| &t.bytes[..t.key])
    }

    /// The fragment [`Templates::fragment_at`] read was taken: the template fit a payload
    /// (as [`Templates::read_lane`] counts it).
    pub(crate) fn took(&mut self) {
        self.tried = false;
        self.misses = 0;
    }

    /// [`Templates::read_lane`] as a decoder's `decode_lane` answers: `None` when the
    /// template does not fit; else any delta pushed to `out`, and the fragment, if it was
    /// one.
    pub(crate) fn lane(
        &mut self,
        key: &[u8],
        payload: &[u8],
        out: &mut Vec<Delta>,
        args: &mut String,
    ) -> Option<Option<super::Fragment>> {
        Some(match self.read_lane(key, payload, args)? {
            Lane::Fragment { choice, index, .. } => Some(super::Fragment { choice, index }),
            Lane::Delta(d) => {
                out.push(d);
                None
            }
        })
    }

    /// The delta of `payload` (given with `key`) if it fits the template, as a decoder
    /// would have it (for tests).
    #[cfg(test)]
    pub(crate) fn read(&mut self, key: &[u8], payload: &[u8]) -> Option<Delta> {
        let (t, (s, _)) = self.token(key, payload, None)?;
        Some(with_string(&t.delta, Some(s.cow().into_owned())))
    }

    /// The template and the new string of `payload` if it fits, the count of misses kept.
    fn token<'p>(
        &mut self,
        key: &[u8],
        payload: &'p [u8],
        args: Option<&mut String>,
    ) -> Option<(&Template, (Str<'p>, bool))> {
        let s = self.template.as_ref()?.token(key, payload, args);
        self.tried = s.is_none();
        if s.is_some() {
            self.misses = 0;
        }
        Some((self.template.as_ref()?, s?))
    }

    /// Whether there is a template (for tests).
    #[cfg(test)]
    pub(crate) fn has_one(&self) -> bool {
        self.template.is_some()
    }

    /// The delta of `payload` from the template, leaving the count of misses as it is (for
    /// tests).
    #[cfg(test)]
    pub(crate) fn peek(&self, key: &[u8], payload: &[u8]) -> Option<Delta> {
        let t = self.template.as_ref()?;
        let (s, _) = t.token(key, payload, None)?;
        Some(with_string(&t.delta, Some(s.cow().into_owned())))
    }

    /// After the whole reader decoded `payload` (given with `key`) to `deltas`: keep its
    /// template if `deltas` is exactly one text, reasoning or call delta whose text or arguments are
    /// the string whose token spans `hole` (quotes included; the caller knows), with the
    /// values of members the decoder ignored at `gaps` (in order, none overlapping the
    /// hole; each a string or a non-negative integer token, else there is no template).
    /// Else keep none — but a payload with no delta at all (a keep-alive, a start event)
    /// leaves the template as it was, and the decoder's first payload is never kept.
    pub(crate) fn learn(
        &mut self,
        key: &[u8],
        payload: &[u8],
        hole: Option<(usize, usize)>,
        gaps: &[(usize, usize)],
        deltas: &[Delta],
    ) {
        self.learn_indexed(key, payload, hole, gaps, None, deltas);
    }

    /// [`Templates::learn`] for a decoder that says where a call delta's index stands
    /// (`index`, the span of its integer token). A call's first payload (with its id or
    /// name, which the payloads after it do not repeat) then leaves a template of another
    /// call's plain fragments in place, made the new call's: its index in the template's
    /// bytes and delta replaced, so that the new call's fragments fit it at once where they
    /// differ from the other call's in the index alone (and where they differ otherwise,
    /// the template's bytes do not fit and the whole reader reads them, as ever).
    pub(crate) fn learn_indexed(
        &mut self,
        key: &[u8],
        payload: &[u8],
        hole: Option<(usize, usize)>,
        gaps: &[(usize, usize)],
        index: Option<(usize, usize)>,
        deltas: &[Delta],
    ) {
        if let (
            Some(_),
            [Delta::Call {
                choice,
                index: Some(new),
                id,
                name,
                ..
            }],
            Some(t),
        ) = (index, deltas, self.template.as_mut())
        {
            if (id.is_some() || name.is_some()) && t.retarget(*choice, *new) {
                self.tried = false;
                return;
            }
        }
        let missed = std::mem::take(&mut self.tried);
        if !self.warm {
            self.warm = true;
            return;
        }
        if deltas.is_empty() {
            return;
        }
        let one = delta_string(deltas).is_some();
        if one && missed {
            self.misses = self.misses.saturating_add(1);
        }
        let Some(hole) = hole.filter(|_| one && self.misses < GIVE_UP && gaps.len() <= GAPS) else {
            self.template = None;
            return;
        };
        let t = self.template.get_or_insert_with(|| Template {
            bytes: Vec::new(),
            key: 0,
            slots: [(0, Slot::Hole); GAPS + 1],
            slots_n: 0,
            delta: Delta::Done,
            one_line: false,
            index_at: None,
        });
        if t.fill(key, payload, hole, gaps, index, &deltas[0])
            .is_none()
        {
            self.template = None;
        }
    }

    /// [`Templates::learn`] for a decoder that cannot tell where its string was: the one
    /// string token of `payload` whose value is the delta's text or arguments is the hole
    /// (it must be that delta's string: the delta's string has that value), and there are
    /// no gaps. When two tokens have that value, or none, there is no template.
    pub(crate) fn learn_by_value(&mut self, key: &[u8], payload: &[u8], deltas: &[Delta]) {
        let hole = delta_string(deltas)
            .filter(|v| !v.is_empty())
            .and_then(|v| unique_token(payload, v));
        self.learn(key, payload, hole, &[], deltas);
    }

    /// [`Templates::learn`] for a decoder that reads a flat object whose member `hole` holds
    /// the delta's string, and ignores the members named in `ignored`: their string and
    /// non-negative integer values are the gaps. No template when `payload` is not such an
    /// object, the hole member is not there once with the delta's string, or there are
    /// more than [`GAPS`] gaps.
    pub(crate) fn learn_members(
        &mut self,
        key: &[u8],
        payload: &[u8],
        hole: &str,
        ignored: &[&str],
        deltas: &[Delta],
    ) {
        let mut gaps = [(0, 0); GAPS];
        let mut n = 0;
        let span = delta_string(deltas)
            .and_then(|value| members(payload, hole, ignored, value, &mut gaps, &mut n));
        self.learn(key, payload, span, &gaps[..n], deltas);
    }
}

/// The delta's text or arguments, if `deltas` is one text, reasoning or call delta with
/// them.
fn delta_string(deltas: &[Delta]) -> Option<&str> {
    match deltas {
        [Delta::Text { text, .. } | Delta::Reasoning { text, .. }] => Some(text.as_str()),
        [Delta::Call {
            arguments: Some(a), ..
        }] => Some(a.as_str()),
        _ => None,
    }
}

/// The span of the `hole` member's value in the flat object `payload` if it is there once,
/// a string whose value is `value`; the spans of the `ignored` members' string and
/// non-negative integer values go to `gaps` (`n` of them; `None` when there are more).
fn members(
    payload: &[u8],
    hole: &str,
    ignored: &[&str],
    value: &str,
    gaps: &mut [(usize, usize); GAPS],
    n: &mut usize,
) -> Option<(usize, usize)> {
    let text = std::str::from_utf8(payload).ok()?;
    let mut c = Cursor::new(text);
    let mut m = c.object().ok()?;
    let mut span = None;
    while let Some(k) = c.key(&mut m).ok()? {
        if k.is(hole) {
            // Once, a string token whose value is `value` (read once, as a string).
            if span.is_some() || c.peek() != Some(b'"') {
                return None;
            }
            let start = c.offset();
            if !c.string().ok()?.is(value) {
                return None;
            }
            span = Some((start, c.offset()));
            continue;
        }
        let v = c.skip().ok()?;
        let end = c.offset();
        let at = (end - v.len(), end);
        if ignored.iter().any(|&name| k.is(name))
            && (v.starts_with('"') || int_token(payload, at.0) == Some(end))
        {
            *gaps.get_mut(*n)? = at;
            *n += 1;
        }
    }
    c.end().ok()?;
    span
}

/// The non-negative integer token (`0` or a digit run without a leading zero) that starts
/// at `payload[at]`: the index after its last digit.
fn int_token(payload: &[u8], at: usize) -> Option<usize> {
    let digits = payload
        .get(at..)?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    let leading_zero = digits > 1 && payload[at] == b'0';
    (digits > 0 && !leading_zero).then_some(at + digits)
}

/// The span of the only string token of `payload` whose value is `value`, if exactly one
/// is.
fn unique_token(payload: &[u8], value: &str) -> Option<(usize, usize)> {
    let mut found = None;
    let mut i = 0;
    while i < payload.len() {
        if payload[i] != b'"' {
            i += 1;
            continue;
        }
        // A string token: every quote outside one opens one.
        let (end, s) = string_token(payload, i)?;
        // Escapes only lengthen: a token shorter than the value cannot be it.
        if s.raw.len() >= value.len() && s.is(value) {
            if found.is_some() {
                return None;
            }
            found = Some((i, end));
        }
        i = end;
    }
    found
}

/// Whether `a` and `b` are the same bytes. Empty slices are told apart by their lengths
/// alone: an empty slice's pointer may be dangling (`b""` is), and glibc's AVX-512 `memcmp`
/// reads even zero bytes with a masked load, which on a dangling address takes a
/// fault-suppression microcode assist of hundreds of cycles (it was a tenth of the proxy's
/// time on every templated payload).
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}

/// A text, reasoning or call delta `d` with `string` for its text (empty when `None`) or arguments.
fn with_string(d: &Delta, string: Option<String>) -> Delta {
    match d {
        Delta::Text { choice, .. } => Delta::Text {
            choice: *choice,
            text: string.unwrap_or_default(),
        },
        Delta::Reasoning { choice, .. } => Delta::Reasoning {
            choice: *choice,
            text: string.unwrap_or_default(),
        },
        Delta::Call {
            choice,
            index,
            id,
            name,
            complete,
            ..
        } => Delta::Call {
            choice: *choice,
            index: *index,
            id: id.clone(),
            name: name.clone(),
            arguments: string,
            complete: *complete,
        },
        _ => unreachable!("templates hold text, reasoning or call deltas only"),
    }
}

impl Template {
    /// Make this the template of `payload` (given with `key`), decoded to `delta` from the
    /// string at `hole`, with the ignored members' values at `gaps`. `None` when a span is
    /// not a token of its kind or the spans overlap.
    fn fill(
        &mut self,
        key: &[u8],
        payload: &[u8],
        hole: (usize, usize),
        gaps: &[(usize, usize)],
        index: Option<(usize, usize)>,
        delta: &Delta,
    ) -> Option<()> {
        // The hole and the gaps in the payload's order.
        let mut spans = [(0, 0, Slot::Hole); GAPS + 1];
        for (s, &(a, b)) in spans[1..].iter_mut().zip(gaps) {
            *s = (a, b, Slot::Str);
        }
        spans[0] = (hole.0, hole.1, Slot::Hole);
        let spans = &mut spans[..gaps.len() + 1];
        spans.sort_unstable_by_key(|s| s.0);
        self.bytes.clear();
        self.bytes.reserve(key.len() + payload.len());
        self.bytes.extend_from_slice(key);
        self.key = self.bytes.len();
        self.slots_n = 0;
        let mut at = 0;
        for &(s, e, slot) in spans.iter() {
            if s < at || e > payload.len() {
                return None;
            }
            // The callers' spans are tokens (the tests check it in full): a string's ends
            // are its quotes.
            debug_assert!(
                payload.get(s) != Some(&b'"') || string_token(payload, s).map(|t| t.0) == Some(e)
            );
            let slot = match (slot, payload[s..].first()) {
                (_, Some(b'"')) if e > s + 1 && payload[e - 1] == b'"' => slot,
                (Slot::Str, Some(b'0'..=b'9')) if int_token(payload, s) == Some(e) => Slot::Int,
                _ => return None,
            };
            self.bytes.extend_from_slice(&payload[at..s]);
            self.slots[self.slots_n] = (self.bytes.len(), slot);
            self.slots_n += 1;
            at = e;
        }
        self.bytes.extend_from_slice(&payload[at..]);
        self.one_line = memchr::memchr2(b'\n', b'\r', &self.bytes[self.key..]).is_none();
        // The index's digits, where they are the call delta's index and lie outside the
        // slots (their place in `bytes` then follows from the slots before them).
        self.index_at = index.and_then(|(a, b)| {
            let value = std::str::from_utf8(payload.get(a..b)?)
                .ok()?
                .parse::<u32>()
                .ok()?;
            if !matches!(delta, Delta::Call { index: Some(i), .. } if *i == value) {
                return None;
            }
            let mut shift = self.key as isize;
            for &(s, e, _) in spans.iter() {
                if e <= a {
                    shift -= (e - s) as isize;
                } else if s < b {
                    return None;
                }
            }
            Some(((a as isize + shift) as usize, b - a))
        });
        // The delta without its string (no copy of it).
        self.delta = with_string(delta, None);
        Some(())
    }

    /// The template made one of call `index` of choice `choice`: where it is one of a
    /// call's plain fragments with the index in its bytes (`false` otherwise, and nothing
    /// changed).
    fn retarget(&mut self, choice: u32, index: u32) -> bool {
        let Delta::Call {
            choice: c,
            index: Some(i),
            id: None,
            name: None,
            complete: false,
            ..
        } = &mut self.delta
        else {
            return false;
        };
        let Some((at, len)) = self.index_at.filter(|_| *c == choice) else {
            return false;
        };
        *i = index;
        let digits = index.to_string();
        self.bytes.splice(at..at + len, digits.bytes());
        for slot in &mut self.slots[..self.slots_n] {
            if slot.0 > at {
                slot.0 = slot.0 + digits.len() - len;
            }
        }
        self.index_at = Some((at, digits.len()));
        true
    }

    /// The hole's new string if `payload` is this template around new tokens.
    /// With `args`, the hole's string is decoded into it where it is of the simple kind
    /// ([`simple_string_onto`]), and the flag returned says so.
    fn token<'p>(
        &self,
        key: &[u8],
        payload: &'p [u8],
        args: Option<&mut String>,
    ) -> Option<(Str<'p>, bool)> {
        if !same(key, &self.bytes[..self.key]) {
            return None;
        }
        let mut args = args;
        if let Some(a) = args.as_deref_mut() {
            a.clear();
        }
        self.token_at(payload, args)
            .filter(|&(end, _)| end == payload.len())
            .map(|(_, s)| s)
    }

    /// [`Template::token`] for the payload that is the start of `payload`, given with the
    /// template's key: where it ends, and the hole's new string (with `args`, its simple
    /// kind decoded onto what `args` holds, which may gain part of it when it is not of
    /// that kind or the payload does not fit).
    fn token_at<'p>(
        &self,
        payload: &'p [u8],
        args: Option<&mut String>,
    ) -> Option<(usize, (Str<'p>, bool))> {
        // The template's bytes are UTF-8 and end or start at a quote or a digit, so the
        // payload is UTF-8 when the new strings are (`string_token` checks them).
        let mut args = args;
        let mut new = None;
        let mut at = 0;
        let mut from = self.key;
        for &(to, slot) in &self.slots[..self.slots_n] {
            let lit = &self.bytes[from..to];
            if !payload[at..].starts_with(lit) {
                return None;
            }
            at += lit.len();
            at = match slot {
                Slot::Hole => {
                    // Read once: the loop has one hole.
                    let simple = match args.take() {
                        Some(a) => simple_string_onto(payload, at, a),
                        None => None,
                    };
                    let (end, s, decoded) = match simple {
                        Some((end, escaped)) => {
                            // ASCII, so always text.
                            let raw = crate::scan::text(&payload[at + 1..end - 1])?;
                            (end, Str { raw, escaped }, true)
                        }
                        None => {
                            let (end, s) = string_token(payload, at)?;
                            (end, s, false)
                        }
                    };
                    // An empty text is no delta at all: the whole reader decides that one.
                    if s.raw.is_empty() {
                        return None;
                    }
                    new = Some((s, decoded));
                    end
                }
                Slot::Str => string_token(payload, at)?.0,
                Slot::Int => int_token(payload, at)?,
            };
            from = to;
        }
        let rest = &self.bytes[from..];
        if !(rest.is_empty() || payload[at..].starts_with(rest)) {
            return None;
        }
        Some((at + rest.len(), new?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Vec<Delta> {
        vec![Delta::Text {
            choice: 0,
            text: t.to_string(),
        }]
    }

    fn call(args: &str) -> Vec<Delta> {
        vec![Delta::Call {
            choice: 0,
            index: Some(1),
            id: None,
            name: None,
            arguments: Some(args.to_string()),
            complete: false,
        }]
    }

    /// An OpenAI Responses arguments event (as OpenAI sends them: the counter before the
    /// hole, the random string after it).
    fn responses(seq: &str, delta: &str, obfuscation: &str) -> Vec<u8> {
        format!(
            r#"{{"type":"response.function_call_arguments.delta","sequence_number":{seq},"item_id":"fc_1","output_index":1,"delta":{delta},"obfuscation":{obfuscation}}}"#
        )
        .into_bytes()
    }

    const CHANGING: [&str; 2] = ["sequence_number", "obfuscation"];

    #[test]
    fn gaps_take_integers_and_strings_before_and_after_the_hole() {
        let mut t = Templates::default();
        let first = responses("3", r#""{\"""#, r#""nWru1""#);
        t.learn_members(b"", &first, "delta", &CHANGING, &call("{\""));
        t.learn_members(b"", &first, "delta", &CHANGING, &call("{\""));
        assert!(t.has_one());
        let read = |seq: &str, delta: &str, ob: &str| t.peek(b"", &responses(seq, delta, ob));
        assert_eq!(
            read("4", r#""loc""#, r#""SdSOtFre""#),
            Some(call("loc").remove(0))
        );
        assert_eq!(read("0", r#""\u00e9""#, r#""""#), Some(call("é").remove(0)));
        let long = "9".repeat(40);
        assert_eq!(read(&long, r#""x""#, r#""y""#), Some(call("x").remove(0)));
        // Not a non-negative integer without a leading zero, or not a string: the whole
        // reader decides.
        for seq in ["04", "-4", "4.5", "4e1", "\"4\"", "null", "", "4 "] {
            assert_eq!(read(seq, r#""x""#, r#""y""#), None, "sequence_number {seq}");
        }
        for ob in ["7", "null", r#""a\x""#, "\"\u{1}\"", r#""a"#] {
            assert_eq!(read("5", r#""x""#, ob), None, "obfuscation {ob}");
        }
        // A bad hole.
        for delta in [r#""\ud800""#, r#""""#, "7"] {
            assert_eq!(read("5", delta, r#""y""#), None, "delta {delta}");
        }
    }

    #[test]
    fn only_ignored_members_are_gaps() {
        let mut t = Templates::default();
        let p = responses("3", r#""a""#, r#""b""#);
        // `output_index` is read by the decoder: not a gap, so another index is another
        // template's business.
        t.learn_members(b"", &p, "delta", &CHANGING, &call("a"));
        t.learn_members(b"", &p, "delta", &CHANGING, &call("a"));
        let other = String::from_utf8(responses("4", r#""c""#, r#""d""#))
            .unwrap()
            .replace("\"output_index\":1", "\"output_index\":2");
        assert_eq!(t.peek(b"", other.as_bytes()), None);
        // The hole member twice, or holding another value than the delta's: no template.
        let twice = br#"{"delta":"a","delta":"a","sequence_number":1}"#;
        t.learn_members(b"", twice, "delta", &CHANGING, &call("a"));
        assert!(!t.has_one());
        t.learn_members(b"", &p, "delta", &CHANGING, &call("b"));
        assert!(!t.has_one());
        // More gaps than a template holds: none.
        let many = br#"{"sequence_number":1,"sequence_number":2,"sequence_number":3,"obfuscation":"x","delta":"a","obfuscation":"y"}"#;
        t.learn_members(b"", many, "delta", &CHANGING, &call("a"));
        assert!(!t.has_one());
        let four = br#"{"sequence_number":1,"sequence_number":2,"obfuscation":"x","delta":"a","obfuscation":"y"}"#;
        t.learn_members(b"", four, "delta", &CHANGING, &call("a"));
        assert!(t.has_one());
    }

    #[test]
    fn payloads_that_decode_to_nothing_are_not_misses() {
        let mut t = Templates::default();
        let p = responses("3", r#""a""#, r#""b""#);
        t.learn_members(b"", &p, "delta", &CHANGING, &call("a"));
        t.learn_members(b"", &p, "delta", &CHANGING, &call("a"));
        // Many events the decoder ignores (reasoning deltas, say) do not fit the template
        // and decode to nothing: the template stays and still serves.
        let reasoning = br#"{"type":"response.reasoning_summary_text.delta","delta":"x"}"#;
        for _ in 0..2 * GIVE_UP {
            assert_eq!(t.read(b"", reasoning), None);
            t.learn_members(b"", reasoning, "delta", &CHANGING, &[]);
        }
        assert_eq!(
            t.read(b"", &responses("9", r#""c""#, r#""d""#)),
            Some(call("c").remove(0))
        );
        // Payloads with one delta that do not fit do count: after GIVE_UP of them in a
        // row, no more templates.
        for k in 0..GIVE_UP {
            let shifted = format!(r#"{{"delta":"a","sequence_number":{k},"x":{k}}}"#);
            assert_eq!(t.read(b"", shifted.as_bytes()), None);
            t.learn_members(b"", shifted.as_bytes(), "delta", &CHANGING, &call("a"));
        }
        assert!(!t.has_one());
        t.learn_members(b"", &p, "delta", &CHANGING, &call("a"));
        assert!(!t.has_one());
    }

    #[test]
    fn the_hole_is_the_only_token_with_the_value() {
        let p = br#"{"type":"text_delta","text":"caf\u00e9"}"#;
        assert_eq!(unique_token(p, "café"), Some((28, 39)));
        // Two tokens with the value: which one the delta came from is not known.
        assert_eq!(
            unique_token(br#"{"type":"text","text":"text"}"#, "text"),
            None
        );
        assert_eq!(unique_token(br#"{"a":"type","type":"x"}"#, "type"), None);
        assert_eq!(unique_token(p, "caf"), None);
    }

    #[test]
    fn a_template_by_value_reads_the_next_payload_and_nothing_else() {
        let mut t = Templates::default();
        // The first payload a decoder reads is never kept.
        t.learn_by_value(b"e", br#"{"type":"text_delta","text":"a"}"#, &text("a"));
        assert!(!t.has_one());
        t.learn_by_value(b"e", br#"{"type":"text_delta","text":"a"}"#, &text("a"));
        assert_eq!(
            t.peek(b"e", b"{\"type\":\"text_delta\",\"text\":\"b\nc\"}"),
            None,
            "a raw newline is not string content"
        );
        assert_eq!(
            t.peek(b"e", br#"{"type":"text_delta","text":"b\n"}"#),
            Some(text("b\n").remove(0))
        );
        assert_eq!(
            t.peek(b"e", br#"{"type":"text_delta","text":"b\"c"}"#),
            Some(text("b\"c").remove(0))
        );
        assert_eq!(
            t.peek(b"f", br#"{"type":"text_delta","text":"b"}"#),
            None,
            "another key"
        );
        assert_eq!(
            t.peek(b"e", br#"{"type":"text_delta","text":""}"#),
            None,
            "no text"
        );
        // Ambiguous: no template.
        t.learn_by_value(b"e", br#"{"type":"text","text":"text"}"#, &text("text"));
        assert!(!t.has_one());
        // A payload without deltas keeps the template; one with another delta drops it.
        t.learn_by_value(b"e", br#"{"text":"x"}"#, &text("x"));
        t.learn_by_value(b"e", br#"{"type":"ping"}"#, &[]);
        assert!(t.has_one());
        t.learn_by_value(b"e", br#"{"type":"message_stop"}"#, &[Delta::Done]);
        assert!(!t.has_one());
    }
}
