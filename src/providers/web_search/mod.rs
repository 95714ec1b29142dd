//! Web search for chat answers (`use_web`): one seam over three providers, a SearXNG
//! instance, the Brave Search API or the Tavily API, chosen by INSIGHT_SEARCH_PROVIDER.
//!
//! The service only ever calls the configured base URL: redirects are not followed and
//! result pages are never fetched. A chat answer gets each result's URL, title and
//! snippet, cleaned of HTML tags and entities, deduplicated by URL, best first.
//!
//! Every failure is a [`WebSearchError`]: a full sentence naming the provider, with the
//! provider's own short message and never the API key (the API turns it into a 503).

mod answer;
mod text;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::Url;
use reqwest::header::{self, HeaderName, HeaderValue};
use serde_json::json;

use self::text::{clean_results, shorten_query};
use crate::config::{SearchProvider, Settings};

/// Longest wait for one search, connection and answer together.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

/// Brave Search API, when INSIGHT_SEARCH_BASE_URL is unset.
const BRAVE_BASE_URL: &str = "https://api.search.brave.com";

/// Tavily API, when INSIGHT_SEARCH_BASE_URL is unset.
const TAVILY_BASE_URL: &str = "https://api.tavily.com";

/// Most results one search returns (Brave's and Tavily's own maximum).
const MAX_RESULTS: usize = 20;

/// How long a provider's error message may be in a [`WebSearchError`].
const MAX_MESSAGE_CHARS: usize = 300;

/// Largest answer read from a provider.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// One web result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebResult {
    pub url: String,
    pub title: String,
    pub snippet: String,
}

/// Why web search could not answer (the API turns it into 503 with this sentence).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSearchError(pub String);

impl fmt::Display for WebSearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WebSearchError {}

/// The configured web search provider; clones share one HTTP client.
#[derive(Clone)]
pub struct WebSearch {
    inner: Arc<Inner>,
}

struct Inner {
    provider: SearchProvider,
    /// The provider's search endpoint, under the configured base URL.
    endpoint: Url,
    /// The endpoint without any user or password, for `Debug`.
    shown_endpoint: String,
    /// The header that carries the key (Brave's `X-Subscription-Token`, Tavily's
    /// `Authorization`), marked sensitive.
    auth: Option<(HeaderName, HeaderValue)>,
    /// The key itself, only to take it out of provider messages.
    api_key: Option<String>,
    http: reqwest::Client,
    timeout: Duration,
}

impl fmt::Debug for WebSearch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSearch")
            .field("provider", &self.provider_name())
            .field("endpoint", &self.inner.shown_endpoint)
            .field("api_key", &self.inner.api_key.as_ref().map(|_| "[redacted]"))
            .field("timeout", &self.inner.timeout)
            .finish()
    }
}

impl WebSearch {
    /// The configured provider; Ok(None) when none is configured; Err(sentence naming the setting) when
    /// it is configured wrongly (searxng without INSIGHT_SEARCH_BASE_URL; brave or tavily without INSIGHT_SEARCH_API_KEY).
    pub fn from_settings(settings: &Settings) -> Result<Option<Self>, String> {
        let Some(provider) = settings.search.search_provider else {
            return Ok(None);
        };
        Self::new(
            provider,
            settings.search.search_base_url.clone(),
            settings.search.search_api_key.clone(),
            DEFAULT_TIMEOUT,
        )
        .map(Some)
    }

    /// For tests and embedders.
    pub fn new(
        provider: SearchProvider,
        base_url: Option<String>,
        api_key: Option<String>,
        timeout: Duration,
    ) -> Result<Self, String> {
        let name = name(provider);
        let label = label(provider);
        let base_url = base_url
            .map(|url| url.trim().trim_end_matches('/').to_owned())
            .filter(|url| !url.is_empty());
        let api_key = api_key.map(|key| key.trim().to_owned()).filter(|key| !key.is_empty());
        let (base, path): (String, &[&str]) = match provider {
            SearchProvider::Searxng => (
                base_url.ok_or_else(|| {
                    "INSIGHT_SEARCH_PROVIDER is searxng but INSIGHT_SEARCH_BASE_URL is not set: set it to the \
                     SearXNG instance's URL, e.g. http://127.0.0.1:8888."
                        .to_owned()
                })?,
                &["search"],
            ),
            SearchProvider::Brave => (
                base_url.unwrap_or_else(|| BRAVE_BASE_URL.to_owned()),
                &["res", "v1", "web", "search"],
            ),
            SearchProvider::Tavily => (base_url.unwrap_or_else(|| TAVILY_BASE_URL.to_owned()), &["search"]),
        };
        let auth = match provider {
            SearchProvider::Searxng => None,
            SearchProvider::Brave | SearchProvider::Tavily => {
                let key = api_key.as_deref().ok_or_else(|| {
                    format!(
                        "INSIGHT_SEARCH_PROVIDER is {name} but INSIGHT_SEARCH_API_KEY is not set: set it to your \
                         {label} API key."
                    )
                })?;
                let (header_name, value) = if provider == SearchProvider::Brave {
                    (HeaderName::from_static("x-subscription-token"), key.to_owned())
                } else {
                    (header::AUTHORIZATION, format!("Bearer {key}"))
                };
                let mut value = HeaderValue::from_str(&value).map_err(|_| {
                    "INSIGHT_SEARCH_API_KEY holds characters that cannot be sent in an HTTP header.".to_owned()
                })?;
                value.set_sensitive(true);
                Some((header_name, value))
            }
        };
        let mut endpoint =
            Url::parse(&base).map_err(|error| format!("INSIGHT_SEARCH_BASE_URL is not a valid URL ({error})."))?;
        if !matches!(endpoint.scheme(), "http" | "https") {
            return Err("INSIGHT_SEARCH_BASE_URL must be an http:// or https:// URL.".to_owned());
        }
        endpoint.set_fragment(None);
        endpoint
            .path_segments_mut()
            .map_err(|()| "INSIGHT_SEARCH_BASE_URL cannot have a path.".to_owned())?
            .pop_if_empty()
            .extend(path);
        let mut shown = endpoint.clone();
        // Neither fails on an http(s) URL with a host.
        let _ = shown.set_password(None);
        let _ = shown.set_username("");
        if timeout.is_zero() {
            return Err("The web search timeout must be longer than zero.".to_owned());
        }
        let http = reqwest::Client::builder()
            // The configured base URL is the only address web search calls.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .timeout(timeout)
            .user_agent(concat!("insight/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| format!("Could not set up the HTTP client for web search ({error})."))?;
        Ok(Self {
            inner: Arc::new(Inner {
                provider,
                endpoint,
                shown_endpoint: shown.to_string(),
                auth,
                api_key: api_key.filter(|_| provider != SearchProvider::Searxng),
                http,
                timeout,
            }),
        })
    }

    /// `searxng`, `brave` or `tavily`.
    pub fn provider_name(&self) -> &'static str {
        name(self.inner.provider)
    }

    /// Up to `limit` results for `query`, best first (deduplicated by URL, empty titles replaced by the URL's host, snippets trimmed to ~500 chars, HTML tags such as <strong> stripped and entities like &amp; &#39; decoded).
    ///
    /// The query is trimmed (and cut to 50 words and 400 characters); an empty one
    /// finds nothing without a call. `limit` is taken as 1 to 20.
    pub async fn search(&self, query: &str, limit: usize) -> Result<Vec<WebResult>, WebSearchError> {
        let query = shorten_query(query);
        if query.is_empty() {
            return Ok(Vec::new());
        }
        let limit = limit.clamp(1, MAX_RESULTS);
        let started = Instant::now();
        let outcome = self.run(&query, limit).await;
        match &outcome {
            Ok(results) => tracing::debug!(
                provider = self.provider_name(),
                results = results.len(),
                elapsed_ms = started.elapsed().as_millis() as u64,
                "web search"
            ),
            Err(error) => tracing::warn!(
                provider = self.provider_name(),
                elapsed_ms = started.elapsed().as_millis() as u64,
                error = %error,
                "web search failed"
            ),
        }
        outcome
    }

    async fn run(&self, query: &str, limit: usize) -> Result<Vec<WebResult>, WebSearchError> {
        let inner = &*self.inner;
        let mut request = match inner.provider {
            SearchProvider::Searxng => inner
                .http
                .get(inner.endpoint.clone())
                .query(&[("q", query), ("format", "json")]),
            SearchProvider::Brave => inner
                .http
                .get(inner.endpoint.clone())
                .query(&[("q", query), ("count", &limit.to_string())]),
            SearchProvider::Tavily => inner.http.post(inner.endpoint.clone()).json(&json!({
                "query": query,
                "max_results": limit,
                "search_depth": "basic",
            })),
        };
        request = request.header(header::ACCEPT, "application/json");
        if let Some((name, value)) = &inner.auth {
            request = request.header(name.clone(), value.clone());
        }
        let response = request.send().await.map_err(|error| self.transport_error(&error))?;
        let status = response.status();
        if !status.is_success() {
            let body = self.read_body(response).await.unwrap_or_default();
            return Err(self.status_error(status, &body));
        }
        let body = self.read_body(response).await?;
        let items = self.parse(&body)?;
        Ok(clean_results(items, limit))
    }

    /// The answer's body, up to [`MAX_BODY_BYTES`].
    async fn read_body(&self, mut response: reqwest::Response) -> Result<Vec<u8>, WebSearchError> {
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|error| self.transport_error(&error))? {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(WebSearchError(format!(
                    "Web search failed: {}'s answer is larger than {} MiB.",
                    self.label(),
                    MAX_BODY_BYTES / (1024 * 1024)
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    fn transport_error(&self, error: &reqwest::Error) -> WebSearchError {
        let label = self.label();
        let message = if error.is_timeout() {
            format!(
                "Web search timed out: {label} did not answer within {:?}.",
                self.inner.timeout
            )
        } else if error.is_connect() {
            format!(
                "Web search failed: could not connect to {label} ({}); check that it is up and that \
                 INSIGHT_SEARCH_BASE_URL is right.",
                error_chain(error)
            )
        } else {
            format!(
                "Web search failed: the call to {label} broke off ({}).",
                error_chain(error)
            )
        };
        WebSearchError(self.redact(&message))
    }

    /// The message without the API key in it.
    fn redact(&self, message: &str) -> String {
        crate::providers::client::redact(message, self.inner.api_key.as_deref())
    }

    fn label(&self) -> &'static str {
        label(self.inner.provider)
    }
}

fn name(provider: SearchProvider) -> &'static str {
    match provider {
        SearchProvider::Searxng => "searxng",
        SearchProvider::Brave => "brave",
        SearchProvider::Tavily => "tavily",
    }
}

/// The provider as a sentence names it.
fn label(provider: SearchProvider) -> &'static str {
    match provider {
        SearchProvider::Searxng => "the SearXNG instance",
        SearchProvider::Brave => "Brave Search",
        SearchProvider::Tavily => "Tavily",
    }
}

/// An HTTP error's causes, without the URL (it holds the query).
fn error_chain(error: &reqwest::Error) -> String {
    crate::providers::client::error_chain(error).unwrap_or_else(|| "the request failed".to_owned())
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use axum::Router;
    use axum::extract::{Request, State};
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::{IntoResponse, Response};
    use serde_json::Value;

    use super::*;

    const KEY: &str = "sk-test-secret-4242";

    /// A request a stub received.
    #[derive(Debug, Clone)]
    struct Hit {
        method: String,
        path: String,
        query: Vec<(String, String)>,
        headers: HeaderMap,
        body: Value,
    }

    impl Hit {
        fn param(&self, name: &str) -> Option<&str> {
            self.query
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.as_str())
        }

        fn header(&self, name: &str) -> Option<&str> {
            self.headers.get(name).and_then(|value| value.to_str().ok())
        }
    }

    /// How a stub answers.
    enum Reply {
        Json(u16, Value),
        Text(u16, &'static str),
        Redirect(String),
        Slow(Duration, Value),
    }

    type Responder = dyn Fn(&Hit) -> Reply + Send + Sync;

    #[derive(Clone)]
    struct Shared {
        hits: Arc<Mutex<Vec<Hit>>>,
        responder: Arc<Responder>,
    }

    /// A running stub provider; it stops with the test's runtime.
    struct Stub {
        base_url: String,
        hits: Arc<Mutex<Vec<Hit>>>,
    }

    impl Stub {
        async fn start(responder: impl Fn(&Hit) -> Reply + Send + Sync + 'static) -> Self {
            let shared = Shared {
                hits: Arc::default(),
                responder: Arc::new(responder),
            };
            let app = Router::new().fallback(handle).with_state(shared.clone());
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind the stub");
            let address = listener.local_addr().expect("the stub's address");
            tokio::spawn(async move { axum::serve(listener, app).await });
            Self {
                base_url: format!("http://{address}"),
                hits: shared.hits,
            }
        }

        fn hits(&self) -> Vec<Hit> {
            self.hits.lock().expect("hits").clone()
        }

        fn only_hit(&self) -> Hit {
            let hits = self.hits();
            assert_eq!(hits.len(), 1, "one request: {hits:?}");
            hits.into_iter().next().expect("one hit")
        }
    }

    async fn handle(State(shared): State<Shared>, request: Request) -> Response {
        let (parts, body) = request.into_parts();
        let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap_or_default();
        let url = Url::parse(&format!("http://stub{}", parts.uri)).expect("the request's URI");
        let hit = Hit {
            method: parts.method.to_string(),
            path: url.path().to_owned(),
            query: url
                .query_pairs()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
            headers: parts.headers,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        };
        shared.hits.lock().expect("hits").push(hit.clone());
        let status = |code: u16| StatusCode::from_u16(code).expect("a status");
        match (shared.responder)(&hit) {
            Reply::Json(code, body) => (status(code), axum::Json(body)).into_response(),
            Reply::Text(code, body) => (status(code), [(header::CONTENT_TYPE, "text/html")], body).into_response(),
            Reply::Redirect(to) => (StatusCode::FOUND, [(header::LOCATION, to)]).into_response(),
            Reply::Slow(delay, body) => {
                tokio::time::sleep(delay).await;
                axum::Json(body).into_response()
            }
        }
    }

    fn client(provider: SearchProvider, stub: &Stub) -> WebSearch {
        WebSearch::new(
            provider,
            Some(stub.base_url.clone()),
            Some(KEY.to_owned()),
            Duration::from_secs(5),
        )
        .expect("a web search client")
    }

    fn searxng_answer(results: Value) -> Value {
        json!({
            "query": "q",
            "number_of_results": 0,
            "results": results,
            "answers": [],
            "corrections": [],
            "infoboxes": [],
            "suggestions": [],
            "unresponsive_engines": []
        })
    }

    fn brave_answer(results: Value) -> Value {
        json!({
            "type": "search",
            "query": {"original": "q"},
            "web": {"type": "search", "results": results, "family_friendly": true}
        })
    }

    fn tavily_answer(results: Value) -> Value {
        json!({"query": "q", "answer": null, "images": [], "results": results, "response_time": 0.42})
    }

    #[tokio::test]
    async fn searxng_sends_the_query_as_json_search_and_cleans_the_results() {
        let stub = Stub::start(|_| {
            Reply::Json(
                200,
                searxng_answer(json!([
                    {"url": "https://example.com/a", "title": "Tom &amp; Jerry&#39;s <b>page</b>",
                     "content": "It&#x27;s <strong>fast</strong>&nbsp;&amp; cheap", "engine": "duckduckgo",
                     "score": 3.0, "category": "general"},
                    {"url": "https://example.com/a/", "title": "The same page again", "content": "dup"},
                    {"url": "https://www.rust-lang.org/learn", "title": "  ", "content": "Learn Rust"},
                    {"url": "javascript:alert(1)", "title": "Not a page", "content": "x"},
                    {"title": "No URL", "content": "x"},
                    {"url": "https://example.org/c", "title": "Third", "content": "c"},
                    {"url": "https://example.org/d", "title": "Fourth", "content": "d"}
                ])),
            )
        })
        .await;
        let search = client(SearchProvider::Searxng, &stub);
        let results = search.search("  customer churn & pricing  ", 3).await.expect("results");
        assert_eq!(
            results,
            vec![
                WebResult {
                    url: "https://example.com/a".into(),
                    title: "Tom & Jerry's page".into(),
                    snippet: "It's fast & cheap".into(),
                },
                WebResult {
                    url: "https://www.rust-lang.org/learn".into(),
                    title: "www.rust-lang.org".into(),
                    snippet: "Learn Rust".into(),
                },
                WebResult {
                    url: "https://example.org/c".into(),
                    title: "Third".into(),
                    snippet: "c".into(),
                },
            ]
        );
        let hit = stub.only_hit();
        assert_eq!(hit.method, "GET");
        assert_eq!(hit.path, "/search");
        assert_eq!(hit.param("q"), Some("customer churn & pricing"));
        assert_eq!(hit.param("format"), Some("json"));
        assert_eq!(hit.header("accept"), Some("application/json"));
        assert_eq!(hit.header("x-subscription-token"), None);
        assert_eq!(hit.header("authorization"), None, "SearXNG gets no key");
    }

    #[tokio::test]
    async fn searxng_under_a_path_is_called_there() {
        let stub = Stub::start(|_| Reply::Json(200, searxng_answer(json!([])))).await;
        let search = WebSearch::new(
            SearchProvider::Searxng,
            Some(format!("{}/searxng/", stub.base_url)),
            None,
            Duration::from_secs(5),
        )
        .expect("a client");
        assert_eq!(search.search("q", 5).await, Ok(Vec::new()));
        assert_eq!(stub.only_hit().path, "/searxng/search");
    }

    #[tokio::test]
    async fn searxng_403_says_to_enable_the_json_format() {
        let stub = Stub::start(|_| Reply::Text(403, "<html><body><h1>Forbidden</h1></body></html>")).await;
        let error = client(SearchProvider::Searxng, &stub).search("q", 5).await.unwrap_err();
        assert!(error.0.contains("SearXNG"), "{error}");
        assert!(error.0.contains("403"), "{error}");
        assert!(
            error
                .0
                .contains("enable `json` under `search.formats` in SearXNG's settings.yml"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn brave_sends_the_token_and_count_and_strips_its_markup() {
        let stub = Stub::start(|_| {
            Reply::Json(
                200,
                brave_answer(json!([
                    {"type": "search_result", "url": "https://example.com/pricing", "title": "Pricing &amp; plans",
                     "description": "Compare <strong>pricing</strong> tiers &#8211; monthly &lt;or&gt; yearly",
                     "is_source_local": false, "language": "en"},
                    {"url": "https://EXAMPLE.com/pricing#faq", "title": "Duplicate", "description": "dup"},
                    {"url": "http://example.net/", "title": "", "description": ""}
                ])),
            )
        })
        .await;
        let search = client(SearchProvider::Brave, &stub);
        assert_eq!(search.provider_name(), "brave");
        let results = search.search("pricing tiers", 7).await.expect("results");
        assert_eq!(
            results,
            vec![
                WebResult {
                    url: "https://example.com/pricing".into(),
                    title: "Pricing & plans".into(),
                    snippet: "Compare pricing tiers – monthly <or> yearly".into(),
                },
                WebResult {
                    url: "http://example.net/".into(),
                    title: "example.net".into(),
                    snippet: String::new(),
                },
            ]
        );
        let hit = stub.only_hit();
        assert_eq!(hit.method, "GET");
        assert_eq!(hit.path, "/res/v1/web/search");
        assert_eq!(hit.param("q"), Some("pricing tiers"));
        assert_eq!(hit.param("count"), Some("7"));
        assert_eq!(hit.header("x-subscription-token"), Some(KEY));
        assert_eq!(hit.header("accept"), Some("application/json"));
        assert_eq!(hit.header("authorization"), None);
    }

    #[tokio::test]
    async fn brave_without_web_results_finds_nothing() {
        let stub = Stub::start(|_| Reply::Json(200, json!({"type": "search", "query": {"original": "zzz"}}))).await;
        assert_eq!(
            client(SearchProvider::Brave, &stub).search("zzz", 5).await,
            Ok(Vec::new())
        );
    }

    #[tokio::test]
    async fn the_limit_is_taken_as_one_to_twenty() {
        let many: Vec<Value> = (0..30)
            .map(|i| json!({"url": format!("https://example.com/{i}"), "title": format!("T{i}"), "description": "d"}))
            .collect();
        let stub = Stub::start(move |_| Reply::Json(200, brave_answer(Value::Array(many.clone())))).await;
        let search = client(SearchProvider::Brave, &stub);
        assert_eq!(search.search("q", 0).await.expect("results").len(), 1);
        assert_eq!(search.search("q", 100).await.expect("results").len(), 20);
        let counts: Vec<String> = stub
            .hits()
            .iter()
            .filter_map(|hit| hit.param("count").map(str::to_owned))
            .collect();
        assert_eq!(counts, ["1", "20"]);
    }

    #[tokio::test]
    async fn tavily_posts_json_with_a_bearer_key() {
        let stub = Stub::start(|_| {
            Reply::Json(
                200,
                tavily_answer(json!([
                    {"title": "Churn benchmarks", "url": "https://example.com/churn",
                     "content": "SaaS churn averages 5%&hellip;", "score": 0.91, "raw_content": null},
                    {"title": "Second", "url": "https://example.com/second", "content": "two", "score": 0.5}
                ])),
            )
        })
        .await;
        let search = client(SearchProvider::Tavily, &stub);
        assert_eq!(search.provider_name(), "tavily");
        let results = search.search("saas churn benchmarks", 4).await.expect("results");
        assert_eq!(results.len(), 2);
        assert_eq!(results[0].title, "Churn benchmarks");
        assert_eq!(results[0].snippet, "SaaS churn averages 5%…");
        assert_eq!(results[1].url, "https://example.com/second");
        let hit = stub.only_hit();
        assert_eq!(hit.method, "POST");
        assert_eq!(hit.path, "/search");
        assert_eq!(hit.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
        assert!(
            hit.header("content-type")
                .is_some_and(|value| value.starts_with("application/json"))
        );
        assert_eq!(hit.body["query"], "saas churn benchmarks");
        assert_eq!(hit.body["max_results"], 4);
        assert_eq!(hit.body["search_depth"], "basic");
        assert!(hit.body.get("api_key").is_none(), "the key only goes in the header");
    }

    #[tokio::test]
    async fn an_empty_result_list_is_ok() {
        let stub = Stub::start(|_| Reply::Json(200, tavily_answer(json!([])))).await;
        assert_eq!(
            client(SearchProvider::Tavily, &stub).search("q", 5).await,
            Ok(Vec::new())
        );
    }

    #[tokio::test]
    async fn an_empty_query_makes_no_call() {
        let stub = Stub::start(|_| Reply::Json(200, searxng_answer(json!([])))).await;
        let search = client(SearchProvider::Searxng, &stub);
        assert_eq!(search.search("   \n\t ", 5).await, Ok(Vec::new()));
        assert_eq!(search.search("", 5).await, Ok(Vec::new()));
        assert!(stub.hits().is_empty());
    }

    #[tokio::test]
    async fn a_server_error_names_the_status_and_message_without_the_key() {
        let stub = Stub::start(|_| {
            Reply::Json(
                500,
                json!({"type": "ErrorResponse", "error": {"id": "x", "status": 500, "code": "INTERNAL",
                       "detail": format!("Backend exploded for token {KEY}")}}),
            )
        })
        .await;
        let error = client(SearchProvider::Brave, &stub).search("q", 5).await.unwrap_err();
        assert!(error.0.contains("Brave Search"), "{error}");
        assert!(error.0.contains("500"), "{error}");
        assert!(error.0.contains("Backend exploded"), "{error}");
        assert!(!error.0.contains(KEY), "{error}");
    }

    #[tokio::test]
    async fn a_429_says_the_provider_is_rate_limiting() {
        let stub = Stub::start(|_| Reply::Json(429, json!({"detail": {"error": "Rate limit exceeded"}}))).await;
        let error = client(SearchProvider::Tavily, &stub).search("q", 5).await.unwrap_err();
        assert!(error.0.contains("Tavily is rate limiting"), "{error}");
        assert!(error.0.contains("429"), "{error}");
        assert!(error.0.contains("Rate limit exceeded"), "{error}");
        assert!(!error.0.contains(KEY), "{error}");
    }

    #[tokio::test]
    async fn a_refused_key_points_at_the_setting() {
        let stub = Stub::start(|_| {
            Reply::Json(
                401,
                json!({"detail": {"error": "Unauthorized: missing or invalid API key."}}),
            )
        })
        .await;
        let error = client(SearchProvider::Tavily, &stub).search("q", 5).await.unwrap_err();
        assert!(error.0.contains("401"), "{error}");
        assert!(error.0.contains("INSIGHT_SEARCH_API_KEY"), "{error}");
        assert!(!error.0.contains(KEY), "{error}");
    }

    #[tokio::test]
    async fn an_answer_that_is_not_the_json_expected_is_an_error() {
        let stub = Stub::start(|_| Reply::Text(200, "<html><body>Hello</body></html>")).await;
        let error = client(SearchProvider::Searxng, &stub).search("q", 5).await.unwrap_err();
        assert!(error.0.contains("SearXNG"), "{error}");
        assert!(error.0.contains("not the JSON expected"), "{error}");

        let stub = Stub::start(|_| Reply::Json(200, json!({"items": []}))).await;
        let error = client(SearchProvider::Tavily, &stub).search("q", 5).await.unwrap_err();
        assert!(error.0.contains("Tavily"), "{error}");
        assert!(error.0.contains("not the JSON expected"), "{error}");
    }

    #[tokio::test]
    async fn a_slow_provider_times_out() {
        let stub = Stub::start(|_| Reply::Slow(Duration::from_secs(3), searxng_answer(json!([])))).await;
        let search = WebSearch::new(
            SearchProvider::Searxng,
            Some(stub.base_url.clone()),
            None,
            Duration::from_millis(200),
        )
        .expect("a client");
        let started = Instant::now();
        let error = search.search("q", 5).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        assert!(error.0.contains("timed out"), "{error}");
        assert!(error.0.contains("SearXNG"), "{error}");
    }

    #[tokio::test]
    async fn a_provider_that_is_down_is_an_error() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        drop(listener);
        let search = WebSearch::new(
            SearchProvider::Brave,
            Some(format!("http://{address}")),
            Some(KEY.to_owned()),
            Duration::from_secs(5),
        )
        .expect("a client");
        let error = search.search("q", 5).await.unwrap_err();
        assert!(error.0.contains("could not connect to Brave Search"), "{error}");
        assert!(!error.0.contains(KEY), "{error}");
    }

    #[tokio::test]
    async fn a_redirect_is_not_followed() {
        let target = Stub::start(|_| {
            Reply::Json(
                200,
                searxng_answer(json!([{"url": "https://evil.example/", "title": "x"}])),
            )
        })
        .await;
        let to = format!("{}/search?q=x&format=json", target.base_url);
        let stub = Stub::start(move |_| Reply::Redirect(to.clone())).await;
        let error = client(SearchProvider::Searxng, &stub).search("q", 5).await.unwrap_err();
        assert!(error.0.contains("302"), "{error}");
        assert!(error.0.contains("redirect"), "{error}");
        assert_eq!(stub.hits().len(), 1);
        assert!(target.hits().is_empty(), "the redirect target was called");
    }

    #[test]
    fn from_settings_is_none_when_no_provider_is_set() {
        let settings = Settings::for_database("sqlite::memory:");
        assert!(WebSearch::from_settings(&settings).expect("no error").is_none());
    }

    #[test]
    fn from_settings_needs_a_base_url_for_searxng() {
        let mut settings = Settings::for_database("sqlite::memory:");
        settings.search.search_provider = Some(SearchProvider::Searxng);
        let error = WebSearch::from_settings(&settings).unwrap_err();
        assert!(error.contains("INSIGHT_SEARCH_BASE_URL"), "{error}");
        settings.search.search_base_url = Some("http://127.0.0.1:8888".into());
        let search = WebSearch::from_settings(&settings).expect("valid").expect("configured");
        assert_eq!(search.provider_name(), "searxng");
    }

    #[test]
    fn from_settings_needs_a_key_for_brave_and_tavily() {
        for provider in [SearchProvider::Brave, SearchProvider::Tavily] {
            let mut settings = Settings::for_database("sqlite::memory:");
            settings.search.search_provider = Some(provider);
            let error = WebSearch::from_settings(&settings).unwrap_err();
            assert!(error.contains("INSIGHT_SEARCH_API_KEY"), "{error}");
            settings.search.search_api_key = Some("   ".into());
            assert!(WebSearch::from_settings(&settings).is_err(), "a blank key is no key");
        }
    }

    #[test]
    fn brave_and_tavily_default_to_the_vendors_api() {
        let mut settings = Settings::for_database("sqlite::memory:");
        settings.search.search_provider = Some(SearchProvider::Brave);
        settings.search.search_api_key = Some(KEY.into());
        let brave = WebSearch::from_settings(&settings).expect("valid").expect("configured");
        assert!(format!("{brave:?}").contains("https://api.search.brave.com/res/v1/web/search"));
        settings.search.search_provider = Some(SearchProvider::Tavily);
        let tavily = WebSearch::from_settings(&settings).expect("valid").expect("configured");
        assert!(format!("{tavily:?}").contains("https://api.tavily.com/search"));
    }

    #[test]
    fn new_refuses_a_base_url_that_is_not_http() {
        let error = WebSearch::new(
            SearchProvider::Searxng,
            Some("ftp://example.com".into()),
            None,
            DEFAULT_TIMEOUT,
        )
        .unwrap_err();
        assert!(error.contains("INSIGHT_SEARCH_BASE_URL"), "{error}");
        assert!(WebSearch::new(SearchProvider::Searxng, Some("not a url".into()), None, DEFAULT_TIMEOUT).is_err());
    }

    #[test]
    fn debug_does_not_show_the_key() {
        let search = WebSearch::new(
            SearchProvider::Tavily,
            Some("https://user:hunter2@search.example".into()),
            Some(KEY.into()),
            DEFAULT_TIMEOUT,
        )
        .expect("a client");
        let shown = format!("{search:?}");
        assert!(!shown.contains(KEY), "{shown}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("tavily"), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
    }
}
