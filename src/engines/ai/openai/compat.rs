//! Servers differ in the parameters they take: OpenAI's reasoning models refuse
//! `max_tokens` (they want `max_completion_tokens`) and a `temperature`, its other
//! models refuse `reasoning_effort`. When a server answers 400 naming one of these,
//! the client adapts the request, remembers it for later calls, and sends it again at
//! once (this is not counted as an attempt).

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value, json};

use super::{ChatRequest, OpenAiClient, SealedMessage};

/// Parameters this server refused, learnt from its 400s.
#[derive(Default)]
pub(super) struct Compat {
    max_completion_tokens: AtomicBool,
    no_reasoning_effort: AtomicBool,
    no_temperature: AtomicBool,
}

impl OpenAiClient {
    /// The JSON body of a request, as this server takes it.
    /// The request's body: its options from `request`, its messages only as `sealed`.
    pub(super) fn body(&self, request: &ChatRequest, sealed: &[SealedMessage], stream: bool) -> Value {
        let compat = &self.inner.compat;
        let mut body = Map::new();
        body.insert("model".into(), json!(self.inner.config.model));
        body.insert("messages".into(), json!(sealed));
        if let Some(max_tokens) = request.max_tokens {
            let key = if compat.max_completion_tokens.load(Ordering::Relaxed) {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body.insert(key.into(), json!(max_tokens));
        }
        if let Some(temperature) = request.temperature
            && !compat.no_temperature.load(Ordering::Relaxed)
        {
            body.insert("temperature".into(), json!(temperature));
        }
        if let Some(effort) = &request.reasoning_effort
            && !compat.no_reasoning_effort.load(Ordering::Relaxed)
        {
            body.insert("reasoning_effort".into(), json!(effort));
        }
        if let Some((name, schema)) = &request.json_schema {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": true}}),
            );
        }
        if stream {
            body.insert("stream".into(), json!(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Value::Object(body)
    }

    /// Learns from a 400 that names a parameter the server does not take; true when the
    /// next request will differ.
    pub(super) fn adapt(&self, message: &str, param: Option<&str>, body: &Value) -> bool {
        let lower = message.to_lowercase();
        let refused = [
            "unsupported",
            "not supported",
            "unrecognized",
            "unknown",
            "not allowed",
            "does not support",
        ]
        .iter()
        .any(|word| lower.contains(word));
        let names = |name: &str| param == Some(name) || (refused && lower.contains(name));
        let compat = &self.inner.compat;
        let sent = |key: &str| body.get(key).is_some();
        if sent("max_tokens") && names("max_tokens") && lower.contains("max_completion_tokens") {
            compat.max_completion_tokens.store(true, Ordering::Relaxed);
            return true;
        }
        if sent("reasoning_effort") && names("reasoning_effort") {
            compat.no_reasoning_effort.store(true, Ordering::Relaxed);
            return true;
        }
        if sent("temperature") && names("temperature") {
            compat.no_temperature.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }
}
