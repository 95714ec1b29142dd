//! Signing in: passwords, sessions over the JSON API, the console's sign-in page and its
//! forms over plain HTTP (cookie and CSRF token), and a researcher with a viewer.

use reqwest::StatusCode;
use reqwest::header::{COOKIE, HeaderMap, ORIGIN, SET_COOKIE};
use serde_json::{Value, json};

use super::{TestApp, TestUser};

/// The password the console tests give a researcher ([`set_password`]) to sign in with.
pub const PASSWORD: &str = "the researcher's passphrase";

/// A browser's session over the JSON API: its cookie and the CSRF token the sign-in gave.
#[derive(Clone)]
pub struct Session {
    pub cookie: String,
    pub csrf: String,
    pub set_cookie: String,
}

/// Gives `user` the password `password` (straight into the store).
pub async fn set_password(app: &TestApp, user: &TestUser, password: &str) {
    let phc = insight::app::accounts::password::hash(password.to_owned())
        .await
        .expect("hash");
    app.store
        .set_password_hash(user.id, &phc, None)
        .await
        .expect("set password");
}

/// The session a successful sign-in answered: its `insight_session` cookie and CSRF token.
pub fn session_from(headers: &HeaderMap, body: &Value) -> Session {
    let set_cookie = headers
        .get_all(SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.contains("insight_session="))
        .expect("a session cookie")
        .to_owned();
    let cookie = set_cookie.split(';').next().expect("name=value").to_owned();
    Session {
        cookie,
        csrf: body["csrf_token"].as_str().unwrap_or_default().to_owned(),
        set_cookie,
    }
}

/// Signs in on `POST /auth/login`: the status, the session when it succeeded, the body
/// and the headers.
pub async fn login(app: &TestApp, email: &str, password: &str) -> (StatusCode, Option<Session>, Value, HeaderMap) {
    let response = app
        .client
        .post(app.url("/auth/login"))
        .json(&json!({ "email": email, "password": password }))
        .send()
        .await
        .expect("login sent");
    let status = response.status();
    let headers = response.headers().clone();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    let browser = status.is_success().then(|| session_from(&headers, &body));
    (status, browser, body, headers)
}

/// A researcher, and a viewer who reads the researcher's personal workspace.
pub async fn researcher_and_viewer(app: &TestApp) -> (TestUser, TestUser) {
    let researcher = app.user().await;
    let viewer = app.user().await;
    app.store
        .add_member(researcher.id, viewer.id, insight::domain::workspace::Role::Viewer)
        .await
        .expect("add the viewer");
    (researcher, viewer)
}

/// The password [`sign_in`] sets before it signs in on the page.
const FORM_PASSWORD: &str = "a long enough passphrase";

/// A client for the console's forms: a redirect is the answer, not followed.
pub fn forms() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// The quoted value that follows `marker` in a page (`marker` ends with the opening quote).
pub fn quoted_after(html: &str, marker: &str) -> String {
    html.split(marker)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no {marker} in the page"))
        .to_owned()
}

/// The CSRF token in a page's forms (`<input name="csrf">`).
pub fn csrf_field(html: &str) -> String {
    quoted_after(html, "name=\"csrf\" value=\"")
}

/// The page's CSRF token, from its `<meta name="csrf-token">`.
pub fn csrf_meta(html: &str) -> String {
    quoted_after(html, "name=\"csrf-token\" content=\"")
}

/// Sets `user`'s password and signs in on the sign-in page; the session cookie (`name=value`).
pub async fn sign_in(app: &TestApp, user: &TestUser) -> String {
    set_password(app, user, FORM_PASSWORD).await;
    let response = forms()
        .post(app.url("/sign-in"))
        .header(ORIGIN, &app.base)
        .form(&[
            ("email", user.email.as_str()),
            ("password", FORM_PASSWORD),
            ("return_to", "/"),
        ])
        .send()
        .await
        .expect("sign in");
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cookie = response.headers()[SET_COOKIE].to_str().expect("cookie");
    cookie.split(';').next().expect("name=value").to_owned()
}

/// Signs in over HTTP: a client for forms, the session cookie (`name=value`) and the CSRF
/// token of the forms on `page`.
pub async fn http_session(app: &TestApp, user: &TestUser, page: &str) -> (reqwest::Client, String, String) {
    let cookie = sign_in(app, user).await;
    let client = forms();
    let page = client
        .get(app.url(page))
        .header(COOKIE, &cookie)
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    let csrf = csrf_field(&page);
    (client, cookie, csrf)
}
