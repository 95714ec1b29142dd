//! The app under test: every test gets its own database (a SQLite file in a temporary
//! folder, or a fresh PostgreSQL database when `INSIGHT_TEST_DATABASE_URL` is set) and
//! talks to the real router on a real listener over HTTP.

use std::sync::Once;
use std::time::Duration;

use insight::{Server, Settings, Store};
use reqwest::{Method, StatusCode};
use serde_json::Value;
use uuid::Uuid;

use super::eventually;

/// Which backend this run tests, printed once so the test output says it.
pub fn backend_name() -> &'static str {
    static ANNOUNCE: Once = Once::new();
    let name = if std::env::var("INSIGHT_TEST_DATABASE_URL").is_ok() {
        "postgres"
    } else {
        "sqlite"
    };
    ANNOUNCE.call_once(|| eprintln!("insight api tests: backend = {name}"));
    name
}

/// A new, empty database; the folder (SQLite) lives as long as the returned guard.
pub async fn fresh_database() -> (String, Option<tempfile::TempDir>) {
    backend_name();
    match std::env::var("INSIGHT_TEST_DATABASE_URL") {
        Ok(base) => {
            let (server, name) = base
                .rsplit_once('/')
                .expect("INSIGHT_TEST_DATABASE_URL ends in /DBNAME");
            let name = name.split('?').next().unwrap_or(name);
            let database = format!("{name}_t_{}", Uuid::new_v4().simple());
            let admin = format!("{server}/postgres");
            let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&admin)
                .await
                .expect("connect to PostgreSQL");
            sqlx::Executor::execute(&mut conn, format!("CREATE DATABASE \"{database}\"").as_str())
                .await
                .expect("create test database");
            (format!("{server}/{database}"), None)
        }
        Err(_) => {
            let dir = tempfile::tempdir().expect("temp dir");
            let url = format!("sqlite://{}", dir.path().join("insight.db").display());
            (url, Some(dir))
        }
    }
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub store: Store,
    pub database_url: String,
    /// The instance's data folder (uploads, recordings).
    pub data_dir: std::path::PathBuf,
    server: Option<Server>,
    _dir: Option<tempfile::TempDir>,
}

/// A user of the app with a valid token.
#[derive(Clone)]
pub struct TestUser {
    pub id: Uuid,
    pub email: String,
    pub token: String,
}

impl TestApp {
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    pub async fn start_with(configure: impl FnOnce(&mut Settings)) -> Self {
        let (database_url, dir) = fresh_database().await;
        let mut settings = Settings::for_database(&database_url);
        settings.storage.db_max_connections = 4;
        configure(&mut settings);
        let data_dir = settings.storage.data_dir.clone();
        let store = Store::connect(&database_url, settings.storage.db_max_connections)
            .await
            .expect("open store");
        let server = Server::start(settings, store.clone()).await.expect("start server");
        let base = format!("http://{}", server.addr);
        Self {
            base,
            client: reqwest::Client::new(),
            store,
            database_url,
            data_dir,
            server: Some(server),
            _dir: dir,
        }
    }

    /// Stops the server and starts a new one on the same database and data folder (so
    /// the same instance key), with `configure` applied to fresh settings.
    pub async fn restart(&mut self, configure: impl FnOnce(&mut Settings)) {
        if let Some(server) = self.server.take() {
            server.stop().await.expect("stop server");
        }
        let mut settings = Settings::for_database(&self.database_url);
        settings.storage.db_max_connections = 4;
        configure(&mut settings);
        settings.storage.data_dir = self.data_dir.clone();
        self.store = Store::connect(&self.database_url, settings.storage.db_max_connections)
            .await
            .expect("open store");
        let server = Server::start(settings, self.store.clone()).await.expect("start server");
        self.base = format!("http://{}", server.addr);
        self.server = Some(server);
    }

    /// Stops the server, keeping its database and data folder for a [`TestApp::restart`].
    pub async fn halt(&mut self) {
        if let Some(server) = self.server.take() {
            server.stop().await.expect("stop server");
        }
    }

    pub async fn stop(mut self) {
        if let Some(server) = self.server.take() {
            server.stop().await.expect("stop server");
        }
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }

    pub async fn user(&self) -> TestUser {
        let email = format!("researcher-{}@example.org", Uuid::new_v4().simple());
        let user = self.store.add_user(&email).await.expect("add user").expect("new user");
        let (_, token) = self
            .store
            .issue_token(user.id, "test", insight::domain::user::TokenScope::Write, None)
            .await
            .expect("issue token");
        TestUser {
            id: user.id,
            email,
            token,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends a request and returns the status and the JSON body (`Value::Null` when empty).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut request = self.client.request(method, self.url(path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request sent");
        let status = response.status();
        let text = response.text().await.expect("body read");
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|_| panic!("{path}: body is not JSON: {text}"))
        };
        (status, value)
    }

    /// Sends raw bytes as the body with the given content type.
    pub async fn call_raw(
        &self,
        method: Method,
        path: &str,
        token: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> (StatusCode, Value) {
        let response = self
            .client
            .request(method, self.url(path))
            .bearer_auth(token)
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .expect("request sent");
        let status = response.status();
        let text = response.text().await.expect("body read");
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub async fn get(&self, path: &str, user: &TestUser) -> (StatusCode, Value) {
        self.call(Method::GET, path, Some(&user.token), None).await
    }

    pub async fn post(&self, path: &str, user: &TestUser, body: Value) -> (StatusCode, Value) {
        self.call(Method::POST, path, Some(&user.token), Some(body)).await
    }

    pub async fn put(&self, path: &str, user: &TestUser, body: Value) -> (StatusCode, Value) {
        self.call(Method::PUT, path, Some(&user.token), Some(body)).await
    }

    pub async fn patch(&self, path: &str, user: &TestUser, body: Value) -> (StatusCode, Value) {
        self.call(Method::PATCH, path, Some(&user.token), Some(body)).await
    }

    pub async fn delete(&self, path: &str, user: &TestUser) -> (StatusCode, Value) {
        self.call(Method::DELETE, path, Some(&user.token), None).await
    }

    /// Polls a record until it is `Finished` (failing after 30 s) and returns it with its
    /// utterances.
    pub async fn wait_finished(&self, user: &TestUser, record_id: &str) -> Value {
        eventually(Duration::from_secs(30), "record not finished", async || {
            let (_, record) = self.get(&format!("/insight/{record_id}/"), user).await;
            if record["status"] == "Finished" {
                Ok(record)
            } else {
                Err(record)
            }
        })
        .await
    }

    /// Creates a project and returns its id.
    pub async fn project(&self, user: &TestUser, name: &str) -> String {
        let (status, body) = self.post("/projects/", user, serde_json::json!({ "name": name })).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().expect("project id").to_owned()
    }

    /// Creates a report from the first system preset and returns its id.
    pub async fn report(&self, user: &TestUser, project_id: &str) -> String {
        let preset_id = self.system_preset_id(user).await;
        let body = serde_json::json!({ "title": "Onboarding findings", "preset_id": preset_id });
        let (status, report) = self.post(&format!("/projects/{project_id}/reports"), user, body).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{report}");
        report["id"].as_str().expect("report id").to_owned()
    }

    /// The workspace's audit entries whose action starts with `action`, newest first.
    pub async fn audit(&self, user: &TestUser, workspace: impl std::fmt::Display, action: &str) -> Vec<Value> {
        let (status, audit) = self
            .get(&format!("/workspaces/{workspace}/audit?action={action}"), user)
            .await;
        assert_eq!(status, StatusCode::OK, "{audit}");
        audit["items"]
            .as_array()
            .or(audit.as_array())
            .cloned()
            .unwrap_or_default()
    }

    pub async fn system_preset_id(&self, user: &TestUser) -> String {
        let (status, presets) = self.get("/presets/system/", user).await;
        assert_eq!(status, StatusCode::OK);
        presets[0]["id"].as_str().expect("preset id").to_owned()
    }
}
