//! The `toolstream` command line.
//!
//! ```text
//! toolstream <inspect|split|classify|help> [options] [FILE|-]
//! ```

use std::fs::File;
use std::io::{self, Read, Write};
use std::process::ExitCode;

use bytes::BytesMut;
use toolstream::json::{Mode, Splitter, Value};

mod classify;
mod inspect;

/// The proxy's allocator (`mimalloc` in Cargo.toml says why), in a build with the proxy.
#[cfg(feature = "proxy")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const HELP: &str = "\
toolstream: tool calls out of LLM provider streams, the moment each one closes.

usage: toolstream <command> [options] [FILE|-]

commands:
  inspect   run a captured streaming response through the pipeline: its tool calls, text,
            errors, and whether it ended properly
  split     split a stream of concatenated JSON values, each printed as it completes
  classify  turn a failure (HTTP error, error in a stream, transport error) into a decision
  proxy     an HTTP proxy between an agent and its provider (with the `proxy` feature)
  help      print this, or a command's help: toolstream help inspect

options:
  -h, --help     print help (also after a command: toolstream inspect --help)
  -V, --version  print the version

Input is FILE, or stdin when FILE is - or absent.";

const INSPECT_HELP: &str = "\
usage: toolstream inspect [--provider NAME|auto] [--chunk N] [--json] [--turn | --preview]
                          [--tools REQUEST.json [--text-calls FAMILY|auto]] [--repair]
                          [FILE|-]

Runs a captured streaming response through the pipeline and lists its tool calls (each as
soon as its arguments closed), text, finish, errors and whether the stream ended properly.
Reads SSE, NDJSON (Ollama) and the binary AWS event stream framing (Bedrock).

  --provider NAME  the format: openai, responses, anthropic, gemini, ollama, bedrock
                   (ConverseStream), or auto (default: detected from the first frames)
  --chunk N        re-cut the input into N-byte pushes (the results must not change)
  --json           one JSON object per event (with --preview: per event and per view)
  --turn           print instead the assistant turn a tool loop sends back in its next
                   request, in the format's request shape, with the reasoning, signatures
                   and items the provider checks
  --preview        print the events and, after each push (16 bytes unless --chunk says),
                   the view of every call whose arguments changed, as a user interface
                   would show them while they stream
  --repair         repair closed-form mistakes in a call's arguments (a fence or prose
                   around the object, trailing commas, single quotes, unquoted keys,
                   Python literals, comments, raw newlines, bad escapes, the object as a
                   string), each change listed; never a cut or ambiguous call
  --tools FILE     check each call against the tools a request declared (the request
                   body, or its tools array, in any provider's shape): an undeclared name or
                   arguments that do not match the JSON Schema are listed under the call
  --text-calls F   take the calls a model wrote into its text out of it and list them as
                   calls (ids made in the API's shape): F is hermes, qwen3_coder, glm45, mistral,
                   llama, kimi_k2, deepseek, minimax_m2, gpt_oss, pythonic, cohere, step3,
                   granite, longcat, seed_oss, internlm, jamba, gemma4, json, phi4_mini,
                   sarashina, inkling, olmo3, granite_20b_fc, kimi_k3, hy_v4, or auto (any
                   of them by its marker; json and phi4_mini only when named). Only calls to the tools --tools declares are taken;
                   any other markup stays text

Exit status: 0 when the stream was read (even with failed calls), 1 on unreadable input,
2 on a usage error.";

const SPLIT_HELP: &str = "\
usage: toolstream split [--any] [--json] [FILE|-]

Reads a stream of concatenated JSON values and prints each value's exact bytes on its own
line as soon as it is complete.

  --any    accept any JSON value at the top level (default: objects only, as for
           tool-call arguments)
  --json   print one JSON object per value: {\"index\":N,\"start\":S,\"end\":E,\"value\":V}

Exit status: 0 on a clean end, 1 on invalid, truncated or unreadable input (a one-line
message with the byte offset and error kind goes to stderr), 2 on a usage error.";

const CLASSIFY_HELP: &str = "\
usage: toolstream classify [--provider NAME] [--status N] [--header 'Name: value']...
                           [--body STRING | --body-file FILE | -]
                           [--phase before_output|after_output]
                           [--transport MESSAGE] [--attempt N] [--json]

Turns a failure into a decision (retry, retry_with_feedback, compress, repair_request,
fallback, surface): an HTTP error (--status, --header, --body), an error event inside a
stream (--phase, with the event's JSON as the body), or a transport error (--transport).

  --provider NAME  openai azure anthropic gemini ollama openrouter bedrock mistral groq
                   deepseek xai vllm llamacpp other (default)
  --attempt N      retries of this request already made (default 0)
  --json           one JSON object with every field of the decision

Exit status: 0, or 2 on a usage error.";

/// Write to stdout; a closed pipe (`| head`) ends the output quietly.
fn say(text: &str) {
    let mut out = io::stdout().lock();
    let _ = out
        .write_all(text.as_bytes())
        .and_then(|()| out.write_all(b"\n"));
    let _ = out.flush();
}

/// A usage error: one line, and where to look.
fn usage_error(command: &str, msg: &str) -> ExitCode {
    eprintln!("toolstream {command}: {msg}\nTry 'toolstream {command} --help'.");
    ExitCode::from(2)
}

fn help_of(command: &str) -> Option<&'static str> {
    match command {
        "inspect" => Some(INSPECT_HELP),
        "split" => Some(SPLIT_HELP),
        "classify" => Some(CLASSIFY_HELP),
        _ => None,
    }
}

struct Args {
    mode: Mode,
    json: bool,
    path: Option<String>,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let it = args.iter();
    let mut out = Args {
        mode: Mode::Objects,
        json: false,
        path: None,
    };
    for a in it {
        match a.as_str() {
            "--any" => out.mode = Mode::Any,
            "--json" => out.json = true,
            s if s.starts_with('-') && s != "-" => return Err(format!("unknown option '{s}'")),
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
            eprintln!("toolstream split: {e}");
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
            eprintln!("toolstream split: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = argv.first().map(String::as_str) else {
        eprintln!("toolstream: missing command\nTry 'toolstream --help'.");
        return ExitCode::from(2);
    };
    let rest = &argv[1..];
    match command {
        "-h" | "--help" => {
            say(HELP);
            return ExitCode::SUCCESS;
        }
        "-V" | "--version" => {
            say(concat!("toolstream ", env!("CARGO_PKG_VERSION")));
            return ExitCode::SUCCESS;
        }
        "help" => {
            return match rest.first().map(String::as_str) {
                None => {
                    say(HELP);
                    ExitCode::SUCCESS
                }
                Some(c) => match help_of(c) {
                    Some(h) => {
                        say(h);
                        ExitCode::SUCCESS
                    }
                    None => {
                        eprintln!(
                            "toolstream help: unknown command '{c}'\nTry 'toolstream --help' for the commands."
                        );
                        ExitCode::from(2)
                    }
                },
            };
        }
        "proxy" => return proxy(rest),
        _ => {}
    }
    let Some(help) = help_of(command) else {
        eprintln!("toolstream: unknown command '{command}'\nTry 'toolstream --help'.");
        return ExitCode::from(2);
    };
    // Help anywhere among a command's options (but not as another option's value:
    // `--body -h` is a body).
    if rest.first().is_some_and(|a| a == "-h" || a == "--help")
        || rest
            .windows(2)
            .any(|w| (w[1] == "-h" || w[1] == "--help") && !takes_value(command, &w[0]))
    {
        say(help);
        return ExitCode::SUCCESS;
    }
    match command {
        "inspect" => inspect_main(rest),
        "classify" => match classify::run(rest) {
            Ok(text) => {
                let mut out = io::stdout().lock();
                let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
                ExitCode::SUCCESS
            }
            Err(msg) => usage_error("classify", &msg),
        },
        _ => split_main(rest),
    }
}

/// `toolstream proxy`: the library's `proxy` module, in builds with the `proxy` feature.
#[cfg(feature = "proxy")]
fn proxy(args: &[String]) -> ExitCode {
    toolstream::proxy::main(args)
}

/// `toolstream proxy` in a build without the `proxy` feature: how to get one.
#[cfg(not(feature = "proxy"))]
fn proxy(_args: &[String]) -> ExitCode {
    eprintln!(
        "toolstream proxy: this build has no proxy; install one with \
         `cargo install --path . --features proxy` (from a clone) or \
         `cargo install toolstream --features proxy`"
    );
    ExitCode::from(1)
}

/// Whether an option of `command` takes a value (so that what follows it is that value).
fn takes_value(command: &str, option: &str) -> bool {
    match command {
        "inspect" => matches!(
            option,
            "--provider" | "--chunk" | "--tools" | "--text-calls"
        ),
        "classify" => matches!(
            option,
            "--provider"
                | "--status"
                | "--header"
                | "--body"
                | "--body-file"
                | "--phase"
                | "--transport"
                | "--attempt"
        ),
        _ => false,
    }
}

fn inspect_main(rest: &[String]) -> ExitCode {
    let args = match inspect::parse(rest) {
        Ok(a) => a,
        Err(msg) => return usage_error("inspect", &msg),
    };
    match inspect::main(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        // A `--tools` file's error names that file, not the capture.
        Err(e)
            if e.get_ref()
                .is_some_and(|i| i.is::<inspect::ToolsFileError>()) =>
        {
            eprintln!("toolstream inspect: {e}");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("toolstream inspect: {}: {e}", args.input_name());
            ExitCode::from(1)
        }
    }
}

fn split_main(rest: &[String]) -> ExitCode {
    let args = match parse_args(rest) {
        Ok(a) => a,
        Err(msg) => return usage_error("split", &msg),
    };
    let result = match args.path.as_deref() {
        None | Some("-") => split(io::stdin().lock(), &args),
        Some(p) => match File::open(p) {
            Ok(f) => split(f, &args),
            Err(e) => {
                eprintln!("toolstream split: {p}: {e}");
                return ExitCode::from(1);
            }
        },
    };
    match result {
        Ok(code) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            let name = args.path.as_deref().unwrap_or("stdin");
            eprintln!("toolstream split: {name}: {e}");
            ExitCode::from(1)
        }
    }
}
