//! Google Gemini `streamGenerateContent?alt=sse`: candidates whose parts carry text or
//! complete `functionCall` objects; `finishReason`; errors as data events.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{error_delta, non_empty, parse, Delta, FinishReason};

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    candidates: Option<Vec<Candidate<'a>>>,
    #[serde(borrow, default, rename = "usageMetadata")]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Candidate<'a> {
    #[serde(default)]
    index: Option<u32>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
    #[serde(borrow, default, rename = "finishReason")]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(borrow, default)]
    parts: Option<Vec<Part<'a>>>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(default)]
    thought: Option<bool>,
    #[serde(borrow, default, rename = "functionCall")]
    function_call: Option<FunctionCall<'a>>,
}

#[derive(Deserialize)]
struct FunctionCall<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
}

/// Numbers the calls of each candidate (Gemini sends no index).
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    calls: Vec<u32>,
}

impl Decoder {
    /// Decode one `data:` payload.
    pub fn decode(&mut self, payload: &[u8], out: &mut Vec<Delta>) {
        // Errors may arrive as a one-element array.
        let trimmed = payload.trim_ascii();
        let body = if trimmed.starts_with(b"[") && trimmed.ends_with(b"]") {
            &trimmed[1..trimmed.len() - 1]
        } else {
            trimmed
        };
        let chunk: Chunk<'_> = match parse(body) {
            Ok(c) => c,
            Err(d) => {
                out.push(d);
                return;
            }
        };
        if let Some(err) = chunk.error {
            out.push(error_delta(err));
        }
        for cand in chunk.candidates.unwrap_or_default() {
            let c = cand.index.unwrap_or(0);
            for part in cand.content.and_then(|p| p.parts).unwrap_or_default() {
                if let Some(f) = part.function_call {
                    let slot = c as usize;
                    if self.calls.len() <= slot {
                        self.calls.resize(slot + 1, 0);
                    }
                    let index = self.calls[slot];
                    self.calls[slot] += 1;
                    out.push(Delta::Call {
                        choice: c,
                        index: Some(index),
                        id: non_empty(f.id),
                        name: non_empty(f.name),
                        arguments: Some(f.args.map_or("{}".to_string(), |a| a.get().to_string())),
                        complete: true,
                    });
                } else if let Some(t) = part.text.filter(|t| !t.is_empty()) {
                    if part.thought != Some(true) {
                        out.push(Delta::Text {
                            choice: c,
                            text: t.into_owned(),
                        });
                    }
                }
            }
            if let Some(raw) = cand.finish_reason {
                out.push(Delta::Finish {
                    choice: c,
                    reason: FinishReason::from_raw(&raw),
                    raw: raw.into_owned(),
                });
            }
        }
        if let Some(u) = chunk.usage {
            out.push(Delta::Usage {
                raw: u.get().to_string(),
            });
        }
    }
}
