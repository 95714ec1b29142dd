//! The web search provider chat answers may use (`use_web`).

use clap::Args;

use super::check::{checked, parse_http_url};

/// Web search adds web results to chat answers that ask for them (`use_web: true`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Web search", verbatim_doc_comment)]
pub struct SearchSettings {
    /// Web search for chat answers (`use_web`): `searxng`, `brave` or `tavily`; unset, no
    /// web search and `use_web` gets 503.
    #[arg(long, env = "INSIGHT_SEARCH_PROVIDER", value_parser = checked(parse_search_provider))]
    pub search_provider: Option<SearchProvider>,

    /// The search provider's base URL; the only address web search calls. Required for
    /// `searxng` (e.g. `http://127.0.0.1:8888`; without it the start stops); unset, the
    /// vendor's API for `brave` (https://api.search.brave.com) and `tavily`
    /// (https://api.tavily.com).
    #[arg(long, env = "INSIGHT_SEARCH_BASE_URL", value_parser = checked(parse_http_url))]
    pub search_base_url: Option<String>,

    /// The search provider's API key; required for Brave and Tavily (without it the start
    /// stops), unused by SearXNG. Never logged.
    #[arg(long, env = "INSIGHT_SEARCH_API_KEY", hide_env_values = true)]
    pub search_api_key: Option<String>,
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

fn parse_search_provider(value: &str) -> Result<SearchProvider, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "searxng" => Ok(SearchProvider::Searxng),
        "brave" => Ok(SearchProvider::Brave),
        "tavily" => Ok(SearchProvider::Tavily),
        _ => Err("must be searxng, brave or tavily".into()),
    }
}
