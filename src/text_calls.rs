//! Tool calls written into the assistant's text by models served without a tool parser:
//! found while the text streams, taken out of it, and handed over as calls — only for the
//! tools the request declared (fail-closed).
//!
//! # How it works
//!
//! An [`Extractor`] is fed the assistant's text deltas. Text passes through at once, except
//! the few bytes at the end of a delta that could still be the start of a marker (at most
//! one marker's length, held until the next delta says). A marker's first byte (`<` or `[`)
//! is found with `memchr`, so plain text costs one search per delta. After an opening
//! marker the call's bytes are collected, bounded by [`MAX_CALL_BYTES`], until the call
//! ends: at its closing tag for the tagged families, or where its JSON value closes (the
//! strict splitter says) for the others. Then the call is read by its family's rules:
//!
//! * its name must be one of the declared tools ([`Tools`]); otherwise the markup is
//!   handed back as text, byte for byte (a model's look-alike, or a call to a tool nobody
//!   declared, is never run);
//! * its arguments must be one JSON object, strictly valid (checked by
//!   [`Splitter`]); otherwise it is a [`Piece::Failed`] with the raw
//!   bytes;
//! * the XML families' parameter values are typed by the tool's declared JSON Schema: a
//!   string parameter stays a string, an integer one becomes a number.
//!
//! Every byte of input comes out once, as text or inside a call or a failure, whatever the
//! cuts between deltas: the same pieces whole, byte by byte or cut anywhere.
//!
//! # Families
//!
//! | [`Family`] | written as |
//! |---|---|
//! | `hermes` (Hermes, Qwen 2.5 and 3) | `<tool_call>{"name": "f", "arguments": {...}}</tool_call>` |
//! | `qwen3_coder` | `<tool_call><function=f><parameter=k>v</parameter></function></tool_call>` |
//! | `mistral` | `[TOOL_CALLS][{"name": "f", "arguments": {...}}, ...]`, or `[TOOL_CALLS]f[ARGS]{...}` |
//! | `llama` (Llama 3.1–3.3) | `<\|python_tag\|>{"name": "f", "parameters": {...}}`, several joined by `;`; with the family named, also the object alone at the start of the text (`{` is no marker `auto` can tell from an answer written in JSON) |
//! | `glm45` (GLM-4.5, 4.6) | `<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>` |
//! | `kimi_k2` | `<\|tool_calls_section_begin\|><\|tool_call_begin\|>functions.f:0<\|tool_call_argument_begin\|>{...}<\|tool_call_end\|><\|tool_calls_section_end\|>` |
//! | `deepseek` (V3, V3.1) | `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{...}<｜tool▁call▁end｜><｜tool▁calls▁end｜>` (V3: `function<｜tool▁sep｜>f` and a fenced JSON block) |
//! | `deepseek` (V4.1) | `<｜DSML｜ calls>` and the same invokes, every tag spaced after `｜DSML｜` |
//! | `deepseek` (V3.2, V4) | `<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="k" string="true">v</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜tool_calls>` (V3.2: `function_calls`) |
//! | `minimax_m2` | `<minimax:tool_call><invoke name="f"><parameter name="k">v</parameter></invoke></minimax:tool_call>` |
//! | `gpt_oss` (harmony) | `<\|channel\|>commentary to=functions.f <\|constrain\|>json<\|message\|>{...}<\|call\|>`, or `<\|start\|>assistant to=functions.f<\|channel\|>...` |
//! | `pythonic` (Llama 3.2, 4) | `[f(a=1, b='x'), g()]`, bare or between `<\|python_start\|>` and `<\|python_end\|>`: keyword arguments, Python literals |
//! | `cohere` (Command R7B, A) | `<\|START_ACTION\|>{"tool_name": "f", "parameters": {...}}<\|END_ACTION\|>`, or an array of such objects |
//! | `step3` | `<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="f"><steptml:parameter name="k">v</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>` |
//! | `granite` (Granite 3, 4) | `<\|tool_call\|>[{"name": "f", "arguments": {...}}, ...]` |
//! | `longcat` (LongCat-Flash) | `<longcat_tool_call>{"name": "f", "arguments": {...}}</longcat_tool_call>` |
//! | `seed_oss` (Seed-OSS) | `<seed:tool_call><function=f><parameter=k>v</parameter></function></seed:tool_call>` |
//! | `internlm` (InternLM 2.5, 3) | `<\|action_start\|><\|plugin\|>{"name": "f", "parameters": {...}}<\|action_end\|>` |
//! | `jamba` (Jamba 1.5, Hunyuan-A13B, MiniMax-M1) | `<tool_calls>[{"name": "f", "arguments": {...}}]</tool_calls>`, or one object a line |
//! | `gemma4` (Gemma 4) | `<\|tool_call>call:f{k:<\|"\|>text<\|"\|>,n:1,o:{a:[1]}}<tool_call\|>` (its own notation: strings delimited, bare numbers, booleans and null) |
//! | `json` (xLAM) | the message is `{"name": "f", "arguments": {...}}` or an array of them (named only: `{` and `[` tell no call from an answer in JSON) |
//! | `sarashina` (Sarashina 2) | `<\|tool_calls\|>[{'name': 'f', 'arguments': {...}}]`, Python literals; with the family named, also the list alone at the start |
//! | `inkling` | `<\|content_invoke_tool_json\|>{"name": "f", "args": {...}}<\|end_message\|>` |
//! | `olmo3` (OLMo 3) | `<function_calls>` and one Python call a line, `f(a=1)`, then `</function_calls>` |
//! | `granite_20b_fc` | `<function_call> {"name": "f", "arguments": {...}}`, repeated |
//! | `kimi_k3` (Kimi K3) | `<\|open\|>tools<\|sep\|><\|open\|>call tool="f" index="0"<\|sep\|><\|open\|>argument key="k" type="string"<\|sep\|>v<\|close\|>argument<\|sep\|><\|close\|>call<\|sep\|><\|close\|>tools<\|sep\|>` |
//! | `hy_v4` (Hunyuan v4) | `<tool_calls><tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call></tool_calls>`, every tag with the checkpoint's suffix (`<tool_calls:6124c78e>`) or none; a `<tool_calls>` section holding JSON is `jamba`'s |
//! | `phi4_mini` (Phi-4-mini) | `functools[{"name": "f", "arguments": {...}}]` at the start of the message (named only: `auto` looks for `<` and `[`) |
//!
//! Cohere's, LongCat's and InternLM's JSON ends where its value closes, then the closing
//! marker must follow (a marker inside a string is the string's), as Hermes's does.
//!
//! `hermes`, `qwen3_coder` and `glm45` share the opening tag: the payload's first byte
//! says which (`{`, `<function=`, a name). The families that end at a closing marker end
//! at the first one (their formats have no escapes: a closing marker inside a value ends
//! the call there, and what it then is — a failure or text — is what the rules say).
//! Parameter values written as text (the XML families) are typed by the declared schema:
//! a parameter the schema lets be a string stays one; another type is read as JSON.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::assemble::FailureKind;

mod gemma;
mod pythonic;
use crate::json::{Mode, Splitter};

/// The longest a call's markup may be, opening marker to closing one. Longer, it is a
/// failure (its bytes kept in [`Piece::Failed::raw`]), and the text goes on after it.
pub const MAX_CALL_BYTES: usize = 1 << 20;

/// The choices of one response whose text is read for calls (OpenAI's `n` goes to 128): the
/// text of a choice past them is passed on untouched, so that a stream naming a new choice
/// in every chunk costs a bounded search per delta, not one extractor per chunk.
pub const MAX_CHOICES: usize = 128;

/// How a model family writes its calls into text (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Family {
    /// `<tool_call>` and a JSON object (Hermes, Qwen 2.5 and 3).
    Hermes,
    /// `<tool_call>` and `<function=...>` with `<parameter=...>` (Qwen3-Coder).
    Qwen3Coder,
    /// `[TOOL_CALLS]` and a JSON array, or a name and `[ARGS]` (Mistral).
    Mistral,
    /// `<|python_tag|>` and a JSON object (Llama 3.1–3.3).
    Llama,
    /// `<tool_call>`, the name, then `<arg_key>`/`<arg_value>` pairs (GLM-4.5, 4.6).
    Glm45,
    /// `<|tool_calls_section_begin|>` sections of `<|tool_call_begin|>functions.NAME:N`
    /// calls (Kimi K2).
    Kimi,
    /// `<｜tool▁calls▁begin｜>` sections (DeepSeek V3 and V3.1), and the DSML tags
    /// `<｜DSML｜tool_calls>` (V4) and `<｜DSML｜function_calls>` (V3.2).
    DeepSeek,
    /// `<minimax:tool_call>` and `<invoke name=...>` with `<parameter name=...>` (MiniMax M2).
    MiniMax,
    /// Harmony's `<|channel|>commentary to=functions.NAME ... <|message|>{...}<|call|>`
    /// (gpt-oss).
    GptOss,
    /// A Python list of calls, `[f(a=1, b='x'), g()]`, bare or between
    /// `<|python_start|>` and `<|python_end|>` (Llama 3.2 and 4).
    Pythonic,
    /// `<|START_ACTION|>` and a JSON object or array of `{"tool_name": ..., "parameters":
    /// ...}` up to `<|END_ACTION|>` (Cohere Command R7B, A, A Reasoning).
    Cohere,
    /// `<｜tool_calls_begin｜>` sections of `function<｜tool_sep｜><steptml:invoke ...>`
    /// calls (Step 3).
    Step3,
    /// `<|tool_call|>` and a JSON array of calls (Granite 3 and 4).
    Granite,
    /// `<longcat_tool_call>` and a JSON object (LongCat-Flash).
    LongCat,
    /// `<seed:tool_call>` and `<function=...>` with `<parameter=...>` (Seed-OSS).
    SeedOss,
    /// `<|action_start|><|plugin|>` and a JSON object up to `<|action_end|>` (InternLM 2.5
    /// and 3).
    InternLm,
    /// `<tool_calls>` and a JSON array of calls, or one JSON object per line, up to
    /// `</tool_calls>` (Jamba 1.5, Hunyuan-A13B, MiniMax-M1 and Text-01).
    Jamba,
    /// A message that is a JSON call or array of calls, `{"name": ..., "arguments": ...}`,
    /// with no marker (xLAM, and any model told to answer so). Only when named: `{` and `[`
    /// are no markers `auto` can tell from an answer written in JSON.
    Json,
    /// `functools[` and a JSON array of calls, at the start of the message (Phi-4-mini).
    /// Only when named: its marker begins with a letter, which `auto` does not look at.
    Phi4Mini,
    /// `<|tool_call>call:NAME{key:<|"|>text<|"|>,n:1}<tool_call|>` (Gemma 4).
    Gemma4,
    /// `<|tool_calls|>` and a Python list of dicts, `[{'name': 'f', 'arguments': {...}}]`
    /// (Sarashina); with the family named, also the list alone at the start of the message
    /// (the marker is a special token some servers strip).
    Sarashina,
    /// `<|content_invoke_tool_json|>{"name": ..., "args": {...}}<|end_message|>` (Inkling).
    Inkling,
    /// `<function_calls>` and one Python call a line, `f(a=1)`, up to `</function_calls>`
    /// (OLMo 3).
    Olmo3,
    /// `<function_call>` and a JSON object, repeated (Granite 20B function calling).
    Granite20bFc,
    /// XTML's `tools` channel: `<|open|>tools<|sep|>` and `<|open|>call tool="NAME"<|sep|>`
    /// blocks of `<|open|>argument key="K" type="T"<|sep|>V<|close|>argument<|sep|>`
    /// (Kimi K3).
    KimiK3,
    /// `<tool_calls>` sections of `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>
    /// </tool_call>` calls, every tag optionally carrying the checkpoint's suffix
    /// (`<tool_calls:6124c78e>`, learned from the section's tag) (Hunyuan v4).
    HunyuanV4,
}

impl Family {
    /// Every family, in the order `auto` tries their markers.
    pub const ALL: &'static [Family] = &[
        Family::Hermes,
        Family::Qwen3Coder,
        Family::Glm45,
        Family::Mistral,
        Family::Llama,
        Family::Kimi,
        Family::DeepSeek,
        Family::MiniMax,
        Family::GptOss,
        Family::Pythonic,
        Family::Cohere,
        Family::Step3,
        Family::Granite,
        Family::LongCat,
        Family::SeedOss,
        Family::InternLm,
        Family::Jamba,
        Family::Json,
        Family::Phi4Mini,
        Family::Gemma4,
        Family::Sarashina,
        Family::Inkling,
        Family::Olmo3,
        Family::Granite20bFc,
        Family::KimiK3,
        Family::HunyuanV4,
    ];

    /// The family's name (`hermes`, `qwen3_coder`, `mistral`, `llama`).
    pub fn name(self) -> &'static str {
        match self {
            Family::Hermes => "hermes",
            Family::Qwen3Coder => "qwen3_coder",
            Family::Mistral => "mistral",
            Family::Llama => "llama",
            Family::Glm45 => "glm45",
            Family::Kimi => "kimi_k2",
            Family::DeepSeek => "deepseek",
            Family::MiniMax => "minimax_m2",
            Family::GptOss => "gpt_oss",
            Family::Pythonic => "pythonic",
            Family::Cohere => "cohere",
            Family::Step3 => "step3",
            Family::Granite => "granite",
            Family::LongCat => "longcat",
            Family::SeedOss => "seed_oss",
            Family::InternLm => "internlm",
            Family::Jamba => "jamba",
            Family::Json => "json",
            Family::Phi4Mini => "phi4_mini",
            Family::Gemma4 => "gemma4",
            Family::Sarashina => "sarashina",
            Family::Inkling => "inkling",
            Family::Olmo3 => "olmo3",
            Family::Granite20bFc => "granite_20b_fc",
            Family::KimiK3 => "kimi_k3",
            Family::HunyuanV4 => "hy_v4",
        }
    }

    /// The family of a name, as [`Family::name`] spells it, or as another project names
    /// the same markup (vLLM's `hunyuan_a13b` and `minimax` are `jamba`'s).
    pub fn from_name(name: &str) -> Option<Family> {
        let name = match name {
            "hunyuan_a13b" | "minimax" | "minimax_m1" => "jamba",
            "ernie45" | "qwen" | "qwen25" => "hermes",
            "qwen3_xml" | "qwen_xml" | "qwen_coder" | "nemotron" | "nemotron_v3" => "qwen3_coder",
            "glm45_moe" | "glm47_moe" => "glm45",
            "kimik2" => "kimi_k2",
            "openai" | "harmony" => "gpt_oss",
            "llama4_pythonic" => "pythonic",
            "cohere_command" => "cohere",
            "internlm2" => "internlm",
            "glm47" => "glm45",
            "llama3_json" | "llama4_json" => "llama",
            "deepseek_v3" | "deepseek_v31" | "deepseek_v32" | "deepseek_v4" | "deepseek_v41" => {
                "deepseek"
            }
            "xlam" => "json",
            "phi4_mini_json" | "phi4mini" => "phi4_mini",
            "granite-20b-fc" => "granite_20b_fc",
            n => n,
        };
        Family::ALL.iter().copied().find(|f| f.name() == name)
    }

    fn openers(self) -> &'static [Opener] {
        match self {
            Family::Hermes | Family::Qwen3Coder | Family::Glm45 => &[Opener::ToolCallTag],
            Family::Mistral => &[Opener::MistralToken],
            Family::Llama => &[Opener::PythonTag],
            Family::Kimi => &[Opener::KimiSection],
            Family::DeepSeek => &[
                Opener::DeepSeekSection,
                Opener::DsmlToolCalls,
                Opener::DsmlFunctionCalls,
                Opener::DsmlCalls,
            ],
            Family::MiniMax => &[Opener::MiniMaxTag],
            Family::GptOss => &[Opener::HarmonyChannel, Opener::HarmonyStart],
            Family::Pythonic => &[Opener::Pythonic, Opener::PythonStart],
            Family::Cohere => &[Opener::CohereAction],
            Family::Step3 => &[Opener::Step3Section],
            Family::Granite => &[Opener::GraniteTag],
            Family::LongCat => &[Opener::LongCatTag],
            Family::SeedOss => &[Opener::SeedTag],
            Family::InternLm => &[Opener::InternLmAction],
            Family::Jamba => &[Opener::ToolCallsTag],
            // Read at the start of the message only (`Extractor::bare`).
            Family::Json | Family::Phi4Mini => &[],
            Family::Gemma4 => &[Opener::Gemma4Tag],
            Family::Sarashina => &[Opener::SarashinaTag],
            Family::Inkling => &[Opener::InklingJson],
            Family::Olmo3 => &[Opener::FunctionCallsTag],
            Family::Granite20bFc => &[Opener::FunctionCallTag],
            Family::KimiK3 => &[Opener::XtmlTools],
            Family::HunyuanV4 => &[Opener::ToolCallsTag, Opener::SuffixedToolCalls],
        }
    }
}

/// The opening markers, each with how its call ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opener {
    /// `<tool_call>`, ended by `</tool_call>`.
    ToolCallTag,
    /// `[TOOL_CALLS]`, ended where its JSON closes.
    MistralToken,
    /// `<|python_tag|>`, ended where its JSON closes.
    PythonTag,
    /// Kimi K2's section.
    KimiSection,
    /// DeepSeek V3's and V3.1's section.
    DeepSeekSection,
    /// DeepSeek V4's DSML block.
    DsmlToolCalls,
    /// DeepSeek V3.2's DSML block.
    DsmlFunctionCalls,
    /// DeepSeek V4.1's DSML block, its tags spaced (`<｜DSML｜ calls>`).
    DsmlCalls,
    /// MiniMax M2's block.
    MiniMaxTag,
    /// A harmony message on the commentary channel to a function.
    HarmonyChannel,
    /// A harmony message whose header names the function first.
    HarmonyStart,
    /// `[` and a declared tool's name and `(`, ended where the list's brackets close.
    Pythonic,
    /// Llama 4's `<|python_start|>`, around a pythonic list.
    PythonStart,
    /// Cohere's action block: JSON, then its closing marker.
    CohereAction,
    /// Step 3's section.
    Step3Section,
    /// Granite's `<|tool_call|>`, ended where its JSON closes.
    GraniteTag,
    /// LongCat's tag: JSON, then its closing tag.
    LongCatTag,
    /// Seed-OSS's tag.
    SeedTag,
    /// InternLM's plugin action: JSON, then its closing marker.
    InternLmAction,
    /// `<tool_calls>`, ended by `</tool_calls>`.
    ToolCallsTag,
    /// Llama's JSON with no marker before it: a text whose first non-whitespace byte is
    /// `{` (only when the family is named: `{` is no marker `auto` can tell).
    LlamaJson,
    /// A JSON call or array of calls that is the message (the `json` family).
    BareJson,
    /// Phi-4-mini's `functools` and a JSON array, at the start of the message.
    Functools,
    /// Gemma 4's `<|tool_call>`, ended where its arguments close.
    Gemma4Tag,
    /// Sarashina's `<|tool_calls|>`, ended where its list's brackets close.
    SarashinaTag,
    /// Sarashina's list alone at the start of the message.
    SarashinaList,
    /// Inkling's tool message: JSON, then its closing marker.
    InklingJson,
    /// OLMo 3's `<function_calls>`.
    FunctionCallsTag,
    /// Granite 20B's `<function_call>`, ended where its JSON closes.
    FunctionCallTag,
    /// Kimi K3's XTML `tools` channel.
    XtmlTools,
    /// Hunyuan v4's section with the checkpoint's suffix, `<tool_calls:SUFFIX>`, ended by
    /// `</tool_calls:SUFFIX>`.
    SuffixedToolCalls,
}

impl Opener {
    fn text(self) -> &'static str {
        match self {
            Opener::ToolCallTag => "<tool_call>",
            Opener::MistralToken => "[TOOL_CALLS]",
            Opener::PythonTag => "<|python_tag|>",
            Opener::KimiSection => "<|tool_calls_section_begin|>",
            Opener::DeepSeekSection => "<｜tool▁calls▁begin｜>",
            Opener::DsmlToolCalls => "<｜DSML｜tool_calls>",
            Opener::DsmlFunctionCalls => "<｜DSML｜function_calls>",
            Opener::DsmlCalls => "<｜DSML｜ calls>",
            Opener::MiniMaxTag => "<minimax:tool_call>",
            Opener::HarmonyChannel => "<|channel|>commentary to=functions.",
            Opener::HarmonyStart => "<|start|>assistant to=functions.",
            Opener::Pythonic => "[",
            Opener::PythonStart => "<|python_start|>",
            Opener::CohereAction => "<|START_ACTION|>",
            Opener::Step3Section => "<｜tool_calls_begin｜>",
            Opener::GraniteTag => "<|tool_call|>",
            Opener::LongCatTag => "<longcat_tool_call>",
            Opener::SeedTag => "<seed:tool_call>",
            Opener::InternLmAction => "<|action_start|><|plugin|>",
            Opener::ToolCallsTag => "<tool_calls>",
            Opener::LlamaJson | Opener::BareJson => "",
            Opener::Functools => "functools",
            Opener::Gemma4Tag => "<|tool_call>",
            Opener::SarashinaTag => "<|tool_calls|>",
            Opener::SarashinaList => "",
            Opener::InklingJson => "<|content_invoke_tool_json|>",
            Opener::FunctionCallsTag => "<function_calls>",
            Opener::FunctionCallTag => "<function_call>",
            Opener::XtmlTools => "<|open|>tools<|sep|>",
            Opener::SuffixedToolCalls => "<tool_calls:",
        }
    }

    /// For the openers read at the start of the message only: the bytes the value after
    /// the marker may begin with.
    fn bare_value(self) -> &'static [u8] {
        match self {
            Opener::LlamaJson => b"{",
            Opener::BareJson => b"{[",
            Opener::Functools | Opener::SarashinaList => b"[",
            _ => b"",
        }
    }

    /// Whether the payload is JSON followed by the closing marker: the markup ends after
    /// the marker that follows the closed value (a closing marker inside one of its
    /// strings is text of the string).
    fn json_then_close(self) -> bool {
        matches!(
            self,
            Opener::CohereAction
                | Opener::LongCatTag
                | Opener::InternLmAction
                | Opener::InklingJson
        )
    }

    /// The marker that ends the call's markup, for the families that end at one (the
    /// first one after the opener: these formats have no escapes).
    fn close(self) -> &'static str {
        match self {
            Opener::ToolCallTag => CLOSE_TAG,
            Opener::MistralToken
            | Opener::PythonTag
            | Opener::Pythonic
            | Opener::GraniteTag
            | Opener::LlamaJson
            | Opener::BareJson
            | Opener::Functools
            | Opener::Gemma4Tag
            | Opener::SarashinaTag
            | Opener::SarashinaList
            | Opener::FunctionCallTag
            | Opener::SuffixedToolCalls => "",
            Opener::InklingJson => "<|end_message|>",
            Opener::FunctionCallsTag => "</function_calls>",
            Opener::XtmlTools => "<|close|>tools<|sep|>",
            Opener::PythonStart => "<|python_end|>",
            Opener::KimiSection => "<|tool_calls_section_end|>",
            Opener::DeepSeekSection => "<｜tool▁calls▁end｜>",
            Opener::DsmlToolCalls => "</｜DSML｜tool_calls>",
            Opener::DsmlFunctionCalls => "</｜DSML｜function_calls>",
            Opener::DsmlCalls => "</｜DSML｜ calls>",
            Opener::MiniMaxTag => "</minimax:tool_call>",
            Opener::HarmonyChannel | Opener::HarmonyStart => "<|call|>",
            Opener::CohereAction => "<|END_ACTION|>",
            Opener::Step3Section => "<｜tool_calls_end｜>",
            Opener::LongCatTag => "</longcat_tool_call>",
            Opener::SeedTag => "</seed:tool_call>",
            Opener::InternLmAction => "<|action_end|>",
            Opener::ToolCallsTag => "</tool_calls>",
        }
    }
}

const CLOSE_TAG: &str = "</tool_call>";

/// The longest name Mistral's `name[ARGS]` form may have before `[ARGS]` (a search that
/// starts again at every delta stays bounded by it).
const MAX_NAME_BYTES: usize = 256;

/// The tools a request declared: the allow-list, and each one's parameters schema (which
/// types the XML families' values).
#[derive(Clone, Debug, Default)]
pub struct Tools {
    /// Shared: every stream of a request (and each choice's extractor) clones it. Ordered,
    /// so that whether a name begins a declared one is one lookup.
    schemas: Arc<BTreeMap<String, Value>>,
}

impl Tools {
    /// The tools of a request body: OpenAI's `tools[].function` (`name`, `parameters`),
    /// Anthropic's `tools[]` (`name`, `input_schema`), or Gemini's
    /// `tools[].functionDeclarations[]` (`name`, `parameters`).
    pub fn from_request(body: &Value) -> Tools {
        let mut schemas = BTreeMap::new();
        let mut add = |name: Option<&Value>, schema: Option<&Value>| {
            if let Some(Value::String(n)) = name {
                schemas.insert(n.clone(), schema.cloned().unwrap_or(Value::Null));
            }
        };
        for t in body["tools"].as_array().into_iter().flatten() {
            if let Some(f) = t.get("function") {
                add(f.get("name"), f.get("parameters"));
            } else if let Some(decls) = t.get("functionDeclarations").and_then(Value::as_array) {
                for d in decls {
                    add(d.get("name"), d.get("parameters"));
                }
            } else {
                add(t.get("name"), t.get("input_schema"));
            }
        }
        Tools {
            schemas: Arc::new(schemas),
        }
    }

    /// Tools by name alone (no schemas: the XML families' values stay strings).
    pub fn from_names<I: IntoIterator<Item = S>, S: Into<String>>(names: I) -> Tools {
        Tools {
            schemas: Arc::new(names.into_iter().map(|n| (n.into(), Value::Null)).collect()),
        }
    }

    /// Whether no tool was declared (then no markup is a call).
    pub fn is_empty(&self) -> bool {
        self.schemas.is_empty()
    }

    /// Whether `name` was declared.
    pub fn contains(&self, name: &str) -> bool {
        self.schemas.contains_key(name)
    }

    /// Whether a declared name begins with `prefix`.
    fn has_prefix(&self, prefix: &str) -> bool {
        self.schemas
            .range::<str, _>((
                std::ops::Bound::Included(prefix),
                std::ops::Bound::Unbounded,
            ))
            .next()
            .is_some_and(|(name, _)| name.starts_with(prefix))
    }

    /// The declared JSON Schema type of parameter `param` of tool `name`, if it says one.
    /// A parameter's declared type: `string` where the schema allows a string (or says
    /// nothing), else the first type it names.
    fn param_type(&self, name: &str, param: &str) -> Option<&str> {
        let ty = &self.schemas.get(name)?["properties"][param]["type"];
        match ty {
            Value::String(t) => Some(t),
            Value::Array(ts) if ts.iter().any(|t| t == "string") => Some("string"),
            Value::Array(ts) => ts.iter().find_map(Value::as_str),
            _ => None,
        }
    }
}

/// What the extractor hands over, in the order of the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text with the calls taken out.
    Text(String),
    /// A call to a declared tool.
    Call {
        /// The tool's name.
        name: String,
        /// The arguments: one strictly valid JSON object.
        arguments: String,
    },
    /// Markup of a declared tool's call that could not be read (arguments that are not one
    /// JSON object, a call cut off by the end of the text or over [`MAX_CALL_BYTES`]).
    Failed {
        /// The tool's name.
        name: String,
        /// How it failed: [`FailureKind::Syntax`] (not readable as its family's call),
        /// [`FailureKind::Truncated`] (the text ended inside it) or
        /// [`FailureKind::Limit`] (over [`MAX_CALL_BYTES`]).
        kind: FailureKind,
        /// What was wrong.
        message: String,
        /// The call's markup as it came.
        raw: String,
    },
}

/// Where the extractor stands.
#[derive(Clone, Debug)]
enum State {
    /// In text: `pending` holds what may still begin a marker.
    Text,
    /// Inside a call's markup, opened by `opener`: `call` holds it from the opener on.
    Call {
        opener: Opener,
        /// How far `call` was searched for the closing tag.
        searched: usize,
        /// The JSON families' check of their value (started at the value's first byte).
        json: Option<Box<JsonEnd>>,
        /// A `<tool_call>` whose payload is not JSON: it ends at the first closing tag.
        tagged: bool,
        /// Where a pythonic call list stands.
        py: pythonic::Lex,
        /// Llama's markup so far ends a whole call here (its JSON closed); a `;` and
        /// another object may still follow. (Gemma 4's: its arguments closed; its closing
        /// marker may still follow.)
        whole: Option<usize>,
        /// Where Gemma 4's arguments stand.
        gemma: gemma::Scan,
    },
}

impl State {
    /// Inside a call's markup, its opener (if it has one) just read.
    fn opened(opener: Opener) -> State {
        State::Call {
            opener,
            searched: opener.text().len(),
            json: None,
            tagged: false,
            py: pythonic::Lex::opened(),
            whole: None,
            gemma: gemma::Scan::default(),
        }
    }
}

/// A JSON value after a marker, followed by the strict splitter to where it closes.
#[derive(Clone, Debug)]
struct JsonEnd {
    splitter: Splitter,
    /// Where in the call's markup the value begins, and how far it was fed.
    from: usize,
    fed: usize,
    /// Where it closed, once it has.
    end: Option<usize>,
    /// How far the whitespace after it was read (see [`close_tag_after`]).
    ws: usize,
}

/// The streaming extractor. See the module docs.
///
/// ```
/// use toolstream::text_calls::{Extractor, Piece, Tools};
///
/// let mut x = Extractor::new(None, Tools::from_names(["get_weather"]));
/// let mut out = Vec::new();
/// for delta in ["Let me check. <tool", "_call>{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Paris\"}}</tool_call>"] {
///     x.push(delta, &mut out);
/// }
/// x.finish(&mut out);
/// assert_eq!(out[0], Piece::Text("Let me check. ".into()));
/// assert_eq!(out[1], Piece::Call { name: "get_weather".into(), arguments: r#"{"city": "Paris"}"#.into() });
/// ```
#[derive(Clone, Debug)]
pub struct Extractor {
    openers: Vec<Opener>,
    /// The bytes that may follow a `<` (index 0) or a `[` (index 1) in a marker: most
    /// `<` and `[` in text are passed at once by their next byte.
    second: Box<[[bool; 256]; 2]>,
    tools: Tools,
    state: State,
    /// Text not yet handed over (it may begin a marker), or the call's markup so far.
    pending: String,
    /// Bytes of markup taken out of the text as calls so far.
    call_bytes: u64,
    /// The opener read at the start of the message only, for the family named (Llama's
    /// JSON, `json`, Phi-4-mini's `functools`).
    bare: Option<Opener>,
    /// Whether text other than whitespace came (a bare JSON call must come first).
    started: bool,
}

impl Extractor {
    /// An extractor for `family`, or for every family (`None`, `auto`), promoting the calls
    /// of `tools` only.
    pub fn new(family: Option<Family>, tools: Tools) -> Self {
        let mut openers: Vec<Opener> = match family {
            Some(f) => f.openers().to_vec(),
            None => Family::ALL
                .iter()
                .flat_map(|f| f.openers())
                .copied()
                .collect(),
        };
        openers.dedup();
        let mut second = Box::new([[false; 256]; 2]);
        for o in &openers {
            match o {
                // `[` and a declared tool's name.
                Opener::Pythonic => {
                    for name in tools.schemas.keys() {
                        if let Some(&b) = name.as_bytes().first() {
                            second[1][usize::from(b)] = true;
                        }
                    }
                }
                o => {
                    let t = o.text().as_bytes();
                    second[usize::from(t[0] == b'[')][usize::from(t[1])] = true;
                }
            }
        }
        Extractor {
            openers,
            second,
            tools,
            state: State::Text,
            pending: String::new(),
            call_bytes: 0,
            bare: match family {
                Some(Family::Llama) => Some(Opener::LlamaJson),
                Some(Family::Json) => Some(Opener::BareJson),
                Some(Family::Phi4Mini) => Some(Opener::Functools),
                Some(Family::Sarashina) => Some(Opener::SarashinaList),
                _ => None,
            },
            started: false,
        }
    }

    /// Whether `delta` would be handed over whole as text at once (nothing is held and it
    /// holds no marker's first byte): the caller may then pass it on itself instead of
    /// pushing it, which leaves the extractor as it is.
    pub fn passes(&self, delta: &str) -> bool {
        matches!(self.state, State::Text)
            && self.pending.is_empty()
            && (self.started || self.bare.is_none())
            && !has_marker_byte(delta)
    }

    /// [`Extractor::push`] of a delta the caller owns: plain text (no marker's first byte,
    /// nothing held) is handed over as it is, without a copy.
    pub fn push_owned(&mut self, delta: String, out: &mut Vec<Piece>) {
        if self.passes(&delta) {
            text(out, delta);
        } else if self.pending.is_empty() {
            self.pending = delta;
            self.run(out);
        } else {
            self.push(&delta, out);
        }
    }

    /// Feed the next text delta; the pieces it completes are appended to `out`.
    pub fn push(&mut self, delta: &str, out: &mut Vec<Piece>) {
        self.pending.push_str(delta);
        self.run(out);
    }

    /// Read what is pending.
    fn run(&mut self, out: &mut Vec<Piece>) {
        loop {
            let more = match self.state {
                State::Text => self.scan_text(out),
                State::Call { .. } => self.scan_call(out),
            };
            if !more {
                return;
            }
        }
    }

    /// Bytes held between pushes: the end of the text that may begin a marker (shorter than
    /// the longest marker), or the markup of the call in hand (at most [`MAX_CALL_BYTES`]
    /// and the last delta).
    pub fn buffered(&self) -> usize {
        self.pending.len()
    }

    /// Bytes of markup taken out of the text as calls so far: with the text and the
    /// failures' raw bytes handed over, they account for every byte pushed.
    pub fn call_bytes(&self) -> u64 {
        self.call_bytes
    }

    /// End of the text: what was held is handed over; a call cut off is a failure when its
    /// tool is declared, else text.
    pub fn finish(&mut self, out: &mut Vec<Piece>) {
        if let State::Call {
            opener,
            whole: Some(end),
            ..
        } = self.state
        {
            // Llama's calls, whole, with only what could have continued them after: the
            // calls, then that as text.
            let rest = self.pending.split_off(end);
            let raw = std::mem::take(&mut self.pending);
            self.state = State::Text;
            self.read_call(opener, raw, out);
            text(out, rest);
            return;
        }
        if let State::Call { .. } = self.state {
            let raw = std::mem::take(&mut self.pending);
            match self.call_name(&raw) {
                Some(name) if self.tools.contains(&name) => out.push(Piece::Failed {
                    name,
                    kind: FailureKind::Truncated,
                    message: "the text ended inside the call".into(),
                    raw,
                }),
                _ => text(out, raw),
            }
        } else {
            let rest = std::mem::take(&mut self.pending);
            text(out, rest);
        }
        self.state = State::Text;
    }

    /// In text: hand over what cannot begin a marker; enter a call at a whole opener.
    /// True when the state changed with input left to read.
    fn scan_text(&mut self, out: &mut Vec<Piece>) -> bool {
        if let (Some(bare), false) = (self.bare, self.started) {
            let t = self.pending.trim_start();
            if t.is_empty() {
                // Whitespace so far: out, and the text has still not begun.
                let all = std::mem::take(&mut self.pending);
                text(out, all);
                return false;
            }
            let marker = bare.text();
            if !marker.is_empty() && marker.starts_with(t) {
                // What may still be the marker: held.
                return false;
            }
            self.started = true;
            let opens = t.strip_prefix(marker).is_some_and(|v| {
                v.as_bytes()
                    .first()
                    .is_some_and(|b| bare.bare_value().contains(b))
            });
            if opens {
                let ws = self.pending.len() - t.len();
                text(out, self.pending[..ws].to_string());
                self.pending.drain(..ws);
                self.state = State::opened(bare);
                return true;
            }
        }
        let mut from = 0;
        loop {
            let bytes = self.pending.as_bytes();
            let Some(k) = memchr::memchr2(b'<', b'[', &bytes[from..]) else {
                let all = std::mem::take(&mut self.pending);
                text(out, all);
                return false;
            };
            let p = from + k;
            let rest = &self.pending[p..];
            // Most `<` and `[` in text begin no marker: their next byte says so at once.
            let bracket = usize::from(rest.as_bytes()[0] == b'[');
            if rest
                .as_bytes()
                .get(1)
                .is_some_and(|b| !self.second[bracket][usize::from(*b)])
            {
                from = p + 1;
                continue;
            }
            let pythonic = if self.openers.contains(&Opener::Pythonic) && rest.starts_with('[') {
                pythonic::opens(rest, &self.tools)
            } else {
                pythonic::Open::No
            };
            let opener = match pythonic {
                pythonic::Open::Yes => Some(Opener::Pythonic),
                _ => self
                    .openers
                    .iter()
                    .copied()
                    .find(|o| *o != Opener::Pythonic && rest.starts_with(o.text())),
            };
            if let Some(opener) = opener {
                text(out, self.pending[..p].to_string());
                self.pending.drain(..p);
                self.state = State::opened(opener);
                return true;
            }
            if pythonic == pythonic::Open::Maybe
                || self
                    .openers
                    .iter()
                    .any(|o| *o != Opener::Pythonic && o.text().starts_with(rest))
            {
                // The delta ends inside what may be an opener: hold it.
                text(out, self.pending[..p].to_string());
                self.pending.drain(..p);
                return false;
            }
            from = p + 1;
        }
    }

    /// Inside a call: find its end; hand it over and go back to text. True when the call
    /// ended with input left to read.
    fn scan_call(&mut self, out: &mut Vec<Piece>) -> bool {
        let State::Call {
            opener,
            searched,
            json,
            tagged,
            py,
            whole,
            gemma,
        } = &mut self.state
        else {
            return false;
        };
        let end = match *opener {
            Opener::ToolCallTag => {
                // The payload's first byte decides how it ends; the whitespace before it
                // is looked at once (`searched` moves past it).
                let first = if json.is_some() {
                    Some(b'{')
                } else if *tagged {
                    Some(b'<')
                } else {
                    let rest = &self.pending[*searched..];
                    let ws = rest.len() - rest.trim_start().len();
                    *searched += ws;
                    rest.as_bytes().get(ws).copied()
                };
                if first.is_some_and(|b| b != b'{') {
                    *tagged = true;
                }
                match first {
                    None if self.pending.len() > MAX_CALL_BYTES => Some(Err(MAX_CALL_BYTES + 1)),
                    None => return false,
                    // A JSON payload ends where its object closes (a closing tag inside one
                    // of its strings is text of the string), then its closing tag comes.
                    Some(b'{') => match json_end(*opener, &self.pending, json) {
                        None => None,
                        // Not JSON: the closing tag delimits the call (its reading then
                        // reports what is wrong).
                        Some(Err(_)) => {
                            *json = None;
                            *tagged = true;
                            close_marker(&self.pending, CLOSE_TAG, searched)
                        }
                        Some(Ok(e)) => match close_after(
                            &self.pending,
                            e,
                            &mut json.as_mut().expect("set by json_end").ws,
                            CLOSE_TAG,
                        ) {
                            Ok(Some(end)) => Some(Ok(end)),
                            Ok(None) => None,
                            Err(end) => Some(Err(end)),
                        },
                    },
                    // Any other payload (Qwen3-Coder's and GLM's) ends at the first
                    // closing tag.
                    Some(_) => close_marker(&self.pending, CLOSE_TAG, searched),
                }
            }
            Opener::PythonTag | Opener::LlamaJson => llama_end(*opener, &self.pending, json, whole),
            Opener::Gemma4Tag => gemma.end(&self.pending, opener.text().len(), whole),
            Opener::MistralToken
            | Opener::GraniteTag
            | Opener::BareJson
            | Opener::Functools
            | Opener::FunctionCallTag => json_end(*opener, &self.pending, json),
            Opener::SarashinaTag | Opener::SarashinaList => {
                if *tagged {
                    py.end(&self.pending, searched).map(Ok)
                } else {
                    // The list's `[` after the marker (whitespace between, bounded as after
                    // every marker): the brackets are counted from after it.
                    let rest = &self.pending[*searched..];
                    let lead = leading_space(rest, MAX_NAME_BYTES);
                    if lead > MAX_NAME_BYTES {
                        Some(Err(*searched + MAX_NAME_BYTES + 1))
                    } else {
                        match rest.as_bytes().get(lead) {
                            None => None,
                            Some(b'[') => {
                                *searched += lead + 1;
                                *tagged = true;
                                py.end(&self.pending, searched).map(Ok)
                            }
                            Some(_) => Some(Err(*searched + lead + 1)),
                        }
                    }
                }
            }
            o if o.json_then_close() && *tagged => close_marker(&self.pending, o.close(), searched),
            o if o.json_then_close() => match json_end(o, &self.pending, json) {
                None => None,
                // Not JSON: the closing marker delimits the call (its reading then
                // reports what is wrong).
                Some(Err(_)) => {
                    *json = None;
                    *tagged = true;
                    close_marker(&self.pending, o.close(), searched)
                }
                Some(Ok(e)) => match close_after(
                    &self.pending,
                    e,
                    &mut json.as_mut().expect("set by json_end").ws,
                    o.close(),
                ) {
                    Ok(Some(end)) => Some(Ok(end)),
                    Ok(None) => None,
                    Err(end) => Some(Err(end)),
                },
            },
            Opener::Pythonic => py.end(&self.pending, searched).map(Ok),
            Opener::SuffixedToolCalls => {
                // The suffix, up to the tag's `>`, names the closing tag.
                // Bytes: the window's end may fall inside a character.
                let from = Opener::SuffixedToolCalls.text().len();
                let bytes = self.pending.as_bytes();
                let window = &bytes[from..bytes.len().min(from + MAX_NAME_BYTES)];
                // The first byte no suffix holds ends it: the tag's `>`, or the markup.
                match window.iter().position(|&b| !is_suffix_byte(b)) {
                    None if window.len() == MAX_NAME_BYTES => Some(Err(from + MAX_NAME_BYTES)),
                    None => None,
                    Some(k) if k == 0 || window[k] != b'>' => Some(Err(from + k + 1)),
                    Some(k) => {
                        // ASCII, checked above: a slice of whole characters.
                        let close = format!("</tool_calls:{}>", &self.pending[from..from + k]);
                        *searched = (*searched).max(from + k + 1);
                        close_marker(&self.pending, &close, searched)
                    }
                }
            }
            o => close_marker(&self.pending, o.close(), searched),
        };
        let end = match end {
            Some(end) => end,
            // Over the limit: the markup ends there (at the same byte however it came).
            None if self.pending.len() > MAX_CALL_BYTES => Err(MAX_CALL_BYTES + 1),
            None => return false,
        };
        // An end past the limit is the limit's, wherever the deltas were cut (cut small,
        // the markup would have gone over the limit before its end arrived).
        let (end, bad) = match end {
            Ok(end) | Err(end) if end > MAX_CALL_BYTES => {
                (MAX_CALL_BYTES + 1, Some(FailureKind::Limit))
            }
            Ok(end) => (end, None),
            Err(end) => (end, Some(FailureKind::Syntax)),
        };
        // A bad byte may begin a character: the call's markup ends after the whole of it.
        let mut end = end.min(self.pending.len());
        while !self.pending.is_char_boundary(end) {
            end += 1;
        }
        let raw: String = self.pending.drain(..end).collect();
        let opener = *opener;
        self.state = State::Text;
        if let Some(kind) = bad {
            let message = if kind == FailureKind::Limit {
                "the call's markup is over the limit"
            } else {
                "the call's markup is not valid"
            };
            self.failed_or_text(raw, kind, message, out);
        } else {
            self.read_call(opener, raw, out);
        }
        !self.pending.is_empty()
    }

    /// A call's whole markup: its calls, a failure, or text.
    fn read_call(&mut self, opener: Opener, raw: String, out: &mut Vec<Piece>) {
        let inner = &raw[opener.text().len()..];
        // The markup between the opener and the closing marker (where there is one).
        let body = inner[..inner.len() - opener.close().len()].trim();
        let calls = match opener {
            Opener::ToolCallTag if body.starts_with("<function=") => {
                xml_call(body, &self.tools).map(|c| vec![c])
            }
            Opener::ToolCallTag if body.starts_with('{') => {
                json_call(body, "arguments").map(|c| vec![c])
            }
            Opener::ToolCallTag => glm_call(body, &self.tools).map(|c| vec![c]),
            Opener::PythonTag | Opener::LlamaJson => llama_calls(body),
            Opener::MistralToken => mistral_calls(inner.trim_start()),
            Opener::KimiSection => kimi_calls(body),
            Opener::DeepSeekSection => deepseek_calls(body),
            Opener::DsmlToolCalls | Opener::DsmlFunctionCalls => {
                invoke_calls(body, "｜DSML｜", &self.tools)
            }
            Opener::DsmlCalls => invoke_calls(body, "｜DSML｜ ", &self.tools),
            Opener::MiniMaxTag => invoke_calls(body, "", &self.tools),
            Opener::HarmonyChannel | Opener::HarmonyStart => harmony_call(body).map(|c| vec![c]),
            Opener::Pythonic => pythonic::calls(&raw),
            Opener::PythonStart => pythonic::calls(body),
            Opener::CohereAction => json_calls(body, &["tool_name", "name"], &["parameters"]),
            Opener::Step3Section => step3_calls(body, &self.tools),
            Opener::GraniteTag => json_calls(body, &["name"], &["arguments"]),
            Opener::LongCatTag => json_call(body, "arguments").map(|c| vec![c]),
            Opener::SeedTag => xml_call(body, &self.tools).map(|c| vec![c]),
            Opener::InternLmAction => json_calls(body, &["name"], &["parameters"]),
            Opener::ToolCallsTag if body.starts_with("<tool_call>") => {
                hy_calls(body, "", &self.tools)
            }
            Opener::ToolCallsTag => json_lines_calls(body),
            Opener::SuffixedToolCalls => suffixed_calls(inner, &self.tools),
            Opener::BareJson | Opener::Functools => {
                json_calls(inner.trim(), &["name"], &["arguments", "parameters"])
            }
            Opener::Gemma4Tag => {
                let body = body.strip_suffix(gemma::CLOSE).unwrap_or(body).trim();
                gemma::call(body, &self.tools).map(|c| vec![c])
            }
            Opener::SarashinaTag | Opener::SarashinaList => pythonic::dict_calls(body),
            Opener::InklingJson => object_call(body, &["name"], &["args"]).map(|c| vec![c]),
            Opener::FunctionCallsTag => {
                // One call a line: read as the list they would make.
                let lines: Vec<&str> = body
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .collect();
                pythonic::calls(&format!("[{}]", lines.join(", ")))
            }
            Opener::FunctionCallTag => json_call(body, "arguments").map(|c| vec![c]),
            Opener::XtmlTools => xtml_calls(body, &self.tools),
        };
        match calls {
            Ok(calls) if !calls.is_empty() && calls.iter().all(|(n, _)| self.tools.contains(n)) => {
                self.call_bytes += raw.len() as u64;
                for (name, arguments) in calls {
                    out.push(Piece::Call { name, arguments });
                }
            }
            Ok(_) => text(out, raw),
            Err(message) => self.failed_or_text(raw, FailureKind::Syntax, message, out),
        }
    }

    /// Markup that could not be read: a failure if it names a declared tool, else text.
    fn failed_or_text(&self, raw: String, kind: FailureKind, message: &str, out: &mut Vec<Piece>) {
        match self.call_name(&raw) {
            Some(name) if self.tools.contains(&name) => out.push(Piece::Failed {
                name,
                kind,
                message: message.into(),
                raw,
            }),
            _ => text(out, raw),
        }
    }

    /// The tool a call's markup names, read leniently (for a failure's report only).
    fn call_name(&self, raw: &str) -> Option<String> {
        let after = |marker: &str| -> Option<String> {
            let at = raw.find(marker)? + marker.len();
            let rest = raw[at..].trim_start();
            let rest = rest.strip_prefix(['"', '\'']).unwrap_or(rest);
            let end = rest.find(|c: char| !(c.is_alphanumeric() || "_-.".contains(c)))?;
            (end > 0).then(|| rest[..end].to_string())
        };
        let deepseek = || {
            let (left, right) = raw.split_once("<｜tool▁sep｜>")?;
            let last = left.rsplit_once("｜>").map_or(left, |(_, l)| l);
            let name = match last.trim() {
                "function" => right.lines().next().unwrap_or(""),
                name => name,
            };
            Some(name.trim().to_string()).filter(|n| !n.is_empty())
        };
        pythonic::call_name(raw)
            .or_else(|| after("<function="))
            .or_else(|| after("\"tool_name\":"))
            .or_else(|| after("'name':"))
            .or_else(|| after("<|open|>call tool="))
            .or_else(|| after("<|tool_call>call:"))
            .or_else(|| after("<|tool_call>:"))
            .or_else(|| after("\"name\":"))
            .or_else(|| after("name=\""))
            .or_else(|| after("functions."))
            .or_else(deepseek)
            .or_else(|| {
                // GLM-4.5: the name right after the tag, on its own line.
                let rest = raw.strip_prefix(Opener::ToolCallTag.text())?.trim_start();
                let end = rest.find(['\n', '<'])?;
                let name = rest[..end].trim();
                (!name.is_empty() && !name.contains(' ')).then(|| name.to_string())
            })
            .or_else(|| {
                let inner = raw.strip_prefix(Opener::MistralToken.text())?;
                let end = inner.find("[ARGS]")?;
                Some(inner[..end].trim().to_string())
            })
    }
}

/// Whether `s` holds a marker's first byte (`<` or `[`): a plain loop for a delta's few
/// bytes (a vector search's set-up costs more there), `memchr` past them.
fn has_marker_byte(s: &str) -> bool {
    if s.len() < 64 {
        s.bytes().any(|b| b == b'<' || b == b'[')
    } else {
        memchr::memchr2(b'<', b'[', s.as_bytes()).is_some()
    }
}

/// Hand `s` over as text (nothing for an empty string; joined to the text just before).
fn text(out: &mut Vec<Piece>, s: String) {
    if s.is_empty() {
        return;
    }
    if let Some(Piece::Text(t)) = out.last_mut() {
        t.push_str(&s);
    } else {
        out.push(Piece::Text(s));
    }
}

/// Where the JSON after a Mistral or Llama marker closes (the index past it in the call's
/// markup), `Err` at a byte that is not valid JSON, `None` while it has not closed. For
/// Mistral's `name[ARGS]{...}` form the value is the one after `[ARGS]`.
fn json_end(
    opener: Opener,
    call: &str,
    json: &mut Option<Box<JsonEnd>>,
) -> Option<Result<usize, usize>> {
    if json.is_none() {
        let after = opener.text().len();
        let rest = &call[after..];
        // Whitespace after the marker is looked at again with each delta, so it is
        // bounded (no model writes more than a line break or two here): past
        // MAX_NAME_BYTES of it the markup fails, however the deltas were cut.
        let lead = leading_space(rest, MAX_NAME_BYTES);
        if lead > MAX_NAME_BYTES {
            return Some(Err(after + MAX_NAME_BYTES + 1));
        }
        let first = rest.as_bytes().get(lead)?;
        let from = if opener == Opener::MistralToken && *first != b'[' {
            // `name[ARGS]{...}`: wait for `[ARGS]`, within a name's length (looked for
            // in those bytes only, so that the answer does not depend on the deltas).
            let window = &rest.as_bytes()[..rest.len().min(MAX_NAME_BYTES + 6)];
            let Some(k) = memchr::memmem::find(window, b"[ARGS]") else {
                return (window.len() == MAX_NAME_BYTES + 6)
                    .then_some(Err(after + MAX_NAME_BYTES + 6));
            };
            let r = &rest[k + 6..];
            // The same bound on the whitespace after `[ARGS]`.
            let lead = leading_space(r, MAX_NAME_BYTES);
            if lead > MAX_NAME_BYTES {
                return Some(Err(after + k + 6 + MAX_NAME_BYTES + 1));
            }
            if lead == r.len() {
                return None;
            }
            after + k + 6 + lead
        } else {
            after + lead
        };
        *json = Some(Box::new(JsonEnd {
            splitter: Splitter::new(Mode::Any),
            from,
            fed: from,
            end: None,
            ws: 0,
        }));
    }
    let j = json.as_mut()?;
    if let Some(end) = j.end {
        return Some(Ok(end));
    }
    let mut values = Vec::new();
    let new = &call.as_bytes()[j.fed..];
    let mut r = j.splitter.push_slice(new, &mut values);
    j.fed = call.len();
    if r.is_ok() && values.is_empty() {
        // The splitter may let bytes wait unread inside a value; an error among them must
        // show now, as it would had they come in one delta (the call then ends at its
        // closing tag). `state` reads them, each byte once.
        let _ = j.splitter.state();
        if let Some(e) = j.splitter.error() {
            r = Err(e.clone());
        }
    }
    if let Some(v) = values.first() {
        let end = j.from + v.end() as usize;
        j.end = Some(end);
        return Some(Ok(end));
    }
    match r {
        Ok(()) => None,
        Err(e) => Some(Err(j.from + e.offset() as usize + 1)),
    }
}

/// Where Llama's markup ends: its JSON object closes, and then either something other than
/// whitespace and `;` follows (the markup ends with the object), or `;` and another object
/// (Llama 3's parallel calls, `{...}; {...}`), read the same way. `whole` keeps where the
/// last closed object ended while only whitespace or a `;` came after it (the next delta,
/// or the end of the text, decides). Each byte of that whitespace is read once.
fn llama_end(
    opener: Opener,
    call: &str,
    json: &mut Option<Box<JsonEnd>>,
    whole: &mut Option<usize>,
) -> Option<Result<usize, usize>> {
    loop {
        let e = match json_end(opener, call, json)? {
            Ok(e) => e,
            Err(at) => return Some(Err(at)),
        };
        let j = json.as_mut().expect("set by json_end");
        let from = j.ws.max(e);
        let rest = &call[from..];
        let ws = rest.len() - rest.trim_start().len();
        j.ws = from + ws;
        let after = &call[j.ws..];
        let Some(next) = after.strip_prefix(';') else {
            if after.is_empty() {
                *whole = Some(e);
                return None;
            }
            *whole = None;
            return Some(Ok(e));
        };
        let lead = next.len() - next.trim_start().len();
        // Bounded, as the whitespace after the marker is: past it, the calls end at `e`.
        if lead > MAX_NAME_BYTES {
            *whole = None;
            return Some(Ok(e));
        }
        match next.as_bytes().get(lead) {
            None => {
                *whole = Some(e);
                return None;
            }
            Some(b'{') => {
                let from = call.len() - next.len() + lead;
                **j = JsonEnd {
                    splitter: Splitter::new(Mode::Any),
                    from,
                    fed: from,
                    end: None,
                    ws: 0,
                };
                *whole = None;
            }
            Some(_) => {
                *whole = None;
                return Some(Ok(e));
            }
        }
    }
}

/// Llama's `{"name": ..., "parameters": {...}}` objects, one or several joined by `;`.
fn llama_calls(body: &str) -> Result<Vec<(String, String)>, &'static str> {
    let mut calls = Vec::new();
    let mut rest = body;
    loop {
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<&RawValue>();
        let one = values
            .next()
            .ok_or("the call is not one JSON object")?
            .map_err(|_| "the call is not one JSON object")?;
        calls.push(json_call(one.get(), "parameters")?);
        rest = rest[values.byte_offset()..].trim_start();
        match rest.strip_prefix(';') {
            Some(r) => rest = r.trim_start(),
            None if rest.is_empty() => return Ok(calls),
            None => return Err("text after the calls"),
        }
    }
}

/// The end of the first `close` in `call` (past it), searching from where the last search
/// stopped (less the bytes a marker cut by a delta may have begun with); `searched` moves
/// to the end, so each byte is searched about once.
fn close_marker(call: &str, close: &str, searched: &mut usize) -> Option<Result<usize, usize>> {
    let start = searched.saturating_sub(close.len() - 1);
    let found = memchr::memmem::find(&call.as_bytes()[start..], close.as_bytes());
    *searched = call.len();
    found.map(|k| Ok(start + k + close.len()))
}

/// The bytes of whitespace `s` begins with, counted up to a little past `limit` (a caller
/// that sees more than `limit` needs no more).
fn leading_space(s: &str, limit: usize) -> usize {
    for (i, c) in s.char_indices() {
        if !c.is_whitespace() {
            return i;
        }
        if i > limit {
            return i;
        }
    }
    s.len()
}

/// After a JSON payload that ends at `end`: the index past its closing marker `close`
/// (`Ok(Some)`), `Ok(None)` while whitespace and a prefix of the marker are all that came,
/// `Err(end)` when something else follows (the markup ends with the JSON; what follows is
/// text).
///
/// `ws` is how far the whitespace after the payload was read before: each byte of it is
/// read once, however many deltas bring it.
fn close_after(
    call: &str,
    end: usize,
    ws: &mut usize,
    close: &str,
) -> Result<Option<usize>, usize> {
    let from = (*ws).max(end);
    let rest = &call[from..];
    *ws = from + (rest.len() - rest.trim_start().len());
    let after_ws = &call[*ws..];
    if after_ws.starts_with(close) {
        Ok(Some(*ws + close.len()))
    } else if close.starts_with(after_ws) {
        Ok(None)
    } else {
        Err(end)
    }
}

/// One JSON object `{"name": ..., "<args>": {...}}` (arguments also as a string of JSON).
fn json_call(body: &str, args_key: &str) -> Result<(String, String), &'static str> {
    object_call(body, &["name"], &[args_key])
}

/// One JSON object naming its tool under the first of `name_keys` it has and holding its
/// arguments under the first of `args_keys` (or `arguments`) it has; no arguments are
/// `{}`.
fn object_call(
    body: &str,
    name_keys: &[&str],
    args_keys: &[&str],
) -> Result<(String, String), &'static str> {
    let fields: HashMap<String, &RawValue> =
        serde_json::from_str(body).map_err(|_| "the call is not one JSON object")?;
    let name: String = name_keys
        .iter()
        .find_map(|k| fields.get(*k))
        .and_then(|n| serde_json::from_str(n.get()).ok())
        .ok_or("the call has no name")?;
    let args = args_keys
        .iter()
        .find_map(|k| fields.get(*k))
        .or_else(|| fields.get("arguments"))
        .map(|a| a.get())
        .unwrap_or("{}");
    let args = if args.starts_with('"') {
        serde_json::from_str::<String>(args).map_err(|_| "the arguments are not JSON")?
    } else {
        args.to_string()
    };
    Ok((name, checked_object(&args)?))
}

/// A JSON object or array of objects, each one call (see [`object_call`]).
fn json_calls(
    body: &str,
    name_keys: &[&str],
    args_keys: &[&str],
) -> Result<Vec<(String, String)>, &'static str> {
    if body.starts_with('[') {
        let items: Vec<&RawValue> =
            serde_json::from_str(body).map_err(|_| "the calls are not one JSON array")?;
        return items
            .iter()
            .map(|i| object_call(i.get(), name_keys, args_keys))
            .collect();
    }
    object_call(body, name_keys, args_keys).map(|c| vec![c])
}

/// A JSON array of calls, or JSON objects one after another (one a line, as MiniMax-M1
/// writes them).
fn json_lines_calls(body: &str) -> Result<Vec<(String, String)>, &'static str> {
    if body.starts_with('[') {
        return json_calls(body, &["name"], &["arguments"]);
    }
    serde_json::Deserializer::from_str(body)
        .into_iter::<&RawValue>()
        .map(|v| {
            let v = v.map_err(|_| "the calls are not JSON objects")?;
            object_call(v.get(), &["name"], &["arguments"])
        })
        .collect()
}

/// Step 3's `<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="NAME">`
/// calls, each one invoke with `<steptml:parameter name="K">V</steptml:parameter>` pairs.
fn step3_calls(body: &str, tools: &Tools) -> Result<Vec<(String, String)>, &'static str> {
    let mut calls = Vec::new();
    let mut rest = body;
    while !rest.trim_start().is_empty() {
        let (one, r) = between(rest, "<｜tool_call_begin｜>", "<｜tool_call_end｜>")
            .ok_or("a call not between its markers")?;
        let (kind, invoke) = one
            .split_once("<｜tool_sep｜>")
            .ok_or("no <｜tool_sep｜>")?;
        if kind.trim() != "function" {
            return Err("a call that is not a function's");
        }
        match invoke_calls(invoke, "steptml:", tools)?.as_slice() {
            [call] => calls.push(call.clone()),
            _ => return Err("a call that is not one invoke"),
        }
        rest = r;
    }
    Ok(calls)
}

/// Mistral's `[{"name": ..., "arguments": ...}, ...]` or `name[ARGS]{...}`.
fn mistral_calls(inner: &str) -> Result<Vec<(String, String)>, &'static str> {
    if inner.starts_with('[') {
        let items: Vec<&RawValue> =
            serde_json::from_str(inner).map_err(|_| "the calls are not one JSON array")?;
        return items
            .iter()
            .map(|i| json_call(i.get(), "arguments"))
            .collect();
    }
    let (name, args) = inner
        .split_once("[ARGS]")
        .ok_or("no [ARGS] after the name")?;
    let name = name.trim();
    if name.is_empty() {
        return Err("the call has no name");
    }
    Ok(vec![(name.to_string(), checked_object(args.trim())?)])
}

/// Arguments built from a call's parameters, in the order written (a `Map` would sort
/// them); a parameter named twice is a failure (which value was meant is not known).
#[derive(Default)]
struct Args {
    text: String,
    /// The names so far (a set: a call of many parameters must not cost their square).
    keys: HashSet<String>,
}

impl Args {
    fn add(&mut self, key: &str, value: Value) -> Result<(), &'static str> {
        if !self.keys.insert(key.to_string()) {
            return Err("a parameter is given twice");
        }
        let first = self.keys.len() == 1;
        self.text.push(if first { '{' } else { ',' });
        self.text
            .push_str(&Value::String(key.to_string()).to_string());
        self.text.push(':');
        self.text.push_str(&value.to_string());
        Ok(())
    }

    /// The arguments object, checked as every call's arguments are.
    fn finish(mut self) -> Result<String, &'static str> {
        if self.keys.is_empty() {
            self.text.push('{');
        }
        self.text.push('}');
        checked_object(&self.text)
    }
}

/// The text between `open` and the first `close` at the start of `s` (after whitespace),
/// and what follows.
fn between<'a>(s: &'a str, open: &str, close: &str) -> Option<(&'a str, &'a str)> {
    s.trim_start().strip_prefix(open)?.split_once(close)
}

/// GLM-4.5's `NAME` then `<arg_key>K</arg_key><arg_value>V</arg_value>` pairs, each value
/// typed by the tool's schema.
fn glm_call(body: &str, tools: &Tools) -> Result<(String, String), &'static str> {
    let end = body.find('<').unwrap_or(body.len());
    let name = body[..end].trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err("the call has no name");
    }
    let mut rest = &body[end..];
    let mut args = Args::default();
    while !rest.trim_start().is_empty() {
        let (key, r) = between(rest, "<arg_key>", "</arg_key>").ok_or("expected <arg_key>")?;
        let (value, r) =
            between(r, "<arg_value>", "</arg_value>").ok_or("an <arg_key> without <arg_value>")?;
        let key = key.trim();
        args.add(key, typed(value, tools.param_type(name, key)))?;
        rest = r;
    }
    Ok((name.to_string(), args.finish()?))
}

/// MiniMax M2's and DeepSeek's DSML `<invoke name="NAME">` blocks (tags after `prefix`),
/// each with `<parameter name="K">V</parameter>` pairs: a value marked `string="true"` is
/// a string, `string="false"` JSON, and unmarked typed by the tool's schema.
fn invoke_calls(
    body: &str,
    prefix: &str,
    tools: &Tools,
) -> Result<Vec<(String, String)>, &'static str> {
    let invoke = format!("<{prefix}invoke name=\"");
    let invoke_end = format!("</{prefix}invoke>");
    let param = format!("<{prefix}parameter name=\"");
    let param_end = format!("</{prefix}parameter>");
    let mut calls = Vec::new();
    let mut rest = body;
    while !rest.trim_start().is_empty() {
        let r = rest
            .trim_start()
            .strip_prefix(invoke.as_str())
            .ok_or("expected <invoke name=")?;
        let (name, r) = r.split_once("\">").ok_or("no \"> after the invoke name")?;
        let (mut params, r) = r
            .split_once(invoke_end.as_str())
            .ok_or("an invoke not closed")?;
        let mut args = Args::default();
        while !params.trim_start().is_empty() {
            let p = params
                .trim_start()
                .strip_prefix(param.as_str())
                .ok_or("expected <parameter name=")?;
            let (attrs, p) = p.split_once('>').ok_or("no > after the parameter name")?;
            let (value, p) = p
                .split_once(param_end.as_str())
                .ok_or("a parameter without its closing tag")?;
            let (key, marks) = attrs
                .split_once('"')
                .ok_or("no \" after the parameter name")?;
            let ty = match marks.trim() {
                "" => tools.param_type(name, key),
                r#"string="true""# => Some("string"),
                r#"string="false""# => Some("json"),
                _ => return Err("unknown parameter attributes"),
            };
            args.add(key, typed(value, ty))?;
            params = p;
        }
        calls.push((name.to_string(), args.finish()?));
        rest = r;
    }
    Ok(calls)
}

/// The calls of a section: each between `open` and `close` (whitespace between them),
/// read by `call` into a name and its arguments text.
fn delimited_calls(
    body: &str,
    open: &str,
    close: &str,
    call: impl Fn(&str) -> Result<(&str, &str), &'static str>,
) -> Result<Vec<(String, String)>, &'static str> {
    let mut calls = Vec::new();
    let mut rest = body;
    while !rest.trim_start().is_empty() {
        let (one, r) = between(rest, open, close).ok_or("a call not between its markers")?;
        let (name, args) = call(one)?;
        if name.is_empty() {
            return Err("the call has no name");
        }
        calls.push((name.to_string(), checked_object(args.trim())?));
        rest = r;
    }
    Ok(calls)
}

/// Kimi K2's `<|tool_call_begin|>functions.NAME:N<|tool_call_argument_begin|>{...}
/// <|tool_call_end|>` calls.
fn kimi_calls(body: &str) -> Result<Vec<(String, String)>, &'static str> {
    delimited_calls(body, "<|tool_call_begin|>", "<|tool_call_end|>", |call| {
        let (id, args) = call
            .split_once("<|tool_call_argument_begin|>")
            .ok_or("no <|tool_call_argument_begin|>")?;
        let id = id.trim();
        let id = id.strip_prefix("functions.").unwrap_or(id);
        Ok((id.rsplit_once(':').map_or(id, |(n, _)| n), args))
    })
}

/// DeepSeek's `<｜tool▁call▁begin｜>` calls: V3's `function<｜tool▁sep｜>NAME` and a
/// fenced JSON block, or V3.1's `NAME<｜tool▁sep｜>{...}`.
fn deepseek_calls(body: &str) -> Result<Vec<(String, String)>, &'static str> {
    delimited_calls(
        body,
        "<｜tool▁call▁begin｜>",
        "<｜tool▁call▁end｜>",
        |call| {
            let (left, right) = call
                .split_once("<｜tool▁sep｜>")
                .ok_or("no <｜tool▁sep｜>")?;
            Ok(match left.trim() {
                "function" => {
                    let (name, fenced) = right.split_once('\n').ok_or("no arguments block")?;
                    let args = fenced
                        .trim()
                        .strip_prefix("```json")
                        .and_then(|a| a.strip_suffix("```"))
                        .ok_or("the arguments are not a ```json block")?;
                    (name.trim(), args)
                }
                name => (name, right),
            })
        },
    )
}

/// A harmony call after `to=functions.`: `NAME`, the rest of the header (channel,
/// `<|constrain|>json`), then `<|message|>` and the arguments.
fn harmony_call(body: &str) -> Result<(String, String), &'static str> {
    let end = body
        .find(|c: char| c.is_whitespace() || c == '<')
        .unwrap_or(body.len());
    let name = &body[..end];
    if name.is_empty() {
        return Err("the call has no name");
    }
    let (_, args) = body[end..]
        .split_once("<|message|>")
        .ok_or("no <|message|> before the arguments")?;
    Ok((name.to_string(), checked_object(args.trim())?))
}

/// Kimi K3's calls in its XTML `tools` channel: `<|open|>call tool="NAME" index="N"<|sep|>`
/// blocks up to `<|close|>call<|sep|>`, each of `<|open|>argument key="K" type="T"<|sep|>`
/// values up to `<|close|>argument<|sep|>`. A value of type `string` is its text as it
/// stands; of another type, JSON (its text as a string when it is not); with no type,
/// typed by the tool's schema. Attribute values unescape `&quot;` and `&amp;`.
fn xtml_calls(body: &str, tools: &Tools) -> Result<Vec<(String, String)>, &'static str> {
    const CALL_END: &str = "<|close|>call<|sep|>";
    const ARG_END: &str = "<|close|>argument<|sep|>";
    let mut calls = Vec::new();
    let mut rest = body;
    while !rest.trim_start().is_empty() {
        let r = rest
            .trim_start()
            .strip_prefix("<|open|>call ")
            .ok_or("expected <|open|>call")?;
        let (attrs, r) = r.split_once("<|sep|>").ok_or("no <|sep|> after the call")?;
        let name = xtml_attr(attrs, "tool").ok_or("the call has no name")?;
        let (mut inner, r) = r.split_once(CALL_END).ok_or("a call not closed")?;
        let mut args = Args::default();
        while !inner.trim_start().is_empty() {
            let a = inner
                .trim_start()
                .strip_prefix("<|open|>argument ")
                .ok_or("expected <|open|>argument")?;
            let (attrs, a) = a
                .split_once("<|sep|>")
                .ok_or("no <|sep|> after the argument")?;
            let (value, a) = a.split_once(ARG_END).ok_or("an argument not closed")?;
            let key = xtml_attr(attrs, "key").ok_or("an argument without its key")?;
            let value = match xtml_attr(attrs, "type").as_deref() {
                Some("string") => Value::String(value.to_string()),
                Some(_) => typed(value, Some("json")),
                None => typed(value, tools.param_type(&name, &key)),
            };
            args.add(&key, value)?;
            inner = a;
        }
        calls.push((name, args.finish()?));
        rest = r;
    }
    Ok(calls)
}

/// A Hunyuan v4 section with its checkpoint's suffix: `SUFFIX>`, the calls, then
/// `</tool_calls:SUFFIX>` (what follows `<tool_calls:`).
fn suffixed_calls(inner: &str, tools: &Tools) -> Result<Vec<(String, String)>, &'static str> {
    let (suffix, rest) = inner.split_once('>').ok_or("no > after the suffix")?;
    let close = format!("</tool_calls:{suffix}>");
    let body = rest
        .strip_suffix(close.as_str())
        .ok_or("the section not closed")?;
    hy_calls(body.trim(), &format!(":{suffix}"), tools)
}

/// A byte a Hunyuan v4 checkpoint suffix may hold.
fn is_suffix_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')
}

/// Hunyuan v4's `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>`
/// calls, each tag with `suffix` (`:6124c78e`, or none). A value is read up to its own
/// closing tag (it may hold `</tool_call>`), typed by the tool's schema.
fn hy_calls(
    body: &str,
    suffix: &str,
    tools: &Tools,
) -> Result<Vec<(String, String)>, &'static str> {
    let (call, call_end) = (
        format!("<tool_call{suffix}>"),
        format!("</tool_call{suffix}>"),
    );
    let (key, key_end) = (format!("<arg_key{suffix}>"), format!("</arg_key{suffix}>"));
    let (val, val_end) = (
        format!("<arg_value{suffix}>"),
        format!("</arg_value{suffix}>"),
    );
    let mut calls = Vec::new();
    let mut rest = body;
    while !rest.trim_start().is_empty() {
        let r = rest
            .trim_start()
            .strip_prefix(call.as_str())
            .ok_or("expected <tool_call>")?;
        let end = r.find('<').ok_or("a call not closed")?;
        let name = r[..end].trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            return Err("the call has no name");
        }
        let mut r = &r[end..];
        let mut args = Args::default();
        loop {
            r = r.trim_start();
            if let Some(after) = r.strip_prefix(call_end.as_str()) {
                r = after;
                break;
            }
            let (k, after) = between(r, &key, &key_end).ok_or("expected <arg_key>")?;
            let (v, after) =
                between(after, &val, &val_end).ok_or("an <arg_key> without <arg_value>")?;
            let k = k.trim();
            args.add(k, typed(v, tools.param_type(name, k)))?;
            r = after;
        }
        calls.push((name.to_string(), args.finish()?));
        rest = r;
    }
    Ok(calls)
}

/// The value of attribute `name` in XTML attributes (`a="x" b="y"`), unescaped.
fn xtml_attr(attrs: &str, name: &str) -> Option<String> {
    let mut rest = attrs;
    loop {
        let t = rest.trim_start();
        let (k, r) = t.split_once("=\"")?;
        let (v, r) = r.split_once('"')?;
        if k.trim() == name {
            return Some(v.replace("&quot;", "\"").replace("&amp;", "&"));
        }
        rest = r;
    }
}

/// `<function=NAME>` and its `<parameter=K>V</parameter>` pairs, each value typed by the tool's
/// schema.
fn xml_call(body: &str, tools: &Tools) -> Result<(String, String), &'static str> {
    let rest = body.strip_prefix("<function=").ok_or("no <function=")?;
    let (name, mut rest) = rest.split_once('>').ok_or("no > after the function name")?;
    let name = name.trim().to_string();
    let mut args = Args::default();
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("</function>") {
            if !r.trim().is_empty() {
                return Err("text after </function>");
            }
            break;
        }
        let r = rest
            .strip_prefix("<parameter=")
            .ok_or("expected <parameter= or </function>")?;
        let (key, r) = r.split_once('>').ok_or("no > after the parameter name")?;
        let (value, r) = r
            .split_once("</parameter>")
            .ok_or("a parameter without </parameter>")?;
        // One newline after the opening tag and before the closing one is layout.
        let value = value.strip_prefix('\n').unwrap_or(value);
        let value = value.strip_suffix('\n').unwrap_or(value);
        let key = key.trim();
        args.add(key, typed(value, tools.param_type(&name, key)))?;
        rest = r;
    }
    Ok((name, args.finish()?))
}

/// A parameter's text as the schema's type says: a string stays a string; a number,
/// boolean, null, object or array is read as JSON when it is one (else kept as a string).
///
/// Python's `True`, `False` and `None` stand for a declared boolean or null too: models
/// trained on Python write them in the XML families' values.
fn typed(value: &str, ty: Option<&str>) -> Value {
    match ty {
        None | Some("string") => Value::String(value.to_string()),
        Some(t) => serde_json::from_str(value.trim()).unwrap_or_else(|_| match (t, value.trim()) {
            ("boolean", "True") => Value::Bool(true),
            ("boolean", "False") => Value::Bool(false),
            ("null", "None") => Value::Null,
            _ => Value::String(value.to_string()),
        }),
    }
}

/// `text` as arguments: one JSON object, strictly valid (the splitter's check).
fn checked_object(text: &str) -> Result<String, &'static str> {
    let mut s = Splitter::new(Mode::Objects);
    let mut values = Vec::new();
    let ok = s.push_slice(text.as_bytes(), &mut values).is_ok() && s.finish().is_ok();
    if ok && values.len() == 1 {
        Ok(text.to_string())
    } else {
        Err("the arguments are not one JSON object")
    }
}
