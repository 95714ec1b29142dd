//! The visitor's own account: his password, his sessions (ending the others) and his
//! personal API tokens (a new one shown in the answer, once).

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use serde::Deserialize;
use uuid::Uuid;

use super::{Done, Message, on_the_form, when};
use crate::app::accounts::own;
use crate::domain::user::{SessionInfo, TokenInfo, TokenScope};
use crate::doors::console::pages::{Button, ConfirmDelete, SettingsNav, Shell, render};
use crate::doors::console::session::{Change, Visitor};
use crate::doors::console::{PageResult, page};
use crate::error::Error;
use crate::services::Services;

const DONE: &[(&str, &str)] = &[
    (
        "password",
        "Your password is changed. Your other sessions have ended; this one goes on.",
    ),
    ("ended", "That session has ended."),
    ("ended-all", "Every other session has ended; only this one goes on."),
    ("revoked", "The token is revoked: the API refuses it from now on."),
];

/// The lifetimes a new token may have, in days (`None`: until revoked).
const EXPIRIES: &[(&str, &str)] = &[
    ("30", "30 days"),
    ("90", "90 days"),
    ("365", "A year"),
    ("", "Never (until revoked)"),
];

struct SessionRow {
    session: SessionInfo,
    device: String,
    last_seen: String,
    started: String,
}

struct TokenRow {
    token: TokenInfo,
    created: String,
    expires: String,
    /// `active`, `expired` or `revoked`.
    state: &'static str,
}

/// A token just issued: its value is in this answer only.
struct NewToken {
    name: String,
    value: String,
}

#[derive(Template)]
#[template(path = "settings_account.html")]
struct AccountPage {
    shell: Shell,
    nav: SettingsNav,
    csrf: String,
    email: String,
    has_password: bool,
    sessions: Vec<SessionRow>,
    others: usize,
    tokens: Vec<TokenRow>,
    expiries: &'static [(&'static str, &'static str)],
    new_token: Option<NewToken>,
    message: Message,
    /// The MCP server's address, for connecting an assistant with a token.
    mcp_url: String,
}

/// A browser's user agent in a few words: the browser and the system, when they show.
fn device(user_agent: Option<&str>) -> String {
    let Some(agent) = user_agent.filter(|a| !a.trim().is_empty()) else {
        return "Unknown device".to_owned();
    };
    let browser = [
        ("Edg/", "Edge"),
        ("Firefox/", "Firefox"),
        ("Chrome/", "Chrome"),
        ("Safari/", "Safari"),
    ]
    .iter()
    .find(|(needle, _)| agent.contains(needle))
    .map(|(_, name)| *name);
    let system = [
        ("Android", "Android"),
        ("iPhone", "iPhone"),
        ("iPad", "iPad"),
        ("Windows", "Windows"),
        ("Mac OS X", "macOS"),
        ("Linux", "Linux"),
    ]
    .iter()
    .find(|(needle, _)| agent.contains(needle))
    .map(|(_, name)| *name);
    match (browser, system) {
        (Some(browser), Some(system)) => format!("{browser} on {system}"),
        (Some(one), None) | (None, Some(one)) => one.to_owned(),
        (None, None) => agent.chars().take(60).collect(),
    }
}

async fn render_page(
    services: &Services,
    visitor: &Visitor,
    status: StatusCode,
    message: Message,
    new_token: Option<NewToken>,
) -> PageResult {
    let overview = own::overview(&services.store, &visitor.caller, Some(visitor.session_id)).await?;
    let sessions: Vec<SessionRow> = overview
        .sessions
        .into_iter()
        .map(|session| SessionRow {
            device: device(session.user_agent.as_deref()),
            last_seen: when(&session.last_seen_at),
            started: when(&session.created_at),
            session,
        })
        .collect();
    let now = crate::domain::now();
    let tokens = overview
        .tokens
        .into_iter()
        .rev()
        .map(|token| TokenRow {
            created: when(&token.created_at),
            expires: token.expires_at.as_ref().map_or_else(|| "never".to_owned(), when),
            state: if token.revoked_at.is_some() {
                "revoked"
            } else if token.expires_at.is_some_and(|at| at <= now) {
                "expired"
            } else {
                "active"
            },
            token,
        })
        .collect();
    let html = AccountPage {
        shell: Shell::of(visitor),
        nav: SettingsNav::new(visitor, "account"),
        csrf: visitor.csrf.clone(),
        email: visitor.caller.user.email.clone(),
        has_password: overview.has_password,
        others: sessions.iter().filter(|row| !row.session.current).count(),
        sessions,
        tokens,
        expiries: EXPIRIES,
        new_token,
        message,
        // Where the MCP door is served (`mcp::PATH`; a door names no other door).
        mcp_url: format!("{}/mcp", services.settings.server.public_url.trim_end_matches('/')),
    };
    Ok(page(status, render(&html)))
}

async fn show(State(services): State<Services>, visitor: Visitor, Query(done): Query<Done>) -> PageResult {
    render_page(&services, &visitor, StatusCode::OK, Message::done(&done, DONE), None).await
}

async fn refused(services: &Services, visitor: &Visitor, error: Error) -> PageResult {
    if on_the_form(&error) {
        render_page(
            services,
            visitor,
            crate::doors::status(&error),
            Message::error(&error),
            None,
        )
        .await
    } else {
        Err(error.into())
    }
}

#[derive(Deserialize)]
struct PasswordForm {
    #[serde(default)]
    current_password: String,
    new_password: String,
}

async fn change_password(State(services): State<Services>, Change(visitor, form): Change<PasswordForm>) -> PageResult {
    let changed = own::change_password(
        &services.store,
        &visitor.caller,
        &form.current_password,
        &form.new_password,
        Some(visitor.session_id),
    )
    .await;
    match changed {
        Ok(()) => Ok(Redirect::to("/settings/account?done=password").into_response()),
        Err(error) => refused(&services, &visitor, error).await,
    }
}

async fn end_session(
    State(services): State<Services>,
    Path(session_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    own::end_session(&services.store, &visitor.caller, session_id).await?;
    // Ending this very session is signing out.
    let to = if session_id == visitor.session_id {
        "/sign-in"
    } else {
        "/settings/account?done=ended"
    };
    Ok(Redirect::to(to).into_response())
}

async fn end_others(State(services): State<Services>, Change(visitor, _): Change<Button>) -> PageResult {
    own::end_other_sessions(&services.store, &visitor.caller, visitor.session_id).await?;
    Ok(Redirect::to("/settings/account?done=ended-all").into_response())
}

#[derive(Deserialize)]
struct TokenForm {
    name: String,
    scope: String,
    #[serde(default)]
    expires_in_days: String,
}

async fn create_token(State(services): State<Services>, Change(visitor, form): Change<TokenForm>) -> PageResult {
    let Some(scope) = TokenScope::parse(&form.scope) else {
        return refused(&services, &visitor, Error::conflict("Choose what the token may do")).await;
    };
    let days = match form.expires_in_days.trim() {
        "" => None,
        days => match days.parse::<i64>() {
            Ok(days) if (1..=3650).contains(&days) => Some(days),
            _ => {
                let error = Error::conflict("Choose one of the lifetimes offered");
                return refused(&services, &visitor, error).await;
            }
        },
    };
    match own::create_token(&services.store, &visitor.caller, &form.name, scope, days).await {
        Ok((info, value)) => {
            let token = NewToken { name: info.name, value };
            // The token is in this answer only: no redirect, and the page is not stored.
            render_page(
                &services,
                &visitor,
                StatusCode::CREATED,
                Message::default(),
                Some(token),
            )
            .await
        }
        Err(error) => refused(&services, &visitor, error).await,
    }
}

async fn confirm_revoke(State(services): State<Services>, visitor: Visitor, Path(token_id): Path<Uuid>) -> PageResult {
    let token = own::live_token(&services.store, &visitor.caller, token_id).await?;
    Ok(ConfirmDelete::ask(
        &visitor,
        format!("Revoke the API token “{}”?", token.name),
        "Revoke the token",
        "Every script or tool that uses it is refused from then on (401). This cannot be undone; \
         a new token has a new value."
            .to_owned(),
        format!("/settings/account/tokens/{token_id}/revoke"),
        "/settings/account".to_owned(),
    ))
}

async fn revoke(
    State(services): State<Services>,
    Path(token_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    own::revoke_token(&services.store, &visitor.caller, token_id).await?;
    Ok(Redirect::to("/settings/account?done=revoked").into_response())
}

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/settings/account", get(show))
        .route("/settings/account/password", post(change_password))
        .route("/settings/account/sessions/{session_id}/end", post(end_session))
        .route("/settings/account/sessions/end-others", post(end_others))
        .route("/settings/account/tokens", post(create_token))
        .route(
            "/settings/account/tokens/{token_id}/revoke",
            get(confirm_revoke).post(revoke),
        )
}

#[cfg(test)]
mod tests {
    use super::device;

    #[test]
    fn a_user_agent_is_a_browser_on_a_system() {
        let chrome =
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36";
        assert_eq!(device(Some(chrome)), "Chrome on Linux");
        let iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1";
        assert_eq!(device(Some(iphone)), "Safari on iPhone");
        assert_eq!(device(Some("curl/8.5")), "curl/8.5");
        assert_eq!(device(None), "Unknown device");
    }
}
