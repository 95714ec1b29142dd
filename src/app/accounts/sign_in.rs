//! Signing in with a password (or signing up), into a session; who holds a token or a
//! session's cookie; signing out; and what a session's cookie and CSRF token are.
//!
//! Failed sign-ins are counted per account and per client address in the database, so
//! every instance sees the same counts: each failure slows the next answer, and past a
//! limit the account (or the address) is locked for a while. An address that does not
//! exist is answered exactly as a wrong password is, after the same work.

use std::net::IpAddr;
use std::time::Duration;

use uuid::Uuid;

use super::audit::{self, Actor};
use super::password;
use crate::config::Signup;
use crate::domain::user::{User, normalize_email};
use crate::error::{Error, Result};
use crate::secret::SecretKey;
use crate::services::Services;
use crate::store::{Account, SessionStart, Store};

// The doors name the caller they found by these, so they come from here, not the store.
pub use crate::store::{Credential, Holder};

/// The answer to wrong credentials: it never says which half was wrong.
const WRONG: &str = "Wrong email or password";

/// How long the answer to each failure is held per failure before it, at most `MAX_DELAY`.
const DELAY_PER_FAILURE: Duration = Duration::from_millis(250);
const MAX_DELAY: Duration = Duration::from_secs(3);

/// Where a sign-in comes from: the client's address and browser, as sessions list them.
#[derive(Debug, Clone, Copy)]
pub struct Device<'a> {
    pub ip: Option<IpAddr>,
    pub user_agent: Option<&'a str>,
}

/// A new session: its id, the cookie's value (shown once) and the user.
pub struct Session {
    pub id: Uuid,
    pub value: String,
    pub user: User,
}

/// Who holds the personal API token an `Authorization: Bearer` header carries (the JSON
/// API and the MCP server take the same tokens): a header in another scheme, a blank
/// token and a session's value are refused as an unknown token is.
pub async fn with_token(store: &Store, authorization: &[u8]) -> Result<Holder> {
    let token = std::str::from_utf8(authorization)
        .ok()
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .filter(|token| !token.is_empty())
        .ok_or_else(Error::unauthenticated)?;
    store
        .holder_of(token)
        .await?
        .filter(|holder| matches!(holder.credential, Credential::Token { .. }))
        .ok_or_else(|| Error::Unauthenticated("Invalid, expired or revoked token".into()))
}

/// How often a session's last use is written down; its idle limit is counted from that.
const TOUCH_EVERY: chrono::Duration = chrono::Duration::seconds(60);

/// Who holds the live session whose cookie carries `value` (the JSON API and the console
/// take the same cookie); `None` for an unknown, ended or idle one, or a token's value.
/// A session used again is marked so, at most once a minute and without holding up the
/// request, so that it does not end for idleness while it is used through either door.
pub async fn with_session(store: &Store, value: &str) -> Result<Option<Holder>> {
    let Some(holder) = store
        .holder_of(value)
        .await?
        .filter(|holder| matches!(holder.credential, Credential::Session { .. }))
    else {
        return Ok(None);
    };
    if let Credential::Session { id, last_seen_at } = holder.credential
        && crate::domain::now() - last_seen_at > TOUCH_EVERY
    {
        let store = store.clone();
        tokio::spawn(async move {
            if let Err(error) = store.touch_session(id).await {
                tracing::warn!(error = %format!("{error:#}"), "marking a session used failed");
            }
        });
    }
    Ok(Some(holder))
}

/// Ends the caller's session (signing out); one that ended already is as good as ended.
pub async fn sign_out(store: &Store, user_id: Uuid, session_id: Uuid) -> Result<()> {
    store.revoke_session(user_id, session_id).await?;
    Ok(())
}

/// Makes an account with a password, when sign-up is open (`INSIGHT_SIGNUP=open`), and
/// signs it in.
pub async fn sign_up(
    services: &Services,
    email: &str,
    password: &str,
    name: Option<&str>,
    from: Device<'_>,
) -> Result<Session> {
    if services.settings.accounts.signup != Signup::Open {
        return Err(Error::forbidden(
            "Sign-up is not open on this service: ask a workspace admin for an invitation",
        ));
    }
    let email = normalize_email(email).ok_or_else(|| Error::conflict("That is not an email address"))?;
    password::check_new_password(password).map_err(|why| Error::conflict(why.to_owned()))?;
    let phc = password::hash(password.to_owned()).await?;
    let name = name.unwrap_or_default().trim();
    let user = services
        .store
        .add_user_named(&email, name)
        .await?
        .ok_or_else(|| Error::conflict("This address has an account already: sign in, or reset the password"))?;
    services.store.set_password_hash(user.id, &phc, None).await?;
    start(services, user, "signup", from).await
}

/// The cookie's name: with `__Host-` when the service is reached over https, which makes
/// the browser keep it only for this host, on every path, and only over https.
pub fn cookie_name(public_url: &str) -> &'static str {
    if secure(public_url) {
        "__Host-insight_session"
    } else {
        "insight_session"
    }
}

pub fn secure(public_url: &str) -> bool {
    public_url.starts_with("https://")
}

/// The `Set-Cookie` value that gives a browser its session.
pub fn cookie(public_url: &str, value: &str, max_age: chrono::Duration) -> String {
    let secure = if secure(public_url) { "; Secure" } else { "" };
    format!(
        "{}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
        cookie_name(public_url),
        max_age.num_seconds()
    )
}

/// The `Set-Cookie` value that ends it in the browser.
pub fn clear_cookie(public_url: &str) -> String {
    cookie(public_url, "", chrono::Duration::zero())
}

/// The value of the cookie `name` among a request's `Cookie` headers.
pub fn read_cookie<'a>(cookie_headers: impl IntoIterator<Item = &'a str>, name: &str) -> Option<String> {
    cookie_headers
        .into_iter()
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.trim().to_owned())
}

/// The value of the session cookie among a request's `Cookie` headers.
pub fn session_value<'a>(cookie_headers: impl IntoIterator<Item = &'a str>, public_url: &str) -> Option<String> {
    read_cookie(cookie_headers, cookie_name(public_url)).filter(|value| !value.is_empty())
}

/// Whether a change comes from this service's own pages: its `Origin` is
/// `INSIGHT_PUBLIC_URL`'s, or the scheme of that with the request's own `Host` (the
/// browser sets both; a foreign page cannot).
pub fn same_origin(public_url: &str, origin: Option<&str>, host: Option<&str>) -> bool {
    let scheme = if secure(public_url) { "https" } else { "http" };
    origin.is_some_and(|origin| origin == public_url || host.is_some_and(|host| origin == format!("{scheme}://{host}")))
}

/// Whether `sent` is the session's CSRF token, compared by hashes so the time taken says
/// nothing about how much of it was right.
pub fn csrf_matches(secret: &SecretKey, session_value: &str, sent: Option<&str>) -> bool {
    use sha2::Digest;
    let expected = csrf_token(secret, session_value);
    sent.is_some_and(|sent| sha2::Sha256::digest(sent.as_bytes()) == sha2::Sha256::digest(expected.as_bytes()))
}

/// The CSRF token of a session: derived from its cookie's value, so it is never stored
/// and cannot be guessed without the cookie.
pub fn csrf_token(secret: &SecretKey, session_value: &str) -> String {
    secret.derive("csrf", &[session_value.as_bytes()], 32)
}

/// Checks an email and password and starts a session.
pub async fn with_password(services: &Services, email: &str, password: &str, from: Device<'_>) -> Result<Session> {
    let accounts = &services.settings.accounts;
    let window = chrono::Duration::minutes(accounts.sign_in_lock_minutes as i64);
    let email = normalize_email(email).unwrap_or_else(|| email.trim().to_lowercase());
    let account_key = format!("account:{email}");
    let address_key = from.ip.map(|ip| format!("ip:{ip}"));
    let store = &services.store;
    let account = store.account_by_email(&email).await?;

    let mut locked_until = store.sign_in_failures(&account_key, window).await?.locked_until;
    if let Some(key) = &address_key {
        locked_until = locked_until.max(store.sign_in_failures(key, window).await?.locked_until);
    }
    if let Some(until) = locked_until {
        audit_failure(store, &email, account.as_ref(), from, "locked").await?;
        let seconds = (until - crate::domain::now()).num_seconds().max(1) as u64;
        return Err(Error::TooSoon {
            detail: format!(
                "Too many failed sign-ins: try again in {} minutes, or reset your password",
                seconds.div_ceil(60)
            ),
            retry_after: seconds,
        });
    }

    let stored = account.as_ref().and_then(|account| account.password_hash.clone());
    if password::verify(password.to_owned(), stored.clone()).await? {
        let account = account.ok_or_else(|| anyhow::anyhow!("a password matched no account"))?;
        store.clear_sign_in_failures(&account_key).await?;
        if let Some(old) = stored.filter(|phc| password::needs_rehash(phc)) {
            let new = password::hash(password.to_owned()).await?;
            store.upgrade_password_hash(account.id, &old, &new).await?;
        }
        return start(services, account.user(), "password", from).await;
    }

    let failures = store
        .record_sign_in_failure(&account_key, window, accounts.sign_in_lock_after)
        .await?;
    if let Some(key) = &address_key {
        store
            .record_sign_in_failure(key, window, accounts.sign_in_address_lock_after)
            .await?;
    }
    let reason = if account.is_some() {
        "wrong_password"
    } else {
        "unknown_account"
    };
    audit_failure(store, &email, account.as_ref(), from, reason).await?;
    let delay = DELAY_PER_FAILURE * failures.count.saturating_sub(1);
    tokio::time::sleep(delay.min(MAX_DELAY)).await;
    Err(Error::Unauthenticated(WRONG.into()))
}

/// Starts a session for someone whose identity was proven (a password, single sign-on,
/// an accepted invitation), with its audit entry.
pub async fn start(services: &Services, user: User, method: &str, from: Device<'_>) -> Result<Session> {
    let ip = from.ip.map(|ip| ip.to_string());
    let (id, value) = services
        .store
        .start_session(SessionStart {
            user_id: user.id,
            lifetime: services.settings.accounts.session_lifetime(),
            ip: ip.as_deref(),
            user_agent: from.user_agent,
            method,
        })
        .await?;
    audit::record(
        &services.store,
        audit::Entry {
            workspace_id: None,
            actor: Actor::user(&user, from.ip),
            action: "session.signed_in",
            target: Some(("session", id.to_string())),
            detail: serde_json::json!({ "method": method }),
        },
    )
    .await?;
    Ok(Session { id, value, user })
}

async fn audit_failure(
    store: &Store,
    email: &str,
    account: Option<&Account>,
    from: Device<'_>,
    reason: &str,
) -> Result<()> {
    audit::record(
        store,
        audit::Entry {
            workspace_id: None,
            actor: Actor {
                id: account.map(|account| account.id),
                email: Some(email.to_owned()),
                ip: from.ip,
            },
            action: "session.sign_in_failed",
            target: None,
            detail: serde_json::json!({ "reason": reason }),
        },
    )
    .await
}
