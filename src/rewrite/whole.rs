//! Non-streaming bodies of the Messages and Responses APIs, rewritten as their streams
//! are: read with the library's decoder first (a body it cannot read is left as it is),
//! then changed only where the assembler's and the extractor's events say, the rest of the
//! body byte for byte (only the changed member is written anew and spliced in).

use bytes::{Bytes, BytesMut};
use serde_json::{json, Map, Value};

use super::responses::{Continuation, MadeCall};
use super::text::TextSetting;
use super::{outgoing, Core, Counts, Outgoing};
use crate::assemble::{Event, IdSource};
use crate::classify::Provider;
use crate::json::cursor::Cursor;
use crate::provider::Format;
use crate::text_calls::Piece;

/// The ranges of the values of the top-level members `names` of a JSON object (the last
/// of each, as a reader that keeps the last takes it), read with the strict reader;
/// `None` when the body is not one JSON object.
fn members(body: &str, names: &[&str]) -> Option<Vec<Option<std::ops::Range<usize>>>> {
    let mut c = Cursor::new(body);
    let mut m = c.object().ok()?;
    let mut found = vec![None; names.len()];
    while let Some(k) = c.key(&mut m).ok()? {
        let at = names.iter().position(|n| k.is(n));
        let _ = c.peek();
        let start = c.offset();
        c.skip().ok()?;
        if let Some(at) = at {
            found[at] = Some(start..c.offset());
        }
    }
    c.end().ok()?;
    Some(found)
}

/// The ranges of the elements of the JSON array `text` (relative to it); `None` when it is
/// not one. Each element is then read on its own, so a body of many small elements is
/// never held as a tree at once.
fn elements(text: &str) -> Option<Vec<std::ops::Range<usize>>> {
    let mut c = Cursor::new(text);
    let mut e = c.array().ok()?;
    let mut out = Vec::new();
    while c.element(&mut e).ok()? {
        let _ = c.peek();
        let start = c.offset();
        c.skip().ok()?;
        out.push(start..c.offset());
    }
    c.end().ok()?;
    Some(out)
}

/// What an element is, read without building it: its `type`.
#[derive(serde::Deserialize)]
struct Kind<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<std::borrow::Cow<'a, str>>,
}

fn kind_of(element: &str) -> Option<String> {
    serde_json::from_str::<Kind>(element)
        .ok()
        .and_then(|k| k.kind)
        .map(|k| k.into_owned())
}

/// Elements' JSON texts as one array's.
fn array_text(items: &[std::borrow::Cow<'_, str>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(items.iter().map(|i| i.len() + 1).sum::<usize>() + 2);
    out.push(b'[');
    for (k, i) in items.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        out.extend_from_slice(i.as_bytes());
    }
    out.push(b']');
    out
}

/// `body` with each range replaced (in order, not overlapping).
fn splice(body: &[u8], mut edits: Vec<(std::ops::Range<usize>, Vec<u8>)>) -> Bytes {
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = Vec::with_capacity(body.len() + 256);
    let mut at = 0;
    for (r, with) in edits {
        out.extend_from_slice(&body[at..r.start]);
        out.extend_from_slice(&with);
        at = r.end;
    }
    out.extend_from_slice(&body[at..]);
    Bytes::from(out)
}

/// Text read for calls: the pieces, in order, with the calls given ids by the core's
/// assembler (`choice` 0) and the failures put back into the text.
fn extract(
    core: &mut Core,
    setting: &TextSetting,
    text: &str,
    counts: &mut Counts,
) -> Vec<Segment> {
    let mut x = setting.extractor();
    let mut pieces = Vec::new();
    x.push(text, &mut pieces);
    x.finish(&mut pieces);
    let mut out: Vec<Segment> = Vec::new();
    let mut sink = BytesMut::new();
    for p in pieces {
        match p {
            Piece::Text(s) => push_text(&mut out, s),
            Piece::Failed { raw, .. } => {
                counts.failures += 1;
                push_text(&mut out, raw);
            }
            call @ Piece::Call { .. } => {
                let mut events = Vec::new();
                core.assembler.push_text_piece(0, call, &mut events);
                for e in events {
                    if let Some(c) = outgoing(counts, e, &mut sink) {
                        counts.text_calls += 1;
                        out.push(Segment::Call(c));
                    }
                }
            }
        }
    }
    out
}

enum Segment {
    Text(String),
    Call(Outgoing),
}

fn push_text(out: &mut Vec<Segment>, s: String) {
    if s.is_empty() {
        return;
    }
    if let Some(Segment::Text(t)) = out.last_mut() {
        t.push_str(&s);
    } else {
        out.push(Segment::Text(s));
    }
}

/// A non-streaming Anthropic message (`type: message`) with the calls written into its
/// text blocks taken out (`text`): each text block becomes the text around its calls and
/// a `tool_use` block for each call, in place; `stop_reason: end_turn` becomes `tool_use`.
/// Only `content` and `stop_reason` are written anew; the rest stays byte for byte. `None`
/// when the body is not a message the decoder reads (it is then forwarded as it is).
pub fn rewrite_message(body: &[u8], text: Option<&TextSetting>) -> Option<(Bytes, Counts)> {
    let mut core = Core::new(Format::Anthropic, Provider::Anthropic);
    let mut tagged = Vec::new();
    let seen = core.decode_tagged(b"message", body, &mut tagged);
    if seen.undecodable {
        return None;
    }
    let mut counts = Counts {
        calls: tagged
            .iter()
            .filter(|(_, e)| matches!(e, Event::ToolCall(_)))
            .count() as u32,
        ..Counts::default()
    };
    let unchanged = Some((Bytes::copy_from_slice(body), counts));
    let Some(setting) = text else {
        return unchanged;
    };
    let s = std::str::from_utf8(body).ok()?;
    let ranges = members(s, &["content", "stop_reason"])?;
    let Some(content_range) = ranges[0].clone() else {
        return unchanged;
    };
    let content = &s[content_range.clone()];
    let Some(ranges_in) = elements(content) else {
        return unchanged;
    };
    // The blocks as the client gets them: each as it came (its text), or written anew.
    let mut out: Vec<std::borrow::Cow<'_, str>> = Vec::with_capacity(ranges_in.len());
    let mut delivered = false;
    for r in ranges_in {
        let raw = &content[r];
        if kind_of(raw).as_deref() != Some("text") {
            out.push(raw.into());
            continue;
        }
        let Ok(b) = serde_json::from_str::<Value>(raw) else {
            out.push(raw.into());
            continue;
        };
        let Some(t) = b["text"].as_str() else {
            out.push(raw.into());
            continue;
        };
        let segments = extract(&mut core, setting, t, &mut counts);
        if !segments.iter().any(|x| matches!(x, Segment::Call(_))) {
            out.push(raw.into());
            continue;
        }
        for seg in segments {
            match seg {
                Segment::Text(t) => {
                    let mut block = b.as_object().cloned().unwrap_or_default();
                    block.insert("text".into(), Value::String(t));
                    out.push(Value::Object(block).to_string().into());
                }
                Segment::Call(c) => {
                    delivered |= c.whole;
                    let (id, _) = core.client_id(c.id.clone(), &c.source);
                    let input = serde_json::from_str::<Value>(&c.arguments())
                        .unwrap_or_else(|_| Value::Object(Map::new()));
                    let block =
                        json!({"type": "tool_use", "id": id, "name": c.name, "input": input});
                    out.push(block.to_string().into());
                }
            }
        }
    }
    if counts.text_calls == 0 {
        return unchanged;
    }
    let mut edits = vec![(content_range, array_text(&out))];
    if let Some(r) = ranges[1].clone() {
        if delivered && &s[r.clone()] == "\"end_turn\"" {
            edits.push((r, b"\"tool_use\"".to_vec()));
        }
    }
    Some((splice(body, edits), counts))
}

/// A non-streaming Responses API body (`object: response`), rewritten as its stream is:
/// a `function_call` item whose arguments hold glued objects becomes one item per object
/// (the first with the provider's ids, the next with ids made from them), a duplicate is
/// dropped, a call given an id or split off is reported for a follow-up
/// ([`super::continue_request`]); with `text`, the calls written into a message's
/// `output_text` become `function_call` items after the message. Only `output` is written
/// anew; the rest stays byte for byte. `None` when the body is not a response the decoder
/// reads (it is then forwarded as it is).
pub fn rewrite_response(
    body: &[u8],
    text: Option<&TextSetting>,
    repair: Option<&super::CallRepair>,
) -> Option<(Bytes, Counts, Option<Continuation>)> {
    let mut core = Core::new(Format::OpenAiResponses, Provider::Openai);
    if let Some(r) = repair {
        core.set_repair(r);
    }
    let mut tagged = Vec::new();
    let seen = core.decode_tagged(b"message", body, &mut tagged);
    if seen.undecodable {
        return None;
    }
    let mut finished = Vec::new();
    core.assembler.finish(true, &mut finished);
    // Each call's events, by the order its slot opened (the output's order).
    let mut slots: Vec<(u32, String, Vec<Event>)> = Vec::new();
    for e in tagged.into_iter().map(|(_, e)| e).chain(finished) {
        let slot = match &e {
            Event::CallStarted { index, id, .. } => {
                slots.push((*index, id.clone(), Vec::new()));
                continue;
            }
            Event::ToolCall(c) => c.index,
            Event::ToolCallFailed(f) => f.index,
            Event::Duplicate { index, .. } => *index,
            _ => continue,
        };
        if let Some(s) = slots.iter_mut().find(|(i, _, _)| *i == slot) {
            s.2.push(e);
        }
    }
    let s = std::str::from_utf8(body).ok()?;
    let ranges = members(s, &["output", "id"])?;
    let output_range = ranges[0].clone()?;
    let output = &s[output_range.clone()];
    let element_ranges = elements(output)?;
    let mut counts = Counts::default();
    let mut made = Vec::new();
    // The items as the client gets them: each as it came (its text), or written anew.
    let mut out: Vec<std::borrow::Cow<'_, str>> = Vec::with_capacity(element_ranges.len());
    let mut changed = false;
    let mut slots = slots.into_iter();
    let mut sink = BytesMut::new();
    for r in element_ranges {
        let raw = &output[r];
        match kind_of(raw).as_deref() {
            Some("function_call") => {
                let (_, id, events) = slots.next()?;
                let item = serde_json::from_str::<Value>(raw).ok()?;
                // The slot is this item's: the same call id, as the decoder read it.
                if id != item["call_id"].as_str().unwrap_or("") {
                    return None;
                }
                let plain = matches!(events.as_slice(),
                    [Event::ToolCall(c)] if c.part == 1 && c.id_source == IdSource::Provider
                        && item["arguments"].as_str().map(str::as_bytes) == Some(&c.arguments[..]));
                if plain {
                    counts.calls += 1;
                    out.push(raw.into());
                    continue;
                }
                changed = true;
                let mut nth = 0;
                let item_id = item["id"].as_str().map(str::to_string);
                for e in events {
                    // A failure goes as the provider sent its bytes, `incomplete`.
                    let Some(c) = outgoing(&mut counts, e, &mut sink) else {
                        continue;
                    };
                    nth += 1;
                    let written = call_item(&mut core, &c, item_id.as_deref(), nth, &mut made);
                    out.push(written.to_string().into());
                }
            }
            Some("message") if text.is_some() => {
                let setting = text.expect("text");
                let Ok(mut message) = serde_json::from_str::<Value>(raw) else {
                    out.push(raw.into());
                    continue;
                };
                let mut calls = Vec::new();
                if let Some(parts) = message["content"].as_array_mut() {
                    for part in parts.iter_mut().filter(|p| p["type"] == "output_text") {
                        let Some(t) = part["text"].as_str().map(str::to_string) else {
                            continue;
                        };
                        let segments = extract(&mut core, setting, &t, &mut counts);
                        if !segments.iter().any(|x| matches!(x, Segment::Call(_))) {
                            continue;
                        }
                        let mut rest = String::new();
                        for seg in segments {
                            match seg {
                                Segment::Text(t) => rest.push_str(&t),
                                Segment::Call(c) => calls.push(c),
                            }
                        }
                        part["text"] = Value::String(rest);
                    }
                }
                if calls.is_empty() {
                    out.push(raw.into());
                    continue;
                }
                changed = true;
                out.push(message.to_string().into());
                for c in calls {
                    out.push(
                        call_item(&mut core, &c, None, 1, &mut made)
                            .to_string()
                            .into(),
                    );
                }
            }
            _ => out.push(raw.into()),
        }
    }
    if !changed {
        return Some((Bytes::copy_from_slice(body), counts, None));
    }
    let bytes = splice(body, vec![(output_range, array_text(&out))]);
    let response_id = ranges[1]
        .clone()
        .and_then(|r| serde_json::from_str::<String>(&s[r]).ok());
    let cont = match (response_id, made.is_empty()) {
        (Some(response_id), false) => Some(Continuation {
            response_id,
            calls: made,
        }),
        _ => None,
    };
    Some((bytes, counts, cont))
}

/// A `function_call` item for a call: the `nth` object of item `item_id` (the first keeps
/// the provider's item id), or a call with no item (`fc_` and the call id's tail).
fn call_item(
    core: &mut Core,
    c: &Outgoing,
    item_id: Option<&str>,
    nth: u32,
    made: &mut Vec<MadeCall>,
) -> Value {
    let (call_id, _) = core.client_id(c.id.clone(), &c.source);
    let id = match item_id {
        Some(id) if nth == 1 => id.to_string(),
        Some(id) => crate::ids::derive(id, nth, 0),
        None => format!("fc_{}", &call_id[crate::ids::prefix_of(&call_id).len()..]),
    };
    if c.source != IdSource::Provider || c.id.is_empty() {
        made.push(MadeCall {
            call_id: call_id.clone(),
            name: c.name.clone(),
            arguments: c.arguments().into_owned(),
        });
    }
    let status = if c.whole { "completed" } else { "incomplete" };
    json!({"id": id, "type": "function_call", "status": status,
        "arguments": c.arguments(), "call_id": call_id, "name": c.name})
}
