//! `toolstream::text_calls` against the Rust peer, the `tool-parser` crate (the smg
//! gateway's parsers): for every family both read, generated text with calls written as the
//! family writes them (each model's chat template; random prose around, random names,
//! random arguments, several calls), read by the peer whole and by ours whole and cut at
//! random. The calls must be the same (names, and arguments as JSON values) and the text
//! left over the same, but for the differences listed in `DIFFERENCES` (each with which
//! side the model's format says is right); CONTRIBUTING.md has the table.

use openai_protocol::common::Tool;
use serde_json::{json, Value};
use tool_parser::ParserFactory;
use toolstream::text_calls::{Extractor, Family, Piece, Tools};

/// A small deterministic generator (xorshift), so that a failure names its case.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const NAMES: [&str; 3] = ["get_weather", "write_file", "search"];

/// The declared tools: `days` and `limit` are integers, everything else a string.
fn declared() -> Value {
    let props = json!({
        "city": {"type": "string"}, "path": {"type": "string"},
        "content": {"type": "string"}, "query": {"type": "string"},
        "days": {"type": "integer"}, "limit": {"type": "integer"}
    });
    json!({"tools": NAMES.iter().map(|n| json!({"type": "function", "function": {
        "name": n, "parameters": {"type": "object", "properties": props}}})).collect::<Vec<_>>()})
}

/// Prose with no markup in it.
fn prose(r: &mut Rng) -> String {
    const WORDS: [&str; 12] = [
        "Let", "me", "check", "that", "for", "you.", "Sure,", "héllo", "日本", "—", "ok!", "x = 1,",
    ];
    let n = r.below(8);
    let mut s: Vec<&str> = Vec::new();
    for _ in 0..n {
        s.push(*r.pick(&WORDS));
    }
    s.join(" ")
}

/// One call's arguments: string and integer parameters (each family can write both).
fn arguments(r: &mut Rng) -> Vec<(&'static str, Value)> {
    const STRINGS: [&str; 8] = [
        "Paris",
        "src/main.rs",
        "two words",
        "naïve café",
        "a, b: c",
        "line one\nline two",
        "quote \" inside",
        "100",
    ];
    let mut keys = vec!["city", "path", "content", "query", "days", "limit"];
    let n = r.below(4);
    let mut out = Vec::new();
    for _ in 0..n {
        let k = keys.remove(r.below(keys.len()));
        let v = if k == "days" || k == "limit" {
            json!(r.below(1000))
        } else {
            json!(*r.pick(&STRINGS))
        };
        out.push((k, v));
    }
    out
}

fn object(args: &[(&str, Value)]) -> String {
    let m: serde_json::Map<String, Value> = args
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    serde_json::to_string(&Value::Object(m)).unwrap()
}

/// A parameter's value as the XML families write it: a string's text, a number's digits.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

type Call = (String, Vec<(&'static str, Value)>);

/// The calls written as `family` writes them.
fn markup(family: &str, calls: &[Call], r: &mut Rng) -> String {
    let mut out = String::new();
    match family {
        "hermes" => {
            for (n, a) in calls {
                let o = object(a);
                out.push_str(&format!(
                    "<tool_call>\n{{\"name\": \"{n}\", \"arguments\": {o}}}\n</tool_call>\n"
                ));
            }
        }
        "qwen3_coder" => {
            for (n, a) in calls {
                out.push_str(&format!("<tool_call>\n<function={n}>\n"));
                for (k, v) in a {
                    out.push_str(&format!("<parameter={k}>\n{}\n</parameter>\n", plain(v)));
                }
                out.push_str("</function>\n</tool_call>\n");
            }
        }
        "glm45" => {
            for (n, a) in calls {
                out.push_str(&format!("<tool_call>{n}\n"));
                for (k, v) in a {
                    out.push_str(&format!(
                        "<arg_key>{k}</arg_key>\n<arg_value>{}</arg_value>\n",
                        plain(v)
                    ));
                }
                out.push_str("</tool_call>\n");
            }
        }
        "mistral" => {
            let items: Vec<String> = calls
                .iter()
                .map(|(n, a)| format!("{{\"name\": \"{n}\", \"arguments\": {}}}", object(a)))
                .collect();
            out.push_str(&format!("[TOOL_CALLS][{}]", items.join(", ")));
        }
        "llama" => {
            let (n, a) = &calls[0];
            out.push_str(&format!(
                "<|python_tag|>{{\"name\": \"{n}\", \"parameters\": {}}}",
                object(a)
            ));
        }
        "pythonic" => {
            let items: Vec<String> = calls
                .iter()
                .map(|(n, a)| format!("{n}({})", py_args(a, "", "=")))
                .collect();
            out.push_str(&format!("[{}]", items.join(", ")));
        }
        "kimi_k2" => {
            out.push_str("<|tool_calls_section_begin|>");
            for (i, (n, a)) in calls.iter().enumerate() {
                out.push_str(&format!(
                    "<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{}<|tool_call_end|>",
                    object(a)
                ));
            }
            out.push_str("<|tool_calls_section_end|>");
        }
        "deepseek_v31" => {
            out.push_str("<｜tool▁calls▁begin｜>");
            for (n, a) in calls {
                out.push_str(&format!(
                    "<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>{}<｜tool▁call▁end｜>",
                    object(a)
                ));
            }
            out.push_str("<｜tool▁calls▁end｜>");
        }
        "deepseek_v3" => {
            out.push_str("<｜tool▁calls▁begin｜>");
            for (n, a) in calls {
                out.push_str(&format!(
                    "<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{}\n```<｜tool▁call▁end｜>",
                    object(a)
                ));
            }
            out.push_str("<｜tool▁calls▁end｜>");
        }
        // V4's DSML, and V4.1's with every tag spaced after `｜DSML｜`.
        "deepseek_v4" => dsml(&mut out, "｜DSML｜", "tool_calls", calls),
        "deepseek_v41" => dsml(&mut out, "｜DSML｜ ", "calls", calls),
        "minimax_m2" => {
            out.push_str("<minimax:tool_call>\n");
            for (n, a) in calls {
                out.push_str(&format!("<invoke name=\"{n}\">\n"));
                for (k, v) in a {
                    out.push_str(&format!(
                        "<parameter name=\"{k}\">{}</parameter>\n",
                        plain(v)
                    ));
                }
                out.push_str("</invoke>\n");
            }
            out.push_str("</minimax:tool_call>");
        }
        "cohere" => {
            let items: Vec<String> = calls
                .iter()
                .map(|(n, a)| format!("{{\"tool_name\": \"{n}\", \"parameters\": {}}}", object(a)))
                .collect();
            if items.len() == 1 && r.below(2) == 0 {
                out.push_str(&format!("<|START_ACTION|>\n{}\n<|END_ACTION|>", items[0]));
            } else {
                out.push_str(&format!(
                    "<|START_ACTION|>\n[\n{}\n]\n<|END_ACTION|>",
                    items.join(",\n")
                ));
            }
        }
        "step3" => {
            out.push_str("<｜tool_calls_begin｜>\n");
            for (n, a) in calls {
                out.push_str(&format!(
                    "<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"{n}\">\n"
                ));
                for (k, v) in a {
                    out.push_str(&format!(
                        "<steptml:parameter name=\"{k}\">{}</steptml:parameter>\n",
                        plain(v)
                    ));
                }
                out.push_str("</steptml:invoke><｜tool_call_end｜>\n");
            }
            out.push_str("<｜tool_calls_end｜>");
        }
        "gemma4" => {
            for (n, a) in calls {
                let args: Vec<String> = a
                    .iter()
                    .map(|(k, v)| match v {
                        Value::String(s) => format!("{k}:<|\"|>{s}<|\"|>"),
                        v => format!("{k}:{v}"),
                    })
                    .collect();
                out.push_str(&format!(
                    "<|tool_call>call:{n}{{{}}}<tool_call|>",
                    args.join(",")
                ));
            }
        }
        "json" => {
            let items: Vec<String> = calls
                .iter()
                .map(|(n, a)| format!("{{\"name\": \"{n}\", \"arguments\": {}}}", object(a)))
                .collect();
            if items.len() == 1 && r.below(2) == 0 {
                out.push_str(&items[0]);
            } else {
                out.push_str(&format!("[{}]", items.join(", ")));
            }
        }
        "sarashina" => {
            let items: Vec<String> = calls
                .iter()
                .map(|(n, a)| {
                    format!(
                        "{{'name': '{n}', 'arguments': {{{}}}}}",
                        py_args(a, "'", "': ")
                    )
                })
                .collect();
            out.push_str(&format!("<|tool_calls|>[{}]", items.join(", ")));
        }
        "inkling" => {
            for (n, a) in calls {
                out.push_str(&format!(
                    "<|content_invoke_tool_json|>{{\"name\":\"{n}\",\"args\":{}}}<|end_message|>",
                    object(a)
                ));
            }
        }
        "kimi_k3" => {
            out.push_str("<|open|>tools<|sep|>\n");
            for (i, (n, a)) in calls.iter().enumerate() {
                out.push_str(&format!("<|open|>call tool=\"{n}\" index=\"{i}\"<|sep|>\n"));
                for (k, v) in a {
                    let ty = if v.is_string() { "string" } else { "integer" };
                    out.push_str(&format!(
                        "<|open|>argument key=\"{k}\" type=\"{ty}\"<|sep|>{}<|close|>argument<|sep|>\n",
                        plain(v)
                    ));
                }
                out.push_str("<|close|>call<|sep|>\n");
            }
            out.push_str("<|close|>tools<|sep|>");
        }
        "hy_v4" => {
            let s = *r.pick(&["", ":6124c78e"]);
            out.push_str(&format!("<tool_calls{s}>"));
            for (n, a) in calls {
                out.push_str(&format!("<tool_call{s}>{n}"));
                for (k, v) in a {
                    out.push_str(&format!(
                        "<arg_key{s}>{k}</arg_key{s}><arg_value{s}>{}</arg_value{s}>",
                        plain(v)
                    ));
                }
                out.push_str(&format!("</tool_call{s}>"));
            }
            out.push_str(&format!("</tool_calls{s}>"));
        }
        f => unreachable!("{f}"),
    }
    out
}

/// DeepSeek's DSML block `<{p}{block}>` of invokes, each parameter marked a string or
/// not.
fn dsml(out: &mut String, p: &str, block: &str, calls: &[Call]) {
    out.push_str(&format!("<{p}{block}>\n"));
    for (n, a) in calls {
        out.push_str(&format!("<{p}invoke name=\"{n}\">\n"));
        for (k, v) in a {
            let s = v.is_string();
            out.push_str(&format!(
                "<{p}parameter name=\"{k}\" string=\"{s}\">{}</{p}parameter>\n",
                plain(v)
            ));
        }
        out.push_str(&format!("</{p}invoke>\n"));
    }
    out.push_str(&format!("</{p}{block}>"));
}

/// Arguments written in Python: each key between `quote`s, then `sep`, then the value
/// (keyword arguments `k=v`, or a dict's `'k': v`).
fn py_args(args: &[(&str, Value)], quote: &str, sep: &str) -> String {
    let items: Vec<String> = args
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{quote}{k}{sep}{}", py_str(s)),
            v => format!("{quote}{k}{sep}{v}"),
        })
        .collect();
    items.join(", ")
}

/// A Python string literal (single quotes, escapes for what needs them).
fn py_str(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Our family, and the peer's parser, for each generator.
const PAIRS: [(&str, Family, &str); 20] = [
    ("hermes", Family::Hermes, "qwen"),
    ("qwen3_coder", Family::Qwen3Coder, "qwen_xml"),
    ("glm45", Family::Glm45, "glm45_moe"),
    ("mistral", Family::Mistral, "mistral"),
    ("llama", Family::Llama, "llama"),
    ("pythonic", Family::Pythonic, "pythonic"),
    ("kimi_k2", Family::Kimi, "kimik2"),
    ("deepseek_v31", Family::DeepSeek, "deepseek31"),
    ("deepseek_v3", Family::DeepSeek, "deepseek"),
    ("deepseek_v4", Family::DeepSeek, "deepseek_v4"),
    ("deepseek_v41", Family::DeepSeek, "deepseek_v41"),
    ("minimax_m2", Family::MiniMax, "minimax_m2"),
    ("cohere", Family::Cohere, "cohere"),
    ("step3", Family::Step3, "step3"),
    ("gemma4", Family::Gemma4, "gemma4"),
    ("json", Family::Json, "json"),
    ("sarashina", Family::Sarashina, "sarashina"),
    ("inkling", Family::Inkling, "inkling"),
    ("kimi_k3", Family::KimiK3, "kimi_k3"),
    ("hy_v4", Family::HunyuanV4, "hy_v4"),
];

/// What a reader made of a text: the text left, and the calls (arguments as values).
#[derive(Debug, PartialEq)]
struct Read {
    text: String,
    calls: Vec<(String, Value)>,
}

/// Ours, with `cuts` (byte offsets moved to character boundaries) between deltas.
fn ours(family: Family, tools: &Tools, input: &str, cuts: &[usize]) -> (Read, usize) {
    let mut x = Extractor::new(Some(family), tools.clone());
    let mut out = Vec::new();
    let mut prev = 0;
    for &c in cuts.iter().chain(std::iter::once(&input.len())) {
        let mut c = c.clamp(prev, input.len());
        while !input.is_char_boundary(c) {
            c += 1;
        }
        x.push(&input[prev..c], &mut out);
        prev = c;
    }
    x.finish(&mut out);
    let mut read = Read {
        text: String::new(),
        calls: Vec::new(),
    };
    let mut failures = 0;
    for p in out {
        match p {
            Piece::Text(t) => read.text.push_str(&t),
            Piece::Call { name, arguments } => read
                .calls
                .push((name, serde_json::from_str(&arguments).unwrap())),
            Piece::Failed { raw, .. } => {
                failures += 1;
                read.text.push_str(&raw);
            }
        }
    }
    (read, failures)
}

async fn peer(factory: &ParserFactory, name: &str, tools: &[Tool], input: &str) -> Read {
    let parser = factory.registry().create_parser(name).expect(name);
    let (text, calls) = parser
        .parse_complete_with_tools(input, tools)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e:?} on {input:?}"));
    Read {
        text,
        calls: calls
            .into_iter()
            .map(|c| {
                let v = serde_json::from_str(&c.function.arguments)
                    .unwrap_or(Value::String(c.function.arguments));
                (c.function.name, v)
            })
            .collect(),
    }
}

/// Text with its runs of whitespace made one space and its ends trimmed: the peer drops
/// the line breaks around the markup, ours keeps every byte that is not markup.
fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A value as the peer types a parameter's text by how it reads: JSON, or Python's
/// `True`, `False`, `None`.
fn by_value(text: &str) -> Option<Value> {
    match text {
        "True" => Some(Value::Bool(true)),
        "False" => Some(Value::Bool(false)),
        "None" => Some(Value::Null),
        t => serde_json::from_str(t).ok(),
    }
}

/// `text` with the five XML entities decoded.
fn entities(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// How the peer's calls stand to ours (or the written ones): the same; the same but for
/// values the peer typed by how they read (a string parameter holding `100` read as a
/// number, `True` as a boolean, though the tool declares a string or nothing); the same
/// but for XML entities the peer decoded; or different.
fn calls_relation(theirs: &[(String, Value)], want: &[(String, Value)]) -> &'static str {
    if theirs == want {
        return "same";
    }
    // Gemma 4 with no schemas: the peer keeps every bare value as its text, at any depth.
    fn stringified(t: &Value, w: &Value) -> bool {
        match (t, w) {
            (Value::String(ts), w) if !w.is_string() => by_value(ts).as_ref() == Some(w),
            (Value::Object(t), Value::Object(w)) => {
                t.len() == w.len()
                    && w.iter()
                        .all(|(k, wv)| t.get(k).is_some_and(|tv| stringified(tv, wv)))
            }
            (Value::Array(t), Value::Array(w)) => {
                t.len() == w.len() && t.iter().zip(w).all(|(a, b)| stringified(a, b))
            }
            (t, w) => t == w,
        }
    }
    if theirs.len() == want.len()
        && theirs
            .iter()
            .zip(want)
            .all(|((tn, ta), (wn, wa))| tn == wn && stringified(ta, wa))
    {
        return "bare values kept as text";
    }
    let mut how = "typed by value";
    let close = theirs.len() == want.len()
        && theirs.iter().zip(want).all(|((tn, ta), (wn, wa))| {
            tn == wn
                && match (ta, wa) {
                    (Value::Object(t), Value::Object(w)) => {
                        t.len() == w.len()
                            && w.iter().all(|(k, wv)| match (t.get(k), wv) {
                                (Some(tv), _) if tv == wv => true,
                                (Some(tv), Value::String(ws))
                                    if by_value(ws).as_ref() == Some(tv) =>
                                {
                                    true
                                }
                                (Some(Value::String(ts)), Value::String(ws))
                                    if entities(ws) == *ts =>
                                {
                                    how = "entities decoded";
                                    true
                                }
                                _ => false,
                            })
                    }
                    _ => false,
                }
        });
    if close {
        how
    } else {
        "different"
    }
}

/// The differences the test allows, each a (calls, text) class seen on some family, with
/// which side is right. Any other outcome fails the test.
const DIFFERENCES: [(&str, &str, &str); 7] = [
    (
        "same",
        "text after the markup dropped",
        "The peer returns only the text before the first call; text the model wrote after \
         its calls is lost. Ours keeps it (every byte that is not markup reaches the user).",
    ),
    (
        "none",
        "all text",
        "Llama: the peer reads `<|python_tag|>` JSON only when nothing follows it, so a call \
         with text after it stays text and never runs. Ours ends the call where its JSON \
         closes.",
    ),
    (
        "none",
        "all text, no space after [TOOL_CALLS]",
        "Mistral: the peer reads the array only after `[TOOL_CALLS] [` (a space between); \
         `[TOOL_CALLS][` stays text for it. Ours reads both.",
    ),
    (
        "entities decoded",
        "any",
        "MiniMax M2: the peer decodes XML entities in values (`&lt;` becomes `<`); ours keeps \
         the value as the model wrote it (a value that is HTML source stays as written). \
         Undecided: the format's documentation says nothing of escaping.",
    ),
    (
        "bare values kept as text",
        "any",
        "Gemma 4, with no schemas given: the peer keeps `count:42` and `enabled:true` as the \
         strings \"42\" and \"true\"; ours reads them as the notation writes them (a string is \
         delimited by `<|\"|>`, a bare value is a number, boolean or null).",
    ),
    (
        "typed by value",
        "any",
        "Step 3: the peer types a parameter by how its text reads (`100` becomes a number) \
         where the tool declares a string. Ours types by the declared schema, as the other \
         XML families do.",
    ),
    (
        "same",
        "whitespace",
        "The peer drops the line breaks around and between the calls; ours keeps every byte \
         that is not markup. Compared with whitespace runs made one space.",
    ),
];

#[tokio::test(flavor = "current_thread")]
async fn generated_calls_read_the_same_by_both() {
    let factory = ParserFactory::new();
    let body = declared();
    let tools = Tools::from_request(&body);
    let peer_tools: Vec<Tool> = serde_json::from_value(body["tools"].clone()).unwrap();
    let mut r = Rng(0x2545_F491_4F6C_DD1D);
    let mut report = Vec::new();
    let mut unexplained = Vec::new();
    for (generator, family, peer_name) in PAIRS {
        let mut classes: std::collections::BTreeMap<String, usize> = Default::default();
        for case in 0..200 {
            let n = 1 + r.below(if generator == "llama" { 1 } else { 3 });
            let calls: Vec<Call> = (0..n)
                .map(|_| (r.pick(&NAMES).to_string(), arguments(&mut r)))
                .collect();
            // The `json` family's call is the message itself: nothing before it.
            let before = if generator == "json" {
                String::new()
            } else {
                prose(&mut r)
            };
            // Text after the calls in half the cases.
            let after = if r.below(2) == 0 {
                String::new()
            } else {
                prose(&mut r)
            };
            let mut markup = markup(generator, &calls, &mut r);
            let spaced = generator == "mistral" && r.below(2) == 0;
            if spaced {
                markup = markup.replacen("[TOOL_CALLS][", "[TOOL_CALLS] [", 1);
            }
            let sep = if before.is_empty() { "" } else { "\n" };
            let input = format!("{before}{sep}{markup}{after}");
            let theirs = peer(&factory, peer_name, &peer_tools, &input).await;
            let (mine, failures) = ours(family, &tools, &input, &[]);
            // Ours at random cuts: the same (the property every test of ours holds).
            let mut cuts: Vec<usize> = (0..r.below(6)).map(|_| r.below(input.len() + 1)).collect();
            cuts.sort_unstable();
            assert_eq!(
                ours(family, &tools, &input, &cuts).0,
                mine,
                "cuts {cuts:?}: {input:?}"
            );
            // Ours reads what was written, every time.
            let want: Vec<(String, Value)> = calls
                .iter()
                .map(|(n, a)| (n.clone(), serde_json::from_str(&object(a)).unwrap()))
                .collect();
            assert_eq!(
                failures, 0,
                "{generator} case {case}: ours failed {input:?}"
            );
            assert_eq!(mine.calls, want, "{generator} case {case}: ours {input:?}");
            assert_eq!(squeeze(&mine.text), squeeze(&format!("{before} {after}")));
            let calls_rel = if theirs.calls.is_empty() {
                "none"
            } else {
                calls_relation(&theirs.calls, &want)
            };
            let text_rel = if theirs.text == mine.text {
                "same"
            } else if squeeze(&theirs.text) == squeeze(&mine.text) {
                "whitespace"
            } else if !after.is_empty() && squeeze(&theirs.text) == squeeze(&before) {
                "text after the markup dropped"
            } else if theirs.text == input && generator == "mistral" && !spaced {
                "all text, no space after [TOOL_CALLS]"
            } else if theirs.text == input {
                "all text"
            } else {
                "different"
            };
            let allowed = (calls_rel == "same" && text_rel == "same")
                || DIFFERENCES
                    .iter()
                    .any(|(c, t, _)| *c == calls_rel && (*t == "any" || *t == text_rel));
            if !allowed {
                unexplained.push(format!(
                    "{generator} case {case} ({calls_rel}, {text_rel}): {input:?}\n  peer {theirs:?}\n  ours {mine:?}"
                ));
            }
            *classes
                .entry(format!("{calls_rel} / {text_rel}"))
                .or_default() += 1;
        }
        report.push(format!("{generator:13} vs {peer_name:11}: {classes:?}"));
    }
    println!("{}", report.join("\n"));
    assert!(
        unexplained.is_empty(),
        "{} outcomes no listed difference explains:\n{}",
        unexplained.len(),
        unexplained[..unexplained.len().min(5)].join("\n")
    );
}

/// Our family for each of the peer's parsers the published inputs are for.
fn family_of(peer: &str) -> Family {
    match peer {
        "qwen" => Family::Hermes,
        "qwen_xml" => Family::Qwen3Coder,
        "glm45_moe" => Family::Glm45,
        "mistral" => Family::Mistral,
        "llama" => Family::Llama,
        "pythonic" => Family::Pythonic,
        "kimik2" => Family::Kimi,
        "deepseek" | "deepseek31" | "deepseek_v4" => Family::DeepSeek,
        "minimax_m2" => Family::MiniMax,
        "cohere" => Family::Cohere,
        "step3" => Family::Step3,
        "gemma4" => Family::Gemma4,
        "json" => Family::Json,
        p => unreachable!("{p}"),
    }
}

/// The two differences where one side reads calls and the other none, on the peer's own
/// inputs (the generated ones meet the first too, as "none / all text").
pub const ONE_SIDED: [(&str, &str); 3] = [
    (
        "json: a JSON call inside prose",
        "The peer takes a JSON call anywhere in the text; ours only a message that is the \
         call (a JSON example inside an answer is no call: there is no marker to tell).",
    ),
    (
        "Llama: JSON with text after it",
        "The peer reads no call when text follows the object (the call never runs); ours \
         ends the call where its JSON closes and keeps the text.",
    ),
    (
        "DeepSeek: a section with one unreadable call",
        "The peer runs the readable calls and drops the other silently; ours fails the \
         section whole, reported with its raw bytes (fail-closed: which calls the model \
         meant is not known).",
    ),
];

/// The peer's own test inputs (`data/tool_parser_inputs.json`, taken from its test files,
/// Apache-2.0) through both. Every identifier in an input is declared as a tool (the peer
/// has no allow-list). Where both read calls, they must be the same calls (or differ by a
/// listed difference); the rest is counted by class and printed.
#[tokio::test(flavor = "current_thread")]
async fn the_peers_own_inputs() {
    let data: Vec<Value> =
        serde_json::from_str(include_str!("data/tool_parser_inputs.json")).unwrap();
    assert!(data.len() >= 100, "the peer's inputs are missing");
    let factory = ParserFactory::new();
    let mut classes: std::collections::BTreeMap<String, usize> = Default::default();
    let mut unexplained = Vec::new();
    for item in &data {
        let peer_name = item["peer"].as_str().unwrap();
        let input = item["input"].as_str().unwrap();
        // Words, and their parts between dots (`functions.NAME`).
        let mut names: Vec<String> = Vec::new();
        for w in input
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '-'))
            .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        {
            names.push(w.to_string());
            names.extend(w.split('.').map(str::to_string));
        }
        let tools = Tools::from_names(names);
        let theirs = peer(&factory, peer_name, &[], input).await;
        let (mine, failures) = ours(family_of(peer_name), &tools, input, &[]);
        let class = match (theirs.calls.is_empty(), mine.calls.is_empty()) {
            (true, true) => "no calls on either side".to_string(),
            (false, true) if failures > 0 => "peer reads calls, ours a failure".to_string(),
            (false, true) => "peer reads calls, ours none".to_string(),
            (true, false) => "ours reads calls, peer none".to_string(),
            (false, false) => {
                let rel = calls_relation(&theirs.calls, &mine.calls);
                let text = if squeeze(&theirs.text) == squeeze(&mine.text) {
                    "same text"
                } else {
                    "text differs"
                };
                if !DIFFERENCES.iter().any(|(c, _, _)| *c == rel) && rel != "same" {
                    unexplained.push(format!(
                        "{peer_name}: {input:?}\n  peer {theirs:?}\n  ours {mine:?}"
                    ));
                }
                format!("both read calls: {rel}, {text}")
            }
        };
        // Calls on one side only: explained only by the two differences listed for them
        // (`ONE_SIDED`); anything else fails.
        let one_sided = match class.as_str() {
            "ours reads calls, peer none" => Some("llama"),
            "peer reads calls, ours a failure" => Some("deepseek"),
            "peer reads calls, ours none" => Some("json"),
            _ => None,
        };
        if let Some(family) = one_sided {
            println!("{peer_name} {class}: {input:?}\n  peer {theirs:?}\n  ours {mine:?}");
            if peer_name != family {
                unexplained.push(format!("{peer_name} ({class}): {input:?}"));
            }
        }
        *classes
            .entry(format!("{peer_name:11} {class}"))
            .or_default() += 1;
    }
    for (class, n) in &classes {
        println!("{n:4}  {class}");
    }
    assert!(
        unexplained.is_empty(),
        "{} inputs where both read different calls:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
}
