//! `toolstream classify`: one failure in, one decision out.

use std::io::Read;

use toolstream::classify::{
    classify_http, classify_stream_error, classify_transport, HttpFailure, Phase, Policy, Provider,
    Verdict,
};

/// Classify what the arguments describe; the text to print, or a usage error.
pub(crate) fn run(args: &[String]) -> Result<String, String> {
    let mut provider = Provider::Other;
    let mut status: Option<u16> = None;
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut body: Option<Vec<u8>> = None;
    let mut phase: Option<Phase> = None;
    let mut transport: Option<String> = None;
    let mut attempt = 0u32;
    let mut json = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--provider" => {
                let v = value("--provider")?;
                provider = Provider::from_name(&v).ok_or(format!("unknown provider '{v}'"))?;
            }
            "--status" => {
                let v = value("--status")?;
                status = Some(v.parse().map_err(|_| format!("bad status '{v}'"))?);
            }
            "--header" => {
                let v = value("--header")?;
                let (n, val) = v
                    .split_once(':')
                    .ok_or(format!("header '{v}' is not 'Name: value'"))?;
                headers.push((n.trim().to_string(), val.trim().to_string()));
            }
            "--body" => body = Some(value("--body")?.into_bytes()),
            "--body-file" => {
                let v = value("--body-file")?;
                body = Some(std::fs::read(&v).map_err(|e| format!("cannot read {v}: {e}"))?);
            }
            "-" => {
                let mut b = Vec::new();
                std::io::stdin()
                    .read_to_end(&mut b)
                    .map_err(|e| format!("cannot read stdin: {e}"))?;
                body = Some(b);
            }
            "--phase" => {
                phase = Some(match value("--phase")?.as_str() {
                    "before_output" => Phase::BeforeOutput,
                    "after_output" => Phase::AfterOutput,
                    other => return Err(format!("bad phase '{other}'")),
                })
            }
            "--transport" => transport = Some(value("--transport")?),
            "--attempt" => {
                let v = value("--attempt")?;
                attempt = v.parse().map_err(|_| format!("bad attempt '{v}'"))?;
            }
            "--json" => json = true,
            other => return Err(format!("unknown option '{other}'")),
        }
    }
    let policy = Policy::default();
    let body = body.unwrap_or_default();
    let verdict = if let Some(msg) = transport {
        classify_transport(&msg, attempt, &policy)
    } else if let Some(phase) = phase {
        classify_stream_error(provider, &body, phase, attempt, &policy)
    } else {
        let status =
            status.ok_or("give --status (HTTP error), --phase (stream error) or --transport")?;
        let h: Vec<(&str, &str)> = headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        classify_http(
            &HttpFailure {
                provider,
                status,
                headers: &h,
                body: &body,
                attempt,
            },
            &policy,
        )
    };
    Ok(render(&verdict, json))
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
