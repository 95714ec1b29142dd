//! Reading the model's answer: whole, or chunk by chunk from a stream; the server's
//! error messages; the text without a `<think>` block or code fences.

use serde::Deserialize;
use serde_json::Value;

use super::retry::Failure;
use super::{ChatAnswer, ChatRequest, OpenAiClient, count_tokens};
use crate::engines::ai::Usage;

/// How long an error message from a server may be in an [`AiError`](crate::engines::ai::AiError).
const MAX_MESSAGE_CHARS: usize = 500;

impl OpenAiClient {
    /// A whole (not streamed) Chat Completions answer.
    pub(super) fn parse_answer(&self, request: &ChatRequest, text: &str) -> Result<ChatAnswer, Failure> {
        let value: Value = serde_json::from_str(text)
            .map_err(|_| Failure::transient("The model server's answer is not JSON.".to_owned()))?;
        if let Some(error) = value.get("error").filter(|error| !error.is_null()) {
            let (detail, _) = error_message(error);
            return Err(Failure::transient(format!(
                "The model server reported an error: {}",
                self.redact(&detail)
            )));
        }
        let completion: WireCompletion = serde_json::from_value(value).map_err(|error| {
            Failure::transient(format!("The model server's answer is not a chat completion ({error})."))
        })?;
        let Some(choice) = completion.choices.into_iter().next() else {
            return Err(Failure::transient("The model server's answer has no choices."));
        };
        let message = choice.message.unwrap_or_default();
        self.finish(
            request,
            message.content.unwrap_or_default(),
            completion.usage,
            choice.finish_reason,
            message.refusal.unwrap_or_default(),
        )
    }

    /// The answer from its parts, or why it is no good.
    pub(super) fn finish(
        &self,
        request: &ChatRequest,
        content: String,
        usage: Option<WireUsage>,
        finish_reason: Option<String>,
        refusal: String,
    ) -> Result<ChatAnswer, Failure> {
        if content.trim().is_empty() && !refusal.trim().is_empty() {
            return Err(Failure::Permanent(format!(
                "The model refused: {}",
                truncate(refusal.trim())
            )));
        }
        if finish_reason.as_deref() == Some("content_filter") {
            return Err(Failure::Permanent(
                "The model server's content filter stopped the answer.".into(),
            ));
        }
        let mut content = strip_think(&content).to_owned();
        if request.json_schema.is_some() {
            let json = strip_fences(&content);
            if serde_json::from_str::<Value>(json).is_err() {
                let reason = finish_reason.as_deref().unwrap_or("unknown");
                return Err(Failure::transient(format!(
                    "The model's answer is not valid JSON (finish reason: {reason})."
                )));
            }
            content = json.to_owned();
        }
        let usage = match usage {
            Some(usage) => Usage {
                prompt_tokens: usage.prompt_tokens.unwrap_or(0),
                completion_tokens: usage.completion_tokens.unwrap_or(0),
            },
            None => Usage {
                prompt_tokens: request
                    .messages
                    .iter()
                    .map(|m| count_tokens(&m.content) as u64 + 4)
                    .sum(),
                completion_tokens: count_tokens(&content) as u64,
            },
        };
        Ok(ChatAnswer {
            content,
            usage,
            finish_reason,
        })
    }
}

/// What a stream has said so far.
#[derive(Default)]
pub(super) struct StreamState {
    pub(super) content: String,
    pub(super) usage: Option<WireUsage>,
    pub(super) finish_reason: Option<String>,
    pub(super) refusal: String,
}

impl StreamState {
    /// Takes in one `data:` chunk.
    pub(super) fn chunk(
        &mut self,
        data: &str,
        on_delta: &mut (dyn FnMut(&str) + Send),
        redact: impl Fn(&str) -> String,
    ) -> Result<(), Failure> {
        let value: Value = serde_json::from_str(data)
            .map_err(|_| Failure::transient("The model server's stream sent a chunk that is not JSON."))?;
        if let Some(error) = value.get("error").filter(|error| !error.is_null()) {
            let (detail, _) = error_message(error);
            return Err(Failure::transient(format!(
                "The model server's stream reported an error: {}",
                redact(&detail)
            )));
        }
        let chunk: WireCompletion = serde_json::from_value(value)
            .map_err(|error| Failure::transient(format!("The model server's stream sent an odd chunk ({error}).")))?;
        if chunk.usage.is_some() {
            self.usage = chunk.usage;
        }
        if let Some(choice) = chunk.choices.into_iter().next() {
            if let Some(delta) = choice.delta {
                if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
                    on_delta(&text);
                    self.content.push_str(&text);
                }
                if let Some(refusal) = delta.refusal {
                    self.refusal.push_str(&refusal);
                }
            }
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
        }
        Ok(())
    }
}

#[derive(Debug, Default, Deserialize)]
struct WireCompletion {
    #[serde(default)]
    choices: Vec<WireChoice>,
    usage: Option<WireUsage>,
}

#[derive(Debug, Default, Deserialize)]
struct WireChoice {
    message: Option<WireMessage>,
    delta: Option<WireMessage>,
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct WireMessage {
    content: Option<String>,
    refusal: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

/// The message (and the parameter it names, if any) of an error answer's body:
/// `{"error":{"message":..,"param":..}}`, `{"error":".."}`, `{"message":..}`, or the text.
pub(super) fn server_message(body: &str) -> (String, Option<String>) {
    match serde_json::from_str::<Value>(body) {
        Ok(value) => match value.get("error") {
            Some(error) => error_message(error),
            None => match value
                .get("message")
                .or_else(|| value.get("detail"))
                .and_then(Value::as_str)
            {
                Some(message) => (truncate(message), None),
                None => (truncate(body.trim()), None),
            },
        },
        Err(_) if body.trim().is_empty() => ("(no message)".into(), None),
        Err(_) => (truncate(body.trim()), None),
    }
}

/// The message and parameter of an `error` value.
fn error_message(error: &Value) -> (String, Option<String>) {
    match error {
        Value::String(message) => (truncate(message), None),
        Value::Object(fields) => {
            let message = fields
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            let param = fields.get("param").and_then(Value::as_str).map(str::to_owned);
            (truncate(&message), param)
        }
        other => (truncate(&other.to_string()), None),
    }
}

fn truncate(message: &str) -> String {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((end, _)) => format!("{}…", &message[..end]),
        None => message.to_owned(),
    }
}

/// The answer without a leading `<think>...</think>` block (reasoning models served by
/// Ollama, vLLM or llama.cpp may put their thinking there).
fn strip_think(content: &str) -> &str {
    let trimmed = content.trim_start();
    if let Some(rest) = trimmed.strip_prefix("<think>")
        && let Some(end) = rest.find("</think>")
    {
        return rest[end + "</think>".len()..].trim_start();
    }
    content
}

/// JSON without the Markdown code fence some models put around it.
fn strip_fences(content: &str) -> &str {
    let trimmed = content.trim();
    if let Some(rest) = trimmed.strip_prefix("```")
        && let Some(inner) = rest.strip_suffix("```")
    {
        let inner = inner.strip_prefix("json").unwrap_or(inner);
        return inner.trim();
    }
    trimmed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_error_messages() {
        assert_eq!(
            server_message(r#"{"error":{"message":"bad","param":"temperature"}}"#),
            ("bad".into(), Some("temperature".into()))
        );
        assert_eq!(server_message(r#"{"error":"model not found"}"#).0, "model not found");
        assert_eq!(server_message("<html>Bad Gateway</html>").0, "<html>Bad Gateway</html>");
        assert_eq!(server_message("").0, "(no message)");
        assert!(server_message(&"x".repeat(2_000)).0.chars().count() <= MAX_MESSAGE_CHARS + 1);
    }
}
