//! The AI engine: the offline one, or an OpenAI-compatible model server.

use clap::Args;

use super::check::{checked, parse_http_url, ranged};

/// Without a model, Insight runs its offline engine: extractive reports of verbatim
/// quotes, chat answers that quote the best passages, personas from the respondent's own
/// words, and an interviewer that asks the guide's questions in order. With a model, any
/// OpenAI-compatible Chat Completions server writes them.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Model", verbatim_doc_comment)]
pub struct ModelSettings {
    /// AI engine: `offline` (no model, extractive) or `openai` (any OpenAI-compatible server);
    /// unset, `openai` when INSIGHT_LLM_BASE_URL is set, else `offline`.
    ///
    /// `openai` needs `INSIGHT_LLM_BASE_URL`; without it the start stops.
    #[arg(long, env = "INSIGHT_AI", value_parser = checked(parse_ai))]
    pub ai: Option<AiKind>,

    /// Base URL of an OpenAI-compatible Chat Completions API, e.g. http://127.0.0.1:8080/v1;
    /// setting it turns the model engine on (see INSIGHT_AI).
    ///
    /// OpenAI `https://api.openai.com/v1`, Ollama `http://127.0.0.1:11434/v1`, vLLM,
    /// llama.cpp's server, OpenRouter, Azure OpenAI (its `/openai/v1` API).
    #[arg(long, env = "INSIGHT_LLM_BASE_URL", value_parser = checked(parse_http_url))]
    pub llm_base_url: Option<String>,

    /// Its API key, sent as a bearer token; servers that need none (Ollama, llama.cpp) leave
    /// it unset.
    #[arg(long, env = "INSIGHT_LLM_API_KEY", hide_env_values = true)]
    pub llm_api_key: Option<String>,

    /// Its model.
    #[arg(long, env = "INSIGHT_LLM_MODEL", default_value = "gpt-4o-mini")]
    pub llm_model: String,

    /// The model's context window in tokens; longer material is map-reduced over chunks that
    /// fit.
    #[arg(long, env = "INSIGHT_LLM_CONTEXT_TOKENS", default_value_t = 16_384, value_parser = ranged::<usize>(4096..=10_000_000))]
    pub llm_context_tokens: usize,

    /// Calls to the model at once, from this instance (reports, personas, chat, the
    /// assistant and the interviewer share them).
    ///
    /// Also sets the default of `INSIGHT_REPORT_WORKERS`.
    #[arg(long, env = "INSIGHT_LLM_CONCURRENCY", default_value_t = 4, value_parser = ranged::<usize>(1..=1024))]
    pub llm_concurrency: usize,

    /// Longest wait for one model call, in seconds.
    #[arg(long, env = "INSIGHT_LLM_TIMEOUT_SECONDS", default_value_t = 300, value_parser = ranged::<u64>(1..=86_400))]
    pub llm_timeout_seconds: u64,

    /// Attempts per model call (retries on 429, 5xx, timeouts, cut streams), before the
    /// job's own retries.
    ///
    /// A call is tried again on what may pass: connection errors, timeouts, 408, 409, 429
    /// (waiting as `Retry-After` asks), 5xx, a stream cut before its end, an answer that is
    /// not the JSON asked for. The wait between attempts grows from
    /// `INSIGHT_JOB_RETRY_BASE_SECONDS` (at most 1 s) with jitter. What will not pass (400,
    /// 401, 403, 404, 422) fails at once with the server's message.
    #[arg(long, env = "INSIGHT_LLM_MAX_ATTEMPTS", default_value_t = 3, value_parser = ranged::<u32>(1..=20))]
    pub llm_max_attempts: u32,

    /// Prices per model in currency units per million tokens, input/output, e.g.
    /// `gpt-4o-mini=0.15/0.60,my-local=0/0`; over the defaults for common hosted models,
    /// 0 for the others.
    ///
    /// The defaults cover gpt-4o, gpt-4o-mini, gpt-4.1, gpt-5, o3, o4-mini, Claude, Gemini
    /// and Mistral, at their providers' list prices in USD, matched by the longest name the
    /// model's starts with. Usage, the report estimate and the workspaces' monthly budgets
    /// count at these prices ([the API guide](api.md#cost)).
    #[arg(long, env = "INSIGHT_LLM_PRICES", default_value = "", value_parser = checked(parse_prices))]
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
        _ => Err("must be offline or openai".into()),
    }
}

fn parse_prices(value: &str) -> Result<crate::domain::usage::Prices, String> {
    // The domain's sentence names the item at fault; the value is shown whole after this.
    crate::domain::usage::Prices::parse(value).map_err(|_| {
        "must be comma-separated model=input/output prices (currency units per million tokens), \
         e.g. gpt-4o-mini=0.15/0.60"
            .into()
    })
}
