//! Settings: every `INSIGHT_*` variable in one struct, with its default and its check.
//!
//! Each setting is also a `serve` flag. A bad value stops the start with clap's message,
//! which names both the flag and the variable (see each `help`), so an operator knows
//! exactly what to fix.

use std::net::SocketAddr;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct Settings {
    /// Address to listen on [env: INSIGHT_ADDR].
    #[arg(long, env = "INSIGHT_ADDR", default_value = "127.0.0.1:8000", value_parser = parse_addr)]
    pub addr: SocketAddr,

    /// Database: `sqlite://PATH` (created if missing) or `postgres://...` [env: INSIGHT_DATABASE_URL].
    #[arg(long, env = "INSIGHT_DATABASE_URL", default_value = "sqlite://insight.db", value_parser = parse_database_url)]
    pub database_url: String,

    /// Largest accepted JSON request body in bytes; larger ones get 413 [env: INSIGHT_MAX_BODY_BYTES].
    #[arg(long, env = "INSIGHT_MAX_BODY_BYTES", default_value_t = 1_048_576, value_parser = parse_max_body_bytes)]
    pub max_body_bytes: u64,

    /// Most database connections this instance opens (PostgreSQL; SQLite readers, all opened at start) [env: INSIGHT_DB_MAX_CONNECTIONS].
    #[arg(long, env = "INSIGHT_DB_MAX_CONNECTIONS", default_value_t = 16, value_parser = parse_db_max_connections)]
    pub db_max_connections: u32,

    /// Public base URL of this service, for links it hands out (interview links) [env: INSIGHT_PUBLIC_URL].
    #[arg(long, env = "INSIGHT_PUBLIC_URL", default_value = "http://127.0.0.1:8000", value_parser = parse_public_url)]
    pub public_url: String,

    /// Log format: `text` or `json` [env: INSIGHT_LOG_FORMAT]. Levels come from RUST_LOG (default `info`).
    #[arg(long, env = "INSIGHT_LOG_FORMAT", default_value = "text", value_parser = parse_log_format)]
    pub log_format: LogFormat,

    /// Folder for uploaded recordings waiting for and after transcription; created if missing.
    /// Instances sharing a PostgreSQL database must share this folder [env: INSIGHT_DATA_DIR].
    #[arg(long, env = "INSIGHT_DATA_DIR", default_value = "insight-data")]
    pub data_dir: std::path::PathBuf,

    /// Largest accepted record upload (file or JSON text) in bytes; larger ones get 413 [env: INSIGHT_MAX_UPLOAD_BYTES].
    #[arg(long, env = "INSIGHT_MAX_UPLOAD_BYTES", default_value_t = 1_073_741_824, value_parser = parse_max_upload_bytes)]
    pub max_upload_bytes: u64,

    /// Most utterances one record may have; more get 422 [env: INSIGHT_MAX_UTTERANCES].
    #[arg(long, env = "INSIGHT_MAX_UTTERANCES", default_value_t = 50_000, value_parser = parse_max_utterances)]
    pub max_utterances: usize,

    /// Longest material one record may span, in minutes; longer gets 422 [env: INSIGHT_MAX_DURATION_MINUTES].
    #[arg(long, env = "INSIGHT_MAX_DURATION_MINUTES", default_value_t = 600, value_parser = parse_max_duration_minutes)]
    pub max_duration_minutes: u64,

    /// Speech-to-text provider: `openai` (any OpenAI-compatible `/audio/transcriptions`,
    /// answered while the upload's job waits), `assemblyai` (asynchronous: AssemblyAI calls
    /// back when a transcript is ready) or `deepgram` (calls back with the transcript when
    /// Insight's public URL is reachable, else answers at once) [env: INSIGHT_STT_PROVIDER].
    #[arg(long, env = "INSIGHT_STT_PROVIDER", default_value = "openai", value_parser = parse_stt_provider)]
    pub stt_provider: SttProvider,

    /// Speech-to-text: the provider's base URL (e.g. https://api.openai.com/v1). With
    /// `openai`, unset means no provider and audio and video uploads get 503; it defaults
    /// to https://api.assemblyai.com and https://api.deepgram.com for the others [env: INSIGHT_STT_BASE_URL].
    #[arg(long, env = "INSIGHT_STT_BASE_URL", value_parser = parse_stt_base_url)]
    pub stt_base_url: Option<String>,

    /// Speech-to-text API key (a bearer token for `openai`, the `authorization` header
    /// for `assemblyai`, `Token <key>` for `deepgram`) [env: INSIGHT_STT_API_KEY].
    #[arg(long, env = "INSIGHT_STT_API_KEY", hide_env_values = true)]
    pub stt_api_key: Option<String>,

    /// Speech-to-text model; unset, `whisper-1` for `openai`, `nova-3` for `deepgram` and the
    /// provider's default for `assemblyai` (a comma-separated list there is its
    /// `speech_models`) [env: INSIGHT_STT_MODEL].
    #[arg(long, env = "INSIGHT_STT_MODEL")]
    pub stt_model: Option<String>,

    /// Asynchronous speech-to-text: seconds between checks on a transcription that has not
    /// called back yet (the callback, when it comes, makes the check at once) [env: INSIGHT_STT_POLL_SECONDS].
    #[arg(long, env = "INSIGHT_STT_POLL_SECONDS", default_value_t = 30, value_parser = parse_stt_poll_seconds)]
    pub stt_poll_seconds: u64,

    /// Deepgram: seconds to wait for its callback before sending the recording again
    /// (Deepgram keeps no transcript to check on; each resend is an attempt) [env: INSIGHT_STT_CALLBACK_WAIT_SECONDS].
    #[arg(long, env = "INSIGHT_STT_CALLBACK_WAIT_SECONDS", default_value_t = 3_600, value_parser = parse_stt_callback_wait_seconds)]
    pub stt_callback_wait_seconds: u64,

    /// Attempts a background job gets before it fails for good [env: INSIGHT_JOB_MAX_ATTEMPTS].
    #[arg(long, env = "INSIGHT_JOB_MAX_ATTEMPTS", default_value_t = 5, value_parser = parse_job_max_attempts)]
    pub job_max_attempts: u32,

    /// Delay before a job's first retry, in seconds; each further retry doubles it, with
    /// jitter [env: INSIGHT_JOB_RETRY_BASE_SECONDS].
    #[arg(long, env = "INSIGHT_JOB_RETRY_BASE_SECONDS", default_value_t = 10.0, value_parser = parse_job_retry_base_seconds)]
    pub job_retry_base_seconds: f64,

    /// How long a worker holds a job without a heartbeat before another may take it over,
    /// in seconds [env: INSIGHT_JOB_LEASE_SECONDS].
    #[arg(long, env = "INSIGHT_JOB_LEASE_SECONDS", default_value_t = 60, value_parser = parse_job_lease_seconds)]
    pub job_lease_seconds: u64,

    /// Reports this instance works on at once, plus one persona writer; 0: neither. Unset,
    /// twice INSIGHT_LLM_CONCURRENCY with a model, so the model always has work while some
    /// workers read and write the database; 4 with the offline engine [env: INSIGHT_REPORT_WORKERS].
    #[arg(long, env = "INSIGHT_REPORT_WORKERS", value_parser = parse_report_workers)]
    pub report_workers: Option<usize>,

    /// AI engine: `offline` (no model, extractive) or `openai` (any OpenAI-compatible server);
    /// unset, `openai` when INSIGHT_LLM_BASE_URL is set, else `offline` [env: INSIGHT_AI].
    #[arg(long, env = "INSIGHT_AI", value_parser = parse_ai)]
    pub ai: Option<AiKind>,

    /// Base URL of an OpenAI-compatible Chat Completions API, e.g. http://127.0.0.1:8080/v1 [env: INSIGHT_LLM_BASE_URL].
    #[arg(long, env = "INSIGHT_LLM_BASE_URL", value_parser = parse_llm_base_url)]
    pub llm_base_url: Option<String>,

    /// Its API key, sent as a bearer token [env: INSIGHT_LLM_API_KEY].
    #[arg(long, env = "INSIGHT_LLM_API_KEY", hide_env_values = true)]
    pub llm_api_key: Option<String>,

    /// Its model [env: INSIGHT_LLM_MODEL].
    #[arg(long, env = "INSIGHT_LLM_MODEL", default_value = "gpt-4o-mini")]
    pub llm_model: String,

    /// The model's context window in tokens; longer material is map-reduced [env: INSIGHT_LLM_CONTEXT_TOKENS].
    #[arg(long, env = "INSIGHT_LLM_CONTEXT_TOKENS", default_value_t = 16_384, value_parser = parse_llm_context_tokens)]
    pub llm_context_tokens: usize,

    /// Calls to the model at once, from this instance [env: INSIGHT_LLM_CONCURRENCY].
    #[arg(long, env = "INSIGHT_LLM_CONCURRENCY", default_value_t = 4, value_parser = parse_llm_concurrency)]
    pub llm_concurrency: usize,

    /// Longest wait for one model call, in seconds [env: INSIGHT_LLM_TIMEOUT_SECONDS].
    #[arg(long, env = "INSIGHT_LLM_TIMEOUT_SECONDS", default_value_t = 300, value_parser = parse_llm_timeout_seconds)]
    pub llm_timeout_seconds: u64,

    /// Attempts per model call (retries on 429, 5xx, timeouts, cut streams), before the
    /// job's own retries [env: INSIGHT_LLM_MAX_ATTEMPTS].
    #[arg(long, env = "INSIGHT_LLM_MAX_ATTEMPTS", default_value_t = 3, value_parser = parse_llm_max_attempts)]
    pub llm_max_attempts: u32,

    /// Web search for chat answers (`use_web`): `searxng`, `brave` or `tavily`; unset, no
    /// web search and `use_web` gets 503 [env: INSIGHT_SEARCH_PROVIDER].
    #[arg(long, env = "INSIGHT_SEARCH_PROVIDER", value_parser = parse_search_provider)]
    pub search_provider: Option<SearchProvider>,

    /// The search provider's base URL; the only address web search calls. Required for
    /// `searxng`; defaults to the vendor's API for `brave` and `tavily` [env: INSIGHT_SEARCH_BASE_URL].
    #[arg(long, env = "INSIGHT_SEARCH_BASE_URL", value_parser = parse_search_base_url)]
    pub search_base_url: Option<String>,

    /// The search provider's API key (Brave, Tavily) [env: INSIGHT_SEARCH_API_KEY].
    #[arg(long, env = "INSIGHT_SEARCH_API_KEY", hide_env_values = true)]
    pub search_api_key: Option<String>,

    /// The instance's secret (32 or more characters), from which interview links are derived; when
    /// unset, a random key kept in INSIGHT_DATA_DIR/secret.key (made on first start) [env: INSIGHT_SECRET_KEY].
    #[arg(long, env = "INSIGHT_SECRET_KEY", hide_env_values = true, value_parser = parse_secret_key)]
    pub secret_key: Option<crate::secret::KeyMaterial>,

    /// Requests per minute one client address may make to the public interview endpoints and
    /// pages; more get 429 [env: INSIGHT_PUBLIC_RATE_PER_MINUTE].
    #[arg(long, env = "INSIGHT_PUBLIC_RATE_PER_MINUTE", default_value_t = 120, value_parser = parse_public_rate)]
    pub public_rate_per_minute: u32,

    /// Requests one client address may make at once before the per-minute rate applies
    /// [env: INSIGHT_PUBLIC_RATE_BURST].
    #[arg(long, env = "INSIGHT_PUBLIC_RATE_BURST", default_value_t = 30, value_parser = parse_public_rate_burst)]
    pub public_rate_burst: u32,

    /// Allow webhook endpoints on plain `http://` URLs (default: https only) [env: INSIGHT_WEBHOOKS_ALLOW_HTTP].
    #[arg(long, env = "INSIGHT_WEBHOOKS_ALLOW_HTTP", default_value_t = false, value_parser = parse_webhooks_allow_http, action = clap::ArgAction::Set)]
    pub webhooks_allow_http: bool,

    /// Allow webhook deliveries to loopback, private and link-local addresses (default: refused,
    /// checked on the address each delivery connects to) [env: INSIGHT_WEBHOOKS_ALLOW_PRIVATE].
    #[arg(long, env = "INSIGHT_WEBHOOKS_ALLOW_PRIVATE", default_value_t = false, value_parser = parse_webhooks_allow_private, action = clap::ArgAction::Set)]
    pub webhooks_allow_private: bool,

    /// Seconds between a failed webhook delivery and each retry, comma-separated; after the last
    /// the delivery fails and its endpoint is marked failing [env: INSIGHT_WEBHOOKS_RETRY_SCHEDULE].
    #[arg(long, env = "INSIGHT_WEBHOOKS_RETRY_SCHEDULE", default_value = "5,300,1800,7200,18000,36000,36000", value_parser = parse_retry_schedule)]
    pub webhooks_retry_schedule: RetrySchedule,

    /// Longest wait for a webhook receiver's answer, in seconds [env: INSIGHT_WEBHOOKS_TIMEOUT_SECONDS].
    #[arg(long, env = "INSIGHT_WEBHOOKS_TIMEOUT_SECONDS", default_value_t = 15, value_parser = parse_webhooks_timeout)]
    pub webhooks_timeout_seconds: u64,

    /// Webhook deliveries this instance sends at once [env: INSIGHT_WEBHOOKS_CONCURRENCY].
    #[arg(long, env = "INSIGHT_WEBHOOKS_CONCURRENCY", default_value_t = 32, value_parser = parse_webhooks_concurrency)]
    pub webhooks_concurrency: usize,

    /// LiveKit server for voice interviews, e.g. wss://example.livekit.cloud; with the API key and
    /// secret, the join answer carries a LiveKit access token [env: INSIGHT_LIVEKIT_URL].
    #[arg(long, env = "INSIGHT_LIVEKIT_URL", value_parser = parse_livekit_url)]
    pub livekit_url: Option<String>,

    /// LiveKit API key [env: INSIGHT_LIVEKIT_API_KEY].
    #[arg(long, env = "INSIGHT_LIVEKIT_API_KEY", hide_env_values = true)]
    pub livekit_api_key: Option<String>,

    /// LiveKit API secret: signs access tokens, verifies LiveKit's webhooks [env: INSIGHT_LIVEKIT_API_SECRET].
    #[arg(long, env = "INSIGHT_LIVEKIT_API_SECRET", hide_env_values = true)]
    pub livekit_api_secret: Option<String>,

    /// The interviewer agent's secret (16 or more characters), sent as X-Agent-Secret to
    /// agent-config and session-report; unset, those answer 503 [env: INSIGHT_AGENT_SECRET].
    #[arg(long, env = "INSIGHT_AGENT_SECRET", hide_env_values = true, value_parser = parse_agent_secret)]
    pub agent_secret: Option<crate::secret::KeyMaterial>,

    /// Reverse proxies whose forwarded client address is believed, as comma-separated
    /// addresses or CIDRs (e.g. 127.0.0.1,10.0.0.0/8); unset, forwarding headers are
    /// ignored and the client is the connection's peer [env: INSIGHT_TRUSTED_PROXIES].
    #[arg(long, env = "INSIGHT_TRUSTED_PROXIES", default_value = "", value_parser = parse_trusted_proxies)]
    pub trusted_proxies: TrustedNetworks,

    /// The header trusted proxies name the client in: `x-forwarded-for` or `forwarded`
    /// (RFC 7239) [env: INSIGHT_FORWARDED_HEADER].
    #[arg(long, env = "INSIGHT_FORWARDED_HEADER", default_value = "x-forwarded-for", value_parser = parse_forwarded_header)]
    pub forwarded_header: ForwardedHeader,

    /// A request body must bring INSIGHT_REQUEST_BODY_MIN_BYTES_PER_SECOND in every window
    /// of this many seconds, or it is cut with 408 [env: INSIGHT_REQUEST_BODY_TIMEOUT_SECONDS].
    #[arg(long, env = "INSIGHT_REQUEST_BODY_TIMEOUT_SECONDS", default_value_t = 30, value_parser = parse_body_timeout)]
    pub request_body_timeout_seconds: u64,

    /// The slowest pace a request body may arrive at, averaged over each window of
    /// INSIGHT_REQUEST_BODY_TIMEOUT_SECONDS [env: INSIGHT_REQUEST_BODY_MIN_BYTES_PER_SECOND].
    #[arg(long, env = "INSIGHT_REQUEST_BODY_MIN_BYTES_PER_SECOND", default_value_t = 1024, value_parser = parse_body_min_rate)]
    pub request_body_min_bytes_per_second: u64,

    #[command(flatten)]
    pub quotas: Quotas,
}

/// How much one user may pile up; past a limit, creating more gets 409 (or 429 for a
/// rate), with a sentence naming the limit.
#[derive(Debug, Clone, Args)]
pub struct Quotas {
    /// Projects one user may own [env: INSIGHT_QUOTA_PROJECTS].
    #[arg(long = "quota-projects", env = "INSIGHT_QUOTA_PROJECTS", default_value_t = 10_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_PROJECTS"))]
    pub projects: i64,

    /// Records one project may hold [env: INSIGHT_QUOTA_RECORDS_PER_PROJECT].
    #[arg(long = "quota-records-per-project", env = "INSIGHT_QUOTA_RECORDS_PER_PROJECT", default_value_t = 10_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_RECORDS_PER_PROJECT"))]
    pub records_per_project: i64,

    /// Reports one project may hold, deleted ones aside [env: INSIGHT_QUOTA_REPORTS_PER_PROJECT].
    #[arg(long = "quota-reports-per-project", env = "INSIGHT_QUOTA_REPORTS_PER_PROJECT", default_value_t = 1_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_REPORTS_PER_PROJECT"))]
    pub reports_per_project: i64,

    /// Interview rooms one user may create in any 24 hours; more get 429 [env: INSIGHT_QUOTA_ROOMS_PER_DAY].
    #[arg(long = "quota-rooms-per-day", env = "INSIGHT_QUOTA_ROOMS_PER_DAY", default_value_t = 1_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_ROOMS_PER_DAY"))]
    pub rooms_per_day: i64,

    /// Chat threads one user may have on one record [env: INSIGHT_QUOTA_THREADS_PER_RECORD].
    #[arg(long = "quota-threads-per-record", env = "INSIGHT_QUOTA_THREADS_PER_RECORD", default_value_t = 100, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_THREADS_PER_RECORD"))]
    pub threads_per_record: i64,

    /// Research assistant threads one user may have [env: INSIGHT_QUOTA_ASSISTANT_THREADS].
    #[arg(long = "quota-assistant-threads", env = "INSIGHT_QUOTA_ASSISTANT_THREADS", default_value_t = 1_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_ASSISTANT_THREADS"))]
    pub assistant_threads: i64,

    /// Messages one chat or assistant thread may hold (a question and its answer are two)
    /// [env: INSIGHT_QUOTA_MESSAGES_PER_THREAD].
    #[arg(long = "quota-messages-per-thread", env = "INSIGHT_QUOTA_MESSAGES_PER_THREAD", default_value_t = 1_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_MESSAGES_PER_THREAD"))]
    pub messages_per_thread: i64,

    /// Prompts one user may own [env: INSIGHT_QUOTA_PROMPTS].
    #[arg(long = "quota-prompts", env = "INSIGHT_QUOTA_PROMPTS", default_value_t = 1_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_PROMPTS"))]
    pub prompts: i64,

    /// Presets one user may own [env: INSIGHT_QUOTA_PRESETS].
    #[arg(long = "quota-presets", env = "INSIGHT_QUOTA_PRESETS", default_value_t = 1_000, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_PRESETS"))]
    pub presets: i64,

    /// Webhook endpoints one user may have [env: INSIGHT_QUOTA_WEBHOOK_ENDPOINTS].
    #[arg(long = "quota-webhook-endpoints", env = "INSIGHT_QUOTA_WEBHOOK_ENDPOINTS", default_value_t = 20, value_parser = |v: &str| parse_quota(v, "INSIGHT_QUOTA_WEBHOOK_ENDPOINTS"))]
    pub webhook_endpoints: i64,
}

impl Default for Quotas {
    fn default() -> Self {
        Self {
            projects: 10_000,
            records_per_project: 10_000,
            reports_per_project: 1_000,
            rooms_per_day: 1_000,
            threads_per_record: 100,
            assistant_threads: 1_000,
            messages_per_thread: 1_000,
            prompts: 1_000,
            presets: 1_000,
            webhook_endpoints: 20,
        }
    }
}

/// The networks of `INSIGHT_TRUSTED_PROXIES`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrustedNetworks(pub Vec<ip_network::IpNetwork>);

/// Which header a trusted proxy names the client in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardedHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2`, as nginx, HAProxy, Caddy and most
    /// balancers write it.
    XForwardedFor,
    /// RFC 7239 `Forwarded: for=client, for=proxy1`.
    Forwarded,
}

/// Delays between a failed delivery and its retries.
#[derive(Debug, Clone, PartialEq)]
pub struct RetrySchedule(pub Vec<std::time::Duration>);

/// Which AI engine writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AiKind {
    Offline,
    OpenAi,
}

/// Which speech-to-text protocol transcribes recordings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SttProvider {
    /// OpenAI-compatible `POST /audio/transcriptions`, answered in the request.
    OpenAi,
    /// AssemblyAI's `/v2/upload` and `/v2/transcript`, which calls back when done.
    AssemblyAi,
    /// Deepgram's `/v1/listen`, with a callback or answered in the request.
    Deepgram,
}

/// Which web search provider answers `use_web`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchProvider {
    /// A SearXNG instance (`/search?format=json`).
    Searxng,
    /// Brave Search API.
    Brave,
    /// Tavily Search API.
    Tavily,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// Report workers with the offline engine when `INSIGHT_REPORT_WORKERS` does not say.
const DEFAULT_OFFLINE_WORKERS: usize = 4;

impl Settings {
    /// Report workers of this instance: `INSIGHT_REPORT_WORKERS`; unset, twice the model's
    /// concurrency with a model (the model has work while some workers use the database),
    /// 4 with the offline engine (its work is this machine's CPU, and each copies its material).
    pub fn report_workers(&self) -> usize {
        self.report_workers.unwrap_or(match self.ai_kind() {
            Ok(AiKind::OpenAi) => 2 * self.llm_concurrency,
            _ => DEFAULT_OFFLINE_WORKERS,
        })
    }

    /// Settings for an instance that tests or embedders start on a given database.
    pub fn for_database(database_url: impl Into<String>) -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            database_url: database_url.into(),
            max_body_bytes: 1_048_576,
            db_max_connections: 16,
            public_url: "http://127.0.0.1:8000".into(),
            log_format: LogFormat::Text,
            data_dir: std::env::temp_dir().join(format!("insight-data-{}", uuid::Uuid::new_v4())),
            max_upload_bytes: 1_073_741_824,
            max_utterances: 50_000,
            max_duration_minutes: 600,
            stt_base_url: None,
            stt_api_key: None,
            stt_provider: SttProvider::OpenAi,
            stt_model: None,
            stt_poll_seconds: 30,
            stt_callback_wait_seconds: 3_600,
            job_max_attempts: 5,
            job_retry_base_seconds: 10.0,
            job_lease_seconds: 60,
            report_workers: None,
            ai: None,
            llm_base_url: None,
            llm_api_key: None,
            llm_model: "gpt-4o-mini".into(),
            llm_context_tokens: 16_384,
            llm_concurrency: 4,
            llm_timeout_seconds: 300,
            llm_max_attempts: 3,
            search_provider: None,
            search_base_url: None,
            search_api_key: None,
            secret_key: None,
            public_rate_per_minute: 120,
            public_rate_burst: 30,
            webhooks_allow_http: false,
            webhooks_allow_private: false,
            webhooks_retry_schedule: parse_retry_schedule("5,300,1800,7200,18000,36000,36000")
                .expect("the default schedule is valid"),
            webhooks_timeout_seconds: 15,
            webhooks_concurrency: 32,
            livekit_url: None,
            livekit_api_key: None,
            livekit_api_secret: None,
            agent_secret: None,
            trusted_proxies: TrustedNetworks::default(),
            forwarded_header: ForwardedHeader::XForwardedFor,
            request_body_timeout_seconds: 30,
            request_body_min_bytes_per_second: 1024,
            quotas: Quotas::default(),
        }
    }
}

fn parse_trusted_proxies(value: &str) -> Result<TrustedNetworks, String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| {
            let network = if part.contains('/') {
                part.parse::<ip_network::IpNetwork>().ok()
            } else {
                part.parse::<std::net::IpAddr>().ok().map(ip_network::IpNetwork::from)
            };
            network.ok_or_else(|| {
                format!(
                    "INSIGHT_TRUSTED_PROXIES (--trusted-proxies) must be comma-separated addresses or CIDRs such as \
                     127.0.0.1,10.0.0.0/8 (with no host bits set); {part:?} is not one"
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(TrustedNetworks)
}

fn parse_forwarded_header(value: &str) -> Result<ForwardedHeader, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "x-forwarded-for" => Ok(ForwardedHeader::XForwardedFor),
        "forwarded" => Ok(ForwardedHeader::Forwarded),
        _ => Err(format!(
            "INSIGHT_FORWARDED_HEADER (--forwarded-header) must be x-forwarded-for or forwarded, not {value:?}"
        )),
    }
}

fn parse_body_timeout(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_REQUEST_BODY_TIMEOUT_SECONDS",
        "--request-body-timeout-seconds",
        1..=3_600,
    )
}

fn parse_body_min_rate(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_REQUEST_BODY_MIN_BYTES_PER_SECOND",
        "--request-body-min-bytes-per-second",
        1..=1_073_741_824,
    )
}

fn parse_quota(value: &str, variable: &str) -> Result<i64, String> {
    let flag = format!(
        "--{}",
        variable
            .trim_start_matches("INSIGHT_")
            .to_ascii_lowercase()
            .replace('_', "-")
    );
    parse_number(value, variable, &flag, 1..=1_000_000_000)
}

fn parse_addr(value: &str) -> Result<SocketAddr, String> {
    value.parse().map_err(|_| {
        format!("INSIGHT_ADDR (--addr) must be HOST:PORT with an IP address, e.g. 127.0.0.1:8000, not {value:?}")
    })
}

pub fn parse_database_url(value: &str) -> Result<String, String> {
    if value.starts_with("sqlite:") || value.starts_with("postgres://") || value.starts_with("postgresql://") {
        Ok(value.to_owned())
    } else {
        Err("INSIGHT_DATABASE_URL (--database-url) must start with sqlite:// or postgres://".into())
    }
}

fn parse_public_url(value: &str) -> Result<String, String> {
    if value.starts_with("http://") || value.starts_with("https://") {
        Ok(value.trim_end_matches('/').to_owned())
    } else {
        Err(format!(
            "INSIGHT_PUBLIC_URL (--public-url) must be an http:// or https:// URL, not {value:?}"
        ))
    }
}

fn parse_secret_key(value: &str) -> Result<crate::secret::KeyMaterial, String> {
    if value.chars().count() >= 32 {
        Ok(crate::secret::KeyMaterial::new(value))
    } else {
        Err("INSIGHT_SECRET_KEY (--secret-key) must be at least 32 characters long".into())
    }
}

fn parse_livekit_url(value: &str) -> Result<String, String> {
    if ["ws://", "wss://", "http://", "https://"]
        .iter()
        .any(|scheme| value.starts_with(scheme))
    {
        Ok(value.trim_end_matches('/').to_owned())
    } else {
        Err(format!(
            "INSIGHT_LIVEKIT_URL (--livekit-url) must be a wss://, ws://, https:// or http:// URL, not {value:?}"
        ))
    }
}

fn parse_agent_secret(value: &str) -> Result<crate::secret::KeyMaterial, String> {
    if value.chars().count() >= 16 {
        Ok(crate::secret::KeyMaterial::new(value))
    } else {
        Err("INSIGHT_AGENT_SECRET (--agent-secret) must be at least 16 characters long".into())
    }
}

fn parse_flag(value: &str, variable: &str, flag: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" | "" => Ok(false),
        _ => Err(format!("{variable} ({flag}) must be true or false, not {value:?}")),
    }
}

fn parse_webhooks_allow_http(value: &str) -> Result<bool, String> {
    parse_flag(value, "INSIGHT_WEBHOOKS_ALLOW_HTTP", "--webhooks-allow-http")
}

fn parse_webhooks_allow_private(value: &str) -> Result<bool, String> {
    parse_flag(value, "INSIGHT_WEBHOOKS_ALLOW_PRIVATE", "--webhooks-allow-private")
}

fn parse_retry_schedule(value: &str) -> Result<RetrySchedule, String> {
    let bad = || {
        format!(
            "INSIGHT_WEBHOOKS_RETRY_SCHEDULE (--webhooks-retry-schedule) must be 1 to 20 comma-separated delays in \
             seconds, each from 0.01 to 86400, e.g. 5,300,1800; not {value:?}"
        )
    };
    let delays = value
        .split(',')
        .map(|part| {
            part.trim()
                .parse::<f64>()
                .ok()
                .filter(|seconds| (0.01..=86_400.0).contains(seconds))
                .map(std::time::Duration::from_secs_f64)
                .ok_or_else(bad)
        })
        .collect::<Result<Vec<_>, _>>()?;
    if delays.is_empty() || delays.len() > 20 {
        return Err(bad());
    }
    Ok(RetrySchedule(delays))
}

fn parse_webhooks_timeout(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_WEBHOOKS_TIMEOUT_SECONDS",
        "--webhooks-timeout-seconds",
        1..=300,
    )
}

fn parse_webhooks_concurrency(value: &str) -> Result<usize, String> {
    parse_number(
        value,
        "INSIGHT_WEBHOOKS_CONCURRENCY",
        "--webhooks-concurrency",
        1..=1024,
    )
}

fn parse_public_rate(value: &str) -> Result<u32, String> {
    parse_number(
        value,
        "INSIGHT_PUBLIC_RATE_PER_MINUTE",
        "--public-rate-per-minute",
        1..=1_000_000,
    )
}

fn parse_public_rate_burst(value: &str) -> Result<u32, String> {
    parse_number(value, "INSIGHT_PUBLIC_RATE_BURST", "--public-rate-burst", 1..=100_000)
}

/// A whole number within `range`, or a sentence naming the variable and the range.
fn parse_number<T>(value: &str, variable: &str, flag: &str, range: std::ops::RangeInclusive<T>) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    value
        .trim()
        .parse::<T>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| {
            format!(
                "{variable} ({flag}) must be a whole number from {} to {}, not {value:?}",
                range.start(),
                range.end()
            )
        })
}

fn parse_max_body_bytes(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_MAX_BODY_BYTES",
        "--max-body-bytes",
        1024..=1_073_741_824,
    )
}

fn parse_db_max_connections(value: &str) -> Result<u32, String> {
    parse_number(value, "INSIGHT_DB_MAX_CONNECTIONS", "--db-max-connections", 1..=1000)
}

fn parse_log_format(value: &str) -> Result<LogFormat, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "text" => Ok(LogFormat::Text),
        "json" => Ok(LogFormat::Json),
        _ => Err(format!(
            "INSIGHT_LOG_FORMAT (--log-format) must be text or json, not {value:?}"
        )),
    }
}

fn parse_max_upload_bytes(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_MAX_UPLOAD_BYTES",
        "--max-upload-bytes",
        1024..=1_099_511_627_776,
    )
}

fn parse_max_utterances(value: &str) -> Result<usize, String> {
    parse_number(value, "INSIGHT_MAX_UTTERANCES", "--max-utterances", 1..=10_000_000)
}

fn parse_max_duration_minutes(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_MAX_DURATION_MINUTES",
        "--max-duration-minutes",
        1..=100_000,
    )
}

fn parse_stt_base_url(value: &str) -> Result<String, String> {
    if value.starts_with("http://") || value.starts_with("https://") {
        Ok(value.trim_end_matches('/').to_owned())
    } else {
        Err(format!(
            "INSIGHT_STT_BASE_URL (--stt-base-url) must be an http:// or https:// URL, not {value:?}"
        ))
    }
}

fn parse_stt_provider(value: &str) -> Result<SttProvider, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "openai" => Ok(SttProvider::OpenAi),
        "assemblyai" => Ok(SttProvider::AssemblyAi),
        "deepgram" => Ok(SttProvider::Deepgram),
        _ => Err(format!(
            "INSIGHT_STT_PROVIDER (--stt-provider) must be openai, assemblyai or deepgram, not {value:?}"
        )),
    }
}

fn parse_stt_poll_seconds(value: &str) -> Result<u64, String> {
    parse_number(value, "INSIGHT_STT_POLL_SECONDS", "--stt-poll-seconds", 1..=3_600)
}

fn parse_stt_callback_wait_seconds(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_STT_CALLBACK_WAIT_SECONDS",
        "--stt-callback-wait-seconds",
        1..=86_400,
    )
}

fn parse_job_max_attempts(value: &str) -> Result<u32, String> {
    parse_number(value, "INSIGHT_JOB_MAX_ATTEMPTS", "--job-max-attempts", 1..=100)
}

fn parse_job_retry_base_seconds(value: &str) -> Result<f64, String> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|seconds| (0.0..=86_400.0).contains(seconds))
        .ok_or_else(|| {
            format!("INSIGHT_JOB_RETRY_BASE_SECONDS (--job-retry-base-seconds) must be a number of seconds from 0 to 86400, not {value:?}")
        })
}

fn parse_job_lease_seconds(value: &str) -> Result<u64, String> {
    parse_number(value, "INSIGHT_JOB_LEASE_SECONDS", "--job-lease-seconds", 1..=86_400)
}

fn parse_report_workers(value: &str) -> Result<usize, String> {
    parse_number(value, "INSIGHT_REPORT_WORKERS", "--report-workers", 0..=256)
}

fn parse_ai(value: &str) -> Result<AiKind, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "offline" => Ok(AiKind::Offline),
        "openai" => Ok(AiKind::OpenAi),
        _ => Err(format!("INSIGHT_AI (--ai) must be offline or openai, not {value:?}")),
    }
}

fn parse_llm_base_url(value: &str) -> Result<String, String> {
    if value.starts_with("http://") || value.starts_with("https://") {
        Ok(value.trim_end_matches('/').to_owned())
    } else {
        Err(format!(
            "INSIGHT_LLM_BASE_URL (--llm-base-url) must be an http:// or https:// URL, not {value:?}"
        ))
    }
}

fn parse_llm_context_tokens(value: &str) -> Result<usize, String> {
    parse_number(
        value,
        "INSIGHT_LLM_CONTEXT_TOKENS",
        "--llm-context-tokens",
        4096..=10_000_000,
    )
}

fn parse_llm_concurrency(value: &str) -> Result<usize, String> {
    parse_number(value, "INSIGHT_LLM_CONCURRENCY", "--llm-concurrency", 1..=1024)
}

fn parse_llm_timeout_seconds(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_LLM_TIMEOUT_SECONDS",
        "--llm-timeout-seconds",
        1..=86_400,
    )
}

fn parse_search_provider(value: &str) -> Result<SearchProvider, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "searxng" => Ok(SearchProvider::Searxng),
        "brave" => Ok(SearchProvider::Brave),
        "tavily" => Ok(SearchProvider::Tavily),
        _ => Err(format!(
            "INSIGHT_SEARCH_PROVIDER (--search-provider) must be searxng, brave or tavily, not {value:?}"
        )),
    }
}

fn parse_search_base_url(value: &str) -> Result<String, String> {
    if value.starts_with("http://") || value.starts_with("https://") {
        Ok(value.trim_end_matches('/').to_owned())
    } else {
        Err(format!(
            "INSIGHT_SEARCH_BASE_URL (--search-base-url) must be an http:// or https:// URL, not {value:?}"
        ))
    }
}

fn parse_llm_max_attempts(value: &str) -> Result<u32, String> {
    parse_number(value, "INSIGHT_LLM_MAX_ATTEMPTS", "--llm-max-attempts", 1..=20)
}

impl Settings {
    /// The engine the settings choose: `INSIGHT_AI`, else `openai` when a model server is
    /// configured, else `offline`. `openai` without a base URL is a mistake to report.
    pub fn ai_kind(&self) -> Result<AiKind, String> {
        match (self.ai, &self.llm_base_url) {
            (Some(AiKind::OpenAi), None) => {
                Err("INSIGHT_AI=openai needs INSIGHT_LLM_BASE_URL (an OpenAI-compatible API, e.g. http://127.0.0.1:8080/v1)".into())
            }
            (Some(kind), _) => Ok(kind),
            (None, Some(_)) => Ok(AiKind::OpenAi),
            (None, None) => Ok(AiKind::Offline),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_workers_default_to_twice_the_model_concurrency_or_four_offline() {
        let mut settings = Settings::for_database("sqlite://unused.db");
        settings.llm_concurrency = 16;
        assert_eq!(settings.report_workers(), 4, "offline");
        settings.llm_base_url = Some("http://127.0.0.1:8080/v1".into());
        assert_eq!(settings.report_workers(), 32, "with a model");
        settings.report_workers = Some(0);
        assert_eq!(settings.report_workers(), 0, "as set");
    }
}
