//! Headless Chromium through ChromeDriver's WebDriver protocol, and a session from the
//! sign-in page, for the benchmarks that time what a person's browser sees. Both come from Debian's packages (`.ci/run`
//! installs them for the browser tests); without them a benchmark skips its browser part.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use serde_json::{Value, json};

use crate::server_process::ChildGuard;

/// Signs in on the sign-in page, as a browser does: the session cookie (`name=value`).
pub async fn session_cookie(
    client: &reqwest::Client,
    base: &str,
    email: &str,
    password: &str,
) -> anyhow::Result<String> {
    let signed_in = client
        .post(format!("{base}/sign-in"))
        .header("origin", base)
        .form(&[("email", email), ("password", password), ("return_to", "/")])
        .send()
        .await?;
    Ok(signed_in
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .context("no session cookie from the sign-in page")?
        .to_owned())
}

pub struct Chromium {
    http: reqwest::Client,
    session: String,
    _driver: ChildGuard,
}

impl Chromium {
    /// A browser at `width` x `height`, or `None` when Chromium or ChromeDriver is missing.
    pub async fn open(width: u32, height: u32) -> anyhow::Result<Option<Self>> {
        let (driver_path, chromium) = ("/usr/bin/chromedriver", "/usr/bin/chromium");
        if !std::path::Path::new(driver_path).exists() || !std::path::Path::new(chromium).exists() {
            return Ok(None);
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let driver = ChildGuard(
            std::process::Command::new(driver_path)
                .arg(format!("--port={port}"))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()?,
        );
        let http = reqwest::Client::new();
        let base = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(15);
        while http.get(format!("{base}/status")).send().await.is_err() {
            ensure!(Instant::now() < deadline, "chromedriver did not start");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let session: Value = http
            .post(format!("{base}/session"))
            .json(
                &json!({ "capabilities": { "alwaysMatch": { "browserName": "chrome", "goog:chromeOptions": {
                "binary": chromium, "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", format!("--window-size={width},{height}")] } } } }),
            )
            .send()
            .await?
            .json()
            .await?;
        let id = session["value"]["sessionId"].as_str().context("no WebDriver session")?;
        Ok(Some(Self {
            session: format!("{base}/session/{id}"),
            http,
            _driver: driver,
        }))
    }

    async fn command(&self, path: &str, body: Value) -> anyhow::Result<Value> {
        let answer: Value = self
            .http
            .post(format!("{}{path}", self.session))
            .json(&body)
            .send()
            .await?
            .json()
            .await?;
        if let Some(error) = answer["value"]["error"].as_str() {
            anyhow::bail!("WebDriver {path}: {error}: {}", answer["value"]["message"]);
        }
        Ok(answer["value"].clone())
    }

    pub async fn go(&self, url: &str) -> anyhow::Result<()> {
        self.command("/url", json!({ "url": url })).await.map(drop)
    }

    /// Signs the browser in with a session cookie (`name=value`) for `base`.
    pub async fn sign_in(&self, base: &str, cookie: &str) -> anyhow::Result<()> {
        let (name, value) = cookie.split_once('=').context("cookie")?;
        self.go(&format!("{base}/sign-in")).await?;
        self.command(
            "/cookie",
            json!({ "cookie": { "name": name, "value": value, "path": "/" } }),
        )
        .await
        .map(drop)
    }

    /// Runs a function body in the page and answers what it returns.
    pub async fn script(&self, body: &str) -> anyhow::Result<Value> {
        self.command("/execute/sync", json!({ "script": body, "args": [] }))
            .await
    }

    /// Runs a function body that calls its last argument with its answer.
    pub async fn script_async(&self, body: &str) -> anyhow::Result<Value> {
        self.command("/execute/async", json!({ "script": body, "args": [] }))
            .await
    }

    pub async fn quit(self) {
        let _ = self.http.delete(&self.session).send().await;
    }
}
