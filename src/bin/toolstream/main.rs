//! The `toolstream` command line.
//!
//! ```text
//! toolstream split [--any] [--json] [FILE|-]
//! ```

use std::fs::File;
use std::io::{self, Read, Write};
use std::process::ExitCode;

use bytes::BytesMut;
use toolstream::json::{Mode, Splitter, Value};

mod classify;
mod inspect;

const USAGE: &str = "\
usage: toolstream inspect [--provider NAME|auto] [--chunk N] [--json | --turn | --preview]
                          [--tools REQUEST.json] [FILE|-]
       toolstream split [--any] [--json] [FILE|-]
       toolstream classify [--provider NAME] [--status N] [--header 'Name: value']...
                           [--body STRING | --body-file FILE | -] [--phase before_output|after_output]
                           [--transport MESSAGE] [--attempt N] [--json]

inspect runs a captured streaming response (SSE or NDJSON) through the pipeline and lists
its tool calls (each as soon as its arguments closed), text, finish, errors and whether the
stream ended properly. --chunk N re-cuts the input into N-byte pushes (results must not
change). --turn prints instead the assistant turn a tool loop sends back in its next
request, in the format's request shape, with the reasoning, signatures and items the
provider checks. --preview prints the events and, after each push (16 bytes unless
--chunk says), the view of every call whose arguments changed, as a user interface would
show them while they stream. --tools checks each call against the tools a request declared
(the request body, or its tools array, in any provider's shape): an undeclared name or
arguments that do not match the JSON Schema are listed under the call, with the action.
Formats: openai, responses, anthropic, gemini, ollama,
bedrock (ConverseStream, binary AWS event stream framing), auto (default: detected).
Exit 0 when the stream was read (even with failed calls), 1 on unreadable input, 2 on usage
errors.

split reads a stream of concatenated JSON values (from FILE, or stdin when FILE is - or absent)
and prints each value's exact bytes on its own line as soon as it is complete.

  --any    accept any JSON value at the top level (default: objects only, as for
           tool-call arguments)
  --json   print one JSON object per value: {\"index\":N,\"start\":S,\"end\":E,\"value\":V}

Exit status: 0 on a clean end, 1 on invalid or truncated input (a one-line message with
the byte offset and error kind goes to stderr), 2 on a usage error.

classify turns a failure into a decision (retry, retry_with_feedback, compress,
repair_request, fallback, surface): an HTTP error (--status, --header, --body), an error event inside a stream
(--phase, with the event's JSON as the body), or a transport error (--transport).
Providers: openai azure anthropic gemini ollama openrouter bedrock mistral groq deepseek
xai vllm llamacpp other (default). Exit status 0, or 2 on a usage error.";

struct Args {
    mode: Mode,
    json: bool,
    path: Option<String>,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut it = args.iter();
    match it.next().map(String::as_str) {
        Some("split") => {}
        Some("-h" | "--help") => return Err(String::new()),
        Some(other) => return Err(format!("unknown command '{other}'")),
        None => return Err("missing command".into()),
    }
    let mut out = Args {
        mode: Mode::Objects,
        json: false,
        path: None,
    };
    for a in it {
        match a.as_str() {
            "--any" => out.mode = Mode::Any,
            "--json" => out.json = true,
            "-h" | "--help" => return Err(String::new()),
            s if s.starts_with("--") => return Err(format!("unknown option '{s}'")),
            s => {
                if out.path.is_some() {
                    return Err("more than one input file".into());
                }
                out.path = Some(s.to_string());
            }
        }
    }
    Ok(out)
}

fn print_value(out: &mut impl Write, v: &Value, json: bool) -> io::Result<()> {
    if json {
        write!(
            out,
            "{{\"index\":{},\"start\":{},\"end\":{},\"value\":",
            v.index(),
            v.start(),
            v.end()
        )?;
        out.write_all(v.bytes())?;
        out.write_all(b"}\n")
    } else {
        out.write_all(v.bytes())?;
        out.write_all(b"\n")
    }
}

/// Split `input` chunk by chunk as reads return, printing values as they complete.
fn split(mut input: impl Read, args: &Args) -> Result<ExitCode, io::Error> {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut splitter = Splitter::new(args.mode);
    let mut values = Vec::new();
    let mut buf = BytesMut::new();
    loop {
        buf.reserve(64 * 1024);
        buf.resize(64 * 1024, 0);
        let n = match input.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        buf.truncate(n);
        let chunk = buf.split().freeze();
        let r = splitter.push(chunk, &mut values);
        for v in values.drain(..) {
            print_value(&mut out, &v, args.json)?;
        }
        // Values are printed as they complete, even when the pipe is still open.
        out.flush()?;
        if let Err(e) = r {
            eprintln!("toolstream: {e}");
            return Ok(ExitCode::from(1));
        }
    }
    match splitter.finish() {
        Ok(v) => {
            if let Some(v) = v {
                print_value(&mut out, &v, args.json)?;
            }
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            out.flush()?;
            eprintln!("toolstream: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.first().map(String::as_str) == Some("inspect") {
        let args = match inspect::parse(&argv[1..]) {
            Ok(a) => a,
            Err(msg) => {
                eprintln!("toolstream: {msg}\n\n{USAGE}");
                return ExitCode::from(2);
            }
        };
        return match inspect::main(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("toolstream: cannot read input: {e}");
                ExitCode::from(1)
            }
        };
    }
    if argv.first().map(String::as_str) == Some("classify") {
        return match classify::run(&argv[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(msg) => {
                eprintln!("toolstream: {msg}\n\n{USAGE}");
                ExitCode::from(2)
            }
        };
    }
    let args = match parse_args(&argv) {
        Ok(a) => a,
        Err(msg) => {
            if msg.is_empty() {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            eprintln!("toolstream: {msg}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = match args.path.as_deref() {
        None | Some("-") => split(io::stdin().lock(), &args),
        Some(p) => match File::open(p) {
            Ok(f) => split(f, &args),
            Err(e) => {
                eprintln!("toolstream: cannot open {p}: {e}");
                return ExitCode::from(2);
            }
        },
    };
    match result {
        Ok(code) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolstream: I/O error: {e}");
            ExitCode::from(1)
        }
    }
}
