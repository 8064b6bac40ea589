//! `toolstream classify`: one failure in, one decision out.

use std::io::Read;

use toolstream::classify::{
    classify_http, classify_stream_error, classify_transport, HttpFailure, Phase, Policy, Provider,
    Verdict,
};

/// The failure the arguments describe.
#[derive(Default)]
struct Args {
    provider: Option<Provider>,
    status: Option<u16>,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    phase: Option<Phase>,
    transport: Option<String>,
    attempt: u32,
    json: bool,
}

/// Classify what the arguments describe; the text to print, or a usage error.
pub(crate) fn run(args: &[String]) -> Result<String, String> {
    let a = parse(args)?;
    let policy = Policy::default();
    let provider = a.provider.unwrap_or(Provider::Other);
    let verdict = if let Some(msg) = a.transport {
        classify_transport(&msg, a.attempt, &policy)
    } else if let Some(phase) = a.phase {
        classify_stream_error(provider, &a.body, phase, a.attempt, &policy)
    } else {
        let status = a
            .status
            .ok_or("give --status (HTTP error), --phase (stream error) or --transport")?;
        let h: Vec<(&str, &str)> = a
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        classify_http(
            &HttpFailure {
                provider,
                status,
                headers: &h,
                body: &a.body,
                attempt: a.attempt,
            },
            &policy,
        )
    };
    Ok(render(&verdict, a.json))
}

/// The options, read in order; a usage error names the one at fault.
fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--provider" => {
                let v = value("--provider")?;
                a.provider =
                    Some(Provider::from_name(&v).ok_or(format!("unknown provider '{v}'"))?);
            }
            "--status" => {
                let v = value("--status")?;
                a.status = Some(v.parse().map_err(|_| format!("bad status '{v}'"))?);
            }
            "--header" => {
                let v = value("--header")?;
                let (n, val) = v
                    .split_once(':')
                    .ok_or(format!("header '{v}' is not 'Name: value'"))?;
                a.headers
                    .push((n.trim().to_string(), val.trim().to_string()));
            }
            "--body" => a.body = value("--body")?.into_bytes(),
            "--body-file" => {
                let v = value("--body-file")?;
                a.body = std::fs::read(&v).map_err(|e| format!("cannot read {v}: {e}"))?;
            }
            "-" => {
                a.body.clear();
                std::io::stdin()
                    .read_to_end(&mut a.body)
                    .map_err(|e| format!("cannot read stdin: {e}"))?;
            }
            "--phase" => {
                a.phase = Some(match value("--phase")?.as_str() {
                    "before_output" => Phase::BeforeOutput,
                    "after_output" => Phase::AfterOutput,
                    other => return Err(format!("bad phase '{other}'")),
                })
            }
            "--transport" => a.transport = Some(value("--transport")?),
            "--attempt" => {
                let v = value("--attempt")?;
                a.attempt = v.parse().map_err(|_| format!("bad attempt '{v}'"))?;
            }
            "--json" => a.json = true,
            other => return Err(format!("unknown option '{other}'")),
        }
    }
    Ok(a)
}

/// The verdict as the text to print: one JSON line, or one field per line.
fn render(v: &Verdict, json: bool) -> String {
    use std::fmt::Write;
    if json {
        return serde_json::to_string(v).expect("a verdict serialises") + "\n";
    }
    let mut out = String::new();
    let _ = writeln!(out, "reason:   {}", v.reason);
    let _ = writeln!(out, "action:   {}", v.action);
    let flags: Vec<&str> = [
        (v.retryable, "retryable"),
        (v.should_fallback, "should_fallback"),
        (v.should_compress, "should_compress"),
        (v.rotate_credential, "rotate_credential"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, name)| *name)
    .collect();
    let flags = if flags.is_empty() {
        "-".to_string()
    } else {
        flags.join(", ")
    };
    let _ = writeln!(out, "flags:    {flags}");
    if let Some(d) = v.retry_after {
        let _ = writeln!(out, "wait:     {} ms", d.as_millis());
    }
    if !v.message.is_empty() {
        let _ = writeln!(out, "message:  {}", v.message);
    }
    if let Some(hint) = v.hint {
        let _ = writeln!(out, "hint:     {hint}");
    }
    let _ = writeln!(out, "rule:     {}", v.rule);
    out
}
