//! The AI engine: the offline one, or an OpenAI-compatible model server.

use clap::Args;

use super::*;

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Model")]
pub struct ModelSettings {
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

    /// Prices per model in currency units per million tokens, input/output, e.g.
    /// `gpt-4o-mini=0.15/0.60,my-local=0/0`; over the defaults for common hosted models,
    /// 0 for the others [env: INSIGHT_LLM_PRICES].
    #[arg(long, env = "INSIGHT_LLM_PRICES", default_value = "", value_parser = crate::domain::usage::Prices::parse)]
    pub llm_prices: crate::domain::usage::Prices,
}

impl ModelSettings {
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

/// Which AI engine writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AiKind {
    Offline,
    OpenAi,
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

fn parse_llm_max_attempts(value: &str) -> Result<u32, String> {
    parse_number(value, "INSIGHT_LLM_MAX_ATTEMPTS", "--llm-max-attempts", 1..=20)
}
