//! The web search provider chat answers may use (`use_web`).

use clap::Args;

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Web search")]
pub struct SearchSettings {
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
