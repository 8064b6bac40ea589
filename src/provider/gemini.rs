//! Google Gemini `streamGenerateContent?alt=sse`: candidates whose parts carry text
//! (`thought: true` for reasoning), complete `functionCall` objects or streamed
//! `partialArgs`, and a part's `thoughtSignature`; `finishReason`; errors as data events.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::partial_args::{Builder, Scalar};
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
    /// Opaque; Gemini 3 wants it back on the same part (a function call's above all).
    #[serde(borrow, default, rename = "thoughtSignature")]
    thought_signature: Option<Cow<'a, str>>,
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
    #[serde(borrow, default, rename = "partialArgs")]
    partial_args: Option<Vec<PartialArg<'a>>>,
    #[serde(default, rename = "willContinue")]
    will_continue: Option<bool>,
}

#[derive(Deserialize)]
struct PartialArg<'a> {
    #[serde(borrow, default, rename = "jsonPath")]
    json_path: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "stringValue")]
    string_value: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "numberValue")]
    number_value: Option<&'a RawValue>,
    #[serde(default, rename = "boolValue")]
    bool_value: Option<bool>,
    #[serde(borrow, default, rename = "nullValue")]
    null_value: Option<&'a RawValue>,
    #[serde(default, rename = "willContinue")]
    will_continue: Option<bool>,
}

/// A call whose arguments stream as `partialArgs`.
#[derive(Clone, Debug)]
struct Partial {
    index: u32,
    builder: Builder,
    /// An entry did not fit: the rest of the call's entries are absorbed (the assembler
    /// holds its failure) until the call ends.
    failed: bool,
}

/// Numbers the calls of each candidate (Gemini sends no index) and builds streamed
/// arguments. Both maps are keyed by the candidate index from the wire, so they are sparse:
/// an index never sizes an allocation (`"index": 4294967295` costs one entry).
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    calls: BTreeMap<u32, u32>,
    partial: BTreeMap<u32, Partial>,
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
            out.push(error_delta(err.get()));
        }
        for cand in chunk.candidates.unwrap_or_default() {
            let c = cand.index.unwrap_or(0);
            for part in cand.content.and_then(|p| p.parts).unwrap_or_default() {
                // The part's signature first: it belongs to what the part carries.
                if let Some(sig) = part.thought_signature.filter(|s| !s.is_empty()) {
                    out.push(Delta::ReasoningSignature {
                        choice: c,
                        signature: sig.into_owned(),
                    });
                }
                if let Some(f) = part.function_call {
                    self.function_call(c, f, out);
                } else if let Some(t) = part.text.filter(|t| !t.is_empty()) {
                    out.push(if part.thought == Some(true) {
                        Delta::Reasoning {
                            choice: c,
                            text: t.into_owned(),
                        }
                    } else {
                        Delta::Text {
                            choice: c,
                            text: t.into_owned(),
                        }
                    });
                }
            }
            if let Some(raw) = cand.finish_reason {
                // A finish completes a call whose closing part never came.
                self.end_partial(c, out);
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

    fn next_index(&mut self, c: u32) -> u32 {
        let n = self.calls.entry(c).or_insert(0);
        let index = *n;
        *n += 1;
        index
    }

    /// Close a streamed call: the text that closes its object, then the end (a failed
    /// one: only the end, which reports its failure).
    fn end_partial(&mut self, c: u32, out: &mut Vec<Delta>) {
        if let Some(mut p) = self.partial.remove(&c) {
            out.push(if p.failed {
                Delta::CallEnd {
                    choice: c,
                    index: Some(p.index),
                }
            } else {
                Delta::Call {
                    choice: c,
                    index: Some(p.index),
                    id: None,
                    name: None,
                    arguments: Some(p.builder.finish()),
                    complete: true,
                }
            });
        }
    }

    /// A call whose arguments stream as `partialArgs` (or will): its builder, and the call's
    /// start with the arguments' opening text.
    fn start_partial(
        &mut self,
        c: u32,
        index: u32,
        id: Option<Cow<'_, str>>,
        name: Option<Cow<'_, str>>,
        out: &mut Vec<Delta>,
    ) {
        let (builder, open) = Builder::start();
        self.partial.insert(
            c,
            Partial {
                index,
                builder,
                failed: false,
            },
        );
        out.push(Delta::Call {
            choice: c,
            index: Some(index),
            id: non_empty(id),
            name: non_empty(name),
            arguments: Some(open),
            complete: false,
        });
    }

    /// The `partialArgs` entries of choice `c`'s streaming call, each turned into the
    /// arguments' next text (or the call's failure, after which the rest is ignored).
    fn partial_entries(&mut self, c: u32, entries: Vec<PartialArg<'_>>, out: &mut Vec<Delta>) {
        for e in entries {
            let Some(p) = self.partial.get_mut(&c).filter(|p| !p.failed) else {
                return;
            };
            let value = if let Some(s) = e.string_value {
                Scalar::Str(s.into_owned())
            } else if let Some(n) = e.number_value {
                Scalar::Num(n.get().to_string())
            } else if let Some(b) = e.bool_value {
                Scalar::Bool(b)
            } else {
                let _ = e.null_value;
                Scalar::Null
            };
            let path = e.json_path.as_deref().unwrap_or("");
            let index = p.index;
            match p.builder.entry(path, value, e.will_continue == Some(true)) {
                Ok(text) => out.push(Delta::Call {
                    choice: c,
                    index: Some(index),
                    id: None,
                    name: None,
                    arguments: Some(text),
                    complete: false,
                }),
                Err(message) => {
                    p.failed = true;
                    out.push(Delta::CallFailed {
                        choice: c,
                        index: Some(index),
                        message,
                    });
                    return;
                }
            }
        }
    }

    fn function_call(&mut self, c: u32, f: FunctionCall<'_>, out: &mut Vec<Delta>) {
        let streaming = f.will_continue == Some(true);
        if let Some(entries) = f.partial_args {
            if !self.partial.contains_key(&c) {
                let index = self.next_index(c);
                self.start_partial(c, index, f.id, f.name, out);
            }
            self.partial_entries(c, entries, out);
            return;
        }
        if f.args.is_none() && f.name.is_none() && f.id.is_none() {
            // An empty functionCall ends a streamed call; `{"willContinue": true}` does not.
            if !streaming {
                self.end_partial(c, out);
            }
            return;
        }
        // A new call: whatever was streaming is over.
        self.end_partial(c, out);
        let index = self.next_index(c);
        if streaming && f.args.is_none() {
            self.start_partial(c, index, f.id, f.name, out);
            return;
        }
        out.push(Delta::Call {
            choice: c,
            index: Some(index),
            id: non_empty(f.id),
            name: non_empty(f.name),
            arguments: Some(f.args.map_or("{}".to_string(), |a| a.get().to_string())),
            complete: true,
        });
    }
}
