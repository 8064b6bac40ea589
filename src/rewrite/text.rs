//! Calls written into the text (`--text-calls`): each choice's content runs through a
//! [`crate::text_calls::Extractor`]; the calls to the request's declared tools go to
//! the assembler (and out as the client's tool calls), the rest of the text goes out in
//! the chunk it came in, or in a later one when it was held as the possible start of a
//! marker. Markup that could not be read as a call goes back into the text as it came:
//! the proxy fails closed.

use crate::assemble::{Event, ToolCallAssembler};
use crate::text_calls::{Extractor, Family, Piece, Tools, MAX_CHOICES};
use serde_json::{json, Map, Value};

/// Calls written into the text: off, or taken out for one family or for any (`auto`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TextCalls {
    /// The content goes out as it came (the default).
    #[default]
    Off,
    /// Any family, recognised by its marker.
    Auto,
    /// This family only.
    Family(Family),
}

impl TextCalls {
    /// `auto` or a family's name (`hermes`, `qwen3_coder`, ...).
    pub fn from_name(name: &str) -> Option<TextCalls> {
        match name {
            "auto" => Some(TextCalls::Auto),
            "off" => Some(TextCalls::Off),
            n => Family::from_name(n).map(TextCalls::Family),
        }
    }

    /// The family to extract (`None`: any), or `None` when off.
    fn family(self) -> Option<Option<Family>> {
        match self {
            TextCalls::Off => None,
            TextCalls::Auto => Some(None),
            TextCalls::Family(f) => Some(Some(f)),
        }
    }
}

/// What a streaming rewriter extracts with: the family and the request's tools.
#[derive(Clone, Debug)]
pub struct TextSetting {
    family: Option<Family>,
    tools: Tools,
}

impl TextSetting {
    /// The setting for a request: `None` when extraction is off or the request declared no
    /// tool (then no markup can be a call, and the content is not even looked at).
    pub fn new(mode: TextCalls, tools: Tools) -> Option<TextSetting> {
        let family = mode.family()?;
        (!tools.is_empty()).then_some(TextSetting { family, tools })
    }

    /// An extractor for one text.
    pub(crate) fn extractor(&self) -> Extractor {
        Extractor::new(self.family, self.tools.clone())
    }
}

/// The most tools read from a request (providers take 128 or fewer): past it, the rest
/// are not declared, so their calls stay in the text.
pub const MAX_TOOLS: usize = 1024;

/// The largest parameters schema read as a tree; a larger one is not kept (that tool's
/// values in the XML families stay strings).
pub const MAX_SCHEMA_BYTES: usize = 64 << 10;

/// The declared tools of a request body. Memory is bounded whatever the body holds: only
/// its `tools` member is read, elements that are not objects and members no tool
/// declaration has are skipped without being built, at most [`MAX_TOOLS`] are kept, and a
/// schema is built into a tree only up to [`MAX_SCHEMA_BYTES`] of text.
pub fn declared_tools(body: &[u8]) -> Tools {
    Tools::from_request(&json!({ "tools": declared(body) }))
}

/// The declared tools of a request body with their compiled parameter schemas, to check
/// and coerce calls by; read as [`declared_tools`] reads them (the same bounds). `None`
/// when the body declares none, or a schema does not compile.
pub fn declared_schemas(body: &[u8]) -> Option<crate::schema::Tools> {
    let list = declared(body);
    if list.is_empty() {
        return None;
    }
    crate::schema::Tools::from_request(&json!({ "tools": list })).ok()
}

/// The declarations of [`declared_tools`], each as `{"name", "input_schema"}`.
fn declared(body: &[u8]) -> Vec<Value> {
    use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
    use serde_json::value::RawValue;

    #[derive(serde::Deserialize)]
    struct Request {
        #[serde(default, deserialize_with = "tools")]
        tools: Vec<Value>,
    }
    #[derive(serde::Deserialize)]
    struct Decl<'a> {
        #[serde(borrow)]
        name: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        parameters: Option<&'a RawValue>,
        #[serde(borrow)]
        input_schema: Option<&'a RawValue>,
        #[serde(borrow)]
        function: Option<Box<Decl<'a>>>,
        #[serde(borrow, rename = "functionDeclarations")]
        function_declarations: Option<Vec<MaybeDecl<'a>>>,
    }
    /// A declaration, or anything else (skipped).
    struct MaybeDecl<'a>(Option<Decl<'a>>);
    impl<'de: 'a, 'a> serde::Deserialize<'de> for MaybeDecl<'a> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let raw = <&RawValue>::deserialize(d)?;
            let text = raw.get();
            if !text.starts_with('{') {
                return Ok(MaybeDecl(None));
            }
            Ok(MaybeDecl(serde_json::from_str(text).ok()))
        }
    }
    fn schema(raw: Option<&RawValue>) -> Value {
        raw.filter(|r| r.get().len() <= MAX_SCHEMA_BYTES)
            .and_then(|r| serde_json::from_str(r.get()).ok())
            .unwrap_or(Value::Null)
    }
    fn as_tool(d: Decl<'_>, out: &mut Vec<Value>) {
        let push = |out: &mut Vec<Value>, name: Option<std::borrow::Cow<'_, str>>, s: Value| {
            if let Some(n) = name.filter(|_| out.len() < MAX_TOOLS) {
                out.push(json!({"name": n, "input_schema": s}));
            }
        };
        if let Some(f) = d.function {
            let s = schema(f.parameters);
            push(out, f.name, s);
        } else if let Some(decls) = d.function_declarations {
            for x in decls.into_iter().filter_map(|m| m.0) {
                let s = schema(x.parameters);
                push(out, x.name, s);
            }
        } else {
            // Anthropic's `input_schema`, or the Responses API's flat `parameters`.
            let s = schema(d.input_schema.or(d.parameters));
            push(out, d.name, s);
        }
    }
    fn tools<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Vec<Value>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array of tools")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
                let mut out = Vec::new();
                while out.len() < MAX_TOOLS {
                    match seq.next_element::<MaybeDecl<'de>>()? {
                        Some(MaybeDecl(Some(d))) => as_tool(d, &mut out),
                        Some(MaybeDecl(None)) => {}
                        None => return Ok(out),
                    }
                }
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(out)
            }
        }
        d.deserialize_seq(Each)
    }
    serde_json::from_slice::<Request>(body).map_or_else(|_| Vec::new(), |r| r.tools)
}

/// The note said for markup that could not be read as a call (it stays in the text).
pub(crate) fn failure_note(
    name: &str,
    kind: crate::assemble::FailureKind,
    message: &str,
) -> String {
    format!(
        "toolstream text_call_error name={name} kind={} ({message}); left in the text",
        kind.as_str()
    )
}

/// The per-choice extractors of one streamed response, and what the last payload left.
pub struct Extraction {
    setting: TextSetting,
    choices: Vec<(u32, Extractor)>,
    pieces: Vec<Piece>,
    /// Per choice, the text the payload leaves once its calls are out.
    pub text: Vec<(u32, String)>,
    /// The payload's text is not what came (a call was taken out, or bytes held or let
    /// go).
    pub changed: bool,
    /// Markup that could not be read as a call, put back into the text: a note for each.
    pub notes: Vec<String>,
    /// Calls taken out of the text so far.
    pub calls: u32,
}

impl Extraction {
    /// Extraction with `setting`.
    pub fn new(setting: TextSetting) -> Self {
        Extraction {
            setting,
            choices: Vec::new(),
            pieces: Vec::new(),
            text: Vec::new(),
            changed: false,
            notes: Vec::new(),
            calls: 0,
        }
    }

    /// A new payload: what the last one left is forgotten.
    pub fn start(&mut self) {
        self.text.clear();
        self.changed = false;
    }

    /// Choice `choice`'s text delta.
    pub fn push(
        &mut self,
        choice: u32,
        text: String,
        a: &mut ToolCallAssembler,
        events: &mut Vec<Event>,
    ) {
        let at = match self.choices.iter().position(|(c, _)| *c == choice) {
            Some(at) => at,
            // Past the bound, the text stays in its chunk as it came.
            None if self.choices.len() >= MAX_CHOICES => return,
            None => {
                let x = Extractor::new(self.setting.family, self.setting.tools.clone());
                self.choices.push((choice, x));
                self.choices.len() - 1
            }
        };
        let x = &mut self.choices[at].1;
        if x.passes(&text) {
            // Plain text, the most of any stream: it stays in its chunk as it came.
            return;
        }
        let held = x.buffered();
        let came = text.len();
        x.push_owned(text, &mut self.pieces);
        let held_now = self.choices[at].1.buffered();
        let left = self.take_pieces(choice, a, events);
        // Nothing held before or after and every byte handed back as text: the text is
        // the delta itself.
        self.changed |= held != 0 || held_now != 0 || left != Some(came);
    }

    /// The end of choice `choice`'s text (`None`: of every choice's): what was held goes
    /// out.
    pub fn finish(
        &mut self,
        choice: Option<u32>,
        a: &mut ToolCallAssembler,
        events: &mut Vec<Event>,
    ) {
        for at in 0..self.choices.len() {
            let c = self.choices[at].0;
            if choice.is_some_and(|choice| choice != c) {
                continue;
            }
            self.choices[at].1.finish(&mut self.pieces);
            if !self.pieces.is_empty() {
                self.changed = true;
                self.take_pieces(c, a, events);
            }
        }
    }

    /// The pieces in hand: text to choice `choice`'s text, calls to the assembler, failures
    /// back into the text. The bytes of text when nothing but text came.
    fn take_pieces(
        &mut self,
        choice: u32,
        a: &mut ToolCallAssembler,
        events: &mut Vec<Event>,
    ) -> Option<usize> {
        let at = match self.text.iter().position(|(c, _)| *c == choice) {
            Some(at) => at,
            None => {
                self.text.push((choice, String::new()));
                self.text.len() - 1
            }
        };
        let mut only_text = Some(0);
        for p in self.pieces.drain(..) {
            let t = &mut self.text[at].1;
            match p {
                Piece::Text(s) => {
                    only_text = only_text.map(|n| n + s.len());
                    if t.is_empty() {
                        *t = s;
                    } else {
                        t.push_str(&s);
                    }
                }
                Piece::Failed {
                    name,
                    kind,
                    message,
                    raw,
                } => {
                    only_text = None;
                    self.notes.push(failure_note(&name, kind, &message));
                    t.push_str(&raw);
                }
                call @ Piece::Call { .. } => {
                    only_text = None;
                    self.calls += 1;
                    a.push_text_piece(choice, call, events);
                }
            }
        }
        only_text
    }

    /// Put each choice's text into the chunk's deltas (`content`, removed when nothing is
    /// left). The texts of choices the chunk does not carry stay in `self.text`.
    pub fn rewrite(&mut self, choices: &mut [Value]) {
        for (n, choice) in choices.iter_mut().enumerate() {
            let Some(choice) = choice.as_object_mut() else {
                continue;
            };
            let index = choice
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(n as u64);
            let Some(at) = self.text.iter().position(|(c, _)| u64::from(*c) == index) else {
                continue;
            };
            let (_, text) = self.text.swap_remove(at);
            let delta = choice
                .entry("delta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(delta) = delta {
                if text.is_empty() {
                    delta.remove("content");
                } else {
                    delta.insert("content".into(), Value::String(text));
                }
            }
        }
        self.text.retain(|(_, t)| !t.is_empty());
    }
}
