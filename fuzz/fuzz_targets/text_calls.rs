//! Oracle: `text_calls::Extractor`, fed text built from random text and the families'
//! markup pieces at random cuts (on character boundaries), gives the same pieces as fed
//! whole (text joined); the text, the failures' raw bytes and the markup taken as calls
//! account for every input byte; with no tool declared everything is text, byte for byte;
//! every call names a declared tool and carries one strictly valid JSON object; what it
//! holds between pushes stays under the call limit plus the delta; nothing panics.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use toolstream::text_calls::{Extractor, Family, Piece, Tools, MAX_CALL_BYTES};

/// Markup pieces of every family (whole markers, their halves, names, arguments).
const PIECES: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<tool_",
    "</tool",
    "<function=get_weather>",
    "<parameter=days>",
    "</parameter>",
    "</function>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "<|python_tag|>",
    "[get_weather(",
    "city='x', ",
    "days=[1, (2,), {'k': None}]",
    ")]",
    "<|python_start|>",
    "<|python_end|>",
    "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_begin|>",
    "<|tool_call_end|>",
    "<|tool_call_argument_begin|>",
    "functions.get_weather:0",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁sep｜>",
    "function",
    "```json\n",
    "```",
    "<｜DSML｜tool_calls>",
    "</｜DSML｜tool_calls>",
    "<｜DSML｜invoke name=\"get_weather\">",
    "</｜DSML｜invoke>",
    "<｜DSML｜parameter name=\"days\" string=\"false\">",
    "</｜DSML｜parameter>",
    "<minimax:tool_call>",
    "</minimax:tool_call>",
    "<invoke name=\"get_weather\">",
    "</invoke>",
    "<parameter name=\"city\">",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    "{\"tool_name\": \"get_weather\", \"parameters\": ",
    "<｜tool_calls_begin｜>",
    "<｜tool_calls_end｜>",
    "<｜tool_call_begin｜>",
    "<｜tool_call_end｜>",
    "<｜tool_sep｜>",
    "<steptml:invoke name=\"get_weather\">",
    "</steptml:invoke>",
    "<steptml:parameter name=\"days\">",
    "</steptml:parameter>",
    "<|tool_call|>",
    "<longcat_tool_call>",
    "</longcat_tool_call>",
    "<seed:tool_call>",
    "</seed:tool_call>",
    "<|action_start|><|plugin|>",
    "<|action_end|>",
    "<tool_calls>",
    "</tool_calls>",
    "functools[",
    "functools",
    "<|tool_call>call:get_weather{",
    "<|tool_call>:get_weather(",
    "days:2",
    "city:",
    "<|\"|>",
    "<tool_call|>",
    "<|tool_calls|>",
    "[{'name': 'get_weather', 'arguments': {'days': 2}}]",
    "<|content_invoke_tool_json|>",
    "{\"name\":\"get_weather\",\"args\":",
    "<|end_message|>",
    "<function_calls>",
    "</function_calls>",
    "get_weather(days=2)\n",
    "<function_call>",
    "<|open|>tools<|sep|>",
    "<|open|>call tool=\"get_weather\" index=\"0\"<|sep|>",
    "<|open|>argument key=\"days\" type=\"integer\"<|sep|>",
    "<|close|>argument<|sep|>",
    "<|close|>call<|sep|>",
    "<|close|>tools<|sep|>",
    "<｜DSML｜ calls>",
    "</｜DSML｜ calls>",
    "<｜DSML｜ invoke name=\"get_weather\">",
    "</｜DSML｜ invoke>",
    "<tool_calls:6124c78e>",
    "</tool_calls:6124c78e>",
    "<tool_call:6124c78e>",
    "</tool_call:6124c78e>",
    "<|channel|>commentary to=functions.",
    "<|start|>assistant to=functions.",
    "<|constrain|>json",
    "<|message|>",
    "<|call|>",
    "get_weather",
    "write_file",
    "rm",
    "{\"name\": \"get_weather\", \"arguments\": ",
    "{\"name\": \"rm\", \"arguments\": ",
    "{\"city\": \"Paris\"}",
    "{\"days\": 2}",
    "{",
    "}",
    "[",
    "]",
    "\"",
    "\\",
    "\n",
    " ",
    "2",
];

#[derive(Arbitrary, Debug)]
enum Part {
    Text(String),
    Piece(u8),
}

#[derive(Arbitrary, Debug)]
struct Input {
    parts: Vec<Part>,
    cuts: Vec<u16>,
    family: u8,
}

fn tools() -> Tools {
    Tools::from_request(&serde_json::json!({"tools": [
        {"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}}
    ]}))
}

/// The pieces for `text` pushed at `cuts` (byte offsets moved to character boundaries),
/// text pieces joined, and the markup bytes taken as calls.
fn run(family: Option<Family>, tools: &Tools, text: &str, cuts: &[usize]) -> (Vec<Piece>, u64) {
    let mut x = Extractor::new(family, tools.clone());
    let mut out = Vec::new();
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&text.len())) {
        let mut c = c.clamp(prev, text.len());
        while !text.is_char_boundary(c) {
            c += 1;
        }
        x.push(&text[prev..c], &mut out);
        assert!(
            x.buffered() <= MAX_CALL_BYTES + 64 + (c - prev),
            "held {} bytes",
            x.buffered()
        );
        prev = c;
    }
    x.finish(&mut out);
    let mut joined: Vec<Piece> = Vec::new();
    for p in out {
        match (joined.last_mut(), p) {
            (Some(Piece::Text(a)), Piece::Text(b)) => a.push_str(&b),
            (_, Piece::Text(b)) if b.is_empty() => {}
            (_, p) => joined.push(p),
        }
    }
    (joined, x.call_bytes())
}

fuzz_target!(|input: Input| {
    let mut text = String::new();
    for p in &input.parts {
        match p {
            Part::Text(t) => text.push_str(t),
            Part::Piece(k) => text.push_str(PIECES[*k as usize % PIECES.len()]),
        }
    }
    let family = match input.family as usize % (Family::ALL.len() + 1) {
        0 => None,
        k => Some(Family::ALL[k - 1]),
    };
    let tools = tools();
    let cuts = toolstream_fuzz::cut_points(&input.cuts, text.len());
    let whole = run(family, &tools, &text, &[]);
    assert_eq!(run(family, &tools, &text, &cuts), whole, "cuts {cuts:?}");
    let (pieces, call_bytes) = whole;
    let mut kept = 0u64;
    for p in &pieces {
        match p {
            Piece::Text(t) => kept += t.len() as u64,
            Piece::Failed { name, raw, .. } => {
                assert!(
                    tools.contains(name),
                    "a failure of an undeclared tool {name}"
                );
                kept += raw.len() as u64;
            }
            Piece::Call { name, arguments } => {
                assert!(tools.contains(name), "a call of an undeclared tool {name}");
                let v: serde_json::Value = serde_json::from_str(arguments).expect("JSON");
                assert!(v.is_object(), "arguments not an object: {arguments}");
            }
        }
    }
    assert_eq!(kept + call_bytes, text.len() as u64, "bytes lost or added");
    // Nothing declared: nothing taken, the text out as it came in.
    let none = Tools::from_names(Vec::<String>::new());
    let (pieces, call_bytes) = run(family, &none, &text, &cuts);
    assert_eq!(call_bytes, 0);
    let out: String = pieces
        .iter()
        .map(|p| match p {
            Piece::Text(t) => t.as_str(),
            other => panic!("{other:?} with no tool declared"),
        })
        .collect();
    assert_eq!(out, text);
});
