//! The console's settings in a real headless Chromium (as `console.rs`): an admin invites
//! a member who joins in a second browser, makes something, is made a viewer and loses
//! his write controls; the audit log shows it all and filters by person; a webhook
//! endpoint's secret is shown once and a failed delivery is sent again; a person makes a
//! personal API token, the API takes it, he revokes it and the API refuses it. Then the
//! same pages over plain HTTP: who is refused what, and forms without their CSRF token.

use std::sync::Arc;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::header::{CACHE_CONTROL, COOKIE, ORIGIN};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::accounts::{PASSWORD, http_session, quoted_after, set_password};
use crate::support::browser::{Browser, in_chromium, in_chromiums, look, set, sign_in, submit, until};
use crate::support::{TestApp, TestUser, eventually};

/// A POST from the page with its CSRF token, as a forged form would send it: the status.
async fn forged_post(browser: &Browser, path: &str, body: &str) -> Value {
    browser
        .command(
            Method::POST,
            "/execute/async",
            json!({ "script": format!(
                "const done = arguments[arguments.length - 1]; \
                 fetch({path:?}, {{ method: 'POST', headers: {{ 'Content-Type': 'application/json', \
                 'X-CSRF-Token': document.querySelector('meta[name=csrf-token]').content }}, \
                 body: {body:?} }}).then((r) => done(r.status))"), "args": [] }),
        )
        .await
}

/// A receiver of webhooks answering with the status it is set to; counts what it got.
async fn receiver() -> (String, Arc<AtomicU16>, Arc<AtomicUsize>) {
    let status = Arc::new(AtomicU16::new(503));
    let count = Arc::new(AtomicUsize::new(0));
    let (answer, seen) = (status.clone(), count.clone());
    let router = axum::Router::new().route(
        "/hooks",
        axum::routing::post(move || {
            let (answer, seen) = (answer.clone(), seen.clone());
            async move {
                seen.fetch_add(1, Ordering::SeqCst);
                axum::http::StatusCode::from_u16(answer.load(Ordering::SeqCst)).expect("status")
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("http://{addr}/hooks"), status, count)
}

async fn a_team_grows(admin_browser: &Browser, member_browser: &Browser, app: &TestApp, admin: &TestUser) {
    let (_, team) = app.post("/workspaces", admin, json!({ "name": "Research team" })).await;
    let team = team["id"].as_str().expect("workspace").to_owned();
    sign_in(admin_browser, app, &admin.email).await;
    set(admin_browser, "#workspace", &team).await;
    submit(admin_browser, "#workspace").await;
    until(
        admin_browser,
        "the team's projects",
        "return document.querySelector('h1')?.textContent.includes('Research team') || null",
    )
    .await;

    // The admin invites a researcher; the link is shown with a copy button.
    admin_browser.go(&app.url("/settings")).await;
    until(
        admin_browser,
        "the workspace settings",
        "return location.pathname === '/settings/workspace' && document.querySelector('#invite-email') ? true : null",
    )
    .await;
    let email = format!("member-{}@example.org", uuid::Uuid::new_v4().simple());
    let field = admin_browser.find("#invite-email").await;
    admin_browser.type_into(&field, &email).await;
    set(admin_browser, "#invite-role", "researcher").await;
    submit(admin_browser, "#invite-email").await;
    let link = until(
        admin_browser,
        "the invitation's link",
        "return document.querySelector('#invitation-link')?.value ?? null",
    )
    .await;
    let link = link.as_str().expect("link").to_owned();
    let copy = admin_browser
        .script("return !document.querySelector('button[data-copy=\"#invitation-link\"]').hidden")
        .await;
    assert_eq!(copy, Value::Bool(true), "the script shows the copy button");
    look(admin_browser, "settings-workspace").await;
    let token = link.split("/invite/").nth(1).expect("an /invite/ link");

    // The member accepts in a browser of his own: a new account with a password.
    member_browser.go(&app.url(&format!("/invite/{token}"))).await;
    until(
        member_browser,
        "the invitation page",
        "return document.querySelector('h1')?.textContent.includes('Research team') || null",
    )
    .await;
    let name = member_browser.find("#name").await;
    member_browser.type_into(&name, "Mia Member").await;
    let password = member_browser.find("#password").await;
    member_browser.type_into(&password, PASSWORD).await;
    submit(member_browser, "#password").await;
    until(
        member_browser,
        "the team's projects, as the member",
        "return location.pathname === '/' && document.querySelector('h1')?.textContent.includes('Research team') || null",
    )
    .await;
    let project_name = member_browser.find("#name").await;
    member_browser.type_into(&project_name, "Mia's study").await;
    submit(member_browser, "#name").await;
    let project = until(
        member_browser,
        "the member's project",
        "return location.pathname.match(/^\\/p\\/([0-9a-f-]{36})$/)?.[1] ?? null",
    )
    .await;
    let project = project.as_str().expect("project id").to_owned();
    // Members read the member list, and change nothing there.
    member_browser.go(&app.url("/settings/workspace")).await;
    until(
        member_browser,
        "the member list",
        "return document.querySelectorAll('#members tbody tr').length === 2 || null",
    )
    .await;
    let forms = member_browser
        .script("return document.querySelectorAll('main form').length")
        .await;
    assert_eq!(forms, json!(0), "a researcher changes no member");
    let tabs = member_browser
        .script("return [...document.querySelectorAll('nav.tabs a')].map((a) => a.textContent).join(',')")
        .await;
    assert!(!tabs.as_str().unwrap_or_default().contains("Audit"), "{tabs}");
    look(member_browser, "settings-workspace-member").await;

    // The admin makes him a viewer.
    admin_browser.go(&app.url("/settings/workspace")).await;
    let select = format!("tr[data-member=\"{email}\"] select[name=role]");
    until(
        admin_browser,
        "the member's row",
        &format!("return document.querySelector({select:?}) ? true : null"),
    )
    .await;
    set(admin_browser, &select, "viewer").await;
    submit(admin_browser, &select).await;
    until(
        admin_browser,
        "the changed role",
        &format!(
            "return location.search.includes('done=role') && document.querySelector({select:?})?.value === 'viewer' || null"
        ),
    )
    .await;

    // He reloads: the write controls are gone, and a forged write is refused.
    member_browser.go(&app.url("/")).await;
    until(
        member_browser,
        "the projects page",
        "return document.querySelector('h1')?.textContent.includes('Projects') || null",
    )
    .await;
    let create = member_browser
        .script("return document.querySelectorAll('form[action=\"/p\"]').length")
        .await;
    assert_eq!(create, json!(0), "a viewer is offered no new project");
    member_browser.go(&app.url(&format!("/p/{project}"))).await;
    until(
        member_browser,
        "his project",
        "return document.querySelector('h1')?.textContent.includes(\"Mia's study\") || null",
    )
    .await;
    let controls = member_browser
        .script("return document.querySelectorAll('main form[method=post], main input[type=file]').length")
        .await;
    assert_eq!(controls, json!(0), "a viewer sees no write control");
    let forged = forged_post(
        member_browser,
        &format!("/projects/{project}/records"),
        r#"{"title":"Forged","text":"A: b"}"#,
    )
    .await;
    assert_eq!(forged, json!(403), "the server refuses a viewer's write");

    // The audit log tells it, and filters by person.
    admin_browser.go(&app.url("/settings/audit")).await;
    let actions = until(
        admin_browser,
        "the audit log",
        "const a = [...document.querySelectorAll('#audit tr[data-action]')].map((r) => r.dataset.action); \
         return a.includes('member.role_changed') ? a : null",
    )
    .await;
    for action in ["invitation.created", "invitation.accepted", "member.role_changed"] {
        assert!(
            actions.as_array().expect("actions").contains(&json!(action)),
            "{action} in {actions}"
        );
    }
    look(admin_browser, "settings-audit").await;
    set(admin_browser, "#actor", &email).await;
    submit(admin_browser, "#actor").await;
    let filtered = until(
        admin_browser,
        "the member's entries",
        "const rows = [...document.querySelectorAll('#audit tr[data-action]')]; \
         return location.search.includes('actor=') && rows.length ? rows.map((r) => [r.dataset.action, r.cells[1].textContent]) : null",
    )
    .await;
    let rows = filtered.as_array().expect("rows");
    assert!(rows.iter().any(|row| row[0] == "invitation.accepted"), "{filtered}");
    assert!(
        rows.iter()
            .all(|row| row[1].as_str().unwrap_or_default().contains(&email)),
        "only what the member did: {filtered}"
    );
    set(admin_browser, "#action", "member.").await;
    submit(admin_browser, "#action").await;
    until(
        admin_browser,
        "nothing of the member's under members",
        "return location.search.includes('action=member.') && document.querySelector('.empty') ? true : null",
    )
    .await;

    // The workspace's tags: made by the admin in a group, read by the viewer.
    admin_browser.go(&app.url("/settings/tags")).await;
    set(admin_browser, "#tag-name", "Pricing").await;
    submit(admin_browser, "#tag-name").await;
    until(
        admin_browser,
        "the first tag",
        "return location.search.includes('done=made') && document.querySelector('#tags tr[data-tag=Pricing]') ? true : null",
    )
    .await;
    set(admin_browser, "#tag-name", "Too expensive").await;
    let group = admin_browser
        .script("const o = [...document.querySelectorAll('#tag-group option')].find((o) => o.textContent === 'Pricing'); document.getElementById('tag-group').value = o.value; return o.value")
        .await;
    assert!(group.as_str().is_some_and(|id| id.len() == 36), "{group}");
    submit(admin_browser, "#tag-name").await;
    let grouped = until(
        admin_browser,
        "the tag in its group",
        "const rows = [...document.querySelectorAll('#tags tbody tr')].map((r) => r.dataset.tag); \
         return rows.length === 2 ? rows : null",
    )
    .await;
    assert_eq!(grouped, json!(["Pricing", "Too expensive"]), "the group, then its tag");
    look(admin_browser, "settings-tags").await;
    member_browser.go(&app.url("/settings/tags")).await;
    until(
        member_browser,
        "the tags, read-only",
        "return document.querySelector('#tags tr[data-tag=Pricing]') && !document.querySelector('form[action=\"/settings/tags\"]') ? true : null",
    )
    .await;
    look(member_browser, "settings-tags-viewer").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_invites_a_member_and_makes_him_a_viewer() {
    let app = TestApp::start().await;
    let admin = app.user().await;
    set_password(&app, &admin, PASSWORD).await;
    in_chromiums(
        "the team test",
        async |[admin_browser, member_browser]: &[Browser; 2]| {
            a_team_grows(admin_browser, member_browser, &app, &admin).await;
        },
    )
    .await
    .then(app.stop())
    .await;
}

async fn hooks_and_tokens(browser: &Browser, app: &TestApp, admin: &TestUser, hook: &str, answer: &AtomicU16) {
    sign_in(browser, app, &admin.email).await;

    // An endpoint: its secret once.
    browser.go(&app.url("/settings/webhooks")).await;
    until(
        browser,
        "the webhooks page",
        "return document.querySelector('#endpoint-url') ? true : null",
    )
    .await;
    look(browser, "settings-webhooks-empty").await;
    let url = browser.find("#endpoint-url").await;
    browser.type_into(&url, hook).await;
    submit(browser, "#endpoint-url").await;
    let secret = until(
        browser,
        "the signing secret",
        "return document.querySelector('#signing-secret')?.value ?? null",
    )
    .await;
    let secret = secret.as_str().expect("secret").to_owned();
    assert!(secret.starts_with("whsec_"), "{secret}");
    look(browser, "settings-webhooks-secret").await;
    browser.go(&app.url("/settings/webhooks")).await;
    let html = until(
        browser,
        "the endpoint listed",
        "return document.querySelector('section.endpoint') ? document.documentElement.outerHTML : null",
    )
    .await;
    assert!(
        !html.as_str().unwrap_or_default().contains(&secret),
        "the secret is not shown again"
    );

    // An event fails to arrive; sent again, it does.
    let project = app.project(admin, "Hooked").await;
    let (status, record) = app
        .post(
            &format!("/projects/{project}/records"),
            admin,
            json!({ "title": "Call", "text": "Interviewer: Why?\nAna: Because." }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{record}");
    app.wait_finished(admin, record["id"].as_str().expect("id")).await;
    let failed = "return [...document.querySelectorAll('tr[data-delivery] [data-status]')].some((s) => s.textContent === 'failed') || null";
    eventually(Duration::from_secs(20), "the delivery never failed", async || {
        browser.go(&app.url("/settings/webhooks")).await;
        if browser.script(failed).await == Value::Bool(true) {
            Ok(())
        } else {
            Err("")
        }
    })
    .await;
    look(browser, "settings-webhooks-failed").await;
    answer.store(200, Ordering::SeqCst);
    submit(browser, "tr[data-delivery] button").await;
    until(
        browser,
        "the delivery queued again",
        "return location.search.includes('done=resent') || null",
    )
    .await;
    eventually(Duration::from_secs(20), "never delivered", async || {
        browser.go(&app.url("/settings/webhooks")).await;
        let delivered = browser
            .script("return document.querySelector('tr[data-delivery] [data-status]')?.textContent")
            .await;
        if delivered == json!("delivered") {
            Ok(())
        } else {
            Err(delivered)
        }
    })
    .await;

    // A personal API token: shown once, taken by the API, revoked, refused.
    browser.go(&app.url("/settings/account")).await;
    until(
        browser,
        "the account page",
        "return document.querySelector('#token-name') ? true : null",
    )
    .await;
    let current = browser
        .script("return document.querySelectorAll('#sessions tr[data-current]').length")
        .await;
    assert_eq!(current, json!(1), "this session is marked");
    let mcp_url = browser
        .script("return document.querySelector('#mcp-url')?.textContent ?? null")
        .await;
    assert!(
        mcp_url
            .as_str()
            .is_some_and(|url| url.starts_with("http") && url.ends_with("/mcp")),
        "where to connect an assistant: {mcp_url}"
    );
    look(browser, "settings-account").await;
    browser
        .script("document.getElementById('tokens-heading').scrollIntoView(); return true")
        .await;
    look(browser, "settings-account-tokens").await;
    let name = browser.find("#token-name").await;
    browser.type_into(&name, "Notebook").await;
    set(browser, "#token-scope", "read").await;
    submit(browser, "#token-name").await;
    let token = until(
        browser,
        "the new token",
        "return document.querySelector('#new-token')?.value ?? null",
    )
    .await;
    let token = token.as_str().expect("token").to_owned();
    look(browser, "settings-account-token").await;
    let (status, me) = app.call(Method::GET, "/me", Some(&token), None).await;
    assert_eq!(status, StatusCode::OK, "{me}");
    assert_eq!(me["email"], admin.email.as_str());
    browser.go(&app.url("/settings/account")).await;
    let html = until(
        browser,
        "the token listed",
        "return document.querySelector('tr[data-token=Notebook]') ? document.documentElement.outerHTML : null",
    )
    .await;
    assert!(
        !html.as_str().unwrap_or_default().contains(&token),
        "the token is not shown again"
    );
    let revoke = browser.find("tr[data-token=Notebook] a.danger").await;
    browser.click(&revoke).await;
    until(
        browser,
        "the confirmation",
        "return document.querySelector('h1')?.textContent.startsWith('Revoke the API token') || null",
    )
    .await;
    look(browser, "settings-token-revoke").await;
    submit(browser, "button.danger").await;
    until(
        browser,
        "the revoked token",
        "return document.querySelector('tr[data-token=Notebook]')?.dataset.state === 'revoked' || null",
    )
    .await;
    let (status, _) = app.call(Method::GET, "/me", Some(&token), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the API refuses a revoked token");

    // A wrong present password is said next to the form, in plain words.
    let current = browser.find("#current-password").await;
    browser.type_into(&current, "not my password").await;
    let new = browser.find("#new-password").await;
    browser.type_into(&new, "a brand new passphrase").await;
    submit(browser, "#new-password").await;
    until(
        browser,
        "the error summary",
        "return document.querySelector('.error-summary')?.textContent.includes('password is wrong') || null",
    )
    .await;
    look(browser, "settings-account-error").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_and_api_tokens_are_managed_in_the_console() {
    let (hook, answer, _count) = receiver().await;
    let app = TestApp::start_with(|settings| {
        settings.webhooks.webhooks_allow_http = true;
        settings.webhooks.webhooks_allow_private = true;
        settings.webhooks.webhooks_retry_schedule =
            insight::config::RetrySchedule(vec![std::time::Duration::from_millis(50)]);
    })
    .await;
    let admin = app.user().await;
    set_password(&app, &admin, PASSWORD).await;
    in_chromium("the webhooks and tokens test", async |browser| {
        hooks_and_tokens(browser, &app, &admin, &hook, &answer).await;
    })
    .await
    .then(app.stop())
    .await;
}

#[tokio::test]
async fn settings_pages_refuse_what_a_role_does_not_allow_and_forms_without_their_token() {
    let app = TestApp::start().await;
    let owner = app.user().await;
    let researcher = app.user().await;
    let viewer = app.user().await;
    app.store
        .add_member(owner.id, researcher.id, insight::domain::workspace::Role::Researcher)
        .await
        .expect("add");
    app.store
        .add_member(owner.id, viewer.id, insight::domain::workspace::Role::Viewer)
        .await
        .expect("add");
    let workspace_cookie = format!("insight_workspace={}", owner.id);

    // A researcher in the owner's workspace: the log and webhooks are refused.
    let (client, cookie, csrf) = http_session(&app, &researcher, "/settings/account").await;
    let cookies = format!("{cookie}; {workspace_cookie}");
    let get = |path: &str| client.get(app.url(path)).header(COOKIE, &cookies).send();
    let answer = get("/settings").await.expect("settings");
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    assert_eq!(answer.headers()["location"], "/settings/workspace");
    for path in ["/settings/audit", "/settings/webhooks"] {
        let answer = get(path).await.expect(path);
        assert_eq!(answer.status(), StatusCode::FORBIDDEN, "{path}");
        let html = answer.text().await.expect("html");
        assert!(html.contains("does not allow"), "a plain sentence: {html}");
    }
    let page = get("/settings/workspace")
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(
        page.contains(&owner.email) && page.contains(&viewer.email),
        "members are listed"
    );
    assert!(
        !page.contains("action=\"/settings/workspace/invitations\""),
        "no invitation form"
    );
    assert!(!page.contains("/role\""), "no role form");
    // A forged invitation with the researcher's own token is refused by the server.
    let forged = client
        .post(app.url("/settings/workspace/invitations"))
        .header(COOKIE, &cookies)
        .header(ORIGIN, &app.base)
        .form(&[("csrf", csrf.as_str()), ("email", "x@example.org"), ("role", "owner")])
        .send()
        .await
        .expect("forged");
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    let (_, invitations) = app.get(&format!("/workspaces/{}/invitations", owner.id), &owner).await;
    assert_eq!(invitations, json!([]), "nothing was made");

    // The owner: without the CSRF token, or from elsewhere, nothing changes.
    let (client, cookie, csrf) = http_session(&app, &owner, "/settings/account").await;
    let invite = |csrf: &str, origin: &str| {
        client
            .post(app.url("/settings/workspace/invitations"))
            .header(COOKIE, &cookie)
            .header(ORIGIN, origin.to_owned())
            .form(&[("csrf", csrf), ("email", "new@example.org"), ("role", "viewer")])
            .send()
    };
    assert_eq!(
        invite("", &app.base).await.expect("sent").status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        invite(&csrf, "https://evil.example").await.expect("sent").status(),
        StatusCode::FORBIDDEN
    );
    let (_, invitations) = app.get(&format!("/workspaces/{}/invitations", owner.id), &owner).await;
    assert_eq!(invitations, json!([]), "nothing was made");
    let made = invite(&csrf, &app.base).await.expect("sent");
    assert_eq!(made.status(), StatusCode::SEE_OTHER);
    let (_, invitations) = app.get(&format!("/workspaces/{}/invitations", owner.id), &owner).await;
    assert_eq!(invitations[0]["email"], "new@example.org");
    // A mistake is said on the form, with what was typed.
    let bad = client
        .post(app.url("/settings/workspace/invitations"))
        .header(COOKIE, &cookie)
        .header(ORIGIN, &app.base)
        .form(&[("csrf", csrf.as_str()), ("email", "not an address"), ("role", "viewer")])
        .send()
        .await
        .expect("sent");
    assert_eq!(bad.status(), StatusCode::CONFLICT);
    let html = bad.text().await.expect("html");
    assert!(
        html.contains("error-summary") && html.contains("not an email address"),
        "{html}"
    );
    assert!(html.contains("value=\"not an address\""), "what was typed stays");

    // A token page is never stored.
    let token = client
        .post(app.url("/settings/account/tokens"))
        .header(COOKIE, &cookie)
        .header(ORIGIN, &app.base)
        .form(&[
            ("csrf", csrf.as_str()),
            ("name", "CI"),
            ("scope", "write"),
            ("expires_in_days", "30"),
        ])
        .send()
        .await
        .expect("token");
    assert_eq!(token.status(), StatusCode::CREATED);
    assert!(
        token.headers()[CACHE_CONTROL]
            .to_str()
            .expect("cache-control")
            .contains("no-store")
    );
    let html = token.text().await.expect("html");
    let value = quoted_after(&html, "id=\"new-token\" value=\"");
    let (status, _) = app.call(Method::GET, "/me", Some(&value), None).await;
    assert_eq!(status, StatusCode::OK);
    let (_, tokens) = app.get("/me/tokens", &owner).await;
    let ci = tokens
        .as_array()
        .expect("tokens")
        .iter()
        .find(|t| t["name"] == "CI")
        .expect("the CI token");
    assert!(ci["expires_at"].is_string(), "it expires: {ci}");
    app.stop().await;
}

/// Asserts that a form was refused with the console's 403 page saying `sentence`.
async fn assert_refused(answer: reqwest::Response, what: &str, sentence: &str) {
    assert_eq!(answer.status(), StatusCode::FORBIDDEN, "{what}");
    let html = answer.text().await.expect("html");
    assert!(
        html.contains("Not allowed") && html.contains(sentence),
        "{what}: {html}"
    );
}

#[tokio::test]
async fn a_form_with_a_wrong_token_or_without_an_origin_is_refused_on_a_page_and_changes_nothing() {
    let app = TestApp::start().await;
    let owner = app.user().await;
    let (client, cookie, csrf) = http_session(&app, &owner, "/settings/tags").await;
    assert!(!csrf.is_empty(), "the page's forms carry the token");
    // `origin: None` sends no Origin header at all.
    let post = |path: &str, origin: Option<&str>, fields: &[(&str, &str)]| {
        let mut request = client.post(app.url(path)).header(COOKIE, &cookie).form(fields);
        if let Some(origin) = origin {
            request = request.header(ORIGIN, origin.to_owned());
        }
        request.send()
    };
    let expired = "This form has expired or came from elsewhere: reload the page and try again";
    // Up to the apostrophe, which the page escapes.
    let elsewhere = "This change did not come from this service";
    let (base, evil) = (Some(app.base.as_str()), Some("https://evil.example"));

    // A form decoded as a struct (a tag).
    let tag = |csrf: &'static str| [("csrf", csrf), ("name", "Forged"), ("color", ""), ("parent_id", "")];
    let answer = post("/settings/tags", base, &tag("forged")).await.expect("sent");
    assert_refused(answer, "a wrong token", expired).await;
    let answer = post("/settings/tags", base, &tag("forged")[1..]).await.expect("sent");
    assert_refused(answer, "no token", expired).await;
    let right = [
        ("csrf", csrf.as_str()),
        ("name", "Forged"),
        ("color", ""),
        ("parent_id", ""),
    ];
    let answer = post("/settings/tags", None, &right).await.expect("sent");
    assert_refused(answer, "no Origin", elsewhere).await;
    let answer = post("/settings/tags", evil, &right).await.expect("sent");
    assert_refused(answer, "another Origin", elsewhere).await;
    let (_, tags) = app.get(&format!("/workspaces/{}/tags", owner.id), &owner).await;
    assert_eq!(tags, json!([]), "no tag was made");

    // A form read field by field (a webhook's repeated events).
    let hook = |csrf| {
        [
            ("csrf", csrf),
            ("url", "https://hooks.example/in"),
            ("events", "report.completed"),
            ("events", "record.finished"),
        ]
    };
    let answer = post("/settings/webhooks", base, &hook("forged")).await.expect("sent");
    assert_refused(answer, "a wrong token", expired).await;
    let answer = post("/settings/webhooks", None, &hook(csrf.as_str()))
        .await
        .expect("sent");
    assert_refused(answer, "no Origin", elsewhere).await;
    let (_, endpoints) = app.get("/webhooks/endpoints", &owner).await;
    assert_eq!(endpoints, json!([]), "no endpoint was registered");

    // Without a session the form is not read: the browser goes to sign in and back.
    let anonymous = crate::support::accounts::forms()
        .post(app.url("/settings/tags"))
        .header(ORIGIN, &app.base)
        .form(&right)
        .send()
        .await
        .expect("sent");
    assert_eq!(anonymous.status(), StatusCode::SEE_OTHER);
    assert_eq!(anonymous.headers()["location"], "/sign-in?return_to=%2Fsettings%2Ftags");

    // The same form with its token, from this service's page, is taken.
    let made = post("/settings/tags", base, &right).await.expect("sent");
    assert_eq!(made.status(), StatusCode::SEE_OTHER);
    let (_, tags) = app.get(&format!("/workspaces/{}/tags", owner.id), &owner).await;
    assert_eq!(tags[0]["name"], "Forged");
    app.stop().await;
}
