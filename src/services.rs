//! The house's services, built once at start from the settings: the store, the engines
//! and the providers every use case works with. The JSON API's state and the workers'
//! context are both made from one `Services`, so a door never builds a provider itself.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Context as _;

use crate::config::{self, Settings};
use crate::engines::ai::{self, Engine};
use crate::engines::ingest::stt::SpeechToText;
use crate::engines::search::indexer::Search;
use crate::providers::livekit::LiveKit;
use crate::providers::web_search::WebSearch;
use crate::secret::SecretKey;
use crate::store::Store;
use uuid::Uuid;

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
    /// The workspace search index (records, highlights, reports, insights).
    pub search: Arc<Search>,
    /// Chat answers in the making, per user.
    pub answers: Arc<InFlight>,
    /// The instance key interview links, callback tokens and webhook secrets come from.
    pub secret: Arc<SecretKey>,
    /// The LiveKit project for voice interviews, when one is configured.
    pub livekit: Option<LiveKit>,
    /// How many report creations may check what they name at once (see
    /// [`crate::app::reports::create`] and `report_intake_permits`).
    pub report_intake: Arc<tokio::sync::Semaphore>,
    /// How many imports this instance reads at once (`INSIGHT_IMPORT_CONCURRENCY`): each
    /// may hold up to its text budget in memory, so N at once must not cost N budgets.
    pub imports: Arc<tokio::sync::Semaphore>,
    /// Single sign-on, when an OpenID Connect provider is configured.
    pub sso: Option<Arc<crate::providers::oidc::Sso>>,
    /// Outgoing mail (invitations, password resets), when SMTP is configured.
    pub mailer: Option<Arc<crate::providers::mail::Mailer>>,
    /// Where recordings are kept: the data folder or a bucket.
    pub files: crate::providers::files::Files,
}

impl Services {
    /// Builds every service the settings name; fails with the setting to fix.
    pub async fn build(settings: Arc<Settings>, store: Store) -> anyhow::Result<Self> {
        settings.sso.check().map_err(anyhow::Error::msg)?;
        let sso = crate::providers::oidc::Sso::from_settings(&settings.sso, &settings.server.public_url)
            .map_err(anyhow::Error::msg)?
            .map(Arc::new);
        let mailer = crate::providers::mail::Mailer::from_settings(&settings.mail)?.map(Arc::new);
        let secret = Arc::new(SecretKey::load(
            settings.storage.secret_key.as_ref(),
            &settings.storage.data_dir,
        )?);
        let stt = SpeechToText::from_settings(&settings);
        let files = crate::providers::files::Files::open(&settings.storage)?;
        let engine = match settings.model.ai_kind().map_err(anyhow::Error::msg)? {
            config::AiKind::Offline => Engine::Offline,
            config::AiKind::OpenAi => Engine::OpenAi(
                ai::openai::OpenAiClient::new(ai::openai::OpenAiConfig {
                    base_url: settings.model.llm_base_url.clone().unwrap_or_default(),
                    api_key: settings.model.llm_api_key.clone().filter(|key| !key.is_empty()),
                    model: settings.model.llm_model.clone(),
                    context_tokens: settings.model.llm_context_tokens,
                    max_attempts: settings.model.llm_max_attempts,
                    retry_base: std::time::Duration::from_secs_f64(settings.jobs.job_retry_base_seconds.min(1.0)),
                    timeout: std::time::Duration::from_secs(settings.model.llm_timeout_seconds),
                    concurrency: settings.model.llm_concurrency,
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
            settings.interviews.livekit_url.as_deref(),
            settings.interviews.livekit_api_key.as_deref(),
            settings.interviews.livekit_api_secret.as_deref(),
        )
        .map_err(anyhow::Error::msg)?;
        let search_dir = settings
            .storage
            .search_dir
            .clone()
            .unwrap_or_else(|| settings.storage.data_dir.join("search"));
        let search = Search::open(store.clone(), &search_dir).with_context(|| {
            format!(
                "cannot open the search index in {} (INSIGHT_SEARCH_DIR)",
                search_dir.display()
            )
        })?;
        let imports = Arc::new(tokio::sync::Semaphore::new(
            settings
                .imports
                .import_concurrency
                .clamp(1, tokio::sync::Semaphore::MAX_PERMITS),
        ));
        Ok(Self {
            search,
            store,
            settings,
            engine,
            stt,
            web,
            answers: Arc::default(),
            secret,
            livekit,
            report_intake: Arc::new(tokio::sync::Semaphore::new(report_intake_permits(
                std::thread::available_parallelism().map_or(1, usize::from),
            ))),
            imports,
            sso,
            mailer,
            files,
        })
    }

    /// A turn to read an import: waits a few seconds for one, then answers 429 with
    /// `Retry-After` rather than holding the upload's connection open for long.
    pub async fn import_permit(&self) -> crate::error::Result<tokio::sync::OwnedSemaphorePermit> {
        let wait = std::time::Duration::from_secs(IMPORT_WAIT_SECONDS);
        match tokio::time::timeout(wait, Arc::clone(&self.imports).acquire_owned()).await {
            Ok(permit) => Ok(permit.map_err(anyhow::Error::from)?),
            Err(_) => Err(crate::error::Error::TooSoon {
                detail: format!(
                    "This Insight is reading {} import(s) already (INSIGHT_IMPORT_CONCURRENCY); send the file again shortly.",
                    self.settings.imports.import_concurrency
                ),
                retry_after: IMPORT_WAIT_SECONDS,
            }),
        }
    }
}

/// Answers a user may have in the making at once; more get 429. An answer goes on when
/// its client leaves, so without a limit a client could start any number of them.
pub const ANSWERS_PER_USER: usize = 4;

/// The answers in the making, per user.
#[derive(Debug, Default)]
pub struct InFlight(std::sync::Mutex<HashMap<Uuid, usize>>);

/// One answer's place among its user's answers in the making; freed when dropped.
#[derive(Debug)]
pub struct Slot {
    answers: std::sync::Arc<InFlight>,
    user: Uuid,
}

impl InFlight {
    /// A place for one more answer of `user`, unless he has [`ANSWERS_PER_USER`].
    pub fn take(answers: &std::sync::Arc<Self>, user: Uuid) -> Option<Slot> {
        let mut counts = answers.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = counts.entry(user).or_default();
        if *count >= ANSWERS_PER_USER {
            return None;
        }
        *count += 1;
        Some(Slot {
            answers: answers.clone(),
            user,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.answers.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(count) = counts.get_mut(&self.user) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                counts.remove(&self.user);
            }
        }
    }
}

/// How long an import waits for its turn before it is told to come back.
const IMPORT_WAIT_SECONDS: u64 = 5;

impl Services {
    /// Whether the service can serve: its database answers.
    pub async fn ready(&self) -> bool {
        self.store.ping().await
    }
}

/// How many report creations check what they name at once (`Services::report_intake`):
/// all cores but one, so that a burst of creations leaves a core to the work it queues
/// (the writer, the workers' claims and reads, the model calls' hand-offs); the
/// measurement is in `docs/benchmarks.md`.
fn report_intake_permits(cores: usize) -> usize {
    cores.saturating_sub(1).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_creations_leave_a_core_to_the_work_they_queue() {
        assert_eq!(report_intake_permits(1), 1);
        assert_eq!(report_intake_permits(2), 1);
        assert_eq!(report_intake_permits(8), 7);
    }

    #[test]
    fn a_user_has_a_few_answers_in_the_making_and_gets_places_back() {
        let answers = std::sync::Arc::new(InFlight::default());
        let (anna, ben) = (Uuid::new_v4(), Uuid::new_v4());
        let mut slots: Vec<Slot> = (0..ANSWERS_PER_USER)
            .map(|_| InFlight::take(&answers, anna).expect("a place"))
            .collect();
        assert!(InFlight::take(&answers, anna).is_none());
        assert!(InFlight::take(&answers, ben).is_some(), "another user is not held up");
        slots.pop();
        assert!(InFlight::take(&answers, anna).is_some());
        drop(slots);
        assert!(answers.0.lock().expect("lock").is_empty());
    }
}
