//! `toolstream classify`: one failure in, one decision out.

use std::io::Read;

use toolstream::classify::{
    classify_http, classify_stream_error, classify_transport, HttpFailure, Phase, Policy, Provider,
    Verdict,
};

pub(crate) fn run(args: &[String]) -> Result<(), String> {
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
    print(&verdict, json);
    Ok(())
}

fn print(v: &Verdict, json: bool) {
    let retry_after_ms = v.retry_after.map(|d| d.as_millis() as u64);
    if json {
        let out = serde_json::to_string(v).expect("a verdict serialises");
        println!("{out}");
    } else {
        println!("reason:   {}", v.reason);
        println!("action:   {}", v.action);
        let mut flags = Vec::new();
        for (on, name) in [
            (v.retryable, "retryable"),
            (v.should_fallback, "should_fallback"),
            (v.should_compress, "should_compress"),
            (v.rotate_credential, "rotate_credential"),
        ] {
            if on {
                flags.push(name);
            }
        }
        println!(
            "flags:    {}",
            if flags.is_empty() {
                "-".to_string()
            } else {
                flags.join(", ")
            }
        );
        if let Some(ms) = retry_after_ms {
            println!("wait:     {ms} ms");
        }
        if !v.message.is_empty() {
            println!("message:  {}", v.message);
        }
        if let Some(hint) = v.hint {
            println!("hint:     {hint}");
        }
        println!("rule:     {}", v.rule);
    }
}
