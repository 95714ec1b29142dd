//! Insight: a self-hostable service for customer research teams.
//!
//! `serve` runs everything in one process on one database: the API and its document, the
//! respondent page, and the background workers. `docs/architecture.md` maps the layers.

pub mod app;
pub mod config;
pub mod domain;
pub mod doors;
pub mod engines;
pub mod error;
pub mod providers;
pub mod secret;
pub mod services;
pub mod store;
pub mod workers;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;

pub use config::Settings;
pub use doors::http::{AppState, document};
pub use store::Store;

/// A running server: its address and the handle that stops it.
pub struct Server {
    pub addr: SocketAddr,
    pub store: Store,
    shutdown: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
    workers: workers::Workers,
}

impl Server {
    /// Binds `settings.server.addr` and serves until `stop` (or forever).
    pub async fn start(settings: Settings, store: Store) -> anyhow::Result<Self> {
        let listener = doors::http::serve::listen(settings.server.addr)
            .with_context(|| format!("cannot listen on {} (INSIGHT_ADDR)", settings.server.addr))?;
        let addr = listener.local_addr()?;
        std::fs::create_dir_all(&settings.storage.data_dir).with_context(|| {
            format!(
                "cannot create the data folder {} (INSIGHT_DATA_DIR)",
                settings.storage.data_dir.display()
            )
        })?;
        let store = store.with_session_idle(settings.accounts.session_idle());
        // Before the first request: what a killed import left is never seen.
        match store.remove_imports_left_at_start().await {
            Ok(0) => {}
            Ok(removed) => tracing::info!(removed, "removed what unfinished imports left"),
            Err(error) => tracing::warn!(error = %format!("{error:#}"), "removing unfinished imports failed"),
        }
        let settings = Arc::new(settings);
        let services = services::Services::build(settings.clone(), store.clone()).await?;
        // Every background loop is the workers': started here, stopped by `stop`.
        let mut workers = workers::Workers::start(services.clone());
        let public_rate = doors::http::ratelimit::PublicRate::new(&settings);
        {
            let rate = public_rate.clone();
            workers.every(std::time::Duration::from_secs(60), move || {
                rate.forget_idle();
                std::future::ready(())
            });
        }
        let wire = doors::http::serve::Wire {
            proxies: Arc::new(doors::http::peer::TrustedProxies::new(
                settings.server.trusted_proxies.0.clone(),
                settings.server.forwarded_header,
            )),
            body_window: std::time::Duration::from_secs(settings.server.request_body_timeout_seconds),
            body_min_rate: settings.server.request_body_min_bytes_per_second,
        };
        let state = AppState {
            services,
            project_lists: Arc::default(),
            public_rate: public_rate.clone(),
        };
        let app = doors::http::app(state);
        let (shutdown, signal) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            doors::http::serve::serve(listener, app, wire, async move {
                let _ = signal.await;
            })
            .await;
        });
        Ok(Self {
            addr,
            store,
            shutdown,
            task,
            workers,
        })
    }

    /// Stops accepting, lets requests in flight finish, and closes the database.
    pub async fn stop(self) -> anyhow::Result<()> {
        let _ = self.shutdown.send(());
        self.task.await?;
        self.workers.stop().await;
        self.store.close().await;
        Ok(())
    }

    /// Serves until the process gets Ctrl-C or SIGTERM, then stops gracefully.
    pub async fn run_until_signal(self) -> anyhow::Result<()> {
        shutdown_signal().await;
        tracing::info!("shutting down");
        self.stop().await
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}

#[cfg(test)]
mod house {
    //! The rules that keep the doors apart from the rooms, and the rooms below them in
    //! their layers (`docs/architecture.md`).

    use std::path::{Path, PathBuf};

    fn sources(folder: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(folder).expect("read the source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                sources(&path, found);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                found.push(path);
            }
        }
    }

    fn all_sources() -> Vec<(PathBuf, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        sources(&root, &mut found);
        assert!(found.len() > 50, "the sources were found");
        found
            .into_iter()
            .map(|path| {
                let text = std::fs::read_to_string(&path).expect("read a source file");
                (path.strip_prefix(&root).expect("under src").to_path_buf(), text)
            })
            .collect()
    }

    #[test]
    fn nothing_below_the_doors_imports_a_door() {
        let offenders: Vec<_> = all_sources()
            .into_iter()
            // The crate's root builds the server and the command line starts it: they may.
            .filter(|(path, _)| {
                !path.starts_with("doors") && path != Path::new("lib.rs") && path != Path::new("main.rs")
            })
            .filter(|(_, text)| text.contains("crate::doors"))
            .map(|(path, _)| path)
            .collect();
        assert!(offenders.is_empty(), "these import a door: {offenders:?}");
    }

    #[test]
    fn a_door_imports_no_other_door_but_the_respondent_page() {
        // The JSON API's router mounts the others (`doors/http/mod.rs`); the respondent's
        // page is drawn by the API's route and previewed in the console.
        for door in ["http", "console", "mcp"] {
            let offenders: Vec<_> = all_sources()
                .into_iter()
                .filter(|(path, _)| path.starts_with("doors") && !path.starts_with(format!("doors/{door}")))
                .filter(|(path, _)| path != Path::new("doors/http/mod.rs"))
                .filter(|(_, text)| text.contains(&format!("crate::doors::{door}")))
                .map(|(path, _)| path)
                .collect();
            assert!(offenders.is_empty(), "these import the {door} door: {offenders:?}");
        }
    }

    #[test]
    fn no_route_file_imports_another() {
        let offenders: Vec<_> = all_sources()
            .into_iter()
            .filter(|(path, text)| {
                path.starts_with("doors/http/routes")
                    && !path.ends_with("mod.rs")
                    && (text.contains("super::") || text.contains("crate::doors::http::routes::"))
            })
            .map(|(path, _)| path)
            .collect();
        assert!(
            offenders.is_empty(),
            "these route files reach into their siblings: {offenders:?}"
        );
    }

    /// The modules of ours a file names (`crate::x::...`, `use crate::{x, y}`), outside
    /// comments, each with its line.
    fn named_modules(text: &str) -> Vec<(usize, String)> {
        let mut named = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for (at, _) in line.match_indices("crate::") {
                let rest = &line[at + "crate::".len()..];
                let heads: Vec<&str> = match rest.strip_prefix('{') {
                    Some(group) => group.split(',').map(str::trim).collect(),
                    None => vec![rest],
                };
                for head in heads {
                    let name: String = head
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        named.push((number + 1, name));
                    }
                }
            }
        }
        named
    }

    /// Where the files under `folder` name a module of ours other than `allowed`.
    fn imports_outside(folder: &str, allowed: &[&str]) -> Vec<String> {
        all_sources()
            .into_iter()
            .filter(|(path, _)| path.starts_with(folder))
            .flat_map(|(path, text)| {
                named_modules(&text)
                    .into_iter()
                    .filter(|(_, name)| !allowed.contains(&name.as_str()))
                    .map(move |(line, name)| format!("{}:{line} crate::{name}", path.display()))
            })
            .collect()
    }

    #[test]
    fn the_domain_names_nothing_of_ours_but_itself() {
        let offenders = imports_outside("domain", &["domain"]);
        assert!(offenders.is_empty(), "the domain imports these: {offenders:?}");
    }

    #[test]
    fn the_errors_name_nothing_of_ours() {
        let offenders = imports_outside("error.rs", &["error"]);
        assert!(offenders.is_empty(), "the errors import these: {offenders:?}");
    }

    #[test]
    fn the_store_imports_only_the_domain_the_errors_and_the_settings() {
        let offenders = imports_outside("store", &["store", "domain", "error", "config"]);
        assert!(offenders.is_empty(), "the store imports these: {offenders:?}");
    }

    #[test]
    fn the_engines_know_nothing_of_who_asked() {
        // The search indexer reads the database it indexes; nothing else of the engines
        // touches it, and none knows a use case, a door or a worker.
        let offenders = imports_outside(
            "engines",
            &["engines", "domain", "providers", "config", "secret", "store"],
        );
        assert!(offenders.is_empty(), "the engines import these: {offenders:?}");
    }

    #[test]
    fn the_providers_import_only_settings_secrets_errors_and_the_domain() {
        let offenders = imports_outside("providers", &["providers", "config", "secret", "error", "domain"]);
        assert!(offenders.is_empty(), "the providers import these: {offenders:?}");
    }

    #[test]
    fn the_membership_rule_is_written_once_in_the_store() {
        // Joined here so that this file does not spell the rule itself.
        let rule = ["SELECT workspace_id FROM", "workspace_members WHERE user_id"].join(" ");
        let offenders: Vec<_> = all_sources()
            .into_iter()
            .filter(|(path, text)| path != Path::new("store/workspaces.rs") && text.contains(&rule))
            .map(|(path, _)| path)
            .collect();
        assert!(
            offenders.is_empty(),
            "these spell out member_of!, writer_of! or runner_of!: {offenders:?}"
        );
    }

    #[test]
    fn the_names_of_our_modules_are_read_from_paths_and_groups() {
        let text = "use crate::domain::record::Record;\n// crate::engines::ingest in a comment\n\
                    use crate::{config, store::Store};\nlet x = $crate::store::db!();";
        let named: Vec<String> = named_modules(text).into_iter().map(|(_, name)| name).collect();
        assert_eq!(named, ["domain", "config", "store", "store"]);
    }

    /// A file's text before its tests.
    fn before_tests(text: &str) -> &str {
        text.split("#[cfg(test)]").next().unwrap_or(text)
    }

    /// The store methods a text calls (`store.x(`, `.store\n.x(`), outside comments.
    fn store_calls(text: &str) -> Vec<String> {
        let code: String = before_tests(text)
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut calls = Vec::new();
        for (at, _) in code.match_indices("store") {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let rest = code[at + "store".len()..].trim_start();
            let Some(rest) = rest.strip_prefix('.') else { continue };
            let method: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let after = rest.trim_start()[method.len()..].trim_start();
            if !method.is_empty() && (after.starts_with('(') || after.starts_with("::")) {
                calls.push(method);
            }
        }
        calls
    }

    #[test]
    fn the_doors_reach_the_store_only_through_use_cases() {
        let offenders: Vec<String> = all_sources()
            .into_iter()
            .filter(|(path, _)| path.starts_with("doors"))
            .flat_map(|(path, text)| {
                let named = named_modules(before_tests(&text))
                    .into_iter()
                    .filter(|(_, name)| name == "store")
                    .map(|(line, _)| format!("{}:{line} crate::store", path.display()));
                let called = store_calls(&text)
                    .into_iter()
                    .map(|method| format!("{} store.{method}(", path.display()));
                named.chain(called).collect::<Vec<_>>()
            })
            .collect();
        assert!(
            offenders.is_empty(),
            "these doors use the store themselves: {offenders:?}"
        );
    }

    #[test]
    fn the_store_calls_of_a_text_are_found() {
        let text = "let a = services.store.get_report(x);\nlet b = app\n    .store\n    .list(y);\n\
                    // store.in_a_comment()\nlet c = f(&services.store, z);\nlet d = restore.go();";
        assert_eq!(store_calls(text), ["get_report", "list"]);
    }

    /// A type as written, without spaces or module paths (`axum::Form<x::Y>` is `Form<Y>`).
    fn bare(ty: &str) -> String {
        let ty: String = ty.chars().filter(|c| !c.is_whitespace()).collect();
        let (mut out, mut rest) = (String::new(), ty.as_str());
        while let Some(at) = rest.find("::") {
            out.push_str(rest[..at].trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_'));
            rest = &rest[at + 2..];
        }
        out + rest
    }

    /// The functions a text defines outside comments, each with its parameters' types
    /// (bare), split at the commas between them.
    fn signatures(text: &str) -> Vec<(String, Vec<String>)> {
        let code: String = text
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut found = Vec::new();
        for (at, _) in code.match_indices("fn ") {
            if code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                continue;
            }
            let rest = &code[at + "fn ".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let Some(open) = rest.find('(') else { continue };
            let (mut depth, mut params, mut param) = (0, Vec::new(), String::new());
            for c in rest[open + 1..].chars() {
                match c {
                    '(' | '<' | '[' => depth += 1,
                    ')' if depth == 0 => break,
                    ')' | '>' | ']' => depth -= 1,
                    ',' if depth == 0 => {
                        params.push(std::mem::take(&mut param));
                        continue;
                    }
                    _ => {}
                }
                param.push(c);
            }
            params.push(param);
            let types = params
                .iter()
                .filter_map(|param| {
                    // The pattern ends at the first single colon (`Path((a, b)): Path<..>`).
                    let colon = (0..param.len()).find(|&i| {
                        param[i..].starts_with(':') && !param[i + 1..].starts_with(':') && !param[..i].ends_with(':')
                    })?;
                    Some(bare(&param[colon + 1..]))
                })
                .collect();
            found.push((name, types));
        }
        found
    }

    #[test]
    fn the_signatures_of_a_text_are_read() {
        let text = "async fn create(\n    State(services): State<Services>,\n    Path((a, b)): Path<(Uuid, i64)>,\n    \
                    Change(visitor, form): Change<crate::x::Form>,\n) -> PageResult {\n// fn in_a_comment(x: Bytes)\n\
                    fn show(visitor: Option<Visitor>, body: axum::Form<HashMap<String, String>>) {}";
        assert_eq!(
            signatures(text),
            [
                (
                    "create".to_owned(),
                    vec![
                        "State<Services>".to_owned(),
                        "Path<(Uuid,i64)>".into(),
                        "Change<Form>".into()
                    ]
                ),
                (
                    "show".to_owned(),
                    vec!["Option<Visitor>".to_owned(), "Form<HashMap<String,String>>".into()]
                ),
            ]
        );
    }

    /// The console's handlers that take the visitor themselves: those may only look (the
    /// visitor of a form that changes something comes in a `Change`, which has checked
    /// its CSRF token and origin before reading it).
    fn console_handlers_taking_the_visitor() -> Vec<(PathBuf, String, Vec<String>, String)> {
        all_sources()
            .into_iter()
            .filter(|(path, _)| path.starts_with("doors/console"))
            .flat_map(|(path, text)| {
                signatures(&text)
                    .into_iter()
                    .filter(|(_, types)| types.iter().any(|ty| ty == "Visitor" || ty == "Option<Visitor>"))
                    .map(|(name, types)| (path.clone(), name, types, text.clone()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn a_console_handler_that_takes_the_visitor_reads_no_form_of_its_own() {
        // What reads a request's body (a `Query` or `Path` reads only its address; a whole
        // `Request` is taken by a page that reads its headers, and a POST route is caught
        // by the rule below whatever it takes).
        let body = |ty: &String| {
            ty.starts_with("Form<")
                || ty.starts_with("Json<")
                || ["Bytes", "String", "RawForm", "Multipart"].contains(&ty.as_str())
        };
        let offenders: Vec<String> = console_handlers_taking_the_visitor()
            .into_iter()
            .filter(|(_, _, types, _)| types.iter().any(body))
            .map(|(path, name, _, _)| format!("{} fn {name}", path.display()))
            .collect();
        assert!(
            offenders.is_empty(),
            "these take the visitor and read a body unchecked (take a session::Change instead): {offenders:?}"
        );
    }

    #[test]
    fn a_console_form_that_changes_something_is_checked_by_its_type() {
        // A POST route's handler must get its visitor from a `Change` (or `MaybeChange`).
        let offenders: Vec<String> = console_handlers_taking_the_visitor()
            .into_iter()
            .filter(|(_, name, _, text)| text.contains(&format!("post({name})")))
            .map(|(path, name, _, _)| format!("{} fn {name}", path.display()))
            .collect();
        assert!(
            offenders.is_empty(),
            "these answer a POST with a bare Visitor (take a session::Change instead): {offenders:?}"
        );
        let called: Vec<_> = all_sources()
            .into_iter()
            .filter(|(path, text)| {
                path.starts_with("doors/console")
                    && text
                        .lines()
                        .any(|line| !line.trim_start().starts_with("//") && line.contains("check_change("))
            })
            .map(|(path, _)| path)
            .collect();
        assert!(
            called.is_empty(),
            "these check a form's CSRF token by hand (take a session::Change instead): {called:?}"
        );
    }

    /// The public functions of a text, each with its parameters as written.
    fn public_functions(text: &str) -> Vec<(String, String)> {
        let code = before_tests(text);
        let mut found = Vec::new();
        for (at, _) in code.match_indices("pub ") {
            let rest = &code[at + "pub ".len()..];
            let Some(rest) = rest.strip_prefix("async fn ").or_else(|| rest.strip_prefix("fn ")) else {
                continue;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let Some(open) = rest.find('(') else { continue };
            let mut depth = 0;
            let params: String = rest[open + 1..]
                .chars()
                .take_while(|&c| {
                    match c {
                        '(' => depth += 1,
                        ')' if depth == 0 => return false,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    true
                })
                .collect();
            found.push((name, params.split_whitespace().collect::<Vec<_>>().join(" ")));
        }
        found
    }

    #[test]
    fn a_use_case_is_asked_by_a_caller_not_by_a_bare_id() {
        // Access (the rule `Caller::require` wraps), sign-in (before there is a caller) and
        // the quotas' arithmetic (below the use cases that check) take the person's id.
        let exempt = ["app/accounts/access.rs", "app/accounts/sign_in.rs", "app/quota.rs"];
        let offenders: Vec<String> = all_sources()
            .into_iter()
            .filter(|(path, _)| path.starts_with("app") && !exempt.iter().any(|e| path == Path::new(e)))
            .flat_map(|(path, text)| {
                public_functions(&text)
                    .into_iter()
                    .filter(|(_, params)| {
                        [
                            "user_id: Uuid",
                            "by: Uuid",
                            "owner_id: Uuid",
                            "actor: &Actor",
                            "actor: Actor",
                        ]
                        .iter()
                        .any(|bare| params.contains(bare))
                    })
                    .map(|(name, _)| format!("{} fn {name}", path.display()))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert!(
            offenders.is_empty(),
            "these use cases take a bare id or actor (take a &Caller instead): {offenders:?}"
        );
    }

    #[test]
    fn public_functions_are_read_with_their_parameters() {
        let text = "pub async fn list(store: &Store,\n    user_id: Uuid) -> R {}\nfn private(by: Uuid) {}\n\
                    pub fn f(x: Option<(u8, u8)>, y: u8) {}";
        assert_eq!(
            public_functions(text),
            [
                ("list".to_owned(), "store: &Store, user_id: Uuid".to_owned()),
                ("f".to_owned(), "x: Option<(u8, u8)>, y: u8".to_owned()),
            ]
        );
    }

    #[test]
    fn no_use_case_speaks_http() {
        let offenders: Vec<_> = all_sources()
            .into_iter()
            .filter(|(path, _)| path.starts_with("app"))
            .filter(|(_, text)| {
                let code = before_tests(text);
                code.contains("axum") || code.contains("StatusCode")
            })
            .map(|(path, _)| path)
            .collect();
        assert!(offenders.is_empty(), "these use cases speak HTTP: {offenders:?}");
    }
}
