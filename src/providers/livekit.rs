//! Voice interviews over LiveKit: the respondent's access token, and the check of
//! LiveKit's signed webhooks.
//!
//! Both are HS256 JSON Web Tokens under the API secret (LiveKit's scheme): an access
//! token carries the `video` grant for one room, the respondent's identity and an
//! expiry; a webhook's `Authorization` header is a token whose `sha256` claim is the
//! base64 SHA-256 of the body. The few lines of HS256 are written here on the `hmac`
//! crate: the JWT crates reach HMAC only through features that also build RSA and
//! elliptic-curve code this service never uses.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// How long a webhook's token may be off the clock, in seconds.
const LEEWAY_SECONDS: i64 = 60;

/// The LiveKit project this instance uses (`INSIGHT_LIVEKIT_*`).
#[derive(Clone)]
pub struct LiveKit {
    pub url: String,
    pub api_key: String,
    api_secret: String,
}

impl std::fmt::Debug for LiveKit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveKit")
            .field("url", &self.url)
            .field("api_key", &self.api_key)
            .field("api_secret", &"[redacted]")
            .finish()
    }
}

/// The LiveKit room of an interview room.
pub fn room_name(room_id: Uuid) -> String {
    format!("insight-{room_id}")
}

/// The interview room of a LiveKit room, when it is one of ours.
pub fn room_id(livekit_room: &str) -> Option<Uuid> {
    livekit_room
        .strip_prefix("insight-")
        .and_then(|id| Uuid::parse_str(id).ok())
}

/// The identity a respondent has in a room.
pub fn respondent_identity(room_id: Uuid) -> String {
    format!("respondent-{room_id}")
}

fn sign(secret: &str, claims: &Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(format!("{header}.{payload}").as_bytes());
    let signature = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    format!("{header}.{payload}.{signature}")
}

/// The claims of an HS256 token signed with `secret`, or why it is not one.
fn verify(secret: &str, token: &str, at: DateTime<Utc>) -> Result<Value, &'static str> {
    let (signed, signature) = token.rsplit_once('.').ok_or("not a JSON Web Token")?;
    let (header, payload) = signed.split_once('.').ok_or("not a JSON Web Token")?;
    if payload.contains('.') {
        return Err("not a JSON Web Token");
    }
    let header: Value = URL_SAFE_NO_PAD
        .decode(header)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or("a token header that is not JSON")?;
    if header["alg"] != "HS256" {
        return Err("a token not signed with HS256");
    }
    let signature = URL_SAFE_NO_PAD
        .decode(signature)
        .map_err(|_| "a signature that is not base64")?;
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(signed.as_bytes());
    mac.verify_slice(&signature).map_err(|_| "a wrong signature")?;
    let claims: Value = URL_SAFE_NO_PAD
        .decode(payload)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or("claims that are not JSON")?;
    let now = at.timestamp();
    if claims["exp"].as_i64().is_some_and(|exp| exp + LEEWAY_SECONDS < now) {
        return Err("an expired token");
    }
    if claims["nbf"].as_i64().is_some_and(|nbf| nbf - LEEWAY_SECONDS > now) {
        return Err("a token not valid yet");
    }
    Ok(claims)
}

impl LiveKit {
    /// From the settings: all three or none; a sentence naming what is missing.
    pub fn from_settings(
        url: Option<&str>,
        api_key: Option<&str>,
        api_secret: Option<&str>,
    ) -> Result<Option<Self>, String> {
        let given = |value: Option<&str>| {
            value
                .map(str::trim)
                .filter(|value| !value.is_empty())
                .map(str::to_owned)
        };
        match (given(url), given(api_key), given(api_secret)) {
            (None, None, None) => Ok(None),
            (Some(url), Some(api_key), Some(api_secret)) => Ok(Some(Self {
                url,
                api_key,
                api_secret,
            })),
            (url, key, secret) => {
                let missing: Vec<&str> = [
                    (url.is_none(), "INSIGHT_LIVEKIT_URL"),
                    (key.is_none(), "INSIGHT_LIVEKIT_API_KEY"),
                    (secret.is_none(), "INSIGHT_LIVEKIT_API_SECRET"),
                ]
                .into_iter()
                .filter_map(|(missing, name)| missing.then_some(name))
                .collect();
                Err(format!(
                    "voice interviews need INSIGHT_LIVEKIT_URL, INSIGHT_LIVEKIT_API_KEY and INSIGHT_LIVEKIT_API_SECRET \
                     together; {} missing",
                    missing.join(" and ")
                ))
            }
        }
    }

    /// The respondent's token for the interview's LiveKit room, valid from `at` until
    /// `until` (the interview's end).
    pub fn access_token(&self, room_id: Uuid, display_name: &str, at: DateTime<Utc>, until: DateTime<Utc>) -> String {
        sign(
            &self.api_secret,
            &json!({
                "iss": self.api_key,
                "sub": respondent_identity(room_id),
                "name": display_name,
                "nbf": at.timestamp(),
                "exp": until.timestamp().max(at.timestamp() + 1),
                "jti": Uuid::new_v4().to_string(),
                "video": {
                    "room": room_name(room_id),
                    "roomJoin": true,
                    "canPublish": true,
                    "canSubscribe": true,
                    "canPublishData": true,
                },
            }),
        )
    }

    /// Checks a webhook as LiveKit signs it: the `Authorization` header is a token of
    /// this API key, signed with its secret, whose `sha256` claim is the body's hash.
    pub fn verify_webhook(&self, authorization: Option<&str>, body: &[u8], at: DateTime<Utc>) -> Result<(), String> {
        let token = authorization
            .map(|value| value.strip_prefix("Bearer ").unwrap_or(value).trim())
            .filter(|token| !token.is_empty())
            .ok_or("the Authorization header with LiveKit's signed token is missing")?;
        let claims =
            verify(&self.api_secret, token, at).map_err(|why| format!("the Authorization header holds {why}"))?;
        if claims["iss"] != self.api_key.as_str() {
            return Err("the token is of another API key".into());
        }
        let hash = STANDARD.encode(Sha256::digest(body));
        if claims["sha256"] != hash.as_str() {
            return Err("the body is not the one that was signed".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn livekit() -> LiveKit {
        LiveKit::from_settings(
            Some("wss://lk.example.com"),
            Some("APIkey"),
            Some("a secret of some length"),
        )
        .unwrap()
        .unwrap()
    }

    #[test]
    fn all_three_settings_or_none() {
        assert!(LiveKit::from_settings(None, None, None).unwrap().is_none());
        let error = LiveKit::from_settings(Some("wss://x"), None, Some("s")).unwrap_err();
        assert!(
            error.contains("INSIGHT_LIVEKIT_API_KEY") && !error.contains("INSIGHT_LIVEKIT_URL and"),
            "{error}"
        );
        assert!(!format!("{:?}", livekit()).contains("a secret"));
    }

    #[test]
    fn an_access_token_verifies_and_carries_the_grant() {
        let livekit = livekit();
        let room = Uuid::new_v4();
        let at = Utc::now();
        let token = livekit.access_token(room, "Respondent", at, at + chrono::Duration::minutes(30));
        let claims = verify("a secret of some length", &token, at).unwrap();
        assert_eq!(claims["iss"], "APIkey");
        assert_eq!(claims["sub"], respondent_identity(room));
        assert_eq!(claims["video"]["room"], room_name(room));
        assert_eq!(claims["video"]["roomJoin"], true);
        assert_eq!(claims["exp"].as_i64().unwrap() - claims["nbf"].as_i64().unwrap(), 1800);
        assert_eq!(verify("another secret", &token, at), Err("a wrong signature"));
        assert_eq!(
            verify("a secret of some length", &token, at + chrono::Duration::hours(1)),
            Err("an expired token")
        );
        assert_eq!(room_id(&room_name(room)), Some(room));
        assert_eq!(room_id("someone-else"), None);
    }

    #[test]
    fn a_webhook_must_be_signed_for_its_body() {
        let livekit = livekit();
        let body = br#"{"event":"room_started","id":"EV_1"}"#;
        let at = Utc::now();
        let signed = |secret: &str, iss: &str, body: &[u8]| {
            sign(
                secret,
                &json!({ "iss": iss, "nbf": at.timestamp(), "exp": at.timestamp() + 300,
                         "sha256": STANDARD.encode(Sha256::digest(body)) }),
            )
        };
        let good = signed("a secret of some length", "APIkey", body);
        assert!(livekit.verify_webhook(Some(&good), body, at).is_ok());
        assert!(
            livekit
                .verify_webhook(Some(&format!("Bearer {good}")), body, at)
                .is_ok()
        );
        assert!(livekit.verify_webhook(None, body, at).unwrap_err().contains("missing"));
        let tampered = br#"{"event":"room_finished","id":"EV_1"}"#;
        assert!(
            livekit
                .verify_webhook(Some(&good), tampered, at)
                .unwrap_err()
                .contains("body")
        );
        let forged = signed("not the secret", "APIkey", body);
        assert!(
            livekit
                .verify_webhook(Some(&forged), body, at)
                .unwrap_err()
                .contains("signature")
        );
        let other_key = signed("a secret of some length", "OTHER", body);
        assert!(
            livekit
                .verify_webhook(Some(&other_key), body, at)
                .unwrap_err()
                .contains("API key")
        );
        assert!(livekit.verify_webhook(Some("a.b"), body, at).is_err());
    }
}
