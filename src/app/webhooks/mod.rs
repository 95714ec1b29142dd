//! Outgoing webhooks, as the Standard Webhooks specification says: every delivery is a
//! POST of the event's JSON with `webhook-id` (the event's id, the same on every
//! attempt), `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,` and the
//! base64 HMAC-SHA256 of `{id}.{timestamp}.{body}` under the endpoint's secret). A 2xx
//! answer delivers it; anything else is retried after the delays of
//! `INSIGHT_WEBHOOKS_RETRY_SCHEDULE` (jittered), then the delivery fails and its endpoint
//! is marked failing.
//!
//! Deliveries go only to public addresses (unless `INSIGHT_WEBHOOKS_ALLOW_PRIVATE`):
//! the check is made on the addresses the name resolves to when the delivery connects,
//! so a name that later points inside the network gets nothing. Redirects are not
//! followed.

pub mod address;
mod endpoints;

pub use endpoints::{deliveries, get, list, register, remove, send_again};

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use chrono::Utc;
use futures_util::StreamExt;
use hmac::{Hmac, Mac};
use rand::Rng;
use sha2::Sha256;
use tokio::sync::watch;
use uuid::Uuid;

use crate::config::Settings;
use crate::secret::SecretKey;
use crate::store::{Attempt, ClaimedDelivery, Store};

/// How long a claimed delivery stays with this instance before another may take it.
const LEASE_SECONDS: i64 = 120;
/// Deliveries claimed at once.
const BATCH: i64 = 64;
/// How often the outbox is looked at for work queued by other instances or due retries.
const POLL: Duration = Duration::from_millis(500);
/// Most of a receiver's answer kept in the delivery log.
const ERROR_BYTES: usize = 300;

/// An endpoint's signing secret: derived from the instance key, never stored. Returns
/// the `whsec_…` form shown to its owner and the key bytes that sign.
pub fn endpoint_secret(key: &SecretKey, endpoint_id: Uuid, nonce: &[u8]) -> (String, [u8; 32]) {
    let bytes = key.derive_bytes("webhook-endpoint-secret", &[endpoint_id.as_bytes(), nonce]);
    (format!("whsec_{}", STANDARD.encode(bytes)), bytes)
}

/// The `webhook-signature` header value for a delivery.
pub fn signature(secret: &[u8], id: &str, timestamp: i64, body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// Sends the outbox's deliveries.
#[derive(Clone)]
pub struct Dispatcher {
    store: Store,
    key: Arc<SecretKey>,
    settings: Arc<Settings>,
    http: reqwest::Client,
}

impl Dispatcher {
    pub fn new(store: Store, key: Arc<SecretKey>, settings: Arc<Settings>) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(settings.webhooks.webhooks_timeout_seconds))
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("Insight-Webhooks/", env!("CARGO_PKG_VERSION")))
            .dns_resolver(Arc::new(address::CheckedResolver {
                allow_private: settings.webhooks.webhooks_allow_private,
            }))
            .build()?;
        Ok(Self {
            store,
            key,
            settings,
            http,
        })
    }

    /// Sends due deliveries until `stopped`, waking at once when this instance queues
    /// some and otherwise polling for other instances' and for retries coming due.
    pub async fn run(self, mut stopped: watch::Receiver<bool>) {
        loop {
            if *stopped.borrow() {
                return;
            }
            let sent = match self.round().await {
                Ok(sent) => sent,
                Err(error) => {
                    tracing::warn!(error = %format!("{error:#}"), "webhook deliveries failed to start; trying again");
                    0
                }
            };
            if sent > 0 {
                continue;
            }
            tokio::select! {
                () = self.store.outbox_changed() => {}
                () = tokio::time::sleep(POLL) => {}
                _ = stopped.changed() => return,
            }
        }
    }

    /// Claims what is due and sends it; the number sent.
    async fn round(&self) -> anyhow::Result<usize> {
        match self.store.next_delivery_due().await? {
            Some(due) if due <= Utc::now() => {}
            _ => return Ok(0),
        }
        let claimed = self
            .store
            .claim_deliveries(BATCH, chrono::Duration::seconds(LEASE_SECONDS))
            .await?;
        let count = claimed.len();
        futures_util::stream::iter(claimed)
            .for_each_concurrent(self.settings.webhooks.webhooks_concurrency, |delivery| async move {
                let attempt = self.attempt(&delivery).await;
                if let Err(error) = self.store.settle_delivery(&delivery, &attempt).await {
                    // The lease runs out and the delivery is tried again: at least once.
                    tracing::error!(delivery = %delivery.id, error = %format!("{error:#}"), "recording a webhook delivery failed");
                }
            })
            .await;
        Ok(count)
    }

    async fn attempt(&self, delivery: &ClaimedDelivery) -> Attempt {
        let failed = |status: Option<i32>, error: String| {
            let retry_at = self.retry_delay(delivery.attempts).map(|delay| {
                crate::domain::now() + chrono::Duration::from_std(delay).unwrap_or_else(|_| chrono::Duration::days(1))
            });
            tracing::info!(delivery = %delivery.id, endpoint = %delivery.endpoint_id, attempt = delivery.attempts,
                status, %error, retry = retry_at.is_some(), "webhook delivery failed");
            Attempt::Failed {
                status,
                error,
                retry_at,
            }
        };
        if let Err(reason) = address::check_url(
            &delivery.url,
            self.settings.webhooks.webhooks_allow_http,
            self.settings.webhooks.webhooks_allow_private,
        ) {
            return failed(None, reason);
        }
        let (_, secret) = endpoint_secret(&self.key, delivery.endpoint_id, &delivery.secret_nonce);
        let timestamp = Utc::now().timestamp();
        let response = self
            .http
            .post(&delivery.url)
            .header("content-type", "application/json")
            .header("webhook-id", &delivery.event_id)
            .header("webhook-timestamp", timestamp.to_string())
            .header(
                "webhook-signature",
                signature(&secret, &delivery.event_id, timestamp, &delivery.payload),
            )
            .body(delivery.payload.clone())
            .send()
            .await;
        match response {
            Ok(response) if response.status().is_success() => {
                let delay = (Utc::now() - delivery.created_at).num_milliseconds();
                metrics::histogram!("insight_webhook_delivery_delay_seconds").record(delay as f64 / 1000.0);
                metrics::counter!("insight_webhook_deliveries_total", "result" => "delivered").increment(1);
                Attempt::Delivered {
                    status: i32::from(response.status().as_u16()),
                }
            }
            Ok(response) => {
                metrics::counter!("insight_webhook_deliveries_total", "result" => "failed").increment(1);
                let status = i32::from(response.status().as_u16());
                let body = response.text().await.unwrap_or_default();
                let mut error = format!("the receiver answered {status}");
                let body = body.trim();
                if !body.is_empty() {
                    error.push_str(": ");
                    error.extend(body.chars().take(ERROR_BYTES));
                }
                failed(Some(status), error)
            }
            Err(error) => {
                metrics::counter!("insight_webhook_deliveries_total", "result" => "failed").increment(1);
                failed(None, describe(&error))
            }
        }
    }

    /// The delay before the next attempt after `attempts` failed ones, jittered
    /// (±20 %), or `None` when the schedule is used up.
    fn retry_delay(&self, attempts: i32) -> Option<Duration> {
        let index = usize::try_from(attempts).ok()?.checked_sub(1)?;
        let delay = *self.settings.webhooks.webhooks_retry_schedule.0.get(index)?;
        Some(delay.mul_f64(rand::rng().random_range(0.8..1.2)))
    }
}

/// A transport error in a sentence, its causes included (the refused address is in
/// the resolver's).
fn describe(error: &reqwest::Error) -> String {
    let mut text = if error.is_timeout() {
        "the receiver did not answer in time".to_owned()
    } else if error.is_connect() {
        "cannot connect to the receiver".to_owned()
    } else {
        "the request failed".to_owned()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_standard_webhooks_one() {
        // The example of the Standard Webhooks specification's reference libraries.
        let secret = STANDARD.decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = r#"{"test": 2432232314}"#;
        assert_eq!(
            signature(&secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn an_endpoint_secret_is_whsec_base64_and_its_own() {
        let key = SecretKey::from_bytes(b"instance key");
        let id = Uuid::new_v4();
        let (shown, bytes) = endpoint_secret(&key, id, b"nonce");
        assert!(shown.starts_with("whsec_"));
        assert_eq!(STANDARD.decode(&shown[6..]).unwrap(), bytes);
        assert_ne!(endpoint_secret(&key, id, b"other").1, bytes);
    }
}
