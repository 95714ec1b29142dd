//! The house's services, built once at start from the settings: the store, the engines
//! and the providers every use case works with. The JSON API's state and the workers'
//! context are both made from one `Services`, so a door never builds a provider itself.

use std::sync::Arc;

use anyhow::Context as _;

use crate::ai::{self, Engine};
use crate::config::{self, Settings};
use crate::conversation::InFlight;
use crate::ingest::stt::SpeechToText;
use crate::livekit::LiveKit;
use crate::search::Retriever;
use crate::search::web::WebSearch;
use crate::secret::SecretKey;
use crate::store::Store;

/// What the use cases reach. Cheap to clone (every part is a shared handle).
#[derive(Clone)]
pub struct Services {
    pub store: Store,
    pub settings: Arc<Settings>,
    /// The engine that writes reports, answers questions, writes personas and interviews.
    pub engine: Engine,
    /// The speech-to-text provider, when one is configured.
    pub stt: Option<SpeechToText>,
    /// The web search provider, when one is configured.
    pub web: Option<WebSearch>,
    /// Search over the projects' utterances.
    pub retriever: Arc<Retriever>,
    /// Chat answers in the making, per user.
    pub answers: Arc<InFlight>,
    /// The instance key interview links, callback tokens and webhook secrets come from.
    pub secret: Arc<SecretKey>,
    /// The LiveKit project for voice interviews, when one is configured.
    pub livekit: Option<LiveKit>,
}

impl Services {
    /// Builds every service the settings name; fails with the setting to fix.
    pub async fn build(settings: Arc<Settings>, store: Store) -> anyhow::Result<Self> {
        let secret = Arc::new(SecretKey::load(settings.secret_key.as_ref(), &settings.data_dir)?);
        let stt = SpeechToText::from_settings(&settings);
        let engine = match settings.ai_kind().map_err(anyhow::Error::msg)? {
            config::AiKind::Offline => Engine::Offline,
            config::AiKind::OpenAi => Engine::OpenAi(
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
        if matches!(engine, Engine::OpenAi(_)) {
            tokio::task::spawn_blocking(ai::openai::load_tokenizer)
                .await
                .context("loading the tokenizer failed")?;
        }
        let web = WebSearch::from_settings(&settings).map_err(anyhow::Error::msg)?;
        let livekit = LiveKit::from_settings(
            settings.livekit_url.as_deref(),
            settings.livekit_api_key.as_deref(),
            settings.livekit_api_secret.as_deref(),
        )
        .map_err(anyhow::Error::msg)?;
        Ok(Self {
            store,
            settings,
            engine,
            stt,
            web,
            retriever: Arc::default(),
            answers: Arc::default(),
            secret,
            livekit,
        })
    }

    /// Refuses a creation that would pass its quota (see [`crate::quota`]).
    pub async fn check_quota(&self, counted: crate::quota::Counted) -> crate::error::ApiResult<()> {
        crate::quota::check(&self.store, &self.settings.quotas, counted)
            .await?
            .map_err(crate::error::ApiError::from)
    }
}
