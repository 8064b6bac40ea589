//! When to retry: `retry-after-ms`, `Retry-After` (seconds or HTTP-date, measured against
//! the response's own `Date` header — the classifier has no clock), body fields, and
//! "try again in 7.5s" in a message. The verdict caps it at the policy's wait budget.

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
    from_headers.or(body.retry_delay).or_else(from_message)
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
}
