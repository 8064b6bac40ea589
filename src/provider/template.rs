//! Payload templates: while a response streams one text or one call's arguments, its
//! consecutive payloads are the same bytes around one string (the text or the argument
//! fragment), sometimes with other strings that the decoder ignores and that change too
//! (OpenAI's random `obfuscation`). After a payload that decoded to exactly one text or
//! call delta read from one string, a decoder keeps the bytes before that string and after
//! it, the ignored strings after it left as gaps; a payload that is those very bytes around
//! one valid JSON string — each gap one valid JSON string too — decodes to the same delta
//! with the new string, since the grammar reads a string token in place of another the
//! same way. Only the new strings are read and checked (escapes, control bytes, surrogate
//! pairs, UTF-8); anything else, down to one byte, goes through the decoder's whole reader.
//! The bytes are compared, never assumed.

use super::Delta;
use crate::json::cursor::string_token;

/// After this many payloads in a row that do not fit the template, a decoder keeps no
/// more templates for the stream (a provider that changes other bytes in every payload
/// would otherwise have each payload's string read twice).
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
    /// Payloads in a row that the template was tried on and did not fit.
    misses: u8,
}

/// The bytes of a payload around the one string it was decoded from, in one buffer reused
/// while the stream keeps giving templates (a decoder made for one payload makes none).
#[derive(Clone, Debug)]
struct Template {
    /// The key (what else the decoder was given with the payload: the SSE event type, say),
    /// then everything before the string's opening quote (the head), then everything after
    /// its closing quote but for the gaps (the tail).
    bytes: Vec<u8>,
    /// Where the head starts and ends in `bytes`.
    head: usize,
    tail: usize,
    /// Where in the tail a gap (an ignored string) comes, in order (the first `gaps_n`).
    gaps: [usize; GAPS],
    gaps_n: usize,
    /// The delta, with an empty text or arguments: the string's go there.
    delta: Delta,
}

impl Templates {
    /// The delta of `payload` (given with `key`) if it fits the template.
    pub(crate) fn read(&mut self, key: &[u8], payload: &[u8]) -> Option<Delta> {
        let t = self.template.as_ref()?;
        match t.read(key, payload) {
            Some(d) => {
                self.misses = 0;
                Some(d)
            }
            None => {
                self.misses += 1;
                None
            }
        }
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
        self.template.as_ref()?.read(key, payload)
    }

    /// After the whole reader decoded `payload` (given with `key`) to `deltas`: keep its
    /// template if `deltas` is exactly one text or call delta whose text or arguments are
    /// the string whose token spans `hole` (quotes included; the caller knows), with the
    /// ignored strings after it at `gaps` (in order). Else keep none — but a payload with no
    /// delta at all (a keep-alive, a start event) leaves the template as it was, and the
    /// decoder's first payload is never kept.
    pub(crate) fn learn(
        &mut self,
        key: &[u8],
        payload: &[u8],
        hole: Option<(usize, usize)>,
        gaps: &[(usize, usize)],
        deltas: &[Delta],
    ) {
        if !self.warm {
            self.warm = true;
            return;
        }
        if deltas.is_empty() {
            return;
        }
        let one = matches!(
            deltas,
            [Delta::Text { .. }
                | Delta::Call {
                    arguments: Some(_),
                    ..
                }]
        );
        let Some((a, b)) = hole.filter(|_| one && self.misses < GIVE_UP) else {
            self.template = None;
            return;
        };
        let t = self.template.get_or_insert_with(|| Template {
            bytes: Vec::new(),
            head: 0,
            tail: 0,
            gaps: [0; GAPS],
            gaps_n: 0,
            delta: Delta::Done,
        });
        t.bytes.clear();
        t.bytes.reserve(key.len() + payload.len());
        t.bytes.extend_from_slice(key);
        t.head = t.bytes.len();
        t.bytes.extend_from_slice(&payload[..a]);
        t.tail = t.bytes.len();
        let mut at = b;
        t.gaps_n = gaps.len().min(GAPS);
        for (g, &(s, e)) in t.gaps.iter_mut().zip(gaps) {
            t.bytes.extend_from_slice(&payload[at..s]);
            *g = t.bytes.len() - t.tail;
            at = e;
        }
        t.bytes.extend_from_slice(&payload[at..]);
        // The delta without its string (no copy of it).
        t.delta = with_string(&deltas[0], None);
    }

    /// [`Templates::learn`] for a decoder that cannot tell where its string was: the one
    /// string token of `payload` whose value is the delta's text or arguments is the hole
    /// (it must be that delta's string: the delta's string has that value), and there are
    /// no gaps. When two tokens have that value, or none, there is no template.
    pub(crate) fn learn_by_value(&mut self, key: &[u8], payload: &[u8], deltas: &[Delta]) {
        let value = match deltas {
            [Delta::Text { text, .. }] => Some(text.as_str()),
            [Delta::Call {
                arguments: Some(a), ..
            }] => Some(a.as_str()),
            _ => None,
        };
        let hole = value
            .filter(|v| !v.is_empty())
            .and_then(|v| unique_token(payload, v));
        self.learn(key, payload, hole, &[], deltas);
    }
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
        if s.raw.len() >= value.len() && s.cow() == value {
            if found.is_some() {
                return None;
            }
            found = Some((i, end));
        }
        i = end;
    }
    found
}

/// A text or call delta `d` with `string` for its text (empty when `None`) or arguments.
fn with_string(d: &Delta, string: Option<String>) -> Delta {
    match d {
        Delta::Text { choice, .. } => Delta::Text {
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
        _ => unreachable!("templates hold text or call deltas only"),
    }
}

impl Template {
    /// The delta of `payload` if it is this template around new strings.
    fn read(&self, key: &[u8], payload: &[u8]) -> Option<Delta> {
        if key != &self.bytes[..self.head] {
            return None;
        }
        let rest = payload.strip_prefix(&self.bytes[self.head..self.tail])?;
        let tail = &self.bytes[self.tail..];
        // The template's bytes are UTF-8 and end or start at a quote, so the payload is
        // UTF-8 when the new strings are (`string_token` checks them).
        let (mut at, new) = string_token(rest, 0)?;
        // An empty text is no delta at all: the whole reader decides that one.
        if new.raw.is_empty() {
            return None;
        }
        let mut from = 0;
        for &gap in &self.gaps[..self.gaps_n] {
            let lit = &tail[from..gap];
            if !rest[at..].starts_with(lit) {
                return None;
            }
            at = string_token(rest, at + lit.len())?.0;
            from = gap;
        }
        if rest[at..] != tail[from..] {
            return None;
        }
        Some(with_string(&self.delta, Some(new.cow().into_owned())))
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
