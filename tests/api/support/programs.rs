//! Programs the tests run: the `insight` binary itself (a command, or `insight serve` on a
//! free port), and the outside programs that read what the service writes.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

const BIN: &str = env!("CARGO_BIN_EXE_insight");

/// How long anything the binary does may take before the test gives up on it.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Settings the environment of the test run must not leak into the children.
const SETTINGS: [&str; 64] = [
    "INSIGHT_ADDR",
    "INSIGHT_DATABASE_URL",
    "INSIGHT_MAX_BODY_BYTES",
    "INSIGHT_DB_MAX_CONNECTIONS",
    "INSIGHT_PUBLIC_URL",
    "INSIGHT_LOG_FORMAT",
    "INSIGHT_DATA_DIR",
    "INSIGHT_SEARCH_DIR",
    "INSIGHT_MAX_UPLOAD_BYTES",
    "INSIGHT_MAX_UTTERANCES",
    "INSIGHT_IMPORT_MAX_ELEMENTS",
    "INSIGHT_IMPORT_MAX_DEPTH",
    "INSIGHT_IMPORT_MAX_ATTRIBUTE_BYTES",
    "INSIGHT_IMPORT_MAX_TEXT_BYTES",
    "INSIGHT_IMPORT_MAX_EXPANSION",
    "INSIGHT_IMPORT_CONCURRENCY",
    "INSIGHT_MAX_DURATION_MINUTES",
    "INSIGHT_STT_BASE_URL",
    "INSIGHT_STT_API_KEY",
    "INSIGHT_STT_MODEL",
    "INSIGHT_STT_PROVIDER",
    "INSIGHT_STT_POLL_SECONDS",
    "INSIGHT_STT_CALLBACK_WAIT_SECONDS",
    "INSIGHT_JOB_MAX_ATTEMPTS",
    "INSIGHT_JOB_RETRY_BASE_SECONDS",
    "INSIGHT_JOB_LEASE_SECONDS",
    "INSIGHT_REPORT_WORKERS",
    "INSIGHT_AI",
    "INSIGHT_LLM_BASE_URL",
    "INSIGHT_LLM_API_KEY",
    "INSIGHT_LLM_MODEL",
    "INSIGHT_LLM_CONTEXT_TOKENS",
    "INSIGHT_LLM_CONCURRENCY",
    "INSIGHT_LLM_TIMEOUT_SECONDS",
    "INSIGHT_LLM_MAX_ATTEMPTS",
    "INSIGHT_LLM_PRICES",
    "INSIGHT_SEARCH_PROVIDER",
    "INSIGHT_SEARCH_BASE_URL",
    "INSIGHT_SEARCH_API_KEY",
    "INSIGHT_SECRET_KEY",
    "INSIGHT_PUBLIC_RATE_PER_MINUTE",
    "INSIGHT_PUBLIC_RATE_BURST",
    "INSIGHT_WEBHOOKS_ALLOW_HTTP",
    "INSIGHT_WEBHOOKS_ALLOW_PRIVATE",
    "INSIGHT_WEBHOOKS_RETRY_SCHEDULE",
    "INSIGHT_WEBHOOKS_TIMEOUT_SECONDS",
    "INSIGHT_WEBHOOKS_CONCURRENCY",
    "INSIGHT_SMTP_URL",
    "INSIGHT_MAIL_FROM",
    "INSIGHT_SIGNUP",
    "INSIGHT_SESSION_IDLE_MINUTES",
    "INSIGHT_SESSION_LIFETIME_HOURS",
    "INSIGHT_INVITATION_DAYS",
    "INSIGHT_PASSWORD_RESET_MINUTES",
    "INSIGHT_SIGN_IN_LOCK_AFTER",
    "INSIGHT_SIGN_IN_ADDRESS_LOCK_AFTER",
    "INSIGHT_SIGN_IN_LOCK_MINUTES",
    "INSIGHT_AUDIT_RETENTION_DAYS",
    "INSIGHT_OIDC_ISSUER",
    "INSIGHT_OIDC_CLIENT_ID",
    "INSIGHT_OIDC_CLIENT_SECRET",
    "INSIGHT_OIDC_ALLOWED_DOMAINS",
    "INSIGHT_OIDC_WORKSPACE",
    "INSIGHT_OIDC_ROLE",
];

/// `insight ARGS` with a clean environment: no inherited settings, plain logs at info.
pub fn command(args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command.args(args);
    for name in SETTINGS {
        command.env_remove(name);
    }
    command.env("RUST_LOG", "info").env("NO_COLOR", "1").kill_on_drop(true);
    command
}

/// A running `insight serve`; killed when dropped.
pub struct Served {
    child: Child,
    pub base: String,
    stdout: mpsc::UnboundedReceiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// The `http://HOST:PORT` in the line the server logs once it listens.
fn listening_address(line: &str) -> Option<String> {
    let marker = "Insight listening on http://";
    let start = line.find(marker)? + marker.len();
    let address: String = line[start..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '\u{1b}')
        .collect();
    (!address.is_empty()).then(|| format!("http://{address}"))
}

impl Served {
    /// Starts `insight serve` on a free port of the loopback and waits until it listens.
    pub async fn start(database_url: &str) -> Self {
        Self::start_with(database_url, &[]).await
    }

    /// [`Served::start`] with more settings in the environment.
    pub async fn start_with(database_url: &str, settings: &[(&str, String)]) -> Self {
        let mut command = command(&["serve", "--addr", "127.0.0.1:0"]);
        command.env("INSIGHT_DATABASE_URL", database_url);
        // One data folder per database (its secret key included), outside the checkout,
        // so a restart on the same database finds the same folder.
        let folder = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, database_url.as_bytes());
        command.env(
            "INSIGHT_DATA_DIR",
            std::env::temp_dir().join(format!("insight-cli-{folder}")),
        );
        for (name, value) in settings {
            command.env(name, value);
        }
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("insight serve starts");

        let (lines, stdout) = mpsc::unbounded_channel();
        let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
        tokio::spawn(async move {
            while let Ok(Some(line)) = out.next_line().await {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });

        // Read the log until the address shows; then keep draining it so the server
        // never blocks on a full pipe.
        let log = Arc::new(Mutex::new(String::new()));
        let mut err = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let (found, address) = tokio::sync::oneshot::channel();
        let keep = Arc::clone(&log);
        tokio::spawn(async move {
            let mut found = Some(found);
            while let Ok(Some(line)) = err.next_line().await {
                if let Some(address) = listening_address(&line)
                    && let Some(found) = found.take()
                {
                    let _ = found.send(address);
                }
                let mut log = keep.lock().expect("log lock");
                log.push_str(&line);
                log.push('\n');
            }
        });
        let base = match tokio::time::timeout(PATIENCE, address).await {
            Ok(Ok(base)) => base,
            outcome => {
                let _ = child.start_kill();
                let log = log.lock().expect("log lock").clone();
                panic!("insight serve did not say where it listens ({outcome:?}); its log:\n{log}");
            }
        };
        Self {
            child,
            base,
            stdout,
            stderr: log,
        }
    }

    /// The next line the server printed on stdout, if one comes within a few seconds.
    pub async fn next_stdout_line(&mut self) -> Option<String> {
        tokio::time::timeout(Duration::from_secs(5), self.stdout.recv())
            .await
            .ok()
            .flatten()
    }

    /// Kills the process with SIGKILL (no graceful shutdown) and returns the stdout
    /// lines not read yet.
    pub async fn kill(mut self) -> Vec<String> {
        self.child.start_kill().expect("kill insight serve");
        tokio::time::timeout(PATIENCE, self.child.wait())
            .await
            .expect("insight serve ends after SIGKILL")
            .expect("wait for insight serve");
        let mut rest = Vec::new();
        while let Ok(Some(line)) = tokio::time::timeout(PATIENCE, self.stdout.recv()).await {
            rest.push(line);
        }
        rest
    }

    pub fn log(&self) -> String {
        self.stderr.lock().expect("log lock").clone()
    }

    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        let mut request = reqwest::Client::new().request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .send()
            .await
            .unwrap_or_else(|err| panic!("{path}: {err}; server log:\n{}", self.log()));
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body read");
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("{path}: body is not JSON: {text}"))
        };
        (status, headers, value)
    }

    pub async fn get(&self, path: &str, token: &str) -> (StatusCode, Value) {
        let (status, _, body) = self.call(reqwest::Method::GET, path, Some(token), None).await;
        (status, body)
    }

    pub async fn send(&self, method: reqwest::Method, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
        let (status, _, body) = self.call(method, path, Some(token), Some(body)).await;
        (status, body)
    }
}

/// A program for a reader, or `None` (that reader skipped) where it is not installed outside CI.
pub fn tool(variable: &str, default: Option<&str>, install: &str) -> Option<PathBuf> {
    let named = std::env::var(variable).ok().filter(|path| !path.is_empty());
    let path = named.clone().or(default.map(str::to_owned)).map(PathBuf::from);
    if let Some(path) = path.filter(|path| path.exists()) {
        return Some(path);
    }
    if named.is_some() || std::env::var_os("CI").is_some() {
        panic!("{variable} names no program, but the exports must be read here: {install} (.ci/run does)");
    }
    eprintln!("SKIPPED a reader: set {variable} ({install})");
    None
}
