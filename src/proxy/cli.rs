//! The proxy's command line: `toolstream proxy` and `toolstream-proxy`.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use super::{serve_until, Config};
use crate::classify::Provider;
use crate::rewrite::text::TextCalls;

const HELP: &str = "\
usage: toolstream proxy --upstream URL [--listen HOST:PORT] [options]
       toolstream proxy --config FILE [options]

An HTTP proxy between an agent and its LLM provider. Point the agent's base URL at it
(http://HOST:PORT/v1 for an OpenAI client, http://HOST:PORT for an Anthropic one): the
request path is forwarded unchanged after URL's own path.

OpenAI chat completions (streaming and not), Responses streams and Anthropic messages
come back with each tool call whole and validated the moment its arguments close: calls
glued into one arguments string are split (each with an id made from the first's, in the
provider's shape; an SSE comment says which), duplicates dropped, ids minted where
missing, failed calls forwarded as the provider sent them with an SSE comment; a stream the upstream cut
ends with an error event, never a clean end. Requests whose history holds tool-call
arguments that are not one JSON object are repaired before they are forwarded
(as {\"INVALID_JSON\": raw}; the response's toolstream-repaired header says where).

Errors are decided by what they are, before the client has a byte of the answer: a
transient one (rate limit within the wait budget, overloaded, server error, timeout,
connection) is retried on the same upstream after the provider's retry-after or a
backoff with jitter (--retries times); past that, or on quota, auth, an unknown model, a
rate limit longer than the budget, the request goes to the next --fallback when there is
one. The model's own broken output, truncated output, a content policy, a context
overflow, an invalid request or a request to change never go elsewhere: no other
upstream fixes them. The client gets the last error unchanged, with toolstream-reason,
toolstream-action, retry-after when the provider gave a delay, and toolstream-attempts
when there was more than one. GET /healthz answers ok; GET /metrics gives the counts in
the Prometheus text format (OpenMetrics): requests by route, answering upstream and
status, failed attempts by reason, action and decision, calls by outcome, requests
repaired, streams open, bytes read and sent, time to the upstream's first byte, from the
bytes that close a call to its hand-over to the client, and in all.

  --config FILE            settings from a TOML file whose keys are these flags' names
                           (max_streams = 64, repair = true, ...) and whose [[upstreams]]
                           entries (url, provider, key_env, routes) are --upstream then the
                           --fallbacks in order; flags given too override it
                           (examples/proxy.toml is a commented sample)
  --upstream URL           scheme://host[:port][/prefix] (http or https)
  --fallback URL           where a request goes when the verdict is to fall back, after
                           --upstream (repeatable, tried in order; the client's headers,
                           credentials included, go with it). Default: none
  --key-env VAR            the --upstream or --fallback just before gets the key in the
                           environment variable VAR (read at start) instead of the
                           client's credentials: Authorization: Bearer, x-api-key to
                           Anthropic. A key is never taken from the command line or a file
  --upstream-provider NAME who the --upstream or --fallback just before is, for the
                           classifier (default: --provider)
  --routes LIST            the routes the --upstream or --fallback just before serves, of
                           chat, messages, responses, other (comma-separated; default all):
                           a request goes to the upstreams of its route, in order
  --no-metrics             no GET /metrics, nothing counted
  --drain S                on SIGTERM or SIGINT: stop accepting, answer /healthz and new
                           requests with 503, give open requests S seconds (default 30),
                           then end each stream still open with an error event; exit 0
  --retries N              retries of a transient failure on one upstream (default 2)
  --max-wait S             the longest wait for a retry, seconds (default 30; a longer
                           retry-after falls back instead)
  --listen HOST:PORT       where to listen (default 127.0.0.1:8080)
  --provider NAME          who the upstream is, for the classifier: openai, anthropic, groq,
                           vllm, ... (default: by the request path)
  --keep-finish-reason     leave the provider's `stop` when calls were delivered (default:
                           `tool_calls`, so that clients run the calls)
  --no-repair              forward requests as they are; a history an upstream refuses
                           for arguments that are not one JSON object is then repaired
                           and sent once more to it (toolstream-repaired says so)
  --repair                 repair closed-form mistakes in a call's arguments (a
                           trailing comma, single quotes, a fence or prose around the
                           object, ...) and coerce a string where the request's tool
                           schema says a number, boolean, object or array: the call goes
                           to the client valid, after an SSE comment listing each change
                           (a whole body: the toolstream-calls-repaired header counts
                           them); never a cut or ambiguous call (default: off, such a
                           call is forwarded as sent, annotated)
  --text-calls FAMILY      take the calls a model wrote into its text out of it and send
                           them as the API's calls (chat tool_calls, Messages tool_use
                           blocks, Responses function_call items; streaming and not): auto
                           (any family, by its marker) or one of hermes, qwen3_coder,
                           glm45, mistral, llama, kimi_k2, deepseek, minimax_m2, gpt_oss,
                           pythonic, cohere, step3, granite, longcat, seed_oss, internlm,
                           jamba, gemma4, json, phi4_mini, sarashina, inkling, olmo3,
                           granite_20b_fc, kimi_k3, hy_v4 (docs/text-calls.md lists each one's
                           models; auto reads
                           all but json and phi4_mini, which have no marker).
                           Only calls to the tools the request declared are taken; other
                           markup, and markup that cannot be read, stays in the text.
  --max-streams N          streams at once (default 1024; past it a 503)
  --max-connections N      client connections at once (default 4096; past it a 503 and
                           the connection closed)
  --header-timeout S       seconds to send a request's head (default 30; heads over 64 KiB
                           get a 431)
  --max-request-bytes N    largest request body (default 33554432)
  --connect-timeout S      seconds to connect to the upstream (default 10)
  --first-byte-timeout S   seconds to the upstream's response head (default 300)
  --idle-timeout S         seconds between two pieces of a body (default 300)

Limits. At start the soft file-descriptor limit is raised to the hard one (F), and the
limits are fitted to it: streams = min(--max-streams, (F - 128) / 2), connections =
min(--max-connections, F - 128 - streams); past them a 503 in the provider's shape, and
past 64 connections more the proxy stops accepting until one closes. No accept error ends
the process. Memory is bounded by: streams x (--max-request-bytes + 24 MiB of framing
limits + 64 KiB of a call's fragments read ahead + 16 MiB of a non-streaming body or of
Responses call events held) + 4 x max(6 x --max-request-bytes, 30 x 16 MiB)
for the work done 4 at once (request repairs on the bytes; non-streaming rewrites, still
on a tree; a body of at most 16 KiB is read on its worker's thread instead, at most one a
worker) + 4 x 64 KiB x 1024 for declared tools' schemas.

Connections are served by one thread a core (TOOLSTREAM_WORKERS=N sets how many), each
connection on one of them with its upstream connection, as nginx's workers.

Logs go to stderr, one line per request (RUST_LOG=debug for more); credentials and bodies
are never logged.";

/// Runs the proxy with command-line `args` (those after `proxy`) until it is interrupted:
/// `--help`, usage errors (exit 2), the logger on stderr, the file-descriptor limit raised,
/// a multi-threaded runtime, the listener and [`serve`](super::serve).
pub fn main(args: &[String]) -> ExitCode {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        // A closed stdout (`| head`) is not an error of the proxy's.
        let _ = writeln!(std::io::stdout().lock(), "{HELP}");
        return ExitCode::SUCCESS;
    }
    let (config, listen) = match parse(args) {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("toolstream proxy: {msg}\nTry 'toolstream proxy --help'.");
            return ExitCode::from(2);
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        // Colour on a terminal only, and not under NO_COLOR.
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none(),
        )
        .init();
    match super::raise_fd_limit() {
        Ok(n) => tracing::debug!(fds = n, "file-descriptor limit"),
        Err(e) => tracing::warn!(error = %e, "the file-descriptor limit could not be raised"),
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("toolstream proxy: {e}");
            return ExitCode::from(1);
        }
    };
    rt.block_on(async move {
        let listener = match listen_on(&listen).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("toolstream proxy: cannot listen on {listen}: {e}");
                return ExitCode::from(1);
            }
        };
        let addr = listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or(listen);
        tracing::info!(
            listen = %addr,
            upstream = %config.upstreams[0].uri,
            fallbacks = config.upstreams.len() - 1,
            "proxy ready"
        );
        // SIGINT or SIGTERM: drain (see `serve_until`), then exit 0.
        let shutdown = async {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                match signal(SignalKind::terminate()) {
                    Ok(mut term) => {
                        tokio::select! {
                            _ = tokio::signal::ctrl_c() => {}
                            _ = term.recv() => {}
                        }
                    }
                    Err(_) => {
                        let _ = tokio::signal::ctrl_c().await;
                    }
                }
            }
            #[cfg(not(unix))]
            {
                let _ = tokio::signal::ctrl_c().await;
            }
            tracing::info!("shutdown asked for");
        };
        match serve_until(listener, config, shutdown).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("toolstream proxy: {e}");
                ExitCode::from(1)
            }
        }
    })
}

/// A listener with a deep accept queue: the connections that wait while the proxy is at
/// its limits wait there (the kernel caps it at `net.core.somaxconn`), rather than being
/// dropped or reset by a full queue.
async fn listen_on(listen: &str) -> std::io::Result<tokio::net::TcpListener> {
    let mut last = None;
    for addr in tokio::net::lookup_host(listen).await? {
        let socket = if addr.is_ipv4() {
            tokio::net::TcpSocket::new_v4()?
        } else {
            tokio::net::TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        match socket
            .bind(addr)
            .and_then(|()| socket.listen(LISTEN_BACKLOG))
        {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no address to listen on")))
}

/// A config file (TOML) as the flags it stands for: each top-level key is a flag's name
/// (`max_streams = 64` is `--max-streams 64`; `true` turns a switch on, `false` gives its
/// opposite: `repair_requests = false` is `--no-repair`); `[[upstreams]]` entries, in order,
/// are `--upstream` then `--fallback`s, each with its `provider` and `key_env`. Unknown keys
/// are errors (a typo must not pass silently).
fn file_args(path: &str) -> Result<Vec<String>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("cannot read --config '{path}': {e}"))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| format!("--config '{path}': {e}"))?;
    let mut out = Vec::new();
    for (key, value) in &table {
        let flag = format!("--{}", key.replace('_', "-"));
        match (key.as_str(), value) {
            ("upstreams", toml::Value::Array(list)) => {
                for (k, entry) in list.iter().enumerate() {
                    let toml::Value::Table(t) = entry else {
                        return Err(format!("--config '{path}': upstreams[{k}] is not a table"));
                    };
                    for name in t.keys() {
                        if !matches!(name.as_str(), "url" | "provider" | "key_env" | "routes") {
                            return Err(format!(
                                "--config '{path}': upstreams[{k}] has an unknown key '{name}' \
                                 (url, provider, key_env, routes)"
                            ));
                        }
                    }
                    let text = |name: &str| match t.get(name) {
                        None => Ok(None),
                        Some(toml::Value::String(s)) => Ok(Some(s.clone())),
                        Some(_) => Err(format!(
                            "--config '{path}': upstreams[{k}].{name} is not a string"
                        )),
                    };
                    let url = text("url")?
                        .ok_or(format!("--config '{path}': upstreams[{k}] has no url"))?;
                    out.push(if k == 0 { "--upstream" } else { "--fallback" }.to_string());
                    out.push(url);
                    if let Some(p) = text("provider")? {
                        out.extend(["--upstream-provider".to_string(), p]);
                    }
                    if let Some(var) = text("key_env")? {
                        out.extend(["--key-env".to_string(), var]);
                    }
                    match t.get("routes") {
                        None => {}
                        Some(toml::Value::Array(list)) => {
                            let mut names = Vec::new();
                            for r in list {
                                let toml::Value::String(r) = r else {
                                    return Err(format!(
                                        "--config '{path}': upstreams[{k}].routes holds a non-string"
                                    ));
                                };
                                names.push(r.clone());
                            }
                            out.extend(["--routes".to_string(), names.join(",")]);
                        }
                        Some(_) => {
                            return Err(format!(
                                "--config '{path}': upstreams[{k}].routes is not a list"
                            ))
                        }
                    }
                }
            }
            ("listen" | "provider" | "text_calls", toml::Value::String(s)) => {
                out.extend([flag, s.clone()])
            }
            (
                "max_streams" | "max_connections" | "header_timeout" | "max_request_bytes"
                | "connect_timeout" | "first_byte_timeout" | "idle_timeout" | "retries"
                | "max_wait" | "drain",
                toml::Value::Integer(n),
            ) if *n >= 0 => out.extend([flag, n.to_string()]),
            ("keep_finish_reason", toml::Value::Boolean(b)) => {
                if *b {
                    out.push(flag);
                }
            }
            ("repair_requests", toml::Value::Boolean(b)) => out.push(
                if *b {
                    "--repair-requests"
                } else {
                    "--no-repair"
                }
                .to_string(),
            ),
            ("repair", toml::Value::Boolean(b)) => {
                out.push(if *b { "--repair" } else { "--no-repair-calls" }.to_string())
            }
            ("metrics", toml::Value::Boolean(b)) => {
                out.push(if *b { "--metrics" } else { "--no-metrics" }.to_string())
            }
            _ => {
                return Err(format!(
                    "--config '{path}': unknown key '{key}', or a value of the wrong type"
                ))
            }
        }
    }
    Ok(out)
}

/// The accept queue asked for.
const LISTEN_BACKLOG: u32 = 8192;

fn parse(args: &[String]) -> Result<(Config, String), String> {
    // A config file's keys are the flags' names: its settings come first, the command
    // line's after them, so that a flag overrides the file.
    let mut all = Vec::new();
    let mut rest = args.iter();
    let mut cli = Vec::new();
    while let Some(a) = rest.next() {
        if a == "--config" {
            let path = rest.next().ok_or("--config needs a value")?;
            all.extend(file_args(path)?);
        } else {
            cli.push(a.clone());
        }
    }
    all.extend(cli);
    let args = &all;
    let mut upstream: Option<String> = None;
    let mut listen = "127.0.0.1:8080".to_string();
    let mut provider = None;
    let mut keep = false;
    let mut repair = true;
    let mut repair_calls = false;
    let mut text_calls = TextCalls::Off;
    // The upstreams: (URL, provider, key's environment variable, routes), the first
    // --upstream's.
    type Up = (String, Option<Provider>, Option<String>, Vec<String>);
    let mut ups: Vec<Up> = Vec::new();
    let mut metrics = true;
    let mut numbers: Vec<(&str, u64)> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--upstream" => {
                let url = value("--upstream")?;
                upstream = Some(url.clone());
                match ups.first_mut() {
                    Some(first) => *first = (url, None, None, Vec::new()),
                    None => ups.push((url, None, None, Vec::new())),
                }
            }
            "--fallback" => {
                let url = value("--fallback")?;
                if ups.is_empty() {
                    // The first upstream's place is --upstream's.
                    ups.push((String::new(), None, None, Vec::new()));
                }
                ups.push((url, None, None, Vec::new()));
            }
            "--key-env" => {
                let var = value("--key-env")?;
                let last = ups
                    .last_mut()
                    .ok_or("--key-env names the key of the --upstream or --fallback before it")?;
                last.2 = Some(var);
            }
            "--routes" => {
                let v = value("--routes")?;
                let mut routes = Vec::new();
                for r in v.split(',').map(str::trim).filter(|r| !r.is_empty()) {
                    if !matches!(r, "chat" | "messages" | "responses" | "other") {
                        return Err(format!(
                            "unknown route '{r}' in --routes (chat, messages, responses, other)"
                        ));
                    }
                    routes.push(r.to_string());
                }
                let last = ups
                    .last_mut()
                    .ok_or("--routes names the routes of the --upstream or --fallback before it")?;
                last.3 = routes;
            }
            "--upstream-provider" => {
                let v = value("--upstream-provider")?;
                let p = Provider::from_name(&v).ok_or(format!("unknown provider '{v}'"))?;
                let last = ups.last_mut().ok_or(
                    "--upstream-provider names who the --upstream or --fallback before it is",
                )?;
                last.1 = Some(p);
            }
            "--no-metrics" => metrics = false,
            "--metrics" => metrics = true,
            "--listen" => listen = value("--listen")?,
            "--provider" => {
                let v = value("--provider")?;
                provider = Some(Provider::from_name(&v).ok_or(format!("unknown provider '{v}'"))?);
            }
            "--keep-finish-reason" => keep = true,
            "--no-repair" => repair = false,
            "--repair-requests" => repair = true,
            "--repair" => repair_calls = true,
            "--no-repair-calls" => repair_calls = false,
            "--text-calls" => {
                let v = value("--text-calls")?;
                text_calls = TextCalls::from_name(&v).ok_or_else(|| {
                    let names: Vec<&str> = crate::text_calls::Family::ALL
                        .iter()
                        .map(|f| f.name())
                        .collect();
                    format!(
                        "unknown --text-calls family '{v}' (auto, {})",
                        names.join(", ")
                    )
                })?;
            }
            n @ ("--max-streams"
            | "--max-connections"
            | "--header-timeout"
            | "--max-request-bytes"
            | "--connect-timeout"
            | "--first-byte-timeout"
            | "--idle-timeout"
            | "--retries"
            | "--max-wait"
            | "--drain") => {
                let v = value(n)?;
                let x = v
                    .parse()
                    .map_err(|_| format!("bad number for {n}: '{v}'"))?;
                numbers.push((n, x));
            }
            other => return Err(format!("unknown option '{other}'")),
        }
    }
    // HOST:PORT, checked here so that a wrong one is a usage error (exit 2).
    if !listen
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok())
    {
        return Err(format!("bad --listen '{listen}': expected HOST:PORT"));
    }
    upstream.ok_or("--upstream is required (or an [[upstreams]] entry in --config)")?;
    let base = |flag: &str, url: &str| -> Result<http::Uri, String> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| format!("bad {flag} '{url}': {e}"))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
            return Err(format!(
                "{flag} '{url}' is not http(s)://host[:port][/prefix]"
            ));
        }
        Ok(uri)
    };
    let mut config = Config::new(base("--upstream", &ups[0].0)?);
    config.upstreams.clear();
    for (k, (url, provider, key_env, routes)) in ups.into_iter().enumerate() {
        let flag = if k == 0 { "--upstream" } else { "--fallback" };
        let key = match key_env {
            Some(var) => Some(std::env::var(&var).map_err(|_| {
                format!("the key of {flag} '{url}' is read from ${var}, which is not set")
            })?),
            None => None,
        };
        config.upstreams.push(super::Upstream {
            uri: base(flag, &url)?,
            provider,
            key,
            routes,
        });
    }
    config.metrics = metrics;
    config.provider = provider;
    config.keep_finish_reason = keep;
    config.repair_requests = repair;
    config.repair_calls = repair_calls;
    config.text_calls = text_calls;
    for (n, x) in numbers {
        match n {
            "--max-streams" => config.max_streams = x.max(1) as usize,
            "--max-connections" => config.max_connections = x.max(1) as usize,
            "--header-timeout" => config.header_timeout = Duration::from_secs(x.max(1)),
            "--max-request-bytes" => config.max_request_bytes = x as usize,
            "--connect-timeout" => config.connect_timeout = Duration::from_secs(x),
            "--first-byte-timeout" => config.first_byte_timeout = Duration::from_secs(x),
            "--retries" => config.decisions.max_retries = x.min(u64::from(u32::MAX)) as u32,
            "--max-wait" => config.decisions.wait_budget = Duration::from_secs(x),
            "--drain" => config.drain = Duration::from_secs(x),
            _ => config.idle_timeout = Duration::from_secs(x),
        }
    }
    Ok((config, listen))
}
