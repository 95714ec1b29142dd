//! Lists that can grow answer a page at a time: `limit` (1..500, default 100) and an
//! opaque `cursor` in the query, the page as the list's usual body, and an RFC 8288
//! `Link: <...>; rel="next"` header while more follow.

use axum::Json;
use axum::extract::FromRequestParts;
use axum::http::header::LINK;
use axum::http::request::Parts;
use axum::http::{HeaderValue, Uri};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;
use utoipa::IntoParams;

use crate::domain::paging::{
    CURSOR_PATTERN, DEFAULT_LIMIT, MAX_LIMIT, Page, PageRequest, SortKey, decode_cursor, encode_cursor,
};
use crate::error::{Error, ValidationIssue};

/// What the `Link` header of a paginated list says, for the API document.
pub const NEXT_LINK: &str = "RFC 8288 `<url>; rel=\"next\"`: the next page, present while more items follow";

/// The query of a paginated list, as the API document shows it.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)] // Describes the query for the API document; `Paging` reads it.
pub struct PageQuery {
    /// Items per page, 1 to 500. Default 100.
    #[param(minimum = 1, maximum = 500, default = 100)]
    limit: Option<i64>,
    /// Where to continue: the `cursor` of the previous answer's `Link: rel="next"` URL.
    #[param(min_length = 43, max_length = 43, pattern = "^[A-Za-z0-9_-]{43}$")]
    cursor: Option<String>,
}

/// `limit` and `cursor` read from the query; the cursor is decoded by the list's key type.
pub struct Paging {
    limit: usize,
    cursor: Option<String>,
}

impl<S: Send + Sync> FromRequestParts<S> for Paging {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Paging::from_uri(&parts.uri)
    }
}

impl Paging {
    pub fn from_uri(uri: &Uri) -> Result<Self, Error> {
        let mut limit = DEFAULT_LIMIT;
        let mut cursor = None;
        let mut issues = Vec::new();
        for (name, value) in url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()) {
            match &*name {
                "limit" => match value.trim().parse::<i64>() {
                    Ok(n) if n < 1 => issues.push(
                        ValidationIssue::new(
                            vec![json!("query"), json!("limit")],
                            "greater_than_equal",
                            "Input should be greater than or equal to 1",
                        )
                        .with_input(json!(value))
                        .with_ctx(json!({ "ge": 1 })),
                    ),
                    Ok(n) if n > MAX_LIMIT as i64 => issues.push(
                        ValidationIssue::new(
                            vec![json!("query"), json!("limit")],
                            "less_than_equal",
                            format!("Input should be less than or equal to {MAX_LIMIT}"),
                        )
                        .with_input(json!(value))
                        .with_ctx(json!({ "le": MAX_LIMIT })),
                    ),
                    Ok(n) => limit = usize::try_from(n).unwrap_or(DEFAULT_LIMIT),
                    Err(_) => issues.push(ValidationIssue::not_an_integer(
                        vec![json!("query"), json!("limit")],
                        &value,
                    )),
                },
                "cursor" => cursor = Some(value.into_owned()),
                _ => {}
            }
        }
        if issues.is_empty() {
            Ok(Self { limit, cursor })
        } else {
            Err(Error::validation(issues))
        }
    }

    /// The page asked for, its cursor read as a key of type `K`.
    pub fn request<K: SortKey>(&self) -> Result<PageRequest<K>, Error> {
        let after = match &self.cursor {
            None => None,
            Some(cursor) => Some(decode_cursor(cursor).ok_or_else(|| {
                Error::validation(vec![
                    ValidationIssue::new(
                        vec![json!("query"), json!("cursor")],
                        "string_pattern_mismatch",
                        format!("String should match pattern '{CURSOR_PATTERN}'"),
                    )
                    .with_input(json!(cursor))
                    .with_ctx(json!({ "pattern": CURSOR_PATTERN })),
                ])
            })?),
        };
        Ok(PageRequest {
            limit: self.limit,
            after,
        })
    }
}

/// The page as a JSON array with its `Link` header.
pub fn paged<T: Serialize, K: SortKey>(uri: &Uri, page: Page<T, K>) -> Response {
    with_next_link(uri, page.next.as_ref(), Json(page.items).into_response())
}

/// `uri` with the query parameter `name` set to `value` (added, or replacing its value).
pub fn set_query_param(uri: &Uri, name: &str, value: &str) -> Uri {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for (key, old) in url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes()) {
        if key != name {
            query.append_pair(&key, &old);
        }
    }
    query.append_pair(name, value);
    format!("{}?{}", uri.path(), query.finish())
        .parse()
        .unwrap_or_else(|_| uri.clone())
}

/// `response` with a `Link: rel="next"` header to the same list after `next`, if any.
pub fn with_next_link<K: SortKey>(uri: &Uri, next: Option<&K>, mut response: Response) -> Response {
    if let Some(next) = next {
        let target = set_query_param(uri, "cursor", &encode_cursor(next));
        if let Ok(value) = HeaderValue::from_str(&format!("<{target}>; rel=\"next\"")) {
            response.headers_mut().insert(LINK, value);
        }
    }
    response
}
