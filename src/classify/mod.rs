//! Every failure becomes a decision: retry, retry with feedback to the model, compress the
//! context, repair the request (the provider refused what it replays of the model's
//! reasoning, and said how), fall back to another provider, or surface the error.
//!
//! Pure functions (no I/O, no clock) from a failure to a [`Verdict`]:
//!
//! * [`classify_http`] — an HTTP error response: provider, status, headers, body;
//! * [`classify_stream_error`] — an error event inside a 200 stream, with the [`Phase`];
//! * [`classify_tool_failure`] — a tool call whose arguments failed (from the assembler);
//! * [`classify_transport`] — a transport error message with no status.
//!
//! The rules are data: ordered tables in [`rules`], checked in this order — structured codes
//! in the body (`error.type`, `error.code`, Gemini `error.status` and `details[].reason`,
//! Anthropic `error.type`, Bedrock's `x-amzn-errortype`; OpenRouter's wrapped
//! `error.metadata.raw` is unwrapped first), then provider-specific messages, then
//! cross-provider message patterns (case-insensitive), then the HTTP status. The first rule
//! that matches decides the [`Reason`]; the [`Policy`] turns the reason into an [`Action`].
//!
//! The motivating bug: a `400 invalid tool call arguments` from an Ollama
//! OpenAI-compatible proxy is the model's own malformed JSON, which no other provider can
//! fix. It is [`Reason::ModelOutput`] → [`Action::RetryWithFeedback`], never a fallback:
//!
//! ```
//! use toolstream::classify::{classify_http, Action, HttpFailure, Policy, Provider, Reason};
//!
//! let body = br#"{"error":{"message":"invalid tool call arguments","type":"invalid_request_error"}}"#;
//! let v = classify_http(
//!     &HttpFailure { provider: Provider::Ollama, status: 400, headers: &[], body, attempt: 0 },
//!     &Policy::default(),
//! );
//! assert_eq!(v.reason, Reason::ModelOutput);
//! assert_eq!(v.action, Action::RetryWithFeedback);
//! assert!(!v.should_fallback);
//! ```

mod body;
mod retry_after;
pub mod rules;

use std::fmt;
use std::time::Duration;

pub use body::ErrorBody;

/// The provider (or server family) that produced the failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI.
    Openai,
    /// Azure OpenAI.
    Azure,
    /// Anthropic.
    Anthropic,
    /// Google Gemini (AI Studio or Vertex).
    Gemini,
    /// Ollama (native or OpenAI-compatible).
    Ollama,
    /// OpenRouter.
    Openrouter,
    /// AWS Bedrock.
    Bedrock,
    /// Mistral.
    Mistral,
    /// Groq.
    Groq,
    /// DeepSeek.
    Deepseek,
    /// xAI.
    Xai,
    /// vLLM.
    Vllm,
    /// llama.cpp server.
    Llamacpp,
    /// Anything else.
    Other,
}

impl Provider {
    /// Every provider, in declaration order.
    pub const ALL: [Provider; 14] = [
        Provider::Openai,
        Provider::Azure,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Ollama,
        Provider::Openrouter,
        Provider::Bedrock,
        Provider::Mistral,
        Provider::Groq,
        Provider::Deepseek,
        Provider::Xai,
        Provider::Vllm,
        Provider::Llamacpp,
        Provider::Other,
    ];

    /// The lower-case name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Openai => "openai",
            Provider::Azure => "azure",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::Ollama => "ollama",
            Provider::Openrouter => "openrouter",
            Provider::Bedrock => "bedrock",
            Provider::Mistral => "mistral",
            Provider::Groq => "groq",
            Provider::Deepseek => "deepseek",
            Provider::Xai => "xai",
            Provider::Vllm => "vllm",
            Provider::Llamacpp => "llamacpp",
            Provider::Other => "other",
        }
    }

    /// Parse a name as printed by [`Provider::as_str`].
    pub fn from_name(name: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.as_str() == name)
    }
}

/// Why the request failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// Too many requests for now; a later retry can succeed.
    RateLimit,
    /// Billing, credits, `insufficient_quota`, per-day limits: retrying here cannot succeed.
    QuotaExhausted,
    /// The provider is overloaded (529, 503, `overloaded_error`, `UNAVAILABLE`).
    Overloaded,
    /// 500 / 502 and the like.
    ServerError,
    /// 408, 504, `DEADLINE_EXCEEDED`, read timeouts.
    Timeout,
    /// Refused, reset, DNS, TLS handshake.
    Connection,
    /// The prompt is longer than the model's context window.
    ContextOverflow,
    /// The request body is too large (413).
    PayloadTooLarge,
    /// Bad, missing or expired credentials.
    Auth,
    /// The credentials are valid but not allowed to do this.
    PermissionDenied,
    /// Unknown, decommissioned or undeployed model.
    ModelNotFound,
    /// The model or route cannot do what was asked (e.g. no tool use).
    UnsupportedCapability,
    /// Refused by a content filter.
    ContentPolicy,
    /// The request itself is wrong (unknown parameter, bad message order, ...).
    InvalidRequest,
    /// The model produced a malformed tool call (its own output, often replayed from history).
    ModelOutput,
    /// The model's output was cut off (token limit) inside a tool call.
    TruncatedOutput,
    /// The reasoning the request replays from earlier turns was refused: Anthropic thinking
    /// blocks missing before a tool loop's calls, altered, or signed for another
    /// conversation, model or account; Gemini thought signatures missing or corrupted;
    /// Responses API reasoning items sent without the item they belong to, or with
    /// encrypted content that cannot be verified. The request must change
    /// ([`Verdict::hint`] says how); no other provider's or model's output is at fault.
    ReasoningReplay,
    /// The request's history or shape is refused in a way the caller can repair, and no
    /// other provider or model would take it as it is: arguments replayed from an earlier
    /// turn that are not JSON, tool calls without their results, `max_tokens` above the
    /// model's maximum ([`Verdict::hint`] says how).
    RequestRepair,
    /// The stream ended without its terminal marker, or lost bytes on the way (a call it
    /// interrupted, [`ToolFailureKind::Interrupted`]).
    StreamInterrupted,
    /// Nothing matched.
    Unknown,
}

impl Reason {
    /// Every reason, in declaration order.
    pub const ALL: [Reason; 20] = [
        Reason::RateLimit,
        Reason::QuotaExhausted,
        Reason::Overloaded,
        Reason::ServerError,
        Reason::Timeout,
        Reason::Connection,
        Reason::ContextOverflow,
        Reason::PayloadTooLarge,
        Reason::Auth,
        Reason::PermissionDenied,
        Reason::ModelNotFound,
        Reason::UnsupportedCapability,
        Reason::ContentPolicy,
        Reason::InvalidRequest,
        Reason::ModelOutput,
        Reason::TruncatedOutput,
        Reason::ReasoningReplay,
        Reason::RequestRepair,
        Reason::StreamInterrupted,
        Reason::Unknown,
    ];

    /// The snake_case name (`rate_limit`, `model_output`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::RateLimit => "rate_limit",
            Reason::QuotaExhausted => "quota_exhausted",
            Reason::Overloaded => "overloaded",
            Reason::ServerError => "server_error",
            Reason::Timeout => "timeout",
            Reason::Connection => "connection",
            Reason::ContextOverflow => "context_overflow",
            Reason::PayloadTooLarge => "payload_too_large",
            Reason::Auth => "auth",
            Reason::PermissionDenied => "permission_denied",
            Reason::ModelNotFound => "model_not_found",
            Reason::UnsupportedCapability => "unsupported_capability",
            Reason::ContentPolicy => "content_policy",
            Reason::InvalidRequest => "invalid_request",
            Reason::ModelOutput => "model_output",
            Reason::TruncatedOutput => "truncated_output",
            Reason::ReasoningReplay => "reasoning_replay",
            Reason::RequestRepair => "request_repair",
            Reason::StreamInterrupted => "stream_interrupted",
            Reason::Unknown => "unknown",
        }
    }

    /// The action for this reason under [`Policy::default`] on a first attempt.
    pub fn default_action(self) -> Action {
        match self {
            Reason::RateLimit
            | Reason::Overloaded
            | Reason::ServerError
            | Reason::Timeout
            | Reason::Connection
            | Reason::StreamInterrupted
            | Reason::Unknown => Action::Retry,
            Reason::QuotaExhausted
            | Reason::Auth
            | Reason::PermissionDenied
            | Reason::ModelNotFound
            | Reason::UnsupportedCapability => Action::Fallback,
            Reason::ContextOverflow | Reason::PayloadTooLarge => Action::Compress,
            Reason::ContentPolicy | Reason::InvalidRequest => Action::Surface,
            Reason::ModelOutput | Reason::TruncatedOutput => Action::RetryWithFeedback,
            Reason::ReasoningReplay | Reason::RequestRepair => Action::RepairRequest,
        }
    }

    /// Transient reasons: the same request may succeed later.
    fn transient(self) -> bool {
        matches!(
            self,
            Reason::RateLimit
                | Reason::Overloaded
                | Reason::ServerError
                | Reason::Timeout
                | Reason::Connection
                | Reason::StreamInterrupted
                | Reason::Unknown
        )
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Action {
    /// Send the same request again (after `retry_after`, if any).
    Retry,
    /// Send the request again with [`Verdict::feedback`] added for the model.
    RetryWithFeedback,
    /// Shrink the context (summarise, drop old turns) and retry.
    Compress,
    /// Change the request as [`Verdict::hint`] says (the provider said what it refused)
    /// and send it once more; if that fails too, the verdict is [`Action::Surface`].
    RepairRequest,
    /// Try another provider or model.
    Fallback,
    /// Give up and show the error.
    Surface,
}

impl Action {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Retry => "retry",
            Action::RetryWithFeedback => "retry_with_feedback",
            Action::Compress => "compress",
            Action::RepairRequest => "repair_request",
            Action::Fallback => "fallback",
            Action::Surface => "surface",
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// When an in-stream error arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Before any output was delivered to the caller: retrying is invisible.
    BeforeOutput,
    /// After output started: a retry would repeat or contradict what was shown.
    AfterOutput,
}

/// How reasons become actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Retries of transient failures before falling back (default 2).
    pub max_retries: u32,
    /// The longest wait worth making for a retry; a longer `retry_after` on a rate limit
    /// means fall back instead (default 30 s). The reported `retry_after` stays the
    /// provider's own figure (a gateway that cools a key down needs it).
    pub wait_budget: Duration,
    /// Whether an `invalid_request` may fall back to another provider (default false).
    pub invalid_request_may_fall_back: bool,
    /// Whether a failure after output started may restart the request (default false:
    /// such failures are surfaced).
    pub restart_after_output: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            max_retries: 2,
            wait_budget: Duration::from_secs(30),
            invalid_request_may_fall_back: false,
            restart_after_output: false,
        }
    }
}

/// The decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Why it failed.
    pub reason: Reason,
    /// What to do.
    pub action: Action,
    /// Whether sending the request again (as is, or with feedback) can succeed.
    pub retryable: bool,
    /// Whether another provider should be tried. True for the reasons whose action is
    /// fallback, and for transient reasons (rate limit, overloaded, server error, timeout,
    /// connection, interrupted stream, unknown) once `attempt` reaches
    /// [`Policy::max_retries`]; never for `model_output`, `truncated_output`,
    /// `reasoning_replay`, `invalid_request` (unless the policy allows it), `content_policy`
    /// or `context_overflow`.
    pub should_fallback: bool,
    /// Whether the context should be shrunk before trying again.
    pub should_compress: bool,
    /// Whether to switch to another credential (bad or revoked key).
    pub rotate_credential: bool,
    /// How long the provider said to wait, as it said it (not capped: past the policy's
    /// wait budget the action is a fallback, and a gateway that cools the key down still
    /// needs the true figure).
    pub retry_after: Option<Duration>,
    /// The provider's own message (or the transport message).
    pub message: String,
    /// For model-output failures: text to send the model so that it can fix its call.
    pub feedback: Option<String>,
    /// For a request the caller must change ([`Action::RepairRequest`]): what to change,
    /// for the failure the rule recognised.
    pub hint: Option<&'static str>,
    /// The id of the rule that decided (for logs and tests).
    pub rule: &'static str,
}

/// An HTTP error response.
#[derive(Clone, Copy, Debug)]
pub struct HttpFailure<'a> {
    /// Who answered.
    pub provider: Provider,
    /// The HTTP status.
    pub status: u16,
    /// Response headers (names are compared case-insensitively).
    pub headers: &'a [(&'a str, &'a str)],
    /// The response body as received.
    pub body: &'a [u8],
    /// How many retries of this request were already made (0 on the first failure).
    pub attempt: u32,
}

/// Classify an HTTP error response.
pub fn classify_http(f: &HttpFailure<'_>, policy: &Policy) -> Verdict {
    let body = ErrorBody::parse(f.body, f.headers);
    let (reason, rule, hint) = rules::decide(f.provider, Some(f.status), &body);
    let retry_after = retry_after::find(f.headers, &body);
    let v = finish(
        reason,
        rule,
        body.message(),
        retry_after,
        f.attempt,
        None,
        policy,
    );
    Verdict { hint, ..v }
}

/// Classify an error that arrived inside a 200 stream (the error event's JSON payload).
pub fn classify_stream_error(
    provider: Provider,
    payload: &[u8],
    phase: Phase,
    attempt: u32,
    policy: &Policy,
) -> Verdict {
    let body = ErrorBody::parse(payload, &[]);
    let status = body.status_code();
    let (reason, rule, hint) = rules::decide(provider, status, &body);
    let retry_after = retry_after::find(&[], &body);
    let v = finish(
        reason,
        rule,
        body.message(),
        retry_after,
        attempt,
        Some(phase),
        policy,
    );
    Verdict { hint, ..v }
}

/// How a tool call's arguments failed: the assembler's kinds, and the schema checks'
/// (`schema`, `unknown_tool`), one vocabulary.
pub use crate::assemble::FailureKind as ToolFailureKind;

/// A tool call whose arguments failed.
#[derive(Clone, Copy, Debug)]
pub struct ToolFailure<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// How it failed.
    pub kind: ToolFailureKind,
    /// Byte offset of the failure within the arguments.
    pub offset: u64,
    /// The raw argument bytes (as many as were kept).
    pub raw: &'a [u8],
    /// A short precise description (e.g. the splitter's error detail), if any.
    pub detail: Option<&'a str>,
}

/// Classify a failed tool call: `truncated` → [`Reason::TruncatedOutput`], `interrupted`
/// (bytes of the stream were lost, not the model's doing) → [`Reason::StreamInterrupted`],
/// a retry without feedback; everything else → [`Reason::ModelOutput`]; those retry with
/// feedback for the model.
///
/// For [`ToolFailureKind::Schema`] and [`ToolFailureKind::UnknownTool`], `detail` is what
/// the model is told ([`schema::Mismatch`](crate::schema::Mismatch)'s `Display`: one
/// violation per line, or the unknown name and the declared ones); `offset` and `raw` are
/// not used.
pub fn classify_tool_failure(f: &ToolFailure<'_>, attempt: u32, policy: &Policy) -> Verdict {
    let reason = match f.kind {
        ToolFailureKind::Truncated => Reason::TruncatedOutput,
        ToolFailureKind::Interrupted => {
            let message = format!(
                "tool call {} arguments lost in the stream at byte {}",
                f.tool, f.offset
            );
            return finish(
                Reason::StreamInterrupted,
                "tool_failure",
                message,
                None,
                attempt,
                None,
                policy,
            );
        }
        _ => Reason::ModelOutput,
    };
    let what = match f.kind {
        ToolFailureKind::Syntax => "invalid JSON",
        ToolFailureKind::Truncated => "cut off before the arguments object closed",
        ToolFailureKind::NotObject => "JSON that is not an object",
        ToolFailureKind::Limit => "too large or too deeply nested",
        ToolFailureKind::NoName => "sent without a function name",
        ToolFailureKind::Interrupted => unreachable!("returned above"),
        ToolFailureKind::Schema | ToolFailureKind::UnknownTool => {
            let (feedback, message) = schema_feedback(f);
            return finish(reason, "tool_failure", message, None, attempt, None, policy)
                .with_feedback(feedback);
        }
    };
    let feedback = feedback(f.tool, f.kind.as_str(), what, f.offset, f.raw, f.detail);
    let message = format!(
        "tool call {} arguments failed: {} at byte {}",
        f.tool,
        f.kind.as_str(),
        f.offset
    );
    finish(reason, "tool_failure", message, None, attempt, None, policy).with_feedback(feedback)
}

/// The feedback and the log message for a call that does not match the declared tools.
fn schema_feedback(f: &ToolFailure<'_>) -> (String, String) {
    let tool = f.tool;
    let detail = f.detail.unwrap_or("");
    let first = detail.lines().next().unwrap_or("");
    if f.kind == ToolFailureKind::UnknownTool {
        let feedback = format!(
            "Your call to `{tool}` was not executed: {detail}.\n\
             Call one of the declared tools instead, by its exact name."
        );
        return (feedback, format!("tool call {tool} failed: unknown_tool"));
    }
    let mut feedback = format!(
        "Your call to the tool `{tool}` was not executed: its arguments are valid JSON but \
         do not match the tool's parameters:\n"
    );
    for line in detail.lines() {
        feedback.push_str("- ");
        feedback.push_str(line);
        feedback.push('\n');
    }
    feedback.push_str("Call the tool again with arguments that match its parameters.");
    let more = detail.lines().count().saturating_sub(1);
    let message = match more {
        0 => format!("tool call {tool} arguments failed: schema: {first}"),
        n => format!("tool call {tool} arguments failed: schema: {first} (and {n} more)"),
    };
    (feedback, message)
}

/// Classify a transport error (no HTTP status): timeouts, refused or reset connections,
/// DNS and TLS failures. The message is matched case-insensitively.
pub fn classify_transport(message: &str, attempt: u32, policy: &Policy) -> Verdict {
    let (reason, rule) = rules::decide_transport(message);
    finish(
        reason,
        rule,
        message.to_string(),
        None,
        attempt,
        None,
        policy,
    )
}

/// Classify an HTTP error response from any header collection: an `http::HeaderMap`
/// (`response.headers()` of reqwest or hyper), a `Vec<(String, String)>`, or anything
/// else that yields (name, value) pairs. Values that are not UTF-8 are skipped. The same
/// as [`classify_http`] otherwise.
///
/// ```
/// use toolstream::classify::{classify_response, Action, Policy, Provider, Reason};
///
/// let headers = [("retry-after", "2")];
/// let body = br#"{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}"#;
/// let v = classify_response(Provider::Openai, 429, headers, body, 0, &Policy::default());
/// assert_eq!((v.reason, v.action), (Reason::RateLimit, Action::Retry));
/// assert_eq!(v.retry_after, Some(std::time::Duration::from_secs(2)));
/// ```
pub fn classify_response<I, N, V>(
    provider: Provider,
    status: u16,
    headers: I,
    body: &[u8],
    attempt: u32,
    policy: &Policy,
) -> Verdict
where
    I: IntoIterator<Item = (N, V)>,
    N: AsRef<str>,
    V: AsRef<[u8]>,
{
    let owned: Vec<(N, V)> = headers.into_iter().collect();
    let pairs: Vec<(&str, &str)> = owned
        .iter()
        .filter_map(|(n, v)| Some((n.as_ref(), std::str::from_utf8(v.as_ref()).ok()?)))
        .collect();
    classify_http(
        &HttpFailure {
            provider,
            status,
            headers: &pairs,
            body,
            attempt,
        },
        policy,
    )
}

/// Classify a transport error by its whole `source()` chain (a `reqwest::Error`, a
/// `hyper::Error`, an `std::io::Error`...): the innermost cause that a rule recognises
/// decides (`error sending request for url` wraps `client error (Connect)`, which wraps
/// `Connection refused`), and the message is the chain joined with `: `.
///
/// ```
/// use toolstream::classify::{classify_error, Policy, Reason};
///
/// let io = std::io::Error::new(std::io::ErrorKind::TimedOut, "operation timed out");
/// let v = classify_error(&io, 0, &Policy::default());
/// assert_eq!(v.reason, Reason::Timeout);
/// ```
pub fn classify_error(err: &dyn std::error::Error, attempt: u32, policy: &Policy) -> Verdict {
    // Bounded: a chain that loops (a source that returns itself) is cut short.
    const MAX_CHAIN: usize = 16;
    let mut chain = vec![err.to_string()];
    let mut next = err.source();
    while let Some(e) = next {
        if chain.len() == MAX_CHAIN {
            break;
        }
        chain.push(e.to_string());
        next = e.source();
    }
    let (reason, rule) = chain
        .iter()
        .rev()
        .map(|m| rules::decide_transport(m))
        .find(|(r, _)| *r != Reason::Unknown)
        .unwrap_or((Reason::Unknown, "unknown"));
    finish(reason, rule, chain.join(": "), None, attempt, None, policy)
}

/// Classify a pipeline event: a failed tool call ([`classify_tool_failure`]), an error
/// the provider sent in the stream ([`classify_stream_error`], as `provider` and in
/// `phase`), bytes the stream lost ([`Event::Dropped`](crate::assemble::Event): a retry,
/// [`Reason::StreamInterrupted`]) and a stream that ended before its terminal marker
/// (`End { complete: false }`, the same). Every other event is no failure: `None`; so is
/// a call repaired by [`Policy::repair`](crate::assemble::Policy::repair) (a `ToolCall`
/// whose `repairs` say what changed): it needs no retry.
///
/// A stream that failed gives a verdict for each failure and one more for its end: act on
/// the first, or on the most severe.
///
/// ```
/// use bytes::Bytes;
/// use toolstream::classify::{classify_event, Action, Phase, Policy, Provider};
/// use toolstream::pipeline::Stream;
///
/// let mut s = Stream::new(None);
/// let mut events = Vec::new();
/// s.push(Bytes::from_static(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":tru}\"}}]}}]}\n\n"), &mut events);
/// s.finish(&mut events);
/// let v = events
///     .iter()
///     .find_map(|e| classify_event(e, Provider::Openai, Phase::BeforeOutput, 0, &Policy::default()))
///     .unwrap();
/// assert_eq!(v.action, Action::RetryWithFeedback);
/// ```
pub fn classify_event(
    event: &crate::assemble::Event,
    provider: Provider,
    phase: Phase,
    attempt: u32,
    policy: &Policy,
) -> Option<Verdict> {
    use crate::assemble::Event;
    Some(match event {
        Event::ToolCallFailed(f) => classify_tool_failure(&f.into(), attempt, policy),
        Event::ProviderError { message, body, .. } => {
            let payload = if body.is_empty() { message } else { body };
            classify_stream_error(provider, payload.as_bytes(), phase, attempt, policy)
        }
        Event::Dropped(d) => finish(
            Reason::StreamInterrupted,
            "stream.dropped",
            format!(
                "{} bytes of the stream at byte {} not decoded ({})",
                d.bytes,
                d.offset,
                d.reason.as_str()
            ),
            None,
            attempt,
            Some(phase),
            policy,
        ),
        Event::End { complete: false } => finish(
            Reason::StreamInterrupted,
            "stream.incomplete",
            "the stream ended before its terminal marker".to_string(),
            None,
            attempt,
            Some(phase),
            policy,
        ),
        _ => return None,
    })
}

/// The provider that speaks a wire format natively (a gateway that knows the server
/// behind an OpenAI-compatible URL, Groq or vLLM say, should name it instead).
impl From<crate::provider::Format> for Provider {
    fn from(f: crate::provider::Format) -> Provider {
        use crate::provider::Format;
        match f {
            Format::OpenAiChat | Format::OpenAiResponses => Provider::Openai,
            Format::Anthropic => Provider::Anthropic,
            Format::Gemini => Provider::Gemini,
            Format::Ollama => Provider::Ollama,
            #[cfg(feature = "bedrock")]
            Format::Bedrock => Provider::Bedrock,
        }
    }
}

/// How a call that does not match its declaration failed: an undeclared name, arguments
/// against the schema, or arguments too deeply nested to read.
impl From<&crate::schema::Mismatch> for ToolFailureKind {
    fn from(m: &crate::schema::Mismatch) -> Self {
        use crate::schema::Mismatch;
        match m {
            Mismatch::UnknownTool { .. } => ToolFailureKind::UnknownTool,
            Mismatch::Invalid(_) => ToolFailureKind::Schema,
            Mismatch::Unreadable(_) => ToolFailureKind::Limit,
        }
    }
}

/// The decision for a call to `tool` that does not match its declaration
/// ([`schema::Tools::check`](crate::schema::Tools::check)): `model_output`, retried with
/// feedback that lists each violation (or the declared names), never a fallback.
pub fn classify_mismatch(
    tool: &str,
    m: &crate::schema::Mismatch,
    attempt: u32,
    policy: &Policy,
) -> Verdict {
    let detail = m.to_string();
    let failure = ToolFailure {
        tool,
        kind: m.into(),
        offset: 0,
        raw: b"",
        detail: Some(&detail),
    };
    classify_tool_failure(&failure, attempt, policy)
}

/// A failed call of the pipeline, as the classifier takes it.
impl<'a> From<&'a crate::assemble::Failure> for ToolFailure<'a> {
    fn from(f: &'a crate::assemble::Failure) -> Self {
        ToolFailure {
            tool: &f.name,
            kind: f.kind,
            offset: f.offset,
            raw: &f.raw,
            detail: Some(f.detail.map_or(f.message.as_str(), |d| d.as_str())),
        }
    }
}

impl fmt::Display for Verdict {
    /// `reason → action`, then the facts a log line wants: `rate_limit → retry (after
    /// 2000ms): Rate limit reached [rule code.rate_limit]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} → {}", self.reason, self.action)?;
        if let Some(d) = self.retry_after {
            write!(f, " (after {}ms)", d.as_millis())?;
        }
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        write!(f, " [rule {}]", self.rule)
    }
}

impl Verdict {
    fn with_feedback(mut self, feedback: String) -> Self {
        self.feedback = Some(feedback);
        self
    }
}

/// Turn a reason into a verdict under the policy.
fn finish(
    reason: Reason,
    rule: &'static str,
    message: String,
    retry_after: Option<Duration>,
    attempt: u32,
    phase: Option<Phase>,
    policy: &Policy,
) -> Verdict {
    let mut action = reason.default_action();
    if reason == Reason::InvalidRequest && policy.invalid_request_may_fall_back {
        action = Action::Fallback;
    }
    let retries_spent = attempt >= policy.max_retries;
    if reason.transient() && retries_spent {
        action = Action::Fallback;
    }
    if reason == Reason::RateLimit && retry_after.is_some_and(|d| d > policy.wait_budget) {
        action = Action::Fallback;
    }
    if matches!(reason, Reason::ModelOutput | Reason::TruncatedOutput) && retries_spent {
        action = Action::Surface;
    }
    // One repaired request; a second refusal means the repair did not take.
    if matches!(reason, Reason::ReasoningReplay | Reason::RequestRepair) && attempt >= 1 {
        action = Action::Surface;
    }
    if phase == Some(Phase::AfterOutput) && !policy.restart_after_output {
        action = Action::Surface;
    }
    let never_fall_back = matches!(
        reason,
        Reason::ModelOutput
            | Reason::TruncatedOutput
            | Reason::ContentPolicy
            | Reason::ContextOverflow
            | Reason::ReasoningReplay
            | Reason::RequestRepair
    ) || (reason == Reason::InvalidRequest
        && !policy.invalid_request_may_fall_back);
    Verdict {
        reason,
        action,
        retryable: matches!(
            action,
            Action::Retry | Action::RetryWithFeedback | Action::Compress | Action::RepairRequest
        ),
        should_fallback: action == Action::Fallback && !never_fall_back,
        should_compress: action == Action::Compress,
        rotate_credential: reason == Reason::Auth,
        retry_after,
        message,
        feedback: None,
        hint: None,
        rule,
    }
}

/// The feedback text for the model: names the tool, the error kind, the byte offset and
/// a short excerpt around it, and asks for one complete valid JSON object.
fn feedback(
    tool: &str,
    kind: &str,
    what: &str,
    offset: u64,
    raw: &[u8],
    detail: Option<&str>,
) -> String {
    const AROUND: usize = 30;
    let at = (offset as usize).min(raw.len());
    let mut from = at.saturating_sub(AROUND);
    let mut to = (at + AROUND).min(raw.len());
    // Keep whole UTF-8 characters.
    while from > 0 && (raw[from] & 0xC0) == 0x80 {
        from -= 1;
    }
    while to < raw.len() && (raw[to] & 0xC0) == 0x80 {
        to += 1;
    }
    let before = String::from_utf8_lossy(&raw[from..at]);
    let after = String::from_utf8_lossy(&raw[at..to]);
    let mut text = format!(
        "Your call to the tool `{tool}` was not executed: its arguments were {what} \
         ({kind} at byte {offset}"
    );
    if let Some(d) = detail {
        text.push_str(": ");
        text.push_str(d);
    }
    text.push_str(").\n");
    if !raw.is_empty() {
        text.push_str(&format!(
            "Here is the text around byte {offset}, with >>> marking the spot:\n{}{before}>>>{after}{}\n",
            if from > 0 { "…" } else { "" },
            if to < raw.len() { "…" } else { "" },
        ));
    }
    text.push_str(
        "Call the tool again with its arguments as one complete, valid JSON object, \
         and nothing else.",
    );
    text
}
