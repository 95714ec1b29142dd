//! A real OpenID Connect provider on loopback for the single sign-on tests:
//! oidc-provider-mock (PyPI; `.ci/run` installs the pinned version into its venv), a
//! Flask app that signs RS256 ID tokens and publishes its keys. It accepts any client ID
//! and secret and any redirect URI, and lets a test choose who signs in (the subject) and
//! his claims. Its issuer is the address it was reached at.
//!
//! The Python is `INSIGHT_TEST_OIDC_PYTHON` or else `.ci/run`'s venv; without it (or,
//! for the venv, without the package in it) [`MockProvider::start`] says the test was
//! skipped and gives `None`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use url::Url;

use super::eventually;

/// How long the provider may take to answer its discovery document after its start.
const START_WAIT: Duration = Duration::from_secs(30);

/// The provider, killed when dropped.
pub struct MockProvider {
    process: Child,
    /// `http://127.0.0.1:PORT`, as the provider names itself in its ID tokens.
    pub issuer: String,
    pub port: u16,
    python: PathBuf,
    args: Vec<String>,
    log: tempfile::NamedTempFile,
    http: reqwest::Client,
}

/// Where the provider sent the browser back to: the callback URL with its `code` and
/// `state`, not followed.
#[derive(Debug, Clone)]
pub struct Callback {
    pub url: Url,
    pub code: String,
    pub state: String,
}

/// The Python with oidc-provider-mock, or why there is none.
fn python() -> Result<PathBuf, String> {
    if let Some(named) = std::env::var_os("INSIGHT_TEST_OIDC_PYTHON").filter(|path| !path.is_empty()) {
        let named = PathBuf::from(named);
        // Named and there, it must run the provider: a broken install fails, not skips.
        return if named.exists() {
            Ok(named)
        } else {
            Err(format!(
                "INSIGHT_TEST_OIDC_PYTHON names {}, which does not exist",
                named.display()
            ))
        };
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_default();
    let venv = cache.join("insight-ci/venv/bin/python");
    let has_package = Command::new(&venv)
        .args(["-c", "import oidc_provider_mock"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if has_package {
        Ok(venv)
    } else {
        Err(format!(
            "no INSIGHT_TEST_OIDC_PYTHON, and {} has no oidc-provider-mock (.ci/run installs it)",
            venv.display()
        ))
    }
}

impl MockProvider {
    /// Starts a provider with the mock's command-line `args` (e.g. `--token-max-age 0`);
    /// `None`, after saying so, when there is no Python to run it.
    pub async fn start(test: &str, args: &[&str]) -> Option<Self> {
        let python = match python() {
            Ok(python) => python,
            Err(why) => {
                eprintln!("skipped {test}: {why}");
                return None;
            }
        };
        let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
        // Another process may take the free port before the provider binds it: try again.
        for _ in 0..3 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|listener| listener.local_addr())
                .expect("a free port")
                .port();
            if let Some(provider) = Self::start_on(python.clone(), port, args.clone()).await {
                return Some(provider);
            }
        }
        panic!("oidc-provider-mock did not start on three ports");
    }

    /// Stops this provider and starts a new one on the same port: same issuer, new keys.
    pub async fn restart(self) -> Self {
        let (python, port, args) = (self.python.clone(), self.port, self.args.clone());
        drop(self);
        Self::start_on(python, port, args)
            .await
            .unwrap_or_else(|| panic!("oidc-provider-mock did not start again on port {port}"))
    }

    /// `None` when the provider exited before it answered (its port was taken).
    async fn start_on(python: PathBuf, port: u16, args: Vec<String>) -> Option<Self> {
        let log = tempfile::NamedTempFile::new().expect("a log file");
        let process = Command::new(&python)
            .args([
                "-m",
                "oidc_provider_mock",
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .args(&args)
            .env("PYTHONWARNINGS", "ignore")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(log.reopen().expect("the log file"))
            .stderr(log.reopen().expect("the log file"))
            .spawn()
            .unwrap_or_else(|error| panic!("start {} -m oidc_provider_mock: {error}", python.display()));
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("an HTTP client");
        let mut provider = Self {
            process,
            issuer: format!("http://127.0.0.1:{port}"),
            port,
            python,
            args,
            log,
            http,
        };
        let discovery = format!("{}/.well-known/openid-configuration", provider.issuer);
        // Answered (true), or exited because its port was taken (false).
        let answered = eventually(
            START_WAIT,
            "oidc-provider-mock did not answer its discovery document",
            async || {
                if let Ok(response) = provider.http.get(&discovery).send().await
                    && response.status() == StatusCode::OK
                    && let Ok(document) = response.json::<Value>().await
                    && document["issuer"] == provider.issuer.as_str()
                {
                    return Ok(true);
                }
                if let Ok(Some(exit)) = provider.process.try_wait() {
                    let log = provider.log();
                    if log.to_lowercase().contains("address already in use") {
                        return Ok(false);
                    }
                    panic!("oidc-provider-mock exited before it answered ({exit}):\n{log}");
                }
                Err(format!("\n{}", provider.log()))
            },
        )
        .await;
        answered.then_some(provider)
    }

    /// What the provider printed, for a failure's message.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }

    /// Plays the browser at the provider: `subject` signs in with `claims` (e.g.
    /// `{"email": ..., "name": ..., "email_verified": true}`; an empty object gives none,
    /// not even an email) on the authorization page `authorization` names, which may be
    /// this provider's or a proxy's in front of it. Gives the redirect back, not followed.
    pub async fn sign_in(&self, authorization: &Url, subject: &str, claims: Value) -> Callback {
        let mut user = authorization.clone();
        user.set_path(&format!("/users/{subject}"));
        user.set_query(None);
        let answer = self
            .http
            .put(user)
            .json(&claims)
            .send()
            .await
            .expect("set the user's claims");
        assert_eq!(
            answer.status(),
            StatusCode::NO_CONTENT,
            "set the user's claims:\n{}",
            self.log()
        );
        // The authorization form posts back to its own URL, with the subject.
        let answer = self
            .http
            .post(authorization.clone())
            .form(&[("sub", subject)])
            .send()
            .await
            .expect("post the authorization form");
        let status = answer.status();
        let location = answer.headers().get(reqwest::header::LOCATION).cloned();
        let Some(location) = location.filter(|_| status == StatusCode::FOUND) else {
            let body = answer.text().await.unwrap_or_default();
            panic!(
                "the provider did not send the browser back ({status}):\n{body}\n{}",
                self.log()
            );
        };
        let url = Url::parse(location.to_str().expect("an ASCII location")).expect("a callback URL");
        let parameter = |name: &str| {
            url.query_pairs()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.into_owned())
                .unwrap_or_else(|| panic!("the callback {url} has no {name}"))
        };
        Callback {
            code: parameter("code"),
            state: parameter("state"),
            url: url.clone(),
        }
    }
}

impl Drop for MockProvider {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// What a [`Proxy`] changes in what passes through it.
#[derive(Debug, Clone, Default)]
pub struct Rewrite {
    /// `(from, to)`: the client ID `from` becomes `to` in the authorization request's
    /// `client_id` and the token request's Basic credentials, so the provider hands a
    /// client that asked as `from` an ID token issued for `to`, as a provider that mixed
    /// up its clients, or a token substituted on the way, would.
    pub client: Option<(String, String)>,
    /// A negative `expires_in` in the token answer becomes 0. The mock, told
    /// `--token-max-age=-60`, signs an ID token that expired a minute ago, and writes the
    /// same -60 as the access token's lifetime, which no client parses (it is unsigned);
    /// the ID token passes untouched.
    pub negative_lifetime_as_zero: bool,
}

/// A proxy in front of the provider: everything passes as it is, the Host header too
/// (so the provider names the proxy as its issuer and in its endpoints), but for its
/// [`Rewrite`].
pub struct Proxy {
    pub issuer: String,
    task: tokio::task::JoinHandle<()>,
}

struct Upstream {
    base: String,
    rewrite: Rewrite,
    http: reqwest::Client,
}

impl Proxy {
    pub async fn start(provider: &MockProvider, rewrite: Rewrite) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let issuer = format!("http://{}", listener.local_addr().expect("its address"));
        let upstream = std::sync::Arc::new(Upstream {
            base: provider.issuer.clone(),
            rewrite,
            http: provider.http.clone(),
        });
        let app = axum::Router::new().fallback(forward).with_state(upstream);
        let task = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("the proxy serves");
        });
        Self { issuer, task }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(
    axum::extract::State(upstream): axum::extract::State<std::sync::Arc<Upstream>>,
    request: axum::extract::Request,
) -> axum::response::Response {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use reqwest::header;

    let rewrite = &upstream.rewrite;
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 1 << 20).await.expect("the request body");
    let mut url = Url::parse(&format!("{}{}", upstream.base, parts.uri.path())).expect("an upstream URL");
    let mut headers = parts.headers.clone();
    headers.remove(header::CONTENT_LENGTH);
    if let Some((from, to)) = &rewrite.client {
        if let Some(query) = parts.uri.query() {
            let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
                .map(|(key, value)| {
                    let value = if key == "client_id" && value == from.as_str() {
                        to.clone()
                    } else {
                        value.into_owned()
                    };
                    (key.into_owned(), value)
                })
                .collect();
            url.query_pairs_mut().extend_pairs(pairs);
        }
        let basic = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok()?.strip_prefix("Basic ")?.parse::<String>().ok())
            .and_then(|encoded| String::from_utf8(STANDARD.decode(encoded).ok()?).ok());
        if let Some(secret) = basic
            .as_deref()
            .and_then(|basic| basic.strip_prefix(&format!("{from}:")))
        {
            let swapped = format!("Basic {}", STANDARD.encode(format!("{to}:{secret}")));
            headers.insert(header::AUTHORIZATION, swapped.parse().expect("a header value"));
        }
    } else {
        url.set_query(parts.uri.query());
    }
    let answer = upstream
        .http
        .request(parts.method, url)
        .headers(headers)
        .body(body)
        .send()
        .await
        .expect("the provider answers the proxy");
    let mut response = axum::response::Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if name != header::TRANSFER_ENCODING && name != header::CONTENT_LENGTH {
            response = response.header(name, value);
        }
    }
    let mut body = answer.bytes().await.expect("the provider's answer").to_vec();
    if rewrite.negative_lifetime_as_zero
        && let Ok(mut json) = serde_json::from_slice::<Value>(&body)
        && json["expires_in"].as_i64().is_some_and(|seconds| seconds < 0)
    {
        json["expires_in"] = 0.into();
        body = serde_json::to_vec(&json).expect("JSON");
    }
    response.body(axum::body::Body::from(body)).expect("a response")
}

/// The reference provider: oidc-provider (npm, OpenID Certified) run by
/// `support/oidc_provider.mjs` on loopback, with one client and accounts named by their
/// login (see the script). It serves the claims of the email and profile scopes at its
/// UserInfo endpoint only, as OpenID Connect Core has it for the code flow.
///
/// Its package is in `INSIGHT_TEST_OIDC_PROVIDER` (a `node_modules` folder; `.ci/run`
/// installs the pinned version); without it [`ReferenceProvider::start`] says the test
/// was skipped and gives `None`.
pub struct ReferenceProvider {
    process: Child,
    pub issuer: String,
    log: tempfile::NamedTempFile,
    http: reqwest::Client,
}

impl ReferenceProvider {
    pub const CLIENT_SECRET: &str = "a client secret the reference provider accepts";

    /// Starts the provider with one client, `client_id`, which may come back to `redirect`.
    pub async fn start(test: &str, client_id: &str, redirect: &str) -> Option<Self> {
        let Some(modules) = std::env::var_os("INSIGHT_TEST_OIDC_PROVIDER").filter(|path| !path.is_empty()) else {
            eprintln!("skipped {test}: INSIGHT_TEST_OIDC_PROVIDER is not set (.ci/run sets it)");
            return None;
        };
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/api/support/oidc_provider.mjs");
        for _ in 0..3 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|listener| listener.local_addr())
                .expect("a free port")
                .port();
            let log = tempfile::NamedTempFile::new().expect("a log file");
            let process = Command::new("node")
                .arg(&script)
                .arg(&modules)
                .args([&port.to_string(), client_id, Self::CLIENT_SECRET, redirect])
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(log.reopen().expect("the log file"))
                .stderr(log.reopen().expect("the log file"))
                .spawn()
                .expect("node runs the reference provider");
            let mut provider = Self {
                process,
                issuer: format!("http://127.0.0.1:{port}"),
                log,
                http: reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .expect("an HTTP client"),
            };
            let discovery = format!("{}/.well-known/openid-configuration", provider.issuer);
            let answered = eventually(
                START_WAIT,
                "oidc-provider did not answer its discovery document",
                async || {
                    if let Ok(response) = provider.http.get(&discovery).send().await
                        && response.status() == StatusCode::OK
                    {
                        return Ok(true);
                    }
                    if let Ok(Some(exit)) = provider.process.try_wait() {
                        let log = provider.log();
                        if log.contains("EADDRINUSE") {
                            return Ok(false);
                        }
                        panic!("oidc-provider exited before it answered ({exit}):\n{log}");
                    }
                    Err(format!("\n{}", provider.log()))
                },
            )
            .await;
            if answered {
                return Some(provider);
            }
        }
        panic!("oidc-provider did not start on three ports");
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log.path()).unwrap_or_default()
    }

    /// Stops the provider, as one that went down would.
    pub fn stop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }

    /// Plays the browser at the provider from the authorization request `authorization`:
    /// `login` signs in on its login page (any password) and consents on its consent page.
    /// Gives the redirect back to the client, not followed.
    pub async fn sign_in(&self, authorization: &Url, login: &str) -> Callback {
        let mut cookies: Vec<(String, String)> = Vec::new();
        let mut next = (reqwest::Method::GET, authorization.clone(), None::<Vec<(&str, &str)>>);
        for _ in 0..12 {
            let (method, url, form) = next.clone();
            let cookie = cookies
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect::<Vec<_>>()
                .join("; ");
            let mut request = self
                .http
                .request(method, url.clone())
                .header(reqwest::header::COOKIE, cookie);
            if let Some(form) = &form {
                request = request.form(form);
            }
            let answer = request.send().await.expect("the provider answers");
            for set in answer.headers().get_all(reqwest::header::SET_COOKIE) {
                let pair = set.to_str().unwrap_or_default().split(';').next().unwrap_or_default();
                if let Some((name, value)) = pair.split_once('=') {
                    cookies.retain(|(known, _)| known != name);
                    cookies.push((name.trim().to_owned(), value.trim().to_owned()));
                }
            }
            let status = answer.status();
            if status.is_redirection() {
                let location = answer.headers()[reqwest::header::LOCATION].to_str().expect("ASCII");
                let target = url.join(location).expect("a location");
                if target.origin() != url.origin() {
                    let parameter = |name: &str| {
                        target
                            .query_pairs()
                            .find(|(key, _)| key == name)
                            .map(|(_, value)| value.into_owned())
                            .unwrap_or_else(|| panic!("the callback {target} has no {name}:\n{}", self.log()))
                    };
                    return Callback {
                        code: parameter("code"),
                        state: parameter("state"),
                        url: target.clone(),
                    };
                }
                next = (reqwest::Method::GET, target, None);
                continue;
            }
            let page = answer.text().await.unwrap_or_default();
            assert_eq!(status, StatusCode::OK, "the provider's page:\n{page}\n{}", self.log());
            let form = if page.contains("name=\"prompt\" value=\"login\"") {
                vec![("prompt", "login"), ("login", login), ("password", "any password")]
            } else if page.contains("name=\"prompt\" value=\"consent\"") {
                vec![("prompt", "consent")]
            } else {
                panic!("neither a login nor a consent page:\n{page}");
            };
            next = (reqwest::Method::POST, url, Some(form));
        }
        panic!("the provider never sent the browser back:\n{}", self.log());
    }
}

impl Drop for ReferenceProvider {
    fn drop(&mut self) {
        self.stop();
    }
}
