//! `toolstream inspect`: run a captured response through the pipeline.

use std::io::{self, Read, Write};

use bytes::Bytes;
use toolstream::assemble::{Event, Policy};
use toolstream::classify;
use toolstream::pipeline::Stream;
use toolstream::provider::Format;
use toolstream::replay::Turn;
use toolstream::schema::{Mismatch, Tools};

pub(crate) struct Args {
    format: Option<Format>,
    chunk: usize,
    json: bool,
    turn: bool,
    preview: bool,
    tools: Option<String>,
    path: Option<String>,
}

pub(crate) fn parse(args: &[String]) -> Result<Args, String> {
    let mut out = Args {
        format: None,
        chunk: 0,
        json: false,
        turn: false,
        preview: false,
        tools: None,
        path: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--provider" => {
                let v = it.next().ok_or("--provider needs a value")?;
                out.format = match v.as_str() {
                    "auto" => None,
                    name => Some(
                        Format::from_name(name)
                            .ok_or(format!("unknown provider format '{name}'"))?,
                    ),
                };
            }
            "--chunk" => {
                let v = it.next().ok_or("--chunk needs a value")?;
                out.chunk = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or(format!("bad chunk size '{v}'"))?;
            }
            "--json" => out.json = true,
            "--turn" => out.turn = true,
            "--preview" => out.preview = true,
            "--tools" => out.tools = Some(it.next().ok_or("--tools needs a file")?.clone()),
            s if s.starts_with("--") => return Err(format!("unknown option '{s}'")),
            s => {
                if out.path.replace(s.to_string()).is_some() {
                    return Err("more than one input file".into());
                }
            }
        }
    }
    if [out.json, out.turn, out.preview]
        .iter()
        .filter(|&&x| x)
        .count()
        > 1
    {
        return Err("--json, --turn and --preview are three outputs: choose one".into());
    }
    if out.tools.is_some() && (out.turn || out.preview) {
        return Err(
            "--tools checks the calls of the event list: not with --turn or --preview".into(),
        );
    }
    Ok(out)
}

/// Run the pipeline over `input`, cut into `chunk`-byte pushes (0: whole), and return the
/// events and the format (as given, or detected).
pub(crate) fn run(
    input: &[u8],
    format: Option<Format>,
    chunk: usize,
) -> (Vec<Event>, Option<Format>) {
    let bytes = Bytes::copy_from_slice(input);
    let mut s = Stream::new(format);
    let mut events = Vec::new();
    let step = if chunk == 0 {
        bytes.len().max(1)
    } else {
        chunk
    };
    let mut i = 0;
    while i < bytes.len() {
        let j = (i + step).min(bytes.len());
        s.push(bytes.slice(i..j), &mut events);
        i = j;
    }
    let format = s.format();
    s.finish(&mut events);
    (events, format)
}

fn json_or_string(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_string()))
}

/// One JSON object per event, in the shapes the issue names (None for events not shown).
pub(crate) fn to_json(e: &Event) -> Option<serde_json::Value> {
    use serde_json::json;
    Some(match e {
        Event::ToolCall(c) => json!({
            "type": "tool_call", "index": c.index, "part": c.part, "id": c.id, "name": c.name,
            "arguments": serde_json::from_slice::<serde_json::Value>(&c.arguments).unwrap_or_default(),
        }),
        Event::ToolCallFailed(f) => json!({
            "type": "tool_call_error", "index": f.index, "id": f.id, "name": f.name,
            "kind": f.kind.as_str(), "offset": f.offset,
            "raw": String::from_utf8_lossy(&f.raw),
            "detail": f.detail.map_or(f.message.clone(), |d| d.as_str().to_string()),
        }),
        Event::Duplicate { index, id, name } => json!({
            "type": "duplicate", "index": index, "id": id, "name": name,
        }),
        Event::Text { text, .. } => json!({"type": "text", "text": text}),
        Event::Reasoning { text, .. } => json!({"type": "reasoning", "text": text}),
        Event::ReasoningSignature { signature, .. } => {
            json!({"type": "reasoning_signature", "signature": signature})
        }
        Event::RedactedReasoning { data, .. } => {
            json!({"type": "redacted_reasoning", "data": data})
        }
        Event::ReasoningItem { raw, .. } => {
            json!({"type": "reasoning_item", "item": json_or_string(raw)})
        }
        Event::ReasoningDetails { raw, .. } => {
            json!({"type": "reasoning_details", "details": json_or_string(raw)})
        }
        Event::Finish { reason, raw } => {
            json!({"type": "finish", "reason": reason.as_str(), "raw": raw})
        }
        Event::ProviderError {
            status,
            message,
            body,
        } => json!({
            "type": "error", "status": status, "message": message,
            "body": if body.is_empty() { serde_json::Value::Null } else { json_or_string(body) },
        }),
        Event::End { complete } => json!({"type": "end", "complete": complete}),
        _ => return None,
    })
}

fn human(e: &Event, out: &mut impl Write) -> io::Result<()> {
    match e {
        Event::ToolCall(c) => writeln!(
            out,
            "tool call #{} part {}: {}({}) id={}",
            c.index,
            c.part,
            c.name,
            String::from_utf8_lossy(&c.arguments),
            c.id
        ),
        Event::ToolCallFailed(f) => writeln!(
            out,
            "FAILED tool call #{} {} id={}: {} at byte {} ({})",
            f.index,
            f.name,
            f.id,
            f.kind.as_str(),
            f.offset,
            f.message
        ),
        Event::Duplicate { index, id, name } => {
            writeln!(
                out,
                "duplicate of tool call #{index} {name} dropped (id {id})"
            )
        }
        Event::Text { text, .. } => writeln!(out, "text: {text:?}"),
        Event::Reasoning { text, .. } => writeln!(out, "reasoning: {text:?}"),
        Event::ReasoningSignature { signature, .. } => {
            writeln!(out, "reasoning signature: {} bytes", signature.len())
        }
        Event::RedactedReasoning { data, .. } => {
            writeln!(out, "redacted reasoning: {} bytes", data.len())
        }
        Event::ReasoningItem { raw, .. } => writeln!(out, "reasoning item: {} bytes", raw.len()),
        Event::ReasoningDetails { raw, .. } => {
            writeln!(out, "reasoning details: {} bytes", raw.len())
        }
        Event::Finish { reason, raw } => writeln!(out, "finish: {} ({raw})", reason.as_str()),
        Event::ProviderError {
            status, message, ..
        } => match status {
            Some(s) => writeln!(out, "provider error {s}: {message}"),
            None => writeln!(out, "provider error: {message}"),
        },
        Event::End { complete } => writeln!(
            out,
            "end: {}",
            if *complete {
                "complete"
            } else {
                "INCOMPLETE (no terminal marker)"
            }
        ),
        _ => Ok(()),
    }
}

/// `--preview`: the events, and after each push the view of every call whose arguments
/// changed (chunks of `chunk` bytes, 16 when not given, so that there is something to see).
fn preview(input: &[u8], args: &Args, out: &mut impl Write) -> io::Result<()> {
    let policy = Policy {
        preview: true,
        ..Policy::default()
    };
    let mut s = Stream::with_policy(args.format, policy);
    let bytes = Bytes::copy_from_slice(input);
    let step = if args.chunk == 0 { 16 } else { args.chunk };
    let mut events = Vec::new();
    let mut shown: Vec<Option<serde_json::Value>> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let j = (i + step).min(bytes.len());
        s.push(bytes.slice(i..j), &mut events);
        i = j;
        for e in events.drain(..) {
            if let Event::CallStarted { index, .. } = e {
                shown.resize(shown.len().max(index as usize + 1), None);
            }
            human(&e, out)?;
        }
        for (index, last) in shown.iter_mut().enumerate() {
            let now = s.preview(index as u32);
            if let Some(view) = now.filter(|v| Some(*v) != last.as_ref()) {
                writeln!(out, "  view of #{index} after {j} bytes: {view}")?;
            }
            *last = now.cloned();
        }
    }
    s.finish(&mut events);
    for e in &events {
        human(e, out)?;
    }
    Ok(())
}

pub(crate) fn main(args: &Args) -> Result<(), io::Error> {
    let mut input = Vec::new();
    match args.path.as_deref() {
        None | Some("-") => io::stdin().read_to_end(&mut input)?,
        Some(p) => std::fs::File::open(p)?.read_to_end(&mut input)?,
    };
    if args.preview {
        let stdout = io::stdout();
        let mut out = io::BufWriter::new(stdout.lock());
        preview(&input, args, &mut out)?;
        return out.flush();
    }
    let tools = args.tools.as_deref().map(load_tools).transpose()?;
    let (events, format) = run(&input, args.format, args.chunk);
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    if args.turn {
        let Some(format) = format else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "no response format recognised: nothing to send back",
            ));
        };
        let mut turn = Turn::new(format);
        for e in &events {
            turn.push(e);
        }
        writeln!(out, "{:#}", turn.to_json())?;
        return out.flush();
    }
    for e in &events {
        if args.json {
            if let Some(v) = to_json(e) {
                writeln!(out, "{v}")?;
            }
        } else {
            human(e, &mut out)?;
        }
        if let (Some(tools), Event::ToolCall(c)) = (&tools, e) {
            if let Err(m) = tools.check(&c.name, &c.arguments) {
                mismatch(c, &m, args.json, &mut out)?;
            }
        }
    }
    out.flush()
}

/// `--tools FILE`: a request body (or its tools array) in any provider's shape.
fn load_tools(path: &str) -> io::Result<Tools> {
    let bad =
        |e: String| io::Error::new(io::ErrorKind::InvalidData, format!("--tools {path}: {e}"));
    let text = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let request: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
    let tools = Tools::from_request(&request).map_err(|e| bad(e.to_string()))?;
    for name in tools.names() {
        let unchecked = tools.get(name).map_or(&[][..], |s| s.unchecked());
        if !unchecked.is_empty() {
            eprintln!(
                "toolstream: tool {name}: not checked: {}",
                unchecked.join(", ")
            );
        }
    }
    Ok(tools)
}

/// A call that does not match its declaration: the violations, and the feedback a tool loop
/// would send the model.
fn mismatch(
    c: &toolstream::assemble::ToolCall,
    m: &Mismatch,
    json: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    let detail = m.to_string();
    let verdict = m.classify(&c.name, 0, &classify::Policy::default());
    if json {
        let violations: Vec<serde_json::Value> = match m {
            Mismatch::Invalid(v) => v
                .iter()
                .map(|v| serde_json::json!({"path": v.path, "keyword": v.keyword, "message": v.message}))
                .collect(),
            _ => Vec::new(),
        };
        let v = serde_json::json!({
            "type": "tool_call_mismatch", "index": c.index, "id": c.id, "name": c.name,
            "kind": m.kind().as_str(), "violations": violations, "detail": detail,
            "action": verdict.action.as_str(), "feedback": verdict.feedback,
        });
        return writeln!(out, "{v}");
    }
    writeln!(
        out,
        "  DOES NOT MATCH its declaration ({}; {}):",
        m.kind().as_str(),
        verdict.action.as_str()
    )?;
    for line in detail.lines() {
        writeln!(out, "    {line}")?;
    }
    Ok(())
}
