//! `Serialize` for the pipeline's events and the classifier's verdicts: one flat object
//! each, with a `type` tag for events, the shapes `toolstream inspect --json` and
//! `toolstream classify --json` print (and the Python binding's dicts).
//!
//! Always on: `serde` is a dependency of the library anyway (provider envelopes), so the
//! impls cost no dependency and no feature.

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::assemble::{Event, Failure, IdSource, ToolCall};
use crate::classify::Verdict;

/// Bodies larger than this are given as a string, not re-read as JSON: a tree of an
/// attacker's 14 MB error body would cost a hundred times that.
const MAX_JSON_BODY: usize = 64 << 10;

/// JSON text as a JSON value when it is one (and small enough), else as a string.
fn json_or_string(text: &str) -> serde_json::Value {
    if text.len() > MAX_JSON_BODY {
        return serde_json::Value::String(text.to_string());
    }
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_string()))
}

/// Each event as `{"type": ..., fields}`:
///
/// | type | fields |
/// |---|---|
/// | `call_started` | `index`, `id`, `name` |
/// | `text`, `reasoning` | `text` |
/// | `reasoning_signature` | `signature` |
/// | `redacted_reasoning` | `data` |
/// | `reasoning_item` | `item` (the item's JSON) |
/// | `reasoning_details` | `details` (the array) |
/// | `tool_call` | `index`, `part`, `id`, `id_source` (when toolstream made the id: `split` or `text`), `id_from` (a split call's: the id its id was made from), `name`, `arguments` (the object, its exact bytes), `repairs` (when the arguments were repaired: each change's `kind`, `offset`, `replaced`, `with`, and for a coercion its `path`) |
/// | `tool_call_error` | `index`, `id`, `id_source` and `id_from` (as a call's), `name`, `kind`, `offset`, `raw` (text), `detail` |
/// | `duplicate` | `index`, `id`, `name` |
/// | `finish` | `reason` (normalised), `raw` (the provider's) |
/// | `usage` | `usage` (the provider's JSON) |
/// | `error` | `status`, `message`, `body` (JSON when it is, else text; `null` if none) |
/// | `dropped` | `reason`, `offset`, `bytes` |
/// | `end` | `complete` |
impl Serialize for Event {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match self {
            Event::CallStarted { index, id, name } => {
                m.serialize_entry("type", "call_started")?;
                m.serialize_entry("index", index)?;
                m.serialize_entry("id", id)?;
                m.serialize_entry("name", name)?;
            }
            Event::Text { text, .. } => {
                m.serialize_entry("type", "text")?;
                m.serialize_entry("text", text)?;
            }
            Event::Reasoning { text, .. } => {
                m.serialize_entry("type", "reasoning")?;
                m.serialize_entry("text", text)?;
            }
            Event::ReasoningSignature { signature, .. } => {
                m.serialize_entry("type", "reasoning_signature")?;
                m.serialize_entry("signature", signature)?;
            }
            Event::RedactedReasoning { data, .. } => {
                m.serialize_entry("type", "redacted_reasoning")?;
                m.serialize_entry("data", data)?;
            }
            Event::ReasoningItem { raw, .. } => {
                m.serialize_entry("type", "reasoning_item")?;
                m.serialize_entry("item", &json_or_string(raw))?;
            }
            Event::ReasoningDetails { raw, .. } => {
                m.serialize_entry("type", "reasoning_details")?;
                m.serialize_entry("details", &json_or_string(raw))?;
            }
            Event::ToolCall(c) => tool_call_entries(&mut m, c)?,
            Event::ToolCallFailed(f) => failure_entries(&mut m, f)?,
            Event::Duplicate {
                index, id, name, ..
            } => {
                m.serialize_entry("type", "duplicate")?;
                m.serialize_entry("index", index)?;
                m.serialize_entry("id", id)?;
                m.serialize_entry("name", name)?;
            }
            Event::Finish { reason, raw } => {
                m.serialize_entry("type", "finish")?;
                m.serialize_entry("reason", reason.as_str())?;
                m.serialize_entry("raw", raw)?;
            }
            Event::Usage { raw } => {
                m.serialize_entry("type", "usage")?;
                m.serialize_entry("usage", &json_or_string(raw))?;
            }
            Event::ProviderError {
                status,
                message,
                body,
            } => {
                m.serialize_entry("type", "error")?;
                m.serialize_entry("status", status)?;
                m.serialize_entry("message", message)?;
                if body.is_empty() {
                    m.serialize_entry("body", &())?;
                } else {
                    m.serialize_entry("body", &json_or_string(body))?;
                }
            }
            Event::Dropped(d) => {
                m.serialize_entry("type", "dropped")?;
                m.serialize_entry("reason", d.reason.as_str())?;
                m.serialize_entry("offset", &d.offset)?;
                m.serialize_entry("bytes", &d.bytes)?;
            }
            Event::End { complete } => {
                m.serialize_entry("type", "end")?;
                m.serialize_entry("complete", complete)?;
            }
        }
        m.end()
    }
}

/// Where an id came from, when toolstream made it: `id_source`, and for a split call the
/// id it was made from (`id_from`); nothing for the provider's own.
fn id_source_entries<M: SerializeMap>(m: &mut M, source: &IdSource) -> Result<(), M::Error> {
    if *source != IdSource::Provider {
        m.serialize_entry("id_source", source.as_str())?;
    }
    if let IdSource::Split { of } = source {
        m.serialize_entry("id_from", of)?;
    }
    Ok(())
}

/// A [`ToolCall`]'s entries (see the table on `Event`'s impl).
fn tool_call_entries<M: SerializeMap>(m: &mut M, c: &ToolCall) -> Result<(), M::Error> {
    m.serialize_entry("type", "tool_call")?;
    m.serialize_entry("index", &c.index)?;
    m.serialize_entry("part", &c.part)?;
    m.serialize_entry("id", &c.id)?;
    id_source_entries(m, &c.id_source)?;
    m.serialize_entry("name", &c.name)?;
    m.serialize_entry("arguments", &Exact(&c.arguments))?;
    if !c.repairs.is_empty() {
        m.serialize_entry("repairs", &c.repairs)?;
    }
    Ok(())
}

/// A call's arguments as their exact bytes (a raw JSON value: order, spacing and number
/// spelling kept), the library's promise. Where serde_json cannot hold them as a raw value
/// (nesting past its depth), their text as a string; never a value they do not say.
struct Exact<'a>(&'a [u8]);

impl Serialize for Exact<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match serde_json::from_slice::<&serde_json::value::RawValue>(self.0) {
            Ok(raw) => raw.serialize(s),
            Err(_) => s.serialize_str(&String::from_utf8_lossy(self.0)),
        }
    }
}

/// A [`Failure`]'s entries (see the table on `Event`'s impl).
fn failure_entries<M: SerializeMap>(m: &mut M, f: &Failure) -> Result<(), M::Error> {
    m.serialize_entry("type", "tool_call_error")?;
    m.serialize_entry("index", &f.index)?;
    m.serialize_entry("id", &f.id)?;
    id_source_entries(m, &f.id_source)?;
    m.serialize_entry("name", &f.name)?;
    m.serialize_entry("kind", f.kind.as_str())?;
    m.serialize_entry("offset", &f.offset)?;
    m.serialize_entry("raw", &String::from_utf8_lossy(&f.raw))?;
    match f.detail {
        Some(d) => m.serialize_entry("detail", d.as_str())?,
        None => m.serialize_entry("detail", &f.message)?,
    }
    Ok(())
}

/// `{"reason", "action", "retryable", "should_fallback", "should_compress",
/// "rotate_credential", "retry_after_ms", "message", "feedback", "hint", "rule"}`, the
/// names in snake_case, `retry_after_ms` a whole number of milliseconds or `null`.
impl Serialize for Verdict {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(11))?;
        m.serialize_entry("reason", self.reason.as_str())?;
        m.serialize_entry("action", self.action.as_str())?;
        m.serialize_entry("retryable", &self.retryable)?;
        m.serialize_entry("should_fallback", &self.should_fallback)?;
        m.serialize_entry("should_compress", &self.should_compress)?;
        m.serialize_entry("rotate_credential", &self.rotate_credential)?;
        let ms = self
            .retry_after
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        m.serialize_entry("retry_after_ms", &ms)?;
        m.serialize_entry("message", &self.message)?;
        m.serialize_entry("feedback", &self.feedback)?;
        m.serialize_entry("hint", &self.hint)?;
        m.serialize_entry("rule", self.rule)?;
        m.end()
    }
}
