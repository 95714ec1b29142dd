//! A forgotten password: a one-time link by mail, and a new password set with it.

use super::audit::{self, Actor};
use super::sign_in::{self, Device, Session};
use super::{password, password_link_url};
use crate::domain::user::normalize_email;
use crate::error::{Error, Result};
use crate::providers::mail::Letter;
use crate::services::Services;

/// Mails a one-time link to set a new password, when the address has an account and mail
/// is set up. Nothing says which: the caller answers the same either way, and the mail
/// goes out after the answer, so its time does not tell either.
pub async fn send_link(services: &Services, email: &str) -> Result<()> {
    let email = normalize_email(email).unwrap_or_default();
    let (Some(account), Some(mailer)) = (services.store.account_by_email(&email).await?, services.mailer.clone())
    else {
        return Ok(());
    };
    let lifetime = chrono::Duration::minutes(services.settings.accounts.password_reset_minutes as i64);
    let token = services.store.issue_password_link(account.id, lifetime).await?;
    let url = password_link_url(&services.settings.server.public_url, &token);
    let letter = Letter::password_reset(&account.email, &url, crate::domain::now() + lifetime);
    tokio::spawn(async move {
        if let Err(error) = mailer.send_letter(letter).await {
            tracing::warn!(error = %format!("{error:#}"), "the password reset email was not sent");
        }
    });
    Ok(())
}

/// Sets a new password with a one-time link's token: every session of the account ends,
/// a lock from failed sign-ins is lifted, and a new session starts.
pub async fn reset(services: &Services, token: &str, new_password: &str, device: Device<'_>) -> Result<Session> {
    password::check_new_password(new_password).map_err(|why| Error::conflict(why.to_owned()))?;
    let phc = password::hash(new_password.to_owned()).await?;
    let store = &services.store;
    let user_id = store
        .use_password_link(token)
        .await?
        .ok_or_else(|| Error::NotFound("This link is unknown, used or expired: ask for a new one".into()))?;
    store.set_password_hash(user_id, &phc, None).await?;
    let account = store.account(user_id).await?.ok_or_else(|| Error::not_found("User"))?;
    // Whoever proved he holds the address's mail is not kept out by a lock others caused.
    store
        .clear_sign_in_failures(&format!("account:{}", account.email))
        .await?;
    let user = account.user();
    audit::record(
        store,
        audit::Entry {
            workspace_id: None,
            actor: Actor::user(&user, device.ip),
            action: "user.password_reset",
            target: Some(("user", user.id.to_string())),
            detail: serde_json::Value::Null,
        },
    )
    .await?;
    sign_in::start(services, user, "password-link", device).await
}
