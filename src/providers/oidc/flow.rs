//! The flow cookie: a sign-in in progress (state, nonce, PKCE verifier, where to go
//! afterwards, until when), sealed with an HMAC under the instance key so that only this
//! service, for this provider and client, can have made it.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use super::SsoError;
use crate::secret::{KeyMaterial, SecretKey};

/// The purpose the seal is derived for (see [`SecretKey::derive`]).
const SEAL_PURPOSE: &str = "oidc-flow";
/// A longer `return_to` is not a page of ours worth a cookie's room.
const RETURN_TO_MAX: usize = 1024;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(super) struct Flow {
    pub state: String,
    pub nonce: String,
    pub verifier: String,
    pub return_to: String,
    /// Unix seconds.
    pub expires: i64,
}

/// What the seal binds a flow to besides the key: the provider and the client, so that
/// a flow begun before a change of either is not finished after it.
pub(super) struct Sealer<'a> {
    pub key: &'a SecretKey,
    pub issuer: &'a str,
    pub client_id: &'a str,
}

impl Sealer<'_> {
    pub fn seal(&self, flow: &Flow) -> String {
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(flow).expect("a flow serializes"));
        let mac = self.mac(&payload);
        format!("{payload}.{mac}")
    }

    /// The flow the cookie holds, when sealed here and not expired at `now` (Unix seconds).
    pub fn open(&self, cookie: &str, now: i64) -> Result<Flow, SsoError> {
        let (payload, mac) = cookie.trim().split_once('.').ok_or(SsoError::BadFlow)?;
        if !KeyMaterial::new(self.mac(payload)).matches(mac) {
            return Err(SsoError::BadFlow);
        }
        let flow: Flow = URL_SAFE_NO_PAD
            .decode(payload)
            .ok()
            .and_then(|json| serde_json::from_slice(&json).ok())
            .ok_or(SsoError::BadFlow)?;
        if now >= flow.expires {
            return Err(SsoError::FlowExpired);
        }
        Ok(flow)
    }

    fn mac(&self, payload: &str) -> String {
        let parts: [&[u8]; 3] = [self.issuer.as_bytes(), self.client_id.as_bytes(), payload.as_bytes()];
        self.key.derive(SEAL_PURPOSE, &parts, 32)
    }
}

/// `return_to` when it is a path on this site (one leading `/`; no backslash, space or
/// control character, which browsers may strip or read so that it names another site),
/// else `/`.
pub(super) fn safe_return_to(return_to: &str) -> String {
    let on_this_site = return_to.starts_with('/')
        && !return_to.starts_with("//")
        && return_to.len() <= RETURN_TO_MAX
        && !return_to
            .chars()
            .any(|c| c == '\\' || c.is_control() || c.is_whitespace());
    if on_this_site {
        return_to.to_owned()
    } else {
        "/".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000;

    fn flow() -> Flow {
        Flow {
            state: "state-1".into(),
            nonce: "nonce-1".into(),
            verifier: "verifier-1".into(),
            return_to: "/projects/7".into(),
            expires: NOW + 600,
        }
    }

    fn sealer(key: &SecretKey) -> Sealer<'_> {
        Sealer {
            key,
            issuer: "https://idp.example.com",
            client_id: "insight",
        }
    }

    #[test]
    fn a_sealed_flow_opens_until_it_expires() {
        let key = SecretKey::from_bytes(b"the instance key");
        let cookie = sealer(&key).seal(&flow());
        assert!(
            cookie.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)),
            "{cookie}"
        );
        assert_eq!(sealer(&key).open(&cookie, NOW), Ok(flow()));
        assert_eq!(sealer(&key).open(&cookie, NOW + 599), Ok(flow()));
        assert_eq!(sealer(&key).open(&cookie, NOW + 600), Err(SsoError::FlowExpired));
    }

    #[test]
    fn a_tampered_or_foreign_flow_is_refused() {
        let key = SecretKey::from_bytes(b"the instance key");
        let cookie = sealer(&key).seal(&flow());
        let (payload, mac) = cookie.split_once('.').unwrap();

        // A later expiry, sealed with the old MAC.
        let mut longer = flow();
        longer.expires += 3600;
        let forged = format!("{}.{mac}", sealer(&key).seal(&longer).split_once('.').unwrap().0);
        assert_eq!(sealer(&key).open(&forged, NOW), Err(SsoError::BadFlow));

        // One character of the payload or the MAC changed.
        for (at, text) in [(0, payload), (1, mac)] {
            let mut bytes = text.as_bytes().to_vec();
            bytes[3] = if bytes[3] == b'A' { b'B' } else { b'A' };
            let changed = String::from_utf8(bytes).unwrap();
            let cookie = if at == 0 {
                format!("{changed}.{mac}")
            } else {
                format!("{payload}.{changed}")
            };
            assert_eq!(sealer(&key).open(&cookie, NOW), Err(SsoError::BadFlow), "{cookie}");
        }

        // Another instance's key, another client, another provider, or no seal at all.
        let other_key = SecretKey::from_bytes(b"another key");
        assert_eq!(sealer(&other_key).open(&cookie, NOW), Err(SsoError::BadFlow));
        let other_client = Sealer {
            client_id: "other",
            ..sealer(&key)
        };
        assert_eq!(other_client.open(&cookie, NOW), Err(SsoError::BadFlow));
        let other_issuer = Sealer {
            issuer: "https://idp.example.org",
            ..sealer(&key)
        };
        assert_eq!(other_issuer.open(&cookie, NOW), Err(SsoError::BadFlow));
        for garbage in ["", ".", payload, "not base64!.x", &format!("{payload}.")] {
            assert_eq!(sealer(&key).open(garbage, NOW), Err(SsoError::BadFlow), "{garbage:?}");
        }
        // A well-sealed payload that is not a flow.
        let junk = URL_SAFE_NO_PAD.encode(b"{\"state\":1}");
        let sealed_junk = format!("{junk}.{}", sealer(&key).mac(&junk));
        assert_eq!(sealer(&key).open(&sealed_junk, NOW), Err(SsoError::BadFlow));
    }

    #[test]
    fn return_to_is_kept_only_when_it_is_a_path_on_this_site() {
        for kept in ["/", "/projects/7?tab=records#top", "/a/b%2F%2Fc", "/é"] {
            assert_eq!(safe_return_to(kept), kept);
        }
        for other in [
            "",
            "projects",
            "//evil.example",
            "/\\evil.example",
            "\\\\evil.example",
            "/\t/evil.example",
            "/\n/evil.example",
            "https://evil.example/",
            "javascript:alert(1)",
            " /projects",
            "/a b",
            &format!("/{}", "a".repeat(RETURN_TO_MAX)),
        ] {
            assert_eq!(safe_return_to(other), "/", "{other:?}");
        }
    }
}
