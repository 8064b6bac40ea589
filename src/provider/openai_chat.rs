//! OpenAI Chat Completions streaming (`chat.completion.chunk`), as spoken by OpenAI and the
//! OpenAI-compatible servers.

use std::borrow::Cow;

use super::template::{Templates, GAPS};
use super::{error_delta, non_empty, utf8, Delta, FinishReason, Fragment};
use crate::json::cursor::{Cursor, CursorError, Str};

mod reference;
pub(crate) use reference::arguments_text;
pub use reference::decode_reference;

/// A message's reasoning text: `reasoning_content` when it is a non-empty string, else
/// `reasoning` when that is (a server that sends both sends the same text twice).
fn reasoning_text<'a>(
    reasoning_content: Option<Cow<'a, str>>,
    reasoning: Option<Cow<'a, str>>,
) -> Option<Cow<'a, str>> {
    reasoning_content
        .filter(|t| !t.is_empty())
        .or(reasoning.filter(|t| !t.is_empty()))
}

/// Decoder state: what it learnt from the payloads before, so that it need not read the
/// same bytes again. The bytes are compared, never assumed.
///
/// **The envelope prefix.** Every chunk of one response starts with the same members (`id`,
/// `object`, `created`, `model`, `system_fingerprint`), which the decoder ignores. When a
/// payload starts with the very bytes of such a prefix read before — the top-level `{` and
/// members that were all skipped, ending just after a member's value — followed by a `,`,
/// the reader's state there is known (inside the top-level object, after a member, nothing
/// collected), so it resumes at the comma instead of reading the same bytes again.
///
/// **The payload's template** (`provider::template`). While a response streams one piece of
/// text or one call's arguments, consecutive payloads are the same bytes around one string:
/// the text or the argument fragment, and, from OpenAI, a random `obfuscation` string at the
/// end, which the template keeps as a gap (as it keeps every top-level string member that
/// the decoder ignores after the text or arguments). Such a payload is read from the
/// template: only its new strings are read and checked.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    prefix: Vec<u8>,
    templates: Templates,
}

/// What the reader saw of the strings in a payload, for the template.
#[derive(Default)]
struct Strings {
    /// The last text or arguments string read: its span, quotes included.
    hole: Option<(usize, usize)>,
    /// How many text or arguments strings were read.
    holes: u32,
    /// The spans of the top-level members' string values that were ignored after `hole`,
    /// in order (the first [`GAPS`]).
    ignored: [(usize, usize); GAPS],
    ignored_n: usize,
    /// Where the last call's index read ends, when it was an integer.
    index_end: Option<usize>,
}

impl Strings {
    fn hole(&mut self, end: usize, raw: &str) {
        self.hole = Some((end - raw.len() - 2, end));
        self.holes += 1;
    }
}

/// Prefixes shorter than this are not worth remembering.
const MIN_PREFIX: usize = 32;

impl Decoder {
    /// Decode one `data:` payload. The envelope is read in one pass with the strict
    /// cursor (`json::cursor`: keys compared as bytes, unknown fields skipped but validated);
    /// [`decode_reference`] is the same decoder written with serde, kept as the oracle the
    /// tests compare it with.
    pub fn decode(&mut self, payload: &[u8], out: &mut Vec<Delta>) {
        super::through_lane(out, |out, args| self.decode_lane(payload, out, args));
    }

    /// The template's, for [`super::Decoder::fragment_at`].
    pub(crate) fn templates(&self) -> &Templates {
        &self.templates
    }

    /// The fragment [`super::Decoder::fragment_at`] read was taken.
    pub(crate) fn took_fragment(&mut self) {
        self.templates.took();
    }

    /// [`Decoder::decode`], a call's argument fragment read by the template given as a
    /// [`Fragment`] and its text in `args` ([`super::Decoder::decode_lane`]).
    pub(crate) fn decode_lane(
        &mut self,
        payload: &[u8],
        out: &mut Vec<Delta>,
        args: &mut String,
    ) -> Option<Fragment> {
        let trimmed = payload.trim_ascii();
        if trimmed == b"[DONE]" {
            out.push(Delta::Done);
            return None;
        }
        if let Some(f) = self.templates.lane(b"", trimmed, out, args) {
            return f;
        }
        // The byte after the prefix must end its last value (`17` is a prefix of `1741`).
        let known = !self.prefix.is_empty()
            && trimmed.starts_with(&self.prefix)
            && trimmed.get(self.prefix.len()) == Some(&b',');
        let skip = if known { self.prefix.len() } else { 0 };
        let text = match utf8(&trimmed[skip..]) {
            Ok(t) => t,
            Err(e) => {
                out.push(undecodable(trimmed, &e));
                return None;
            }
        };
        let mark = out.len();
        let mut strings = Strings::default();
        let read = read_chunk(text, skip > 0, out, &mut strings);
        if read.is_ok() {
            // Offsets from the payload's start, not from `skip`.
            let one = strings.holes == 1 && strings.ignored_n <= GAPS;
            let hole = strings
                .hole
                .filter(|_| one)
                .map(|(a, b)| (skip + a, skip + b));
            let mut gaps = strings.ignored;
            for g in &mut gaps {
                *g = (skip + g.0, skip + g.1);
            }
            let n = strings.ignored_n.min(GAPS);
            // The call's index: the digits that end where its read ended.
            let index = strings.index_end.map(|e| {
                let end = skip + e;
                let digits = trimmed[..end]
                    .iter()
                    .rev()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                (end - digits, end)
            });
            self.templates
                .learn_indexed(b"", trimmed, hole, &gaps[..n], index, &out[mark..]);
        }
        match read {
            Ok(Some(p)) if skip == 0 && p >= MIN_PREFIX => {
                self.prefix.clear();
                self.prefix.extend_from_slice(&trimmed[..p]);
            }
            Ok(_) => {}
            Err(bad) => {
                out.truncate(mark);
                out.push(undecodable(
                    trimmed,
                    &format_args!("{} at byte {}", bad.what, skip + bad.offset),
                ));
            }
        }
        None
    }
}

fn undecodable(payload: &[u8], why: &dyn std::fmt::Display) -> Delta {
    Delta::Undecodable {
        message: format!("undecodable payload: {why}"),
        body: String::from_utf8_lossy(payload).into_owned(),
    }
}

fn set_choice(d: &mut Delta, c: u32) {
    if let Delta::Text { choice, .. }
    | Delta::Reasoning { choice, .. }
    | Delta::ReasoningSignature { choice, .. }
    | Delta::ReasoningDetail { choice, .. }
    | Delta::Call { choice, .. } = d
    {
        *choice = c;
    }
}

/// A whole `chat.completion.chunk` (or, when `resumed`, its rest after a known prefix).
/// Deltas come out in the reference's order: an `error` first, then each choice (its text,
/// its calls, its finish), then usage. Returns the end of the leading run of ignored
/// members (a prefix worth remembering), if the text began with one.
fn read_chunk(
    text: &str,
    resumed: bool,
    out: &mut Vec<Delta>,
    strings: &mut Strings,
) -> Result<Option<usize>, CursorError> {
    let mark = out.len();
    let mut c = Cursor::new(text);
    let (mut error, mut usage, mut groq_usage) = (None, None, None);
    let mut m = if resumed {
        Cursor::members_after_first()
    } else {
        c.object()?
    };
    // The leading run of ignored members: `Some(end)` while it lasts.
    let mut ignored_run = (!resumed).then_some(0);
    let mut prefix = None;
    while let Some(k) = c.key(&mut m)? {
        match &*k.cow() {
            "choices" => {
                if !c.null()? {
                    let mut e = c.array()?;
                    while c.element(&mut e)? {
                        read_choice(&mut c, out, strings)?;
                    }
                }
            }
            "usage" => usage = raw_or_null(&mut c)?,
            "error" => error = raw_or_null(&mut c)?,
            "x_groq" => {
                if !c.null()? {
                    let mut g = c.object()?;
                    while let Some(k) = c.key(&mut g)? {
                        if k.is("usage") {
                            groq_usage = raw_or_null(&mut c)?;
                        } else {
                            c.skip()?;
                        }
                    }
                }
            }
            _ => {
                let v = c.skip()?;
                // Only the ones after the text or arguments string are taken as a template's
                // gaps: those before it (`id` to `system_fingerprint`) stay the same within a
                // response.
                if v.starts_with('"') && strings.hole.is_some() {
                    if strings.ignored_n < GAPS {
                        let end = c.offset();
                        strings.ignored[strings.ignored_n] = (end - v.len(), end);
                    }
                    strings.ignored_n += 1;
                }
                if ignored_run.is_some() {
                    ignored_run = Some(c.offset());
                }
                continue;
            }
        }
        prefix = prefix.or(ignored_run.take());
    }
    c.end()?;
    if let Some(err) = error {
        out.insert(mark, error_delta(err));
    }
    if let Some(u) = usage.or(groq_usage) {
        out.push(Delta::Usage { raw: u.to_string() });
    }
    Ok(prefix.filter(|&p| p > 0))
}

/// A value's raw text, or `None` for `null`.
fn raw_or_null<'a>(c: &mut Cursor<'a>) -> Result<Option<&'a str>, CursorError> {
    if c.null()? {
        Ok(None)
    } else {
        c.skip().map(Some)
    }
}

/// [`thought_signature`] with the cursor: the value of `extra_content`, whatever it is;
/// the last `google` member, and in it the last `thought_signature`, decide.
fn read_extra_content<'a>(c: &mut Cursor<'a>) -> Result<Option<Cow<'a, str>>, CursorError> {
    if c.peek() != Some(b'{') {
        c.skip()?;
        return Ok(None);
    }
    let mut signature = None;
    let mut m = c.object()?;
    while let Some(k) = c.key(&mut m)? {
        if !k.is("google") {
            c.skip()?;
            continue;
        }
        signature = None;
        if c.peek() != Some(b'{') {
            c.skip()?;
            continue;
        }
        let mut g = c.object()?;
        while let Some(k) = c.key(&mut g)? {
            if !k.is("thought_signature") {
                c.skip()?;
            } else if c.peek() == Some(b'"') {
                signature = Some(c.string()?.cow());
            } else {
                c.skip()?;
                signature = None;
            }
        }
    }
    Ok(signature.filter(|s| !s.is_empty()))
}

fn signature_delta(signature: Cow<'_, str>) -> Delta {
    Delta::ReasoningSignature {
        choice: 0,
        signature: signature.into_owned(),
    }
}

// Inlined into `read_chunk`, as the compiler did before the template's bookkeeping was
// threaded through (a decoder per payload: 1.1 M fewer instructions on 2 MiB).
#[inline(always)]
fn read_choice(
    c: &mut Cursor<'_>,
    out: &mut Vec<Delta>,
    strings: &mut Strings,
) -> Result<(), CursorError> {
    let mark = out.len();
    let (mut index, mut finish) = (None, None);
    let mut m = c.object()?;
    while let Some(k) = c.key(&mut m)? {
        match &*k.cow() {
            "index" => index = c.opt_u32()?,
            "delta" => {
                if !c.null()? {
                    read_message(c, out, strings, false)?;
                }
            }
            // A non-streaming `chat.completion`: the whole message, each call whole.
            "message" => {
                if !c.null()? {
                    read_message(c, out, strings, true)?;
                }
            }
            "finish_reason" => finish = c.opt_string()?.map(|s| s.cow()),
            _ => {
                c.skip()?;
            }
        }
    }
    let ci = index.unwrap_or(0);
    for d in &mut out[mark..] {
        set_choice(d, ci);
    }
    if let Some(raw) = finish {
        out.push(Delta::Finish {
            choice: ci,
            reason: FinishReason::from_raw(&raw),
            raw: raw.into_owned(),
        });
    }
    Ok(())
}

fn read_message(
    c: &mut Cursor<'_>,
    out: &mut Vec<Delta>,
    strings: &mut Strings,
    whole: bool,
) -> Result<(), CursorError> {
    let mark = out.len();
    // The reasoning strings, by name, and the text: the last of each (a repeated key is
    // read as JSON parsers that keep one value read it: the last one counts).
    let (mut reasoning_content, mut reasoning) = (None, None);
    let mut text = None;
    let mut signature = None;
    let mut details: Vec<&str> = Vec::new();
    let text_all = c.text();
    let mut m = c.object()?;
    while let Some(k) = c.key(&mut m)? {
        let k = k.cow();
        if k == "content" {
            let t = c.opt_string()?;
            // An empty string gives no delta: it stays in a template's bytes as it is.
            if let Some(t) = t.filter(|t| !t.raw.is_empty()) {
                strings.hole(c.offset(), t.raw);
            }
            text = t.filter(|s| !s.raw.is_empty());
        } else if k == "reasoning_content" || k == "reasoning" {
            let text = read_reasoning(c, strings)?;
            if k == "reasoning" {
                reasoning = text;
            } else {
                reasoning_content = text;
            }
        } else if k == "tool_calls" {
            if !c.null()? {
                let mut e = c.array()?;
                while c.element(&mut e)? {
                    read_call(c, out, strings, whole)?;
                }
            }
        } else if k == "extra_content" {
            signature = read_extra_content(c)?;
        } else if k == "reasoning_details" && c.peek() == Some(b'[') {
            details.extend(read_details(c, text_all)?);
        } else {
            c.skip()?;
        }
    }
    let reasoning = reasoning_text(reasoning_content, reasoning);
    // (Most deltas of a stream of calls have none of these: no list made for nothing.)
    if reasoning.is_some() || !details.is_empty() || signature.is_some() || text.is_some() {
        let front = front_of_calls(reasoning, details, signature, text);
        out.splice(mark..mark, front);
    }
    Ok(())
}

/// A message's `reasoning_content` or `reasoning`: a string is reasoning text (its bytes a
/// hole in the template); any other value is skipped.
#[inline]
fn read_reasoning<'a>(
    c: &mut Cursor<'a>,
    strings: &mut Strings,
) -> Result<Option<Cow<'a, str>>, CursorError> {
    if c.peek() != Some(b'"') {
        c.skip()?;
        return Ok(None);
    }
    let t = c.string()?;
    if !t.raw.is_empty() {
        strings.hole(c.offset(), t.raw);
    }
    Ok(Some(t.cow()))
}

/// A message's `reasoning_details` array, as it stands, if it holds an object.
#[inline]
fn read_details<'a>(c: &mut Cursor<'a>, text_all: &'a str) -> Result<Option<&'a str>, CursorError> {
    let start = c.offset();
    let mut any = false;
    let mut e = c.array()?;
    while c.element(&mut e)? {
        any |= c.peek() == Some(b'{');
        c.skip()?;
    }
    Ok(any.then(|| &text_all[start..c.offset()]))
}

/// The deltas that go in front of a message's calls, whatever the key order: the
/// reasoning, its details, the delta's own signature, then the text. Put there in one move
/// (inserting each in turn would move the calls once per detail).
#[inline]
fn front_of_calls(
    reasoning: Option<Cow<'_, str>>,
    details: Vec<&str>,
    signature: Option<Cow<'_, str>>,
    text: Option<Str<'_>>,
) -> Vec<Delta> {
    let mut front = Vec::with_capacity(details.len() + 3);
    if let Some(text) = reasoning {
        front.push(Delta::Reasoning {
            choice: 0,
            text: text.into_owned(),
        });
    }
    front.extend(details.into_iter().map(|raw| Delta::ReasoningDetail {
        choice: 0,
        raw: raw.to_string(),
    }));
    if let Some(s) = signature {
        front.push(signature_delta(s));
    }
    if let Some(text) = text {
        front.push(Delta::Text {
            choice: 0,
            text: text.cow().into_owned(),
        });
    }
    front
}

/// One entry of `tool_calls`; `whole` in a non-streaming message (the call is complete).
fn read_call(
    c: &mut Cursor<'_>,
    out: &mut Vec<Delta>,
    strings: &mut Strings,
    whole: bool,
) -> Result<(), CursorError> {
    let (mut index, mut id, mut name, mut arguments) = (None, None, None, None);
    let mut signature = None;
    let mut m = c.object()?;
    while let Some(k) = c.key(&mut m)? {
        let k = k.cow();
        if k == "index" {
            index = c.opt_u32()?;
            strings.index_end = index.map(|_| c.offset());
        } else if k == "id" {
            id = c.opt_string()?.map(|s| s.cow());
        } else if k == "function" {
            if c.null()? {
                continue;
            }
            let mut f = c.object()?;
            while let Some(k) = c.key(&mut f)? {
                let k = k.cow();
                if k == "name" {
                    name = c.opt_string()?.map(|s| s.cow());
                } else if k == "arguments" {
                    arguments = match c.peek() {
                        Some(b'"') => {
                            let t = c.string()?;
                            strings.hole(c.offset(), t.raw);
                            Some(t.cow().into_owned())
                        }
                        _ if c.null()? => None,
                        // Some servers send the object itself.
                        _ => Some(c.skip()?.to_string()),
                    };
                } else {
                    c.skip()?;
                }
            }
        } else if k == "extra_content" {
            signature = read_extra_content(c)?;
        } else {
            c.skip()?;
        }
    }
    // A call's signature comes right before it.
    if let Some(s) = signature {
        out.push(signature_delta(s));
    }
    out.push(Delta::Call {
        choice: 0,
        index,
        id: non_empty(id),
        name: non_empty(name),
        arguments,
        complete: whole,
    });
    Ok(())
}

/// Where the members a rewriter changes stand in a non-streaming `chat.completion` body,
/// for one choice: byte ranges of values (quotes included) in the body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChoiceLayout {
    /// The choice's `index` (0 when it has none).
    pub index: u32,
    /// `message.content`'s value.
    pub content: Option<std::ops::Range<usize>>,
    /// `message.tool_calls`' value.
    pub tool_calls: Option<std::ops::Range<usize>>,
    /// Where the `message` object's closing brace stands (to add a member before it).
    pub message_end: Option<usize>,
    /// `finish_reason`'s value.
    pub finish_reason: Option<std::ops::Range<usize>>,
}

/// The layout of a non-streaming `chat.completion` body, read with the same strict
/// reader as the decoder (a repeated member: the last one counts, as it does for the
/// decoder): each choice's [`ChoiceLayout`], in order. `None` when the body is not such a
/// JSON object.
pub fn completion_layout(body: &[u8]) -> Option<Vec<ChoiceLayout>> {
    let text = utf8(body).ok()?;
    let mut c = Cursor::new(text);
    let mut choices = Vec::new();
    let mut m = c.object().ok()?;
    while let Some(k) = c.key(&mut m).ok()? {
        if !k.is("choices") || c.peek() != Some(b'[') {
            c.skip().ok()?;
            continue;
        }
        choices.clear();
        let mut e = c.array().ok()?;
        while c.element(&mut e).ok()? {
            choices.push(choice_layout(&mut c).ok()?);
        }
    }
    c.end().ok()?;
    Some(choices)
}

fn choice_layout(c: &mut Cursor<'_>) -> Result<ChoiceLayout, CursorError> {
    let mut l = ChoiceLayout::default();
    if c.peek() != Some(b'{') {
        c.skip()?;
        return Ok(l);
    }
    let span = |c: &mut Cursor<'_>| -> Result<std::ops::Range<usize>, CursorError> {
        let _ = c.peek();
        let start = c.offset();
        c.skip()?;
        Ok(start..c.offset())
    };
    let mut m = c.object()?;
    while let Some(k) = c.key(&mut m)? {
        match &*k.cow() {
            "index" => l.index = c.opt_u32()?.unwrap_or(0),
            "finish_reason" => l.finish_reason = Some(span(c)?),
            "message" if c.peek() == Some(b'{') => {
                let (mut content, mut calls) = (None, None);
                let mut o = c.object()?;
                while let Some(k) = c.key(&mut o)? {
                    match &*k.cow() {
                        "content" => content = Some(span(c)?),
                        "tool_calls" => calls = Some(span(c)?),
                        _ => {
                            c.skip()?;
                        }
                    }
                }
                (l.content, l.tool_calls) = (content, calls);
                l.message_end = Some(c.offset() - 1);
            }
            _ => {
                c.skip()?;
            }
        }
    }
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OpenAI's own payload shape (recorded by others; see `tests/envelopes.rs` for the
    /// property tests against the serde decoder).
    fn payload(content: &str, obfuscation: &str) -> Vec<u8> {
        format!(
            "{{\"id\":\"chatcmpl-CQlCJiHP52aWhiirTMeEk8SkZfTn6\",\"object\":\"chat.completion.chunk\",\"created\":1760493991,\"model\":\"gpt-4o-2024-08-06\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_cbf1785567\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":{content}}},\"logprobs\":null,\"finish_reason\":null}}],\"obfuscation\":{obfuscation}}}"
        )
        .into_bytes()
    }

    fn reference(p: &[u8]) -> Vec<Delta> {
        let mut out = Vec::new();
        decode_reference(p, &mut out);
        out
    }

    #[test]
    fn the_next_payload_of_a_text_is_read_from_the_template() {
        let mut d = Decoder::default();
        let mut out = Vec::new();
        d.decode(&payload("\" Hi\"", "\"x\""), &mut out);
        d.decode(&payload("\" popular\"", "\"YhS7A\""), &mut out);
        let next = payload("\" but\\n\\u00e9\"", "\"eLeR83E5F\"");
        assert_eq!(
            d.templates.peek(b"", &next),
            Some(reference(&next)[0].clone())
        );
        out.clear();
        d.decode(&next, &mut out);
        assert_eq!(out, reference(&next));
    }

    #[test]
    fn an_argument_fragment_read_by_the_template_takes_the_lane() {
        // A call's fragment with nothing else: no delta made, its text in the buffer, and
        // whose it is, as the reference reads it. A text read by a template stays a delta.
        let call = |args: &str| {
            format!("{{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{{\"index\":1,\"delta\":{{\"tool_calls\":[{{\"index\":3,\"function\":{{\"arguments\":{args}}}}}]}},\"finish_reason\":null}}]}}").into_bytes()
        };
        let mut d = Decoder::default();
        let mut out = Vec::new();
        let mut args = String::from("left over");
        assert_eq!(
            d.decode_lane(&call("\"{\\\"a\""), &mut out, &mut args),
            None
        );
        assert_eq!(d.decode_lane(&call("\"\\\":\""), &mut out, &mut args), None);
        assert_eq!(
            out,
            [
                reference(&call("\"{\\\"a\"")),
                reference(&call("\"\\\":\""))
            ]
            .concat()
        );
        out.clear();
        let next = call("\"\\u00e9\\n1}\"");
        let f = d.decode_lane(&next, &mut out, &mut args);
        assert_eq!(
            f,
            Some(Fragment {
                choice: 1,
                index: Some(3)
            })
        );
        assert!(out.is_empty());
        assert_eq!(vec![f.unwrap().into_delta(args.clone())], reference(&next));
        assert_eq!(args, "\u{e9}\n1}");
        let mut t = Decoder::default();
        t.decode(&payload("\" Hi\"", "\"x\""), &mut out);
        t.decode(&payload("\" there\"", "\"y\""), &mut out);
        out.clear();
        let text = payload("\" you\"", "\"z\"");
        assert_eq!(t.decode_lane(&text, &mut out, &mut args), None);
        assert_eq!(out, reference(&text));
    }

    /// A call's first payload (its id and name) leaves the template of the call before's
    /// plain fragments in place, made the new call's: the new call's next fragment is read
    /// by it (with the new index, of another length too, a gap after it), as the reference
    /// reads it; a fragment of a call whose envelope differs elsewhere is not.
    #[test]
    fn a_new_calls_fragments_fit_the_template_of_the_call_before() {
        let p = |index: &str, head: &str, args: &str, ob: &str| {
            format!("{{\"id\":\"c\",\"choices\":[{{\"index\":1,\"delta\":{{\"tool_calls\":[{{\"index\":{index},{head}\"function\":{{\"arguments\":{args}}}}}]}},\"finish_reason\":null}}],\"obfuscation\":{ob}}}").into_bytes()
        };
        let start = |index: &str| {
            p(
                index,
                "\"id\":\"call_x\",\"type\":\"function\",",
                "\"\"",
                "\"o\"",
            )
        };
        let plain = |index: &str, args: &str| p(index, "", args, "\"ob\"");
        for (first, second) in [("9", "10"), ("10", "9"), ("3", "4"), ("0", "0")] {
            let mut d = Decoder::default();
            let mut out = Vec::new();
            let mut args = String::new();
            d.decode(&start(first), &mut out);
            d.decode(&plain(first, "\"{\\\"a\""), &mut out);
            d.decode(&plain(first, "\"\\\":1\""), &mut out);
            d.decode(&plain(first, "\"}\""), &mut out);
            out.clear();
            d.decode(&start(second), &mut out);
            assert_eq!(out, reference(&start(second)));
            out.clear();
            let next = plain(second, "\"{\\\"b\\\":\"");
            let f = d.decode_lane(&next, &mut out, &mut args);
            assert!(
                f.is_some(),
                "{first} then {second}: not read by the template"
            );
            assert_eq!(vec![f.unwrap().into_delta(args.clone())], reference(&next));
            // The template fits the new call's fragments only: not the old call's, not one
            // whose choice or envelope differs.
            let t = d.templates.clone();
            if first != second {
                assert_eq!(t.peek(b"", &plain(first, "\"x\"")), None);
            }
            let other = String::from_utf8(plain(second, "\"x\""))
                .unwrap()
                .replace("\"id\":\"c\"", "\"id\":\"d\"");
            assert_eq!(t.peek(b"", other.as_bytes()), None);
            assert_eq!(
                t.peek(b"", &plain(second, "\"x\"")),
                Some(reference(&plain(second, "\"x\""))[0].clone())
            );
        }
    }

    #[test]
    fn reasoning_is_read_from_the_template_beside_an_empty_content() {
        // OpenRouter's shape: an empty `content` beside the reasoning.
        let p = |r: &str| {
            format!("{{\"id\":\"gen-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"deepseek/deepseek-r1\",\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"\",\"reasoning\":{r}}},\"finish_reason\":null}}]}}").into_bytes()
        };
        let mut d = Decoder::default();
        let mut out = Vec::new();
        d.decode(&p("\"Let\""), &mut out);
        d.decode(&p("\" me\""), &mut out);
        let next = p("\" think\\n\"");
        let want = reference(&next);
        assert_eq!(
            want,
            [Delta::Reasoning {
                choice: 0,
                text: " think\n".to_string()
            }]
        );
        assert_eq!(d.templates.peek(b"", &next), Some(want[0].clone()));
        // The empty content is part of the template's bytes: a text there is not this
        // template's.
        let text = String::from_utf8(next)
            .unwrap()
            .replace("\"content\":\"\"", "\"content\":\"a\"");
        assert_eq!(d.templates.peek(b"", text.as_bytes()), None);
    }

    #[test]
    fn a_stream_that_keeps_missing_its_template_stops_keeping_one() {
        let mut d = Decoder::default();
        let mut out = Vec::new();
        // Another byte changes in every payload: the created time after the string.
        let p = |k: u32| {
            format!("{{\"choices\":[{{\"delta\":{{\"content\":\"a{k}\"}}}}],\"created\":{k}}}")
                .into_bytes()
        };
        for k in 0..10 {
            out.clear();
            d.decode(&p(k), &mut out);
            assert_eq!(out, reference(&p(k)));
            // Not after the first payload; then until four in a row have missed.
            assert_eq!(
                d.templates.has_one(),
                (1..5).contains(&k),
                "after payload {k}"
            );
        }
    }

    #[test]
    fn a_template_reads_only_valid_strings_in_its_places() {
        let mut d = Decoder::default();
        let mut out = Vec::new();
        d.decode(&payload("\"a\"", "\"b\""), &mut out);
        d.decode(&payload("\"a\"", "\"b\""), &mut out);
        let t = d.templates.clone();
        assert!(t.has_one());
        for (content, obfuscation) in [
            ("\"\"", "\"x\""),          // no text: no delta, the whole reader says so
            ("\"a\\x\"", "\"x\""),      // a bad escape
            ("\"\\ud800\"", "\"x\""),   // a lone surrogate
            ("\"a\u{1}\"", "\"x\""),    // a raw control byte
            ("\"a\"b\"", "\"x\""),      // a quote too many
            ("\"a\" ", "\"x\""),        // whitespace the template does not have
            ("17", "\"x\""),            // not a string
            ("\"a\"", "\"x\\q\""),      // a bad escape in the gap
            ("\"a\"", "17"),            // a gap that is not a string
            ("\"a\"", "\"x\",\"y\":1"), // more after the gap
        ] {
            let p = payload(content, obfuscation);
            assert_eq!(t.peek(b"", &p), None, "{}", String::from_utf8_lossy(&p));
            let mut d = d.clone();
            out.clear();
            d.decode(&p, &mut out);
            let theirs = reference(&p);
            if matches!(&theirs[..], [Delta::Undecodable { .. }]) {
                assert!(matches!(&out[..], [Delta::Undecodable { .. }]), "{out:?}");
            } else {
                assert_eq!(out, theirs);
            }
        }
        // Not UTF-8 in the new string.
        let mut p = payload("\"a\"", "\"b\"");
        let at = p.windows(5).position(|w| w == b"\"a\"},").unwrap() + 1;
        p[at] = 0xFF;
        assert_eq!(t.peek(b"", &p), None);
    }
}
