//! The proxy's metrics, in the Prometheus text format (OpenMetrics) at `GET /metrics`, kept
//! by the official client crate (`prometheus-client`). Every label takes few values (routes,
//! upstream positions, status codes, the classifier's names), so the series stay bounded
//! whatever clients send. Each replica counts its own: nothing is shared between them.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};

use crate::rewrite::Counts;

/// A request as it ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct RequestLabels {
    /// `chat`, `messages`, `responses` or `other`.
    pub route: &'static str,
    /// Which upstream answered: 0 for `--upstream`, then each `--fallback` in order.
    pub upstream: u16,
    /// The status the client got.
    pub status: u16,
}

/// A failed attempt and what the proxy did next.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct AttemptLabels {
    /// The classifier's reason.
    pub reason: &'static str,
    /// The classifier's action.
    pub action: &'static str,
    /// What the proxy did: `retry`, `fallback` or `surface`.
    pub decision: &'static str,
}

/// What became of the calls.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(super) struct CallLabels {
    /// `delivered`, `split`, `duplicate`, `failed`, `from_text` or `repaired`.
    pub outcome: &'static str,
}

/// The proxy's metrics.
pub(super) struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    attempts: Family<AttemptLabels, Counter>,
    calls: Family<CallLabels, Counter>,
    requests_repaired: Counter,
    streams_open: Gauge,
    upstream_bytes: Counter,
    client_bytes: Counter,
    first_byte: Histogram,
    call_latency: Histogram,
    duration: Histogram,
}

impl Metrics {
    pub(super) fn new() -> Metrics {
        let mut registry = Registry::with_prefix("toolstream_proxy");
        let m = Metrics {
            requests: Family::default(),
            attempts: Family::default(),
            calls: Family::default(),
            requests_repaired: Counter::default(),
            streams_open: Gauge::default(),
            upstream_bytes: Counter::default(),
            client_bytes: Counter::default(),
            // 10 ms to about 10 min.
            first_byte: Histogram::new(exponential_buckets(0.01, 2.0, 16)),
            // 10 µs to about 0.3 s.
            call_latency: Histogram::new(exponential_buckets(0.00001, 2.0, 16)),
            duration: Histogram::new(exponential_buckets(0.01, 2.0, 16)),
            registry: Registry::default(),
        };
        registry.register(
            "requests",
            "Requests answered, by route, the upstream that answered and the status",
            m.requests.clone(),
        );
        registry.register(
            "attempts_failed",
            "Failed attempts at an upstream, by the classifier's reason and action and \
             what the proxy did next",
            m.attempts.clone(),
        );
        registry.register(
            "calls",
            "Tool calls: delivered, split off glued arguments, dropped as duplicates, \
             failed, taken out of text, repaired",
            m.calls.clone(),
        );
        registry.register(
            "requests_repaired",
            "Requests whose history was repaired before it was forwarded",
            m.requests_repaired.clone(),
        );
        registry.register(
            "streams_open",
            "Responses being streamed to clients",
            m.streams_open.clone(),
        );
        registry.register_with_unit(
            "upstream_read",
            "Bytes of streamed response bodies read from upstreams",
            Unit::Bytes,
            m.upstream_bytes.clone(),
        );
        registry.register_with_unit(
            "client_written",
            "Bytes of streamed response bodies sent to clients",
            Unit::Bytes,
            m.client_bytes.clone(),
        );
        registry.register_with_unit(
            "first_byte",
            "From a request's arrival to the answering upstream's response head",
            Unit::Seconds,
            m.first_byte.clone(),
        );
        registry.register_with_unit(
            "call_latency",
            "From the arrival of the upstream bytes that closed a tool call to the call's \
             hand-over to the client's connection",
            Unit::Seconds,
            m.call_latency.clone(),
        );
        registry.register_with_unit(
            "duration",
            "From a request's arrival to the end of its response",
            Unit::Seconds,
            m.duration.clone(),
        );
        Metrics { registry, ..m }
    }

    /// The text a scrape gets.
    pub(super) fn encode(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    pub(super) fn attempt(&self, labels: AttemptLabels) {
        self.attempts.get_or_create(&labels).inc();
    }

    pub(super) fn first_byte(&self, after: Duration) {
        self.first_byte.observe(after.as_secs_f64());
    }

    /// A request done: its counts and how long it took.
    pub(super) fn done(&self, labels: RequestLabels, c: &Counts, repaired: bool, took: Duration) {
        self.requests.get_or_create(&labels).inc();
        for (outcome, n) in [
            ("delivered", c.calls),
            ("split", c.splits),
            ("duplicate", c.duplicates),
            ("failed", c.failures),
            ("from_text", c.text_calls),
            ("repaired", c.repaired),
        ] {
            if n > 0 {
                self.calls
                    .get_or_create(&CallLabels { outcome })
                    .inc_by(u64::from(n));
            }
        }
        if repaired {
            self.requests_repaired.inc();
        }
        self.duration.observe(took.as_secs_f64());
    }

    pub(super) fn call_latency(&self, took: Duration) {
        self.call_latency.observe(took.as_secs_f64());
    }

    pub(super) fn stream_opened(&self) {
        self.streams_open.inc();
    }

    pub(super) fn stream_closed(&self) {
        self.streams_open.dec();
    }

    pub(super) fn bytes(&self, from_upstream: usize, to_client: usize) {
        self.upstream_bytes.inc_by(from_upstream as u64);
        self.client_bytes.inc_by(to_client as u64);
    }
}
