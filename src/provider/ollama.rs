//! Ollama native `/api/chat` (NDJSON): `message.content`, `message.thinking` (with
//! `think`), `message.tool_calls[]` with
//! `function.arguments` as objects, `done`, `done_reason`, `{"error": ...}` lines.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::openai_chat::arguments_text;
use super::{error_delta, non_empty, parse, Delta, FinishReason};

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
    #[serde(default)]
    done: Option<bool>,
    #[serde(borrow, default)]
    done_reason: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<ToolCall<'a>>>,
}

#[derive(Deserialize)]
struct ToolCall<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
}

#[derive(Deserialize)]
struct Function<'a> {
    #[serde(default)]
    index: Option<u32>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

/// Numbers calls across lines (each line's calls are complete).
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    calls: u32,
}

impl Decoder {
    /// Decode one line.
    pub fn decode(&mut self, payload: &[u8], out: &mut Vec<Delta>) {
        let line: Line<'_> = match parse(payload) {
            Ok(l) => l,
            Err(d) => {
                out.push(d);
                return;
            }
        };
        if let Some(err) = line.error {
            out.push(error_delta(err.get()));
        }
        if let Some(m) = line.message {
            if let Some(t) = m.thinking.filter(|t| !t.is_empty()) {
                out.push(Delta::Reasoning {
                    choice: 0,
                    text: t.into_owned(),
                });
            }
            if let Some(t) = m.content.filter(|t| !t.is_empty()) {
                out.push(Delta::Text {
                    choice: 0,
                    text: t.into_owned(),
                });
            }
            for call in m.tool_calls.unwrap_or_default() {
                let Some(f) = call.function else { continue };
                let index = self.calls;
                self.calls += 1;
                let _ = f.index;
                out.push(Delta::Call {
                    choice: 0,
                    index: Some(index),
                    id: non_empty(call.id),
                    name: non_empty(f.name),
                    arguments: Some(arguments_text(f.arguments).unwrap_or_else(|| "{}".into())),
                    complete: true,
                });
            }
        }
        if line.done == Some(true) {
            let raw = line
                .done_reason
                .map(Cow::into_owned)
                .unwrap_or_else(|| "stop".into());
            out.push(Delta::Finish {
                choice: 0,
                reason: FinishReason::from_raw(&raw),
                raw,
            });
            out.push(Delta::Done);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinking_is_reasoning_before_the_text() {
        let mut d = Decoder::default();
        let mut out = Vec::new();
        d.decode(
            br#"{"model":"qwen3","created_at":"2026-11-30T00:00:00Z","message":{"role":"assistant","content":"","thinking":"Let me think"},"done":false}"#,
            &mut out,
        );
        d.decode(
            br#"{"model":"qwen3","created_at":"2026-11-30T00:00:01Z","message":{"role":"assistant","content":"Hi","thinking":"."},"done":false}"#,
            &mut out,
        );
        let r = |t: &str| Delta::Reasoning {
            choice: 0,
            text: t.to_string(),
        };
        let text = Delta::Text {
            choice: 0,
            text: "Hi".to_string(),
        };
        assert_eq!(out, [r("Let me think"), r("."), text]);
    }
}
