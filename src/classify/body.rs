//! What the classifier reads from an error body: structured codes, the message, retry hints.

use std::time::Duration;

use serde_json::Value;

/// The facts extracted from an error body (and the Bedrock error-type header).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorBody {
    /// Structured codes, lower-cased, most specific first: `error.type`, `error.code`,
    /// `error.status`, `details[].reason`, `details[].violations[].quotaId`, top-level
    /// `type` / `code`, Bedrock's `x-amzn-errortype`. OpenRouter's `error.metadata.raw`
    /// contributes its own codes first.
    pub codes: Vec<String>,
    /// The provider's message.
    pub message: String,
    /// Lower-cased text the message rules search: the message(s), or the raw body when it
    /// is not JSON.
    pub haystack: String,
    /// A numeric code inside the body (`error.code: 429`), for errors without an HTTP status.
    pub numeric_code: Option<u16>,
    /// A retry delay stated in the body (`retry_after`, Gemini `RetryInfo.retryDelay`).
    pub retry_delay: Option<Duration>,
}

const MAX_TEXT: usize = 8 << 10;

/// The largest body read as JSON. Real error bodies are a few KiB; a tree of a larger one
/// would cost about a hundred times its bytes (a hostile 16 MiB body, 1.5 GB), so a larger
/// body is searched as text, its first [`MAX_TEXT`] bytes.
const MAX_JSON: usize = 256 << 10;

impl ErrorBody {
    /// Extract what the rules need. Never fails: a body that is not JSON is searched as text.
    pub fn parse(body: &[u8], headers: &[(&str, &str)]) -> ErrorBody {
        let mut out = ErrorBody::default();
        let tree = if body.len() <= MAX_JSON {
            serde_json::from_slice::<Value>(body).ok()
        } else {
            None
        };
        match tree {
            Some(v) => out.read(&v, 0),
            None => {
                let text = String::from_utf8_lossy(&body[..body.len().min(MAX_TEXT)]);
                let text = text.trim();
                out.message = text.to_string();
            }
        }
        for (name, value) in headers {
            if name.eq_ignore_ascii_case("x-amzn-errortype") {
                let code = value.split(':').next().unwrap_or("").trim();
                if !code.is_empty() {
                    out.codes.push(code.to_ascii_lowercase());
                }
            }
        }
        if out.haystack.is_empty() {
            out.haystack = out.message.to_lowercase();
        }
        out
    }

    /// The message to report.
    pub fn message(&self) -> String {
        self.message.clone()
    }

    /// An HTTP-like status carried in the body.
    pub fn status_code(&self) -> Option<u16> {
        self.numeric_code
    }

    fn add_code(&mut self, v: Option<&Value>) {
        match v {
            Some(Value::String(s)) if !s.is_empty() => self.codes.push(s.to_ascii_lowercase()),
            Some(Value::Number(n)) => {
                if let Some(n) = n.as_u64().filter(|n| (100..600).contains(n)) {
                    self.numeric_code.get_or_insert(n as u16);
                }
            }
            _ => {}
        }
    }

    fn add_text(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if self.message.is_empty() {
            self.message = s.chars().take(MAX_TEXT).collect();
        }
        if self.haystack.len() < MAX_TEXT {
            if !self.haystack.is_empty() {
                self.haystack.push('\n');
            }
            self.haystack
                .extend(s.chars().take(MAX_TEXT).flat_map(char::to_lowercase));
        }
    }

    /// Read one error document. `depth` bounds the unwrapping of nested raw errors.
    fn read(&mut self, v: &Value, depth: u32) {
        // Gemini streams errors as a one-element array.
        let v = match v {
            Value::Array(items) => match items.first() {
                Some(first) => first,
                None => return,
            },
            other => other,
        };
        let Value::Object(top) = v else {
            if let Value::String(s) = v {
                self.add_text(s);
            }
            return;
        };
        // The Responses API's failure events carry the error (or, when incomplete, the
        // reason) inside `response`.
        let response = top.get("response").filter(|r| r.is_object());
        let err = top.get("error").filter(|e| !e.is_null()).or_else(|| {
            response
                .and_then(|r| r.get("error"))
                .filter(|e| !e.is_null())
        });
        if let Some(reason) = response
            .and_then(|r| r.get("incomplete_details"))
            .and_then(|d| d.get("reason"))
        {
            self.add_code(Some(reason));
        }
        // OpenRouter wraps the upstream provider's error: read that first.
        if depth < 2 {
            if let Some(raw) = err
                .and_then(|e| e.get("metadata"))
                .and_then(|m| m.get("raw"))
            {
                match raw {
                    Value::String(s) => match serde_json::from_str::<Value>(s) {
                        Ok(inner) => self.read(&inner, depth + 1),
                        Err(_) => self.add_text(s),
                    },
                    other => self.read(other, depth + 1),
                }
            }
        }
        match err {
            Some(Value::Object(e)) => self.read_error_object(e),
            Some(Value::String(m)) => self.add_text(m),
            _ => {}
        }
        if let Some(Value::String(t)) = top.get("type") {
            if t != "error" {
                self.codes.push(t.to_ascii_lowercase());
            }
        }
        self.add_code(top.get("code"));
        self.read_gemini_payload(top);
        for key in ["message", "Message", "detail", "msg", "error_description"] {
            match top.get(key) {
                Some(Value::String(m)) => self.add_text(m),
                Some(other @ (Value::Array(_) | Value::Object(_)))
                    if key == "detail" || key == "message" =>
                {
                    self.add_text(&other.to_string())
                }
                _ => {}
            }
        }
        self.retry_delay = self.retry_delay.or(seconds(top.get("retry_after")));
    }

    /// An `error` object: its type, code and status, Google's details (reasons, quota ids,
    /// the retry delay), its message and `retry_after`.
    fn read_error_object(&mut self, e: &serde_json::Map<String, Value>) {
        self.add_code(e.get("type"));
        self.add_code(e.get("code"));
        self.add_code(e.get("status"));
        if let Some(Value::Array(details)) = e.get("details") {
            for d in details {
                self.add_code(d.get("reason"));
                if let Some(Value::Array(vs)) = d.get("violations") {
                    for violation in vs {
                        self.add_code(violation.get("quotaId"));
                    }
                }
                if let Some(Value::String(delay)) = d.get("retryDelay") {
                    self.retry_delay = self.retry_delay.or(parse_delay(delay));
                }
            }
        }
        match e.get("message") {
            Some(Value::String(m)) => self.add_text(m),
            Some(other @ (Value::Array(_) | Value::Object(_))) => self.add_text(&other.to_string()),
            _ => {}
        }
        self.retry_delay = self.retry_delay.or(seconds(e.get("retry_after")));
    }

    /// Gemini's failures inside a normal payload: a candidate that ended in
    /// MALFORMED_FUNCTION_CALL or SAFETY, or a blocked prompt.
    fn read_gemini_payload(&mut self, top: &serde_json::Map<String, Value>) {
        if let Some(Value::Array(cands)) = top.get("candidates") {
            for c in cands {
                if let Some(Value::String(r)) = c.get("finishReason") {
                    if !matches!(r.as_str(), "STOP" | "MAX_TOKENS") {
                        self.codes.push(r.to_ascii_lowercase());
                    }
                }
            }
        }
        if let Some(Value::String(b)) = top.get("promptFeedback").and_then(|f| f.get("blockReason"))
        {
            self.codes.push(b.to_ascii_lowercase());
        }
    }
}

fn seconds(v: Option<&Value>) -> Option<Duration> {
    let s = v?.as_f64()?;
    (s.is_finite() && (0.0..1e9).contains(&s)).then(|| Duration::from_secs_f64(s))
}

/// A duration such as `34s`, `1.5s`, `250ms` (Gemini's `retryDelay`, Groq's messages).
pub(crate) fn parse_delay(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1.0)
    } else {
        return None;
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && (0.0..1e9).contains(&v)).then(|| Duration::from_secs_f64(v * scale))
}
