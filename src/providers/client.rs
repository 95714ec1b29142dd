//! Outgoing HTTP to providers: the model server (`ai::openai`), speech-to-text
//! (`ingest::stt`) and web search (`search::web`). What their clients share lives here,
//! so that none imports another: secrets kept out of messages, errors told by their
//! causes rather than their URL (which may carry a key or the query), and the wait
//! before another attempt.

use std::time::Duration;

use rand::Rng;
use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap};

/// The message with `secret` replaced by `[redacted]`. A secret shorter than four
/// characters is left alone: replacing it would mangle ordinary words.
pub fn redact(message: &str, secret: Option<&str>) -> String {
    match secret.filter(|secret| secret.len() >= 4) {
        Some(secret) => message.replace(secret, "[redacted]"),
        None => message.to_owned(),
    }
}

/// An HTTP error told by its causes, each once, without the URL: `timed out: ...` for a
/// timeout; `None` when it names no cause.
pub fn error_chain(error: &reqwest::Error) -> Option<String> {
    let mut message = if error.is_timeout() {
        "timed out".to_owned()
    } else {
        String::new()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            if !message.is_empty() {
                message.push_str(": ");
            }
            message.push_str(&text);
        }
        source = cause.source();
    }
    (!message.is_empty()).then_some(message)
}

/// Statuses that say "busy, down or slow": another attempt later may pass.
pub fn worth_retrying(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 429) || status.is_server_error()
}

/// `base * 2^(attempt-1)` (at most `max`), times a random factor in 0..=1 (full jitter,
/// so that clients that failed together do not come back together).
pub fn backoff(base: Duration, attempt: u32, max: Duration) -> Duration {
    let ceiling = base.saturating_mul(1 << attempt.saturating_sub(1).min(20)).min(max);
    let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
    Duration::from_nanos(rand::rng().random_range(0..=nanos))
}

/// The wait a server asks for: `retry-after-ms`, or `Retry-After` in seconds or as an
/// HTTP date; at most `max`.
pub fn retry_after(headers: &HeaderMap, max: Duration) -> Option<Duration> {
    let text = |name| headers.get(name).and_then(|value| value.to_str().ok()).map(str::trim);
    let seconds = |value: &str| value.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0);
    if let Some(ms) = text(header::HeaderName::from_static("retry-after-ms")).and_then(seconds) {
        return Some(Duration::from_secs_f64((ms / 1000.0).min(max.as_secs_f64())));
    }
    let value = text(header::RETRY_AFTER)?;
    if let Some(seconds) = seconds(value) {
        return Some(Duration::from_secs_f64(seconds.min(max.as_secs_f64())));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = date.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.to_std().unwrap_or(Duration::ZERO).min(max))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX_WAIT: Duration = Duration::from_secs(60);

    #[test]
    fn reads_retry_after() {
        let headers = |pairs: &[(&'static str, &str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(*name, value.parse().expect("a header value"));
            }
            map
        };
        let retry_after = |headers: &HeaderMap| retry_after(headers, MAX_WAIT);
        assert_eq!(
            retry_after(&headers(&[("retry-after", "7")])),
            Some(Duration::from_secs(7))
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "3600")])), Some(MAX_WAIT));
        assert_eq!(
            retry_after(&headers(&[("retry-after-ms", "250")])),
            Some(Duration::from_millis(250))
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")])), None);
        assert_eq!(retry_after(&headers(&[])), None);
        assert_eq!(
            retry_after(&headers(&[("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")])),
            Some(Duration::ZERO)
        );
        let later = (chrono::Utc::now() + chrono::TimeDelta::seconds(30))
            .to_rfc2822()
            .replace("+0000", "GMT");
        let wait = retry_after(&headers(&[("retry-after", &later)])).expect("a wait");
        assert!(
            wait > Duration::from_secs(25) && wait <= Duration::from_secs(30),
            "{wait:?}"
        );
    }

    #[test]
    fn backoff_grows_with_full_jitter_and_is_capped() {
        let backoff = |base, attempt| backoff(base, attempt, MAX_WAIT);
        let base = Duration::from_millis(100);
        for attempt in 1..=5 {
            let ceiling = base * (1 << (attempt - 1));
            for _ in 0..50 {
                assert!(backoff(base, attempt) <= ceiling);
            }
        }
        assert!(backoff(Duration::from_secs(10), 30) <= MAX_WAIT);
        assert_eq!(backoff(Duration::ZERO, 3), Duration::ZERO);
    }

    #[test]
    fn redacts_a_secret_of_four_characters_or_more() {
        assert_eq!(redact("key sk-123 refused", Some("sk-123")), "key [redacted] refused");
        assert_eq!(redact("the abc", Some("abc")), "the abc");
        assert_eq!(redact("nothing", None), "nothing");
    }
}
