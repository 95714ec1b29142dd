//! The rate limit of the public interview endpoints and pages, per client address (behind
//! a trusted proxy, the one it forwarded), so that links cannot be guessed by trying
//! (they are 192 random bits besides). Limits are per instance: with several instances
//! behind a balancer a client gets that many times the rate, which still leaves guessing
//! hopeless.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Request, State};
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};

use super::peer::ClientAddr;
use crate::config::Settings;
use crate::error::ErrorBody;

/// The limiter of one instance.
pub struct PublicRate {
    limiter: DefaultKeyedRateLimiter<IpAddr>,
    clock: DefaultClock,
}

impl PublicRate {
    pub fn new(settings: &Settings) -> Arc<Self> {
        let per_minute = settings.server.public_rate_per_minute.max(1);
        let quota = Quota::with_period(Duration::from_secs(60) / per_minute)
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(NonZeroU32::new(settings.server.public_rate_burst).unwrap_or(NonZeroU32::MIN));
        Arc::new(Self {
            limiter: DefaultKeyedRateLimiter::keyed(quota),
            clock: DefaultClock::default(),
        })
    }

    /// Seconds `address` must wait, or `None` when it may go on.
    fn wait(&self, address: IpAddr) -> Option<u64> {
        self.limiter
            .check_key(&address)
            .err()
            .map(|not_until| not_until.wait_time_from(self.clock.now()).as_secs_f64().ceil().max(1.0) as u64)
    }

    /// Forgets addresses whose allowance is full again, so the table stays small.
    pub fn forget_idle(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }
}

/// Whether a path is one of the public interview endpoints or pages.
fn limited(path: &str) -> bool {
    path.starts_with("/api/interviews/join/") || path.starts_with("/interview/")
}

/// The middleware: 429 with `Retry-After` when the client's address is over the rate.
pub async fn limit(State(rate): State<Arc<PublicRate>>, request: Request, next: Next) -> Response {
    if limited(request.uri().path())
        && let Some(ClientAddr(address)) = request.extensions().get::<ClientAddr>()
        && let Some(seconds) = rate.wait(*address)
    {
        let body = ErrorBody {
            detail: format!("Too many requests from your address; try again in {seconds} seconds."),
        };
        let mut response = (StatusCode::TOO_MANY_REQUESTS, Json(body)).into_response();
        response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(seconds));
        return response;
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_gets_its_burst_then_waits_and_others_are_not_held_up() {
        let mut settings = Settings::for_database("sqlite::memory:");
        settings.server.public_rate_per_minute = 6;
        settings.server.public_rate_burst = 2;
        let rate = PublicRate::new(&settings);
        let one: IpAddr = "192.0.2.1".parse().unwrap();
        let two: IpAddr = "192.0.2.2".parse().unwrap();
        assert_eq!(rate.wait(one), None);
        assert_eq!(rate.wait(one), None);
        let wait = rate.wait(one).expect("over the burst");
        assert!((1..=10).contains(&wait), "{wait}");
        assert_eq!(rate.wait(two), None);
        assert!(limited("/api/interviews/join/abc/messages") && limited("/interview/abc"));
        assert!(!limited("/api/interviews/rooms") && !limited("/projects/"));
    }
}
