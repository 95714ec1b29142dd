//! Insight: a self-hostable service for customer research teams.
//!
//! `serve` runs everything in one process on one database: the API, the API document,
//! and (in later modules) the background workers and the respondent page.

pub mod ai;
pub mod config;
pub mod conversation;
pub mod domain;
pub mod error;
pub mod http;
pub mod ingest;
pub mod interview;
pub mod jobs;
pub mod livekit;
pub mod provider;
pub mod quota;
pub mod search;
pub mod secret;
pub mod store;
pub mod webhooks;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;

pub use config::Settings;
pub use http::{AppState, document};
pub use store::Store;

/// A running server: its address and the handle that stops it.
pub struct Server {
    pub addr: SocketAddr,
    pub store: Store,
    shutdown: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
    workers: jobs::Workers,
}

impl Server {
    /// Binds `settings.addr` and serves until `stop` (or forever).
    pub async fn start(settings: Settings, store: Store) -> anyhow::Result<Self> {
        let listener = http::serve::listen(settings.addr)
            .with_context(|| format!("cannot listen on {} (INSIGHT_ADDR)", settings.addr))?;
        let addr = listener.local_addr()?;
        std::fs::create_dir_all(&settings.data_dir).with_context(|| {
            format!(
                "cannot create the data folder {} (INSIGHT_DATA_DIR)",
                settings.data_dir.display()
            )
        })?;
        let settings = Arc::new(settings);
        {
            let (store, data_dir) = (store.clone(), settings.data_dir.clone());
            tokio::spawn(async move { jobs::sweep(&store, &data_dir).await });
        }
        let secret = Arc::new(secret::SecretKey::load(
            settings.secret_key.as_ref(),
            &settings.data_dir,
        )?);
        let stt = ingest::stt::SpeechToText::from_settings(&settings);
        let engine = match settings.ai_kind().map_err(anyhow::Error::msg)? {
            config::AiKind::Offline => ai::Engine::Offline,
            config::AiKind::OpenAi => ai::Engine::OpenAi(
                ai::openai::OpenAiClient::new(ai::openai::OpenAiConfig {
                    base_url: settings.llm_base_url.clone().unwrap_or_default(),
                    api_key: settings.llm_api_key.clone().filter(|key| !key.is_empty()),
                    model: settings.llm_model.clone(),
                    context_tokens: settings.llm_context_tokens,
                    max_attempts: settings.llm_max_attempts,
                    retry_base: std::time::Duration::from_secs_f64(settings.job_retry_base_seconds.min(1.0)),
                    timeout: std::time::Duration::from_secs(settings.llm_timeout_seconds),
                    concurrency: settings.llm_concurrency,
                })
                .map_err(|error| anyhow::anyhow!("cannot set up the model client: {error}"))?,
            ),
        };
        tracing::info!(engine = engine.name(), "AI engine");
        if matches!(engine, ai::Engine::OpenAi(_)) {
            tokio::task::spawn_blocking(ai::openai::load_tokenizer)
                .await
                .context("loading the tokenizer failed")?;
        }
        let web = search::web::WebSearch::from_settings(&settings).map_err(anyhow::Error::msg)?;
        let jobs_wake = Arc::new(jobs::Wake::default());
        let workers = jobs::Workers::start(
            jobs::Context {
                store: store.clone(),
                settings: settings.clone(),
                stt: stt.clone(),
                engine: engine.clone(),
                secret: secret.clone(),
            },
            jobs_wake.clone(),
        );
        let livekit = livekit::LiveKit::from_settings(
            settings.livekit_url.as_deref(),
            settings.livekit_api_key.as_deref(),
            settings.livekit_api_secret.as_deref(),
        )
        .map_err(anyhow::Error::msg)?;
        let public_rate = http::ratelimit::PublicRate::new(&settings);
        {
            // Ends with the server: it holds the limiter only while it clears it.
            let rate = Arc::downgrade(&public_rate);
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                    let Some(rate) = rate.upgrade() else { return };
                    rate.forget_idle();
                }
            });
        }
        let wire = http::serve::Wire {
            proxies: Arc::new(http::client::TrustedProxies::new(
                settings.trusted_proxies.0.clone(),
                settings.forwarded_header,
            )),
            body_window: std::time::Duration::from_secs(settings.request_body_timeout_seconds),
            body_min_rate: settings.request_body_min_bytes_per_second,
        };
        let state = AppState {
            store: store.clone(),
            settings,
            project_lists: Arc::default(),
            jobs_wake,
            stt,
            engine,
            retriever: Arc::default(),
            web,
            answers: Arc::default(),
            secret,
            public_rate: public_rate.clone(),
            livekit,
            report_intake: Arc::new(tokio::sync::Semaphore::new(report_intake_permits(
                std::thread::available_parallelism().map_or(1, usize::from),
            ))),
        };
        let app = http::app(state);
        let (shutdown, signal) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            http::serve::serve(listener, app, wire, async move {
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

/// How many report creations check what they name at once (`AppState::report_intake`):
/// all cores but one, so that a burst of creations leaves a core to the work it queues
/// (the writer, the workers' claims and reads, the model calls' hand-offs). In the
/// generation benchmark on two cores, one permit instead of two lowered the overhead per
/// model call in each of seven paired runs, by 0.05-0.21 ms.
fn report_intake_permits(cores: usize) -> usize {
    cores.saturating_sub(1).max(1)
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
mod tests {
    use super::report_intake_permits;

    #[test]
    fn report_creations_leave_a_core_to_the_work_they_queue() {
        assert_eq!(report_intake_permits(1), 1);
        assert_eq!(report_intake_permits(2), 1);
        assert_eq!(report_intake_permits(8), 7);
    }
}
