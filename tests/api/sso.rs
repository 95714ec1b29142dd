//! Single sign-on through the service's own routes, against the real provider of
//! `oidc.rs`: the browser goes to the provider and comes back signed in, into a new
//! account that joins the configured workspace; refusals answer with their reason.

use reqwest::StatusCode;
use reqwest::header::{COOKIE, LOCATION, SET_COOKIE};
use serde_json::{Value, json};
use url::Url;

use crate::support::TestApp;
use crate::support::oidc::MockProvider;

fn configure(settings: &mut insight::Settings, issuer: &str) {
    settings.sso.oidc_issuer = Some(issuer.to_owned());
    settings.sso.oidc_client_id = Some("insight-tests".into());
    settings.sso.oidc_client_secret = Some(insight::secret::KeyMaterial::new("a client secret the mock accepts"));
}

fn cookies(response: &reqwest::Response) -> Vec<String> {
    response
        .headers()
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(str::to_owned)
        .collect()
}

/// Plays the browser from `/auth/oidc/login` to the callback's answer.
async fn sign_in(
    app: &TestApp,
    provider: &MockProvider,
    subject: &str,
    claims: Value,
    tamper_state: bool,
) -> reqwest::Response {
    sign_in_as(app, provider, subject, claims, tamper_state, "application/json").await
}

/// [`sign_in`] by a client that says what it accepts (a browser: `text/html`).
async fn sign_in_as(
    app: &TestApp,
    provider: &MockProvider,
    subject: &str,
    claims: Value,
    tamper_state: bool,
    accept: &str,
) -> reqwest::Response {
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let start = browser
        .get(app.url("/auth/oidc/login?return_to=/projects"))
        .send()
        .await
        .expect("login");
    assert_eq!(start.status(), StatusCode::FOUND);
    let flow = cookies(&start)
        .into_iter()
        .find(|c| c.starts_with("insight_oidc_flow="))
        .expect("the flow cookie");
    for flag in ["HttpOnly", "SameSite=Lax", "Path=/auth/oidc"] {
        assert!(flow.contains(flag), "{flag}: {flow}");
    }
    let to = Url::parse(start.headers()[LOCATION].to_str().expect("location")).expect("url");
    let back = provider.sign_in(&to, subject, claims).await;
    let state = if tamper_state {
        "not-the-state".to_owned()
    } else {
        back.state
    };
    let callback = format!(
        "/auth/oidc/callback?code={}&state={}",
        url::form_urlencoded::byte_serialize(back.code.as_bytes()).collect::<String>(),
        url::form_urlencoded::byte_serialize(state.as_bytes()).collect::<String>()
    );
    let flow = flow.split(';').next().expect("name=value").to_owned();
    browser
        .get(app.url(&callback))
        .header(COOKIE, flow)
        .header(reqwest::header::ACCEPT, accept)
        .send()
        .await
        .expect("callback")
}

#[tokio::test]
async fn a_new_person_signs_in_with_the_provider_and_joins_the_configured_workspace() {
    let Some(provider) = MockProvider::start("sso_routes_sign_in", &[]).await else {
        return;
    };
    let mut app = TestApp::start().await;
    let owner = app.user().await;
    let (_, workspace) = app.post("/workspaces", &owner, json!({ "name": "Everyone" })).await;
    let workspace = workspace["id"].as_str().expect("id").to_owned();
    let workspace_id = uuid::Uuid::parse_str(&workspace).expect("uuid");
    let issuer = provider.issuer.clone();
    app.restart(|settings| {
        configure(settings, &issuer);
        settings.sso.oidc_workspace = Some(workspace_id);
        settings.sso.oidc_role = insight::config::SsoRole::Researcher;
    })
    .await;

    let claims = json!({ "email": "Alice@Example.com", "name": "Alice Martin", "email_verified": true });
    let answer = sign_in(&app, &provider, "alice", claims.clone(), false).await;
    assert_eq!(answer.status(), StatusCode::FOUND, "{}", provider.log());
    assert_eq!(answer.headers()[LOCATION], "/projects", "back where the sign-in began");
    let set = cookies(&answer);
    let session = set
        .iter()
        .find(|c| c.starts_with("insight_session="))
        .expect("a session")
        .split(';')
        .next()
        .expect("name=value")
        .to_owned();
    assert!(
        set.iter().any(|c| c.starts_with("insight_oidc_flow=;")),
        "the flow cookie is cleared: {set:?}"
    );
    let me: Value = app
        .client
        .get(app.url("/me"))
        .header(COOKIE, &session)
        .send()
        .await
        .expect("me")
        .json()
        .await
        .expect("json");
    assert_eq!(
        (me["email"].clone(), me["name"].clone()),
        (json!("alice@example.com"), json!("Alice Martin"))
    );
    let joined = me["workspaces"]
        .as_array()
        .expect("workspaces")
        .iter()
        .find(|w| w["id"] == workspace.as_str())
        .cloned();
    assert_eq!(joined.map(|w| w["role"].clone()), Some(json!("researcher")), "{me}");

    // The same person again: the same account, no second one.
    let answer = sign_in(&app, &provider, "alice", claims, false).await;
    assert_eq!(answer.status(), StatusCode::FOUND);
    let (_, members) = app.get(&format!("/workspaces/{workspace}/members"), &owner).await;
    assert_eq!(members.as_array().map(Vec::len), Some(2), "{members}");

    // A forged state is refused with its reason.
    let answer = sign_in(&app, &provider, "alice", json!({ "email": "alice@example.com" }), true).await;
    assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    let body: Value = answer.json().await.expect("json");
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("does not belong to the sign-in"),
        "{body}"
    );
    app.stop().await;
}

#[tokio::test]
async fn single_sign_on_refuses_other_domains_and_unknown_people_when_accounts_are_closed() {
    let Some(provider) = MockProvider::start("sso_routes_refusals", &[]).await else {
        return;
    };
    let issuer = provider.issuer.clone();
    let app = TestApp::start_with(|settings| {
        configure(settings, &issuer);
        settings.sso.oidc_allowed_domains = insight::config::AllowedDomains(vec!["example.org".into()]);
        settings.accounts.signup = insight::config::Signup::Closed;
    })
    .await;
    let answer = sign_in(
        &app,
        &provider,
        "mallory",
        json!({ "email": "mallory@elsewhere.com", "email_verified": true }),
        false,
    )
    .await;
    assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    let body: Value = answer.json().await.expect("json");
    assert!(
        body["detail"].as_str().unwrap_or_default().contains("elsewhere.com"),
        "{body}"
    );

    let answer = sign_in(
        &app,
        &provider,
        "bob",
        json!({ "email": "bob@example.org", "email_verified": true }),
        false,
    )
    .await;
    assert_eq!(
        answer.status(),
        StatusCode::FORBIDDEN,
        "no account and none may be made"
    );
    let known = app.user().await; // researcher-…@example.org
    let answer = sign_in(
        &app,
        &provider,
        "known",
        json!({ "email": known.email, "email_verified": true }),
        false,
    )
    .await;
    assert_eq!(answer.status(), StatusCode::FOUND, "an existing account signs in");
    app.stop().await;
}

#[tokio::test]
async fn a_browser_whose_single_sign_on_fails_is_told_why_on_the_sign_in_page() {
    let Some(provider) = MockProvider::start("sso_routes_failure_pages", &[]).await else {
        return;
    };
    let issuer = provider.issuer.clone();
    let app = TestApp::start_with(|settings| {
        configure(settings, &issuer);
        settings.accounts.signup = insight::config::Signup::Closed;
    })
    .await;
    let html = "text/html,application/xhtml+xml";
    let cases = [
        (
            "eve",
            json!({ "email": "eve@example.org", "email_verified": false }),
            false,
            "unverified",
            "not verified",
        ),
        (
            "nobody",
            json!({}),
            false,
            "no-email",
            "did not tell us your e-mail address",
        ),
        (
            "bob",
            json!({ "email": "bob@example.org", "email_verified": true }),
            false,
            "closed",
            "new accounts are closed",
        ),
        (
            "ann",
            json!({ "email": "ann@example.org", "email_verified": true }),
            true,
            "again",
            "Please sign in again",
        ),
    ];
    for (subject, claims, tamper, word, sentence) in cases {
        let answer = sign_in_as(&app, &provider, subject, claims, tamper, html).await;
        assert_eq!(answer.status(), StatusCode::SEE_OTHER, "{subject}");
        let to = answer.headers()[LOCATION].to_str().expect("location").to_owned();
        assert_eq!(to, format!("/sign-in?sso_failed={word}"));
        assert!(
            cookies(&answer).iter().any(|c| c.starts_with("insight_oidc_flow=;")),
            "the flow cookie is cleared"
        );
        let page = reqwest::get(app.url(&to)).await.expect("the sign-in page");
        assert_eq!(page.status(), StatusCode::OK);
        let page = page.text().await.expect("html");
        assert!(page.contains(sentence), "{word}: {page}");
        assert!(
            page.contains("action=\"/sign-in\""),
            "the way back is the sign-in form itself"
        );
    }
    // An API client still gets the JSON answer.
    let answer = sign_in(
        &app,
        &provider,
        "eve",
        json!({ "email": "eve@example.org", "email_verified": false }),
        false,
    )
    .await;
    assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    let body: Value = answer.json().await.expect("json");
    assert!(
        body["detail"]
            .as_str()
            .is_some_and(|detail| detail.contains("not verified")),
        "{body}"
    );
    // A word the service does not know shows no message.
    let page = reqwest::get(app.url("/sign-in?sso_failed=<script>"))
        .await
        .expect("page");
    assert!(!page.text().await.expect("html").contains("There is a problem"));
    app.stop().await;
}
