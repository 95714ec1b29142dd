//! One attempt of a call over HTTP: the request, the concurrency permit, the timeout,
//! and the answer read whole or as a stream.

use futures_util::StreamExt;
use reqwest::StatusCode;
use reqwest::header;
use serde_json::Value;
use tokio::sync::SemaphorePermit;

use super::answer::{StreamState, server_message};
use super::retry::{Failure, MAX_WAIT};
use super::sse::SseParser;
use super::{ChatAnswer, ChatRequest, OpenAiClient};
use crate::providers::client::{retry_after, worth_retrying};

impl OpenAiClient {
    async fn permit(&self) -> Result<SemaphorePermit<'_>, Failure> {
        self.inner
            .permits
            .acquire()
            .await
            .map_err(|_| Failure::Permanent("The model client is closed.".into()))
    }

    fn timed_out(&self) -> Failure {
        Failure::transient(format!(
            "The model server did not answer within {} s.",
            self.inner.config.timeout.as_secs_f64()
        ))
    }

    /// One plain (not streamed) attempt. The request is built before the concurrency
    /// permit is taken and the permit is given back as soon as the answer has arrived,
    /// so the next call waiting for it starts without waiting on this one's work.
    pub(super) async fn attempt(&self, request: &ChatRequest, body: &Value) -> Result<ChatAnswer, Failure> {
        let http_request = self.request(body, false)?;
        let permit = self.permit().await?;
        let work = async {
            let response = self.send(http_request, body).await?;
            response.text().await.map_err(|error| {
                Failure::transient(format!(
                    "The model server's answer broke off ({}).",
                    error_chain(&error)
                ))
            })
        };
        let text = tokio::time::timeout(self.inner.config.timeout, work)
            .await
            .unwrap_or_else(|_| Err(self.timed_out()))?;
        drop(permit);
        // The call waiting for the permit was just woken: let it go out first.
        tokio::task::yield_now().await;
        self.parse_answer(request, &text)
    }

    /// One streamed attempt.
    pub(super) async fn stream_attempt(
        &self,
        request: &ChatRequest,
        body: &Value,
        on_delta: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ChatAnswer, Failure> {
        let http_request = self.request(body, true)?;
        let _permit = self.permit().await?;
        let timeout = self.inner.config.timeout;
        let response = tokio::time::timeout(timeout, self.send(http_request, body))
            .await
            .map_err(|_| self.timed_out())??;
        let is_json = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("application/json"));
        if is_json {
            // A server that does not stream answers whole.
            let text = tokio::time::timeout(timeout, response.text())
                .await
                .map_err(|_| self.timed_out())?
                .map_err(|error| {
                    Failure::transient(format!(
                        "The model server's answer broke off ({}).",
                        error_chain(&error)
                    ))
                })?;
            let answer = self.parse_answer(request, &text)?;
            on_delta(&answer.content);
            return Ok(answer);
        }
        let mut stream = response.bytes_stream();
        let mut parser = SseParser::default();
        let mut state = StreamState::default();
        loop {
            let next = tokio::time::timeout(timeout, stream.next()).await.map_err(|_| {
                Failure::transient(format!(
                    "The model server's stream stalled for {} s before [DONE].",
                    timeout.as_secs_f64()
                ))
            })?;
            let ended = next.is_none();
            let events = match next {
                Some(Ok(bytes)) => parser.push(&bytes),
                Some(Err(error)) => {
                    return Err(Failure::transient(format!(
                        "The model server's stream broke off before [DONE] ({}).",
                        error_chain(&error)
                    )));
                }
                None => parser.finish(),
            };
            for data in events {
                if data.trim() == "[DONE]" {
                    return self.finish(request, state.content, state.usage, state.finish_reason, state.refusal);
                }
                state.chunk(&data, on_delta, |message| self.redact(message))?;
            }
            if ended {
                return Err(Failure::transient("The model server's stream ended before [DONE]."));
            }
        }
    }

    /// The HTTP request of a call with this body.
    fn request(&self, body: &Value, stream: bool) -> Result<reqwest::Request, Failure> {
        let mut builder = self.inner.http.post(self.inner.endpoint.clone()).json(body);
        if let Some(key) = self.inner.config.api_key.as_deref().filter(|key| !key.is_empty()) {
            builder = if self.inner.azure {
                builder.header("api-key", key)
            } else {
                builder.bearer_auth(key)
            };
        }
        if stream {
            builder = builder.header(header::ACCEPT, "text/event-stream");
        }
        builder.build().map_err(|error| {
            Failure::Permanent(format!("Could not build the model request ({}).", error_chain(&error)))
        })
    }

    /// Sends the request (whose body is `body`); a response with an error status becomes a
    /// [`Failure`].
    async fn send(&self, http_request: reqwest::Request, body: &Value) -> Result<reqwest::Response, Failure> {
        let response = self.inner.http.execute(http_request).await.map_err(|error| {
            Failure::transient(format!("Could not reach the model server ({}).", error_chain(&error)))
        })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers(), MAX_WAIT);
        let text = response.text().await.unwrap_or_default();
        let (detail, param) = server_message(&text);
        let detail = self.redact(&detail);
        let message = format!("The model server answered {status}: {detail}");
        if status == StatusCode::BAD_REQUEST && self.adapt(&detail, param.as_deref(), body) {
            return Err(Failure::Adapted(message));
        }
        if retryable(status) {
            Err(Failure::Transient { message, retry_after })
        } else {
            Err(Failure::Permanent(message))
        }
    }
}

/// Statuses worth another attempt: a 409 too (a server busy with a conflicting request).
fn retryable(status: StatusCode) -> bool {
    status == StatusCode::CONFLICT || worth_retrying(status)
}

/// An HTTP error with its causes, without the URL (which may hold credentials).
pub(super) fn error_chain(error: &reqwest::Error) -> String {
    crate::providers::client::error_chain(error).unwrap_or_else(|| "request failed".to_owned())
}
