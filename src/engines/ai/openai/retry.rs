//! Attempts of one call: what failed, whether it may pass, and how long to wait.

use std::time::Duration;

use super::{ChatAnswer, ChatRequest, Message, OpenAiClient, Piece, SealedMessage};
use crate::engines::ai::AiError;
use crate::providers::client::backoff;

/// The longest wait between two attempts, whatever the backoff or the server says.
pub(super) const MAX_WAIT: Duration = Duration::from_secs(60);

/// How one attempt failed.
#[derive(Debug)]
pub(super) enum Failure {
    Transient {
        message: String,
        retry_after: Option<Duration>,
    },
    Permanent(String),
    /// The server refused a parameter it does not take; the request was adapted.
    Adapted(String),
}

impl Failure {
    pub(super) fn transient(message: impl Into<String>) -> Self {
        Self::Transient {
            message: message.into(),
            retry_after: None,
        }
    }
}

impl OpenAiClient {
    /// One call, its attempts as the module says; with personal data concealed in what
    /// is sent and revealed in what comes back when the client is cloaked.
    pub(super) async fn run(
        &self,
        request: &ChatRequest,
        on_piece: Option<&mut (dyn FnMut(Piece<'_>) + Send)>,
    ) -> Result<ChatAnswer, AiError> {
        let started = std::time::Instant::now();
        let answer = self.revealed(request, on_piece).await?;
        if let Some(meter) = &self.meter {
            meter.charge(&self.inner.config.model, answer.usage, started.elapsed());
        }
        Ok(answer)
    }

    async fn revealed(
        &self,
        request: &ChatRequest,
        on_piece: Option<&mut (dyn FnMut(Piece<'_>) + Send)>,
    ) -> Result<ChatAnswer, AiError> {
        // What goes on the wire is only ever the sealed messages.
        let sealed: Vec<SealedMessage> = request
            .messages
            .iter()
            .map(|message| SealedMessage {
                role: message.role,
                content: self.cloak.seal(&message.content),
            })
            .collect();
        let concealed = ChatRequest {
            messages: sealed
                .iter()
                .map(|message| Message {
                    role: message.role,
                    content: message.content.as_str().to_owned(),
                })
                .collect(),
            ..request.clone()
        };
        let mut answer = match on_piece {
            Some(on_piece) => {
                let mut stream = self.cloak.stream();
                let mut revealed = |piece: Piece<'_>| match piece {
                    Piece::Text(text) => {
                        let shown = stream.push(text);
                        if !shown.is_empty() {
                            on_piece(Piece::Text(&shown));
                        }
                    }
                    Piece::Restart => {
                        stream.restart();
                        on_piece(Piece::Restart);
                    }
                };
                let answer = self.attempts(&concealed, &sealed, Some(&mut revealed)).await?;
                let rest = stream.finish();
                if !rest.is_empty() {
                    on_piece(Piece::Text(&rest));
                }
                answer
            }
            None => self.attempts(&concealed, &sealed, None).await?,
        };
        self.ledger.note(&concealed.messages, answer.usage);
        answer.content = self.cloak.reveal(&answer.content, request.json_schema.is_some());
        Ok(answer)
    }

    async fn attempts(
        &self,
        request: &ChatRequest,
        sealed: &[SealedMessage],
        mut on_piece: Option<&mut (dyn FnMut(Piece<'_>) + Send)>,
    ) -> Result<ChatAnswer, AiError> {
        let attempts = self.inner.config.max_attempts.max(1);
        let mut attempt = 1;
        let mut adaptations = 0;
        loop {
            let body = self.body(request, sealed, on_piece.is_some());
            let outcome = match on_piece.as_deref_mut() {
                Some(on_piece) => {
                    self.stream_attempt(request, &body, &mut |text: &str| on_piece(Piece::Text(text)))
                        .await
                }
                None => self.attempt(request, &body).await,
            };
            let (message, retry_after) = match outcome {
                Ok(answer) => return Ok(answer),
                Err(Failure::Permanent(message)) => return Err(AiError::Permanent(message)),
                Err(Failure::Adapted(message)) if adaptations < 3 => {
                    adaptations += 1;
                    tracing::info!(model = %self.inner.config.model, %message, "model server refused a parameter; sending without it");
                    continue;
                }
                Err(Failure::Adapted(message)) => return Err(AiError::Permanent(message)),
                Err(Failure::Transient { message, retry_after }) => (message, retry_after),
            };
            if attempt >= attempts {
                let tries = if attempts == 1 {
                    "1 attempt".to_owned()
                } else {
                    format!("{attempts} attempts")
                };
                return Err(AiError::Transient(format!("{message} (gave up after {tries})")));
            }
            let wait = retry_after
                .unwrap_or_else(|| backoff(self.inner.config.retry_base, attempt, MAX_WAIT))
                .min(MAX_WAIT);
            tracing::warn!(
                model = %self.inner.config.model,
                attempt,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                %message,
                "model call failed; retrying"
            );
            tokio::time::sleep(wait).await;
            if let Some(on_piece) = on_piece.as_deref_mut() {
                on_piece(Piece::Restart);
            }
            attempt += 1;
        }
    }
}
