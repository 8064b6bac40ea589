//! `toolstream inspect`: run a captured response through the pipeline.

use std::io::{self, Read, Write};

use bytes::Bytes;
use toolstream::assemble::{Event, Policy};
use toolstream::classify;
use toolstream::pipeline::Stream;
use toolstream::provider::Format;
use toolstream::replay::Turn;
use toolstream::schema::{Mismatch, Tools};
use toolstream::text_calls::{self, Family};

pub(crate) struct Args {
    format: Option<Format>,
    chunk: usize,
    json: bool,
    turn: bool,
    preview: bool,
    tools: Option<String>,
    /// `--text-calls`: the family (`None` for auto), when calls written into the text are
    /// taken out of it.
    text_calls: Option<Option<Family>>,
    /// `--repair`: closed-form mistakes in failed arguments repaired.
    repair: bool,
    path: Option<String>,
}

impl Args {
    /// The input's name for messages: the file, or stdin.
    pub(crate) fn input_name(&self) -> &str {
        match self.path.as_deref() {
            None | Some("-") => "stdin",
            Some(p) => p,
        }
    }
}

pub(crate) fn parse(args: &[String]) -> Result<Args, String> {
    let mut out = Args {
        format: None,
        chunk: 0,
        json: false,
        turn: false,
        preview: false,
        tools: None,
        text_calls: None,
        repair: false,
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
            "--repair" => out.repair = true,
            "--tools" => out.tools = Some(it.next().ok_or("--tools needs a file")?.clone()),
            "--text-calls" => {
                let v = it.next().ok_or("--text-calls needs a family or auto")?;
                out.text_calls = Some(match v.as_str() {
                    "auto" => None,
                    name => Some(Family::from_name(name).ok_or_else(|| {
                        let names: Vec<&str> = Family::ALL.iter().map(|f| f.name()).collect();
                        format!(
                            "unknown text-call family '{name}' (auto, {})",
                            names.join(", ")
                        )
                    })?),
                });
            }
            s if s.starts_with('-') && s != "-" => return Err(format!("unknown option '{s}'")),
            s => {
                if out.path.replace(s.to_string()).is_some() {
                    return Err("more than one input file".into());
                }
            }
        }
    }
    if out.turn && (out.json || out.preview) {
        return Err("--turn prints the turn alone: not with --json or --preview".into());
    }
    if out.text_calls.is_some() && out.tools.is_none() {
        return Err(
            "--text-calls needs --tools REQUEST.json: only calls to the tools the \
             request declared are taken out of the text"
                .into(),
        );
    }
    if out.tools.is_some() && out.text_calls.is_none() && (out.turn || out.preview) {
        return Err(
            "--tools checks the calls of the event list: not with --turn or --preview".into(),
        );
    }
    Ok(out)
}

/// One JSON object per event, in the shapes the issue names (None for events not shown).
/// An event's JSON line: written straight from its `Serialize` form, so a call's
/// arguments keep their exact bytes (never re-read into a tree, where key order, spacing
/// and number spelling would change, and a number out of a float's range fail).
pub(crate) fn to_json(e: &Event) -> Option<String> {
    // Slot openings and usage are left out of the listing.
    if matches!(e, Event::CallStarted { .. } | Event::Usage { .. }) {
        return None;
    }
    serde_json::to_string(e).ok()
}

fn human(e: &Event, out: &mut impl Write) -> io::Result<()> {
    match e {
        Event::ToolCall(c) => {
            writeln!(
                out,
                "tool call #{} part {}: {}({}) id={}",
                c.index,
                c.part,
                c.name,
                String::from_utf8_lossy(&c.arguments),
                c.id
            )?;
            for r in &c.repairs {
                writeln!(
                    out,
                    "  repaired {} at byte {}: {:?} -> {:?}",
                    r.kind.as_str(),
                    r.offset,
                    r.replaced,
                    r.with
                )?;
            }
            Ok(())
        }
        Event::ToolCallFailed(f) => writeln!(out, "{f}"),
        Event::Duplicate {
            index, id, name, ..
        } => {
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
        Event::Dropped(d) => writeln!(
            out,
            "DROPPED {} bytes at byte {} ({})",
            d.bytes,
            d.offset,
            d.reason.as_str()
        ),
        Event::End { complete } => writeln!(
            out,
            "end: {}",
            if *complete {
                "complete"
            } else {
                "INCOMPLETE (no terminal marker, or bytes dropped: see above)"
            }
        ),
        _ => Ok(()),
    }
}

/// The input, read as it arrives (a pipe still being written works) and cut into pushes of
/// `chunk` bytes (0: as each read returns them); `each` gets the stream after every push.
/// Only one read's bytes are held at a time.
fn feed(
    input: &mut dyn Read,
    chunk: usize,
    mut s: Stream,
    mut each: impl FnMut(&Stream, u64, &mut Vec<Event>) -> io::Result<()>,
) -> io::Result<Vec<Event>> {
    let mut events = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut fed = 0u64;
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let bytes = Bytes::copy_from_slice(&buf[..n]);
        let step = if chunk == 0 { n } else { chunk };
        let mut i = 0;
        while i < n {
            let j = (i + step).min(n);
            s.push(bytes.slice(i..j), &mut events);
            fed += (j - i) as u64;
            i = j;
            each(&s, fed, &mut events)?;
        }
    }
    s.finish(&mut events);
    Ok(events)
}

/// `--preview`: the events, and after each push the view of every call whose arguments
/// changed (chunks of `chunk` bytes, 16 when not given, so that there is something to see).
/// With `--json`, one object per event and one `{"type":"preview","index","after_bytes",
/// "view"}` per view.
fn preview(input: &mut dyn Read, args: &Args, out: &mut impl Write) -> io::Result<()> {
    let policy = Policy {
        preview: true,
        ..Policy::default()
    };
    let s = stream(args, policy)?;
    let step = if args.chunk == 0 { 16 } else { args.chunk };
    let mut shown: Vec<Option<serde_json::Value>> = Vec::new();
    let events = feed(input, step, s, |s, fed, events| {
        for e in events.drain(..) {
            if let Event::CallStarted { index, .. } = e {
                shown.resize(shown.len().max(index as usize + 1), None);
            }
            event(&e, args.json, out)?;
        }
        for (index, last) in shown.iter_mut().enumerate() {
            let now = s.preview(index as u32);
            if let Some(view) = now.filter(|v| Some(*v) != last.as_ref()) {
                if args.json {
                    let v = serde_json::json!({
                        "type": "preview", "index": index, "after_bytes": fed, "view": view,
                    });
                    writeln!(out, "{v}")?;
                } else {
                    writeln!(out, "  view of #{index} after {fed} bytes: {view}")?;
                }
            }
            *last = now.cloned();
        }
        Ok(())
    })?;
    for e in &events {
        event(e, args.json, out)?;
    }
    Ok(())
}

/// One event, as a JSON line or as text.
fn event(e: &Event, json: bool, out: &mut impl Write) -> io::Result<()> {
    if !json {
        return human(e, out);
    }
    match to_json(e) {
        Some(v) => writeln!(out, "{v}"),
        None => Ok(()),
    }
}

pub(crate) fn main(args: &Args) -> Result<(), io::Error> {
    let mut input: Box<dyn Read> = match args.path.as_deref() {
        None | Some("-") => Box::new(io::stdin()),
        Some(p) => Box::new(std::fs::File::open(p)?),
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    if args.preview {
        preview(&mut input, args, &mut out)?;
        return out.flush();
    }
    let tools = args.tools.as_deref().map(load_tools).transpose()?;
    let s = stream(args, Policy::default())?;
    if args.turn {
        // The turn is built as the events come; only it is kept.
        let mut turn: Option<Turn> = None;
        let mut take = |s: &Stream, events: &mut Vec<Event>| {
            for e in events.drain(..) {
                if let Some(f) = s.format() {
                    turn.get_or_insert_with(|| Turn::new(f)).push(&e);
                }
            }
        };
        let mut format = None;
        let rest = feed(&mut input, args.chunk, s, |s, _, events| {
            format = s.format();
            take(s, events);
            Ok(())
        })?;
        let Some(format) = format else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "no response format recognised: nothing to send back",
            ));
        };
        let mut turn = turn.unwrap_or_else(|| Turn::new(format));
        for e in &rest {
            turn.push(e);
        }
        writeln!(out, "{:#}", turn.to_json())?;
        return out.flush();
    }
    let print = |events: &mut Vec<Event>, out: &mut io::BufWriter<io::StdoutLock>| {
        if events.is_empty() {
            return Ok(());
        }
        for mut e in events.drain(..) {
            // With --repair, a call that does not match its tool's schema only because a
            // string stands where the schema says another type is coerced first.
            if let (true, Some(tools), Event::ToolCall(c)) = (args.repair, &tools, &mut e) {
                toolstream::repair::coerce_call(c, tools);
            }
            if args.json {
                if let Some(v) = to_json(&e) {
                    writeln!(out, "{v}")?;
                }
            } else {
                human(&e, out)?;
            }
            if let (Some(tools), Event::ToolCall(c)) = (&tools, &e) {
                if let Err(m) = tools.check(&c.name, &c.arguments) {
                    mismatch(c, &m, args.json, out)?;
                }
            }
        }
        // Out as soon as they are known: a reader of a pipe sees each call when it closes.
        out.flush()
    };
    let mut rest = feed(&mut input, args.chunk, s, |_, _, events| {
        print(events, &mut out)
    })?;
    print(&mut rest, &mut out)?;
    out.flush()
}

/// The pipeline for `args`: with `--text-calls`, calls written into the text to the tools
/// of `--tools` are taken out of it.
fn stream(args: &Args, mut policy: Policy) -> io::Result<Stream> {
    if args.repair {
        policy.repair = toolstream::repair::RepairPolicy::all();
    }
    let s = Stream::with_policy(args.format, policy);
    Ok(match (args.text_calls, args.tools.as_deref()) {
        (Some(family), Some(path)) => {
            let request = read_request(path)?;
            s.with_text_calls(family, text_calls::Tools::from_request(&request))
        }
        _ => s,
    })
}

/// What is wrong with the `--tools` file (reported under its own name).
#[derive(Debug)]
pub(crate) struct ToolsFileError(String);

impl std::fmt::Display for ToolsFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ToolsFileError {}

fn tools_error(path: &str, e: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        ToolsFileError(format!("--tools {path}: {e}")),
    )
}

/// `--tools FILE` as JSON: a request body, or its tools array.
fn read_request(path: &str) -> io::Result<serde_json::Value> {
    let bad = |e: String| tools_error(path, e);
    let text = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))
}

/// `--tools FILE`: a request body (or its tools array) in any provider's shape.
fn load_tools(path: &str) -> io::Result<Tools> {
    let bad = |e: String| tools_error(path, e);
    let request = read_request(path)?;
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
    let verdict = classify::classify_mismatch(&c.name, m, 0, &classify::Policy::default());
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
            "kind": classify::ToolFailureKind::from(m).as_str(), "violations": violations, "detail": detail,
            "action": verdict.action.as_str(), "feedback": verdict.feedback,
        });
        return writeln!(out, "{v}");
    }
    writeln!(
        out,
        "  DOES NOT MATCH its declaration ({}; {}):",
        classify::ToolFailureKind::from(m).as_str(),
        verdict.action.as_str()
    )?;
    for line in detail.lines() {
        writeln!(out, "    {line}")?;
    }
    Ok(())
}
