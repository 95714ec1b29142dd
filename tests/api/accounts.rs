//! Accounts and teams over HTTP: password sign-in into cookie sessions (flags, CSRF,
//! revocation, lockout), personal tokens and their scopes, invitations by mail, password
//! resets, and the audit trail of it all.

use std::time::{Duration, Instant};

use reqwest::header::{COOKIE, ORIGIN, SET_COOKIE};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::accounts::{Session, login, session_from, set_password};
use crate::support::db::assert_not_stored;
use crate::support::mail_sink::MailSink;
use crate::support::{TestApp, TestUser};

const PASSWORD: &str = "correct horse battery staple";

/// A request as the browser makes it: its cookie, and for a change its CSRF token and
/// the page's `Origin` (the service's own unless `origin` says otherwise).
pub async fn send(
    app: &TestApp,
    browser: &Session,
    method: Method,
    path: &str,
    body: Option<Value>,
    csrf: bool,
    origin: Option<&str>,
) -> (StatusCode, Value) {
    let mut request = app
        .client
        .request(method, app.url(path))
        .header(COOKIE, &browser.cookie);
    if csrf {
        request = request.header("x-csrf-token", &browser.csrf);
    }
    request = request.header(ORIGIN, origin.unwrap_or(&app.base));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request sent");
    let status = response.status();
    let text = response.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn audit_actions(app: &TestApp, admin: &TestUser, workspace: &str) -> Vec<String> {
    let (status, log) = app
        .get(&format!("/workspaces/{workspace}/audit?limit=500"), admin)
        .await;
    assert_eq!(status, StatusCode::OK, "{log}");
    log.as_array()
        .expect("a list")
        .iter()
        .map(|event| event["action"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn a_session_cookie_signs_a_browser_in_and_changes_need_its_csrf_token_and_origin() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    set_password(&app, &ann, PASSWORD).await;

    let (status, _, body, _) = login(&app, &ann.email, "not the password").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["detail"], "Wrong email or password");
    let (status, _, body, _) = login(&app, "nobody@example.org", PASSWORD).await;
    assert_eq!(
        (status, body["detail"].clone()),
        (StatusCode::UNAUTHORIZED, json!("Wrong email or password"))
    );

    let (status, browser, body, _) = login(&app, &ann.email.to_uppercase(), PASSWORD).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["user"]["email"], ann.email.as_str());
    let browser = browser.expect("signed in");
    let flags: Vec<&str> = browser.set_cookie.split(';').map(str::trim).collect();
    for flag in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(flags.contains(&flag), "{flag} missing from {}", browser.set_cookie);
    }
    assert!(!flags.contains(&"Secure"), "plain http: {}", browser.set_cookie);
    assert!(browser.cookie.starts_with("insight_session="), "{}", browser.cookie);
    assert!(!browser.csrf.is_empty());

    let (status, projects) = send(&app, &browser, Method::GET, "/projects/", None, false, None).await;
    assert_eq!((status, projects), (StatusCode::OK, json!([])));
    let new = json!({ "name": "From the browser" });
    let (status, body) = send(
        &app,
        &browser,
        Method::POST,
        "/projects/",
        Some(new.clone()),
        false,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "no CSRF token: {body}");
    let (status, body) = send(
        &app,
        &browser,
        Method::POST,
        "/projects/",
        Some(new.clone()),
        true,
        Some("https://evil.example"),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "foreign origin: {body}");
    let forged = Session {
        csrf: "forged".into(),
        ..browser.clone()
    };
    let (status, _) = send(&app, &forged, Method::POST, "/projects/", Some(new.clone()), true, None).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a made-up CSRF token");
    let borrowed = Session {
        csrf: another_sessions_csrf(&app, &ann).await,
        ..browser.clone()
    };
    let (status, _) = send(
        &app,
        &borrowed,
        Method::POST,
        "/projects/",
        Some(new.clone()),
        true,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "the CSRF token of another session");
    let (status, project) = send(&app, &browser, Method::POST, "/projects/", Some(new), true, None).await;
    assert_eq!(status, StatusCode::CREATED, "{project}");
    assert_eq!(project["workspace_id"], ann.id.to_string());
    // Neither the cookie's value nor the CSRF token is stored in clear.
    let value = browser.cookie.split_once('=').expect("name=value").1.to_owned();
    assert_not_stored(&app.database_url, &[&value, &browser.csrf]).await;
    // The bearer token keeps working beside the session.
    let (status, listed) = app.get("/projects/", &ann).await;
    assert_eq!((status, listed.as_array().map(Vec::len)), (StatusCode::OK, Some(1)));

    // A second browser; the first ends it, and its next request is refused.
    let (_, second, _, _) = login(&app, &ann.email, PASSWORD).await;
    let second = second.expect("second session");
    let (status, sessions) = send(&app, &browser, Method::GET, "/me/sessions", None, false, None).await;
    assert_eq!(status, StatusCode::OK);
    let sessions = sessions.as_array().expect("sessions").clone();
    assert_eq!(
        sessions.len(),
        3,
        "this one, the one whose token was borrowed, the second: {sessions:?}"
    );
    let other = sessions
        .iter()
        .filter(|s| s["current"] == false)
        .max_by_key(|s| s["created_at"].as_str().map(str::to_owned))
        .expect("the other session");
    let path = format!("/me/sessions/{}", other["id"].as_str().expect("id"));
    let (status, _) = send(&app, &browser, Method::DELETE, &path, None, true, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = send(&app, &second, Method::GET, "/projects/", None, false, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "a revoked session: {body}");

    // Signing out ends the session and clears the cookie.
    let response = app
        .client
        .post(app.url("/auth/logout"))
        .header(COOKIE, &browser.cookie)
        .header("x-csrf-token", &browser.csrf)
        .header(ORIGIN, &app.base)
        .send()
        .await
        .expect("logout");
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let cleared = response
        .headers()
        .get(SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    let (status, _) = send(&app, &browser, Method::GET, "/projects/", None, false, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

/// The CSRF token of another, fresh session of `user`: it belongs to that session only.
async fn another_sessions_csrf(app: &TestApp, user: &TestUser) -> String {
    let (_, browser, _, _) = login(app, &user.email, PASSWORD).await;
    browser.expect("signed in").csrf
}

#[tokio::test]
async fn behind_https_the_cookie_is_secure_and_host_only() {
    let app = TestApp::start_with(|settings| settings.server.public_url = "https://insight.example.org".into()).await;
    let ann = app.user().await;
    set_password(&app, &ann, PASSWORD).await;
    let (status, browser, _, _) = login(&app, &ann.email, PASSWORD).await;
    assert_eq!(status, StatusCode::OK);
    let browser = browser.expect("signed in");
    assert!(
        browser.cookie.starts_with("__Host-insight_session="),
        "{}",
        browser.set_cookie
    );
    let flags: Vec<&str> = browser.set_cookie.split(';').map(str::trim).collect();
    for flag in ["Secure", "HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(flags.contains(&flag), "{flag} missing from {}", browser.set_cookie);
    }
    assert!(!browser.set_cookie.contains("Domain="), "{}", browser.set_cookie);
    let body = json!({ "name": "Secure" });
    let (status, _) = send(
        &app,
        &browser,
        Method::POST,
        "/projects/",
        Some(body),
        true,
        Some("https://insight.example.org"),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    app.stop().await;
}

#[tokio::test]
async fn failed_sign_ins_are_slowed_then_locked_per_account_and_per_address() {
    let app = TestApp::start_with(|settings| {
        settings.accounts.sign_in_lock_after = 3;
        settings.accounts.sign_in_address_lock_after = 5;
    })
    .await;
    let ann = app.user().await;
    let bob = app.user().await;
    set_password(&app, &ann, PASSWORD).await;
    set_password(&app, &bob, PASSWORD).await;

    let mut took = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let (status, _, _, _) = login(&app, &ann.email, "wrong").await;
        took.push(started.elapsed());
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    assert!(
        took[2] >= took[0] + Duration::from_millis(400),
        "later failures are slowed: {took:?}"
    );
    let (status, _, body, headers) = login(&app, &ann.email, PASSWORD).await;
    assert_eq!(
        status,
        StatusCode::TOO_MANY_REQUESTS,
        "the right password, but locked: {body}"
    );
    let retry: u64 = headers["retry-after"]
        .to_str()
        .expect("header")
        .parse()
        .expect("seconds");
    assert!((1..=900).contains(&retry), "{retry}");
    // Another account from the same address still signs in, until the address itself
    // reaches its limit.
    let (status, _, _, _) = login(&app, &bob.email, PASSWORD).await;
    assert_eq!(status, StatusCode::OK);
    for _ in 0..2 {
        let (status, _, _, _) = login(&app, &bob.email, "wrong").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    let (status, _, _, _) = login(&app, &bob.email, PASSWORD).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "the address is locked");

    let actions = audit_actions(&app, &ann, &ann.id.to_string()).await;
    assert!(
        actions.iter().filter(|a| *a == "session.sign_in_failed").count() >= 4,
        "{actions:?}"
    );
    app.stop().await;
}

#[tokio::test]
async fn personal_tokens_have_a_scope_are_listed_without_their_value_and_revoked_at_once() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    let (status, created) = app
        .post(
            "/me/tokens",
            &ann,
            json!({ "name": "dashboard", "scope": "read", "expires_in_days": 30 }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let secret = created["token"].as_str().expect("the token, once").to_owned();
    let reader = TestUser {
        token: secret.clone(),
        ..ann.clone()
    };
    assert_eq!(app.get("/projects/", &reader).await.0, StatusCode::OK);
    let (status, body) = app.post("/projects/", &reader, json!({ "name": "No" })).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["detail"].as_str().unwrap_or_default().contains("read"), "{body}");

    let (status, tokens) = app.get("/me/tokens", &ann).await;
    assert_eq!(status, StatusCode::OK);
    let text = tokens.to_string();
    assert!(!text.contains(&secret), "a listed token shows its value");
    let listed = tokens
        .as_array()
        .expect("tokens")
        .iter()
        .find(|t| t["id"] == created["id"])
        .expect("listed")
        .clone();
    assert_eq!(
        (listed["scope"].clone(), listed["name"].clone()),
        (json!("read"), json!("dashboard"))
    );

    let path = format!("/me/tokens/{}", created["id"].as_str().expect("id"));
    assert_eq!(app.delete(&path, &ann).await.0, StatusCode::NO_CONTENT);
    assert_eq!(app.get("/projects/", &reader).await.0, StatusCode::UNAUTHORIZED);
    let other = app.user().await;
    assert_eq!(
        app.delete(&path, &other).await.0,
        StatusCode::NOT_FOUND,
        "another's token"
    );
    let actions = audit_actions(&app, &ann, &ann.id.to_string()).await;
    assert!(
        actions.contains(&"token.created".to_owned()) && actions.contains(&"token.revoked".to_owned()),
        "{actions:?}"
    );
    app.stop().await;
}

fn link_in(text: &str, marker: &str) -> String {
    let start = text.find(marker).unwrap_or_else(|| panic!("no {marker} in {text}"));
    text[start..]
        .split(|c: char| c.is_whitespace() || c == '>' || c == ')')
        .next()
        .expect("a link")
        .to_owned()
}

#[tokio::test]
async fn an_invited_person_joins_by_mail_with_the_role_given_and_loses_access_when_removed() {
    let mut sink = MailSink::start().await;
    let smtp = sink.url(None);
    let app = TestApp::start_with(move |settings| {
        settings.mail.smtp_url = Some(insight::config::parse_smtp_url(&smtp).expect("smtp url"));
    })
    .await;
    let owner = app.user().await;
    let (_, workspace) = app
        .post("/workspaces", &owner, json!({ "name": "Growth research" }))
        .await;
    let workspace = workspace["id"].as_str().expect("workspace").to_owned();
    let (_, project) = app
        .post(
            "/projects/",
            &owner,
            json!({ "name": "Churn", "workspace_id": workspace }),
        )
        .await;
    let project = project["id"].as_str().expect("project").to_owned();

    let email = format!("carol-{}@example.org", uuid::Uuid::new_v4().simple());
    let path = format!("/workspaces/{workspace}/invitations");
    let (status, invitation) = app
        .post(&path, &owner, json!({ "email": email, "role": "researcher" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{invitation}");
    let url = invitation["url"].as_str().expect("url").to_owned();
    assert!(url.starts_with("http://127.0.0.1:8000/invite/"), "{url}");
    let letter = sink.next(Duration::from_secs(10)).await;
    assert_eq!(letter.envelope_to, vec![email.clone()]);
    assert!(letter.text.contains(&url), "the link is in the mail: {}", letter.text);
    assert!(letter.subject.contains("Growth research"), "{}", letter.subject);
    let (_, listed) = app.get(&path, &owner).await;
    assert_eq!(listed[0]["url"], url.as_str(), "the link can be shown again");
    let token = url.rsplit('/').next().expect("token").to_owned();

    // Not signed in and no password: the invitation asks for one or the other.
    let accept = format!("/invitations/{token}/accept");
    let (status, _) = app.call(Method::POST, &accept, None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let response = app
        .client
        .post(app.url(&accept))
        .json(&json!({ "password": PASSWORD, "name": "Carol" }))
        .send()
        .await
        .expect("accept");
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    let body: Value = response.json().await.expect("json");
    assert_eq!(
        (body["workspace_id"].clone(), body["role"].clone()),
        (json!(workspace), json!("researcher"))
    );
    let carol = session_from(&headers, &body);
    let (status, _) = app
        .call(Method::POST, &accept, None, Some(json!({ "password": PASSWORD })))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a link works once");

    let (status, me) = send(&app, &carol, Method::GET, "/me", None, false, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(me["name"], "Carol");
    assert_eq!(me["workspaces"].as_array().map(Vec::len), Some(2), "{me}");
    let carol_id = me["id"].as_str().expect("id").to_owned();
    let (_, projects) = send(&app, &carol, Method::GET, "/projects/", None, false, None).await;
    assert_eq!(projects[0]["id"], project.as_str());
    assert_eq!(projects[0]["owner_email"], owner.email.as_str(), "the creator");
    let record = json!({ "title": "Dan", "text": "Interviewer: Why did you leave?\nDan: The price." });
    let records = format!("/projects/{project}/records");
    let (status, body) = send(&app, &carol, Method::POST, &records, Some(record.clone()), true, None).await;
    assert_eq!(status, StatusCode::CREATED, "a researcher writes: {body}");

    let member = format!("/workspaces/{workspace}/members/{carol_id}");
    let (status, body) = app
        .call(
            Method::PATCH,
            &member,
            Some(&owner.token),
            Some(json!({ "role": "viewer" })),
        )
        .await;
    assert_eq!((status, body["role"].clone()), (StatusCode::OK, json!("viewer")));
    let (status, _) = send(&app, &carol, Method::POST, &records, Some(record), true, None).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a viewer does not write");
    let (status, _) = send(&app, &carol, Method::GET, &records, None, false, None).await;
    assert_eq!(status, StatusCode::OK, "a viewer reads");
    // The last owner stays one.
    let me_as_member = format!("/workspaces/{workspace}/members/{}", owner.id);
    let (status, _) = app
        .call(
            Method::PATCH,
            &me_as_member,
            Some(&owner.token),
            Some(json!({ "role": "admin" })),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);

    assert_eq!(app.delete(&member, &owner).await.0, StatusCode::NO_CONTENT);
    let (status, _) = send(
        &app,
        &carol,
        Method::GET,
        &format!("/projects/{project}"),
        None,
        false,
        None,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "removed: the next request no longer sees the project"
    );
    let (_, projects) = send(&app, &carol, Method::GET, "/projects/", None, false, None).await;
    assert_eq!(projects, json!([]));

    let actions = audit_actions(&app, &owner, &workspace).await;
    for action in [
        "workspace.created",
        "invitation.created",
        "invitation.accepted",
        "member.role_changed",
        "member.removed",
    ] {
        assert!(
            actions.contains(&action.to_owned()),
            "{action} missing from {actions:?}"
        );
    }
    let (status, only) = app
        .get(&format!("/workspaces/{workspace}/audit?action=member."), &owner)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        only.as_array()
            .expect("list")
            .iter()
            .all(|e| e["action"].as_str().is_some_and(|a| a.starts_with("member."))),
        "{only}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_forgotten_password_is_reset_by_a_one_time_link_that_ends_every_session() {
    let mut sink = MailSink::start().await;
    let smtp = sink.url(None);
    let app = TestApp::start_with(move |settings| {
        settings.mail.smtp_url = Some(insight::config::parse_smtp_url(&smtp).expect("smtp url"));
    })
    .await;
    let ann = app.user().await;
    set_password(&app, &ann, PASSWORD).await;
    let (_, old, _, _) = login(&app, &ann.email, PASSWORD).await;
    let old = old.expect("signed in");

    let (status, _) = app
        .call(
            Method::POST,
            "/auth/password-reset",
            None,
            Some(json!({ "email": "nobody@example.org" })),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "the same answer for an unknown address");
    let (status, _) = app
        .call(
            Method::POST,
            "/auth/password-reset",
            None,
            Some(json!({ "email": ann.email })),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let letter = sink.next(Duration::from_secs(10)).await;
    assert_eq!(
        letter.envelope_to,
        vec![ann.email.clone()],
        "only the known address got a mail"
    );
    let link = link_in(&letter.text, "http://127.0.0.1:8000/reset-password/");
    let token = link.rsplit('/').next().expect("token").to_owned();

    let new_password = "a new and longer passphrase";
    let confirm = json!({ "token": token, "password": "short" });
    let (status, _) = app
        .call(Method::POST, "/auth/password-reset/confirm", None, Some(confirm))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "too weak");
    let confirm = json!({ "token": token, "password": new_password });
    let (status, body) = app
        .call(
            Method::POST,
            "/auth/password-reset/confirm",
            None,
            Some(confirm.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["user"]["email"], ann.email.as_str());
    let (status, _) = app
        .call(Method::POST, "/auth/password-reset/confirm", None, Some(confirm))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a link works once");
    let (status, _) = send(&app, &old, Method::GET, "/projects/", None, false, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the old session ended");
    assert_eq!(login(&app, &ann.email, PASSWORD).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(login(&app, &ann.email, new_password).await.0, StatusCode::OK);
    assert!(sink.try_next().is_none(), "no other mail");
    app.stop().await;
}

#[tokio::test]
async fn changing_the_password_needs_the_present_one_and_keeps_only_this_session() {
    let app = TestApp::start().await;
    let ann = app.user().await;
    set_password(&app, &ann, PASSWORD).await;
    let (_, first, _, _) = login(&app, &ann.email, PASSWORD).await;
    let (_, second, _, _) = login(&app, &ann.email, PASSWORD).await;
    let (first, second) = (first.expect("first"), second.expect("second"));
    let wrong = json!({ "current_password": "nope", "new_password": "another long passphrase" });
    let (status, _) = send(&app, &first, Method::PUT, "/me/password", Some(wrong), true, None).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let right = json!({ "current_password": PASSWORD, "new_password": "another long passphrase" });
    let (status, body) = send(&app, &first, Method::PUT, "/me/password", Some(right), true, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    assert_eq!(
        send(&app, &first, Method::GET, "/me", None, false, None).await.0,
        StatusCode::OK
    );
    assert_eq!(
        send(&app, &second, Method::GET, "/me", None, false, None).await.0,
        StatusCode::UNAUTHORIZED
    );
    app.stop().await;
}

#[tokio::test]
async fn sign_up_is_refused_unless_open() {
    let app = TestApp::start().await;
    let body = json!({ "email": "dora@example.org", "password": PASSWORD });
    let (status, _) = app.call(Method::POST, "/auth/signup", None, Some(body.clone())).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "invite only by default");
    app.stop().await;
    let app = TestApp::start_with(|settings| settings.accounts.signup = insight::config::Signup::Open).await;
    let (status, made) = app.call(Method::POST, "/auth/signup", None, Some(body.clone())).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let (status, _) = app.call(Method::POST, "/auth/signup", None, Some(body)).await;
    assert_eq!(status, StatusCode::CONFLICT, "the address is taken");
    assert_eq!(login(&app, "dora@example.org", PASSWORD).await.0, StatusCode::OK);
    app.stop().await;
}

/// A database made by the release before workspaces (`tests/fixtures/accounts/`): it
/// opens with every object in its owner's personal workspace, and the old tokens work.
#[tokio::test]
async fn a_database_from_the_release_before_workspaces_opens_with_all_its_data() {
    if std::env::var("INSIGHT_TEST_DATABASE_URL").is_ok() {
        eprintln!("skipped on PostgreSQL: the fixture is a SQLite file");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("insight.db");
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/accounts");
    std::fs::copy(fixtures.join("pre-accounts.db"), &path).expect("copy the fixture");
    let known: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join("pre-accounts.json")).expect("ids")).expect("json");
    let url = format!("sqlite://{}", path.display());
    let settings = insight::Settings::for_database(&url);
    let store = insight::Store::connect(&url, 2).await.expect("the old database opens");
    let server = insight::Server::start(settings, store).await.expect("start");
    let base = format!("http://{}", server.addr);
    let client = reqwest::Client::new();
    let get = |path: &str, token: &str| {
        let request = client.get(format!("{base}{path}")).bearer_auth(token);
        async move {
            let response = request.send().await.expect("sent");
            let status = response.status();
            (status, response.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let admin = known["admin_token"].as_str().expect("token");
    let second = known["second_token"].as_str().expect("token");

    let (status, me) = get("/me", admin).await;
    assert_eq!(status, StatusCode::OK, "a token from before still works: {me}");
    assert_eq!(me["email"], "admin@localhost");
    assert_eq!(me["workspaces"][0]["id"], me["id"], "the personal workspace");
    assert_eq!(me["workspaces"][0]["role"], "owner");
    let (_, projects) = get("/projects/", admin).await;
    assert_eq!(projects.as_array().map(Vec::len), Some(1), "{projects}");
    let project = &projects[0];
    assert_eq!(project["id"], known["pricing_project"]);
    assert_eq!(
        (
            project["name"].clone(),
            project["description"].clone(),
            project["research_goals"].clone()
        ),
        (
            json!("Pricing study"),
            json!("Q3 interviews"),
            json!("Why people churn")
        )
    );
    assert_eq!(
        (project["records_count"].clone(), project["total_reports_count"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(project["workspace_id"], me["id"]);
    assert_eq!(project["owner_email"], "admin@localhost");
    let record = known["anna_record"].as_str().expect("record");
    let (status, anna) = get(&format!("/insight/{record}/"), admin).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(anna["status"], "Finished");
    assert_eq!(anna["utterances"].as_array().map(Vec::len), Some(4), "{anna}");
    let (_, reports) = get(
        &format!("/projects/{}/reports", known["pricing_project"].as_str().expect("id")),
        admin,
    )
    .await;
    assert_eq!(reports[0]["title"], "Pricing report");
    let (_, prompt) = get(&format!("/prompts/{}/", known["prompt"].as_str().expect("id")), admin).await;
    assert_eq!(prompt["title"], "Pains");
    let (_, presets) = get("/presets/", admin).await;
    assert!(
        presets
            .as_array()
            .expect("presets")
            .iter()
            .any(|p| p["title"] == "My preset")
    );
    let (_, endpoints) = get("/webhooks/endpoints", admin).await;
    assert_eq!(
        endpoints.as_array().map(Vec::len),
        Some(1),
        "the webhook endpoint: {endpoints}"
    );
    let (_, rooms) = get("/api/interviews/rooms", admin).await;
    assert_eq!(rooms.as_array().map(Vec::len), Some(1));
    let (_, threads) = get(&format!("/insight/{record}/chat/threads/"), admin).await;
    assert_eq!(threads.as_array().map(Vec::len), Some(1), "{threads}");

    // An old token keeps its right to write.
    let rename = client
        .put(format!(
            "{base}/projects/{}",
            known["pricing_project"].as_str().expect("id")
        ))
        .bearer_auth(admin)
        .json(&json!({ "name": "Pricing study (2026)" }))
        .send()
        .await
        .expect("sent");
    assert_eq!(rename.status(), StatusCode::OK, "a token from before writes");

    // The second user sees his own project only; the admin's is another workspace's.
    let (_, projects) = get("/projects/", second).await;
    assert_eq!(projects.as_array().map(Vec::len), Some(1));
    assert_eq!(projects[0]["id"], known["onboarding_project"]);
    let (status, _) = get(&format!("/insight/{record}/"), second).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    server.stop().await.expect("stop");
}

#[tokio::test]
async fn an_expired_invitation_is_gone_and_a_withdrawn_one_unknown() {
    let app = TestApp::start().await;
    let owner = app.user().await;
    let workspace = owner.id;
    let key = insight::secret::SecretKey::load(None, &app.data_dir).expect("the instance key");
    let nonce = [7u8; 16];
    let token = insight::app::accounts::teams::invitation_token(&key, &nonce);
    app.store
        .create_invitation(insight::store::NewInvitation {
            workspace_id: workspace,
            email: "late@example.org",
            role: insight::domain::workspace::Role::Viewer,
            nonce: &nonce,
            token_hash: &insight::domain::user::hash_token(&token),
            invited_by: owner.id,
            expires_at: insight::domain::now() - chrono::Duration::hours(1),
        })
        .await
        .expect("invitation");
    let body = json!({ "password": PASSWORD });
    let (status, answer) = app
        .call(
            Method::POST,
            &format!("/invitations/{token}/accept"),
            None,
            Some(body.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::GONE, "{answer}");
    assert!(
        app.store
            .account_by_email("late@example.org")
            .await
            .expect("read")
            .is_none(),
        "no account made"
    );

    let path = format!("/workspaces/{workspace}/invitations");
    let (_, open) = app
        .post(&path, &owner, json!({ "email": "soon@example.org", "role": "viewer" }))
        .await;
    let url = open["url"].as_str().expect("url").to_owned();
    let id = open["id"].as_str().expect("id");
    assert_eq!(
        app.delete(&format!("{path}/{id}"), &owner).await.0,
        StatusCode::NO_CONTENT
    );
    let accept = format!("/invitations/{}/accept", url.rsplit('/').next().expect("token"));
    assert_eq!(
        app.call(Method::POST, &accept, None, Some(body)).await.0,
        StatusCode::NOT_FOUND,
        "withdrawn"
    );
    app.stop().await;
}
