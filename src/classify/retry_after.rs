//! When to retry: `retry-after-ms`, `Retry-After` (seconds or HTTP-date, measured against
//! the response's own `Date` header — the classifier has no clock), OpenAI's
//! `x-ratelimit-reset-requests` / `x-ratelimit-reset-tokens` durations (`1m30s`, `6ms`; of
//! the limit whose `x-ratelimit-remaining-*` is 0, else the longer), body fields, "try again
//! in 7.5s" in a message, and Anthropic's "regain access on 2026-04-01 at 00:00 UTC"
//! (against the `Date` header too). The verdict reports the provider's figure as it is.

use std::time::Duration;

use super::body::{parse_delay, ErrorBody};

fn header<'a>(headers: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
}

/// The retry delay the provider asked for, if any (not yet capped).
pub(crate) fn find(headers: &[(&str, &str)], body: &ErrorBody) -> Option<Duration> {
    let from_headers = header(headers, "retry-after-ms")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0 && *ms < 1e12)
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| {
            let v = header(headers, "retry-after")?;
            if let Ok(secs) = v.parse::<u64>() {
                return Some(Duration::from_secs(secs.min(1 << 32)));
            }
            let at = http_date(v)?;
            let now = http_date(header(headers, "date")?)?;
            Some(Duration::from_secs(at.saturating_sub(now)))
        });
    let from_message = || {
        let h = &body.haystack;
        let i = h.find("try again in ")? + "try again in ".len();
        let rest = &h[i..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'm' || c == 's'))
            .unwrap_or(rest.len());
        parse_delay(rest[..end].trim_end_matches('.'))
    };
    from_headers
        .or_else(|| ratelimit_reset(headers))
        .or(body.retry_delay)
        .or_else(from_message)
        .or_else(|| regain_access(headers, body))
}

/// OpenAI's reset headers: the wait of the limit that is used up (`x-ratelimit-remaining-*`
/// 0), or the longer of the two when that is not said.
fn ratelimit_reset(headers: &[(&str, &str)]) -> Option<Duration> {
    let reset =
        |kind: &str| header(headers, &format!("x-ratelimit-reset-{kind}")).and_then(go_duration);
    let exhausted =
        |kind: &str| header(headers, &format!("x-ratelimit-remaining-{kind}")) == Some("0");
    let (requests, tokens) = (reset("requests"), reset("tokens"));
    match (exhausted("requests"), exhausted("tokens")) {
        (true, false) => requests,
        (false, true) => tokens,
        _ => requests.max(tokens),
    }
}

/// A Go-style duration (`1h2m3.5s`, `6m0s`, `20ms`), or a bare number of seconds.
pub(crate) fn go_duration(s: &str) -> Option<Duration> {
    if let Ok(secs) = s.parse::<f64>() {
        return (secs.is_finite() && (0.0..1e9).contains(&secs))
            .then(|| Duration::from_secs_f64(secs));
    }
    if s.is_empty() {
        return None;
    }
    let (mut total, mut rest) = (0.0f64, s);
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&n| n > 0)?;
        let value: f64 = rest[..n].parse().ok()?;
        rest = &rest[n..];
        let (unit, len) = if rest.starts_with("ms") {
            (0.001, 2)
        } else if rest.starts_with('h') {
            (3600.0, 1)
        } else if rest.starts_with('m') {
            (60.0, 1)
        } else if rest.starts_with('s') {
            (1.0, 1)
        } else {
            return None;
        };
        total += value * unit;
        rest = &rest[len..];
    }
    (total.is_finite() && total < 1e9).then(|| Duration::from_secs_f64(total))
}

/// Anthropic's spending limit: "You will regain access on 2026-04-01 at 00:00 UTC", against
/// the response's `Date` header.
fn regain_access(headers: &[(&str, &str)], body: &ErrorBody) -> Option<Duration> {
    let h = &body.haystack;
    let rest = &h[h.find("regain access on ")? + "regain access on ".len()..];
    let date = rest.get(..10)?;
    let mut ymd = date.split('-').map(|p| p.parse::<u64>().ok());
    let (y, mo, d) = (ymd.next()??, ymd.next()??, ymd.next()??);
    let time = rest.get(10..)?.trim_start().strip_prefix("at ")?;
    let (hh, mm) = (
        time.get(..2)?.parse::<u64>().ok()?,
        time.get(3..5)?.parse::<u64>().ok()?,
    );
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || hh > 23 || mm > 59 {
        return None;
    }
    let at = epoch_seconds(y as i64, mo, d, hh, mm, 0)?;
    let now = http_date(header(headers, "date")?)?;
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Seconds since the Unix epoch of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
pub(crate) fn http_date(s: &str) -> Option<u64> {
    let mut parts = s.split_whitespace();
    let _weekday = parts.next()?;
    let day: u64 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':');
    let h: u64 = hms.next()?.parse().ok()?;
    let m: u64 = hms.next()?.parse().ok()?;
    let sec: u64 = hms.next()?.parse().ok()?;
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    epoch_seconds(year, month, day, h, m, sec)
}

/// Seconds since the Unix epoch of a UTC civil date and time (years 1970 to 9999).
fn epoch_seconds(year: i64, month: u64, day: u64, h: u64, m: u64, sec: u64) -> Option<u64> {
    if !(1970..=9999).contains(&year) {
        return None;
    }
    // Days from the civil date (proleptic Gregorian), counted from 1970-01-01.
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * mo as i64 + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days)
        .ok()
        .map(|d| d * 86_400 + h * 3600 + m * 60 + sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates() {
        assert_eq!(http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            http_date("Sat, 29 Feb 2020 12:00:00 GMT"),
            Some(1_582_977_600)
        );
        assert_eq!(http_date("Sun, 06 Nov 1994 08:49:37 UTC"), None);
        assert_eq!(http_date("garbage"), None);
    }

    #[test]
    fn sources_in_order() {
        let body = ErrorBody::default();
        let d = |h: &[(&str, &str)]| find(h, &body);
        assert_eq!(
            d(&[("retry-after-ms", "1500"), ("Retry-After", "9")]),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(d(&[("Retry-After", "9")]), Some(Duration::from_secs(9)));
        assert_eq!(
            d(&[
                ("Retry-After", "Sun, 06 Nov 1994 08:50:07 GMT"),
                ("Date", "Sun, 06 Nov 1994 08:49:37 GMT")
            ]),
            Some(Duration::from_secs(30))
        );
        assert_eq!(d(&[("Retry-After", "Sun, 06 Nov 1994 08:50:07 GMT")]), None);
        assert_eq!(
            d(&[("Retry-After", "3600")]),
            Some(Duration::from_secs(3600))
        );
        let mut body = ErrorBody {
            haystack: "rate limit reached. please try again in 7.66s. visit".into(),
            ..ErrorBody::default()
        };
        assert_eq!(find(&[], &body), Some(Duration::from_millis(7660)));
        body.haystack = "please try again in 250ms.".into();
        assert_eq!(find(&[], &body), Some(Duration::from_millis(250)));
    }

    #[test]
    fn openai_reset_headers() {
        let body = ErrorBody::default();
        let d = |h: &[(&str, &str)]| find(h, &body);
        // The limit that is used up decides; else the longer wait.
        let both = [
            ("x-ratelimit-reset-requests", "1s"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ];
        assert_eq!(d(&both), Some(Duration::from_secs(360)));
        let mut h = both.to_vec();
        h.push(("x-ratelimit-remaining-requests", "0"));
        assert_eq!(d(&h), Some(Duration::from_secs(1)));
        // The Go duration forms, and Azure's bare seconds.
        for (header, value, want) in [
            (
                "x-ratelimit-reset-tokens",
                "1m30.5s",
                Duration::from_millis(90_500),
            ),
            (
                "x-ratelimit-reset-requests",
                "6ms",
                Duration::from_millis(6),
            ),
            (
                "x-ratelimit-reset-tokens",
                "1h2m3s",
                Duration::from_secs(3723),
            ),
            ("x-ratelimit-reset-tokens", "12", Duration::from_secs(12)),
        ] {
            assert_eq!(d(&[(header, value)]), Some(want), "{value}");
        }
        // Retry-After wins; junk is nothing.
        assert_eq!(
            d(&[("x-ratelimit-reset-tokens", "6m0s"), ("retry-after", "2")]),
            Some(Duration::from_secs(2))
        );
        for junk in ["", "m", "1x", "-1s", "1.2.3s", "ms"] {
            assert_eq!(go_duration(junk), None, "{junk}");
        }
    }

    #[test]
    fn anthropic_regain_access_date() {
        let body = ErrorBody {
            haystack: "you have reached your specified api usage limits. you will regain access on 2026-04-01 at 00:00 utc.".into(),
            ..ErrorBody::default()
        };
        assert_eq!(
            find(&[("date", "Mon, 23 Mar 2026 23:08:46 GMT")], &body),
            Some(Duration::from_secs(8 * 86_400 + 51 * 60 + 14))
        );
        // No clock of its own: without the response's Date, no figure.
        assert_eq!(find(&[], &body), None);
    }
}
