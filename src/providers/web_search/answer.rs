//! Reading a provider's answer: its results, or the error its status and message mean.

use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::Value;

use super::text::{clean_text, shorten};
use super::{MAX_MESSAGE_CHARS, WebSearch, WebSearchError};
use crate::config::SearchProvider;

impl WebSearch {
    /// The results in the provider's answer, as (url, title, snippet), best first.
    pub(super) fn parse(&self, body: &[u8]) -> Result<Vec<(String, String, String)>, WebSearchError> {
        let unexpected = |error: serde_json::Error| {
            WebSearchError(format!(
                "Web search failed: {}'s answer is not the JSON expected ({error}).",
                self.label()
            ))
        };
        let (items, snippet_field) = match self.inner.provider {
            SearchProvider::Searxng => {
                let answer: SearxngAnswer = serde_json::from_slice(body).map_err(unexpected)?;
                if answer.results.is_empty() && !answer.unresponsive_engines.is_empty() {
                    let engines = Value::Array(answer.unresponsive_engines);
                    tracing::warn!(
                        unresponsive_engines = %engines,
                        "SearXNG found nothing and some of its engines did not answer"
                    );
                }
                (answer.results, "content")
            }
            SearchProvider::Brave => {
                let answer: BraveAnswer = serde_json::from_slice(body).map_err(unexpected)?;
                (answer.web.map(|web| web.results).unwrap_or_default(), "description")
            }
            SearchProvider::Tavily => {
                let answer: TavilyAnswer = serde_json::from_slice(body).map_err(unexpected)?;
                (answer.results, "content")
            }
        };
        let text = |item: &Value, field: &str| item.get(field).and_then(Value::as_str).unwrap_or("").to_owned();
        Ok(items
            .iter()
            .map(|item| (text(item, "url"), text(item, "title"), text(item, snippet_field)))
            .collect())
    }

    pub(super) fn status_error(&self, status: StatusCode, body: &[u8]) -> WebSearchError {
        let label = self.label();
        let detail = provider_message(body);
        let searxng = self.inner.provider == SearchProvider::Searxng;
        let message = match status.as_u16() {
            403 if searxng => format!(
                "Web search failed: the SearXNG instance answered {status}, so it does not serve JSON: enable \
                 `json` under `search.formats` in SearXNG's settings.yml."
            ),
            429 if searxng => format!(
                "Web search failed: the SearXNG instance is rate limiting this service ({status}: {detail}); try \
                 again later, or turn off `server.limiter` in SearXNG's settings.yml."
            ),
            429 => format!(
                "Web search failed: {label} is rate limiting this service ({status}: {detail}); try again later."
            ),
            401 | 403 => format!(
                "Web search failed: {label} refused the API key ({status}: {detail}); check INSIGHT_SEARCH_API_KEY."
            ),
            300..=399 => format!(
                "Web search failed: {label} answered {status}, a redirect, which web search does not follow; \
                 check INSIGHT_SEARCH_BASE_URL."
            ),
            _ => format!("Web search failed: {label} answered {status}: {detail}"),
        };
        WebSearchError(self.redact(&message))
    }
}

/// SearXNG's `/search?format=json` answer (its other fields are not needed).
#[derive(Deserialize)]
struct SearxngAnswer {
    results: Vec<Value>,
    #[serde(default)]
    unresponsive_engines: Vec<Value>,
}

/// Brave's web search answer: `web` is missing when nothing was found.
#[derive(Deserialize)]
struct BraveAnswer {
    #[serde(default)]
    web: Option<BraveWeb>,
}

#[derive(Deserialize)]
struct BraveWeb {
    #[serde(default)]
    results: Vec<Value>,
}

/// Tavily's `/search` answer.
#[derive(Deserialize)]
struct TavilyAnswer {
    results: Vec<Value>,
}

/// The provider's own error message, else the start of the answer as text.
fn provider_message(body: &[u8]) -> String {
    let message = match serde_json::from_slice::<Value>(body) {
        Ok(value) => [
            "/error/detail",  // Brave
            "/detail/error",  // Tavily
            "/error/message", // OpenAI-like
            "/error",
            "/detail",
            "/message",
        ]
        .iter()
        .find_map(|pointer| value.pointer(pointer).and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| value.to_string()),
        Err(_) => clean_text(&String::from_utf8_lossy(body)),
    };
    let message = clean_text(&message);
    if message.is_empty() {
        "(no message)".to_owned()
    } else {
        shorten(&message, MAX_MESSAGE_CHARS)
    }
}
