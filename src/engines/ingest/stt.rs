//! Speech-to-text providers, one per wire protocol, chosen by `INSIGHT_STT_PROVIDER`:
//! - `openai`: an OpenAI-compatible `/audio/transcriptions`, which answers in the request;
//! - `assemblyai`: AssemblyAI, which works asynchronously and calls back when a
//!   transcript is ready (`POST /api/webhooks/assemblyai`); the record's job sleeps
//!   meanwhile and checks now and then in case a callback never comes;
//! - `deepgram`: Deepgram, which posts the transcript itself to a callback
//!   (`POST /api/webhooks/deepgram`) when Insight's public URL is reachable, and
//!   answers in the request otherwise.
//!
//! Callbacks are verified with a secret per record derived from the instance key
//! ([`callback_token`]), carried as each provider allows: a header for AssemblyAI,
//! Basic credentials in the callback URL for Deepgram.

mod assemblyai;
mod deepgram;
mod openai;

use std::time::Duration;

pub use assemblyai::{AssemblyAi, CALLBACK_HEADER, Callback, Progress};
pub use deepgram::{CALLBACK_USER, Deepgram, Listened, read_result as read_deepgram_result};
pub use openai::OpenAiStt;

use crate::config::{Settings, SttProvider};
use crate::domain::record::{Transcribed, transcribe};
use crate::engines::ingest::Transcript;
use crate::secret::SecretKey;

/// A transcription that did not work, and whether trying again may help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SttError {
    /// The provider is down, slow or busy: retry later.
    Transient(String),
    /// The provider refused the file or answered nonsense: retrying will not help.
    Permanent(String),
}

/// A configured speech-to-text provider.
#[derive(Debug, Clone)]
pub enum SpeechToText {
    OpenAi(OpenAiStt),
    AssemblyAi(AssemblyAi),
    Deepgram(Deepgram),
}

/// How a record's `stt_job` names an AssemblyAI transcript (the rest is its id).
pub const ASSEMBLYAI_JOB: &str = "assemblyai:";

/// How a record's `stt_job` names a Deepgram request (the rest is its id).
pub const DEEPGRAM_JOB: &str = "deepgram:";

/// The settings an audio upload needs, for the 503 that names them.
pub const SETTINGS_HINT: &str = "Audio and video need a speech-to-text provider: set INSIGHT_STT_BASE_URL (an \
     OpenAI-compatible API such as https://api.openai.com/v1) or INSIGHT_STT_PROVIDER (assemblyai or deepgram), and \
     INSIGHT_STT_API_KEY and INSIGHT_STT_MODEL as the provider needs.";

impl SpeechToText {
    /// The provider the settings name, if any.
    pub fn from_settings(settings: &Settings) -> Option<Self> {
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            // Long recordings take long to upload and to transcribe.
            .timeout(Duration::from_secs(30 * 60))
            .build()
            .ok()?;
        match settings.speech.stt_provider {
            SttProvider::OpenAi => {
                let base = settings.speech.stt_base_url.as_deref()?;
                Some(Self::OpenAi(OpenAiStt::new(client, base, settings)))
            }
            SttProvider::AssemblyAi => Some(Self::AssemblyAi(AssemblyAi::new(client, settings))),
            SttProvider::Deepgram => Some(Self::Deepgram(Deepgram::new(client, settings))),
        }
    }
}

/// The value a provider's callback for `record_id` carries in [`CALLBACK_HEADER`]: derived
/// from the instance key, so it is never stored and differs for every record.
pub fn callback_token(secret: &SecretKey, record_id: uuid::Uuid) -> String {
    secret.derive("stt-callback", &[record_id.as_bytes()], 32)
}

/// A provider's transcript as a record's utterances, or why it cannot be one.
pub fn accept(transcript: Transcript, max_utterances: usize) -> Result<(Transcribed, Option<String>), String> {
    if transcript.utterances.is_empty() {
        return Err("The recording holds no speech the provider could transcribe.".to_owned());
    }
    if transcript.utterances.len() > max_utterances {
        return Err(format!(
            "The transcription has {} utterances; the limit is {max_utterances} (INSIGHT_MAX_UTTERANCES).",
            transcript.utterances.len(),
        ));
    }
    let transcribed = transcribe(transcript.utterances);
    // A provider that does not say the language: guessed once here for the record.
    let language = transcript.language.or_else(|| {
        crate::engines::search::bm25::guess_language_of(transcribed.utterances.iter().map(|u| u.text.as_str()))
            .map(str::to_owned)
    });
    Ok((transcribed, language))
}

/// Whether a provider on the internet can reach `public_url`: not when it names this
/// machine (loopback), a private, shared or link-local network, or a host without a
/// domain (`http://insight:8000`); callbacks there would never arrive.
fn reachable(public_url: &str) -> bool {
    let Ok(url) = url::Url::parse(public_url) else {
        return false;
    };
    match url.host() {
        Some(url::Host::Domain(domain)) => {
            let domain = domain.trim_end_matches('.').to_ascii_lowercase();
            domain.contains('.')
                && !["localhost", "local", "internal", "lan", "home.arpa"]
                    .iter()
                    .any(|suffix| domain == *suffix || domain.ends_with(&format!(".{suffix}")))
        }
        Some(url::Host::Ipv4(address)) => {
            let [a, b, ..] = address.octets();
            !(address.is_loopback()
                || address.is_unspecified()
                || address.is_private()
                || address.is_link_local()
                // Shared address space (carrier-grade NAT), 100.64.0.0/10.
                || (a == 100 && (64..128).contains(&b)))
        }
        Some(url::Host::Ipv6(address)) => {
            let first = address.segments()[0];
            !(address.is_loopback()
                || address.is_unspecified()
                // Unique local fc00::/7 and link-local fe80::/10.
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80)
        }
        None => false,
    }
}

/// An error without the URL's query or any header (they may carry secrets).
fn describe(error: reqwest::Error) -> String {
    if error.is_timeout() {
        "it timed out".to_owned()
    } else if error.is_connect() {
        "the connection failed".to_owned()
    } else {
        error.without_url().to_string()
    }
}

/// A provider's answer's body when it is a success; otherwise the error it means: busy,
/// down or slow is worth a retry, a refusal is not. A provider that echoes the API key in
/// its message does not get it into the record's error or the log.
async fn read_answer(response: reqwest::Response, api_key: Option<&str>) -> Result<Vec<u8>, SttError> {
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|error| SttError::Transient(format!("The speech-to-text answer broke off: {}", describe(error))))?;
    if status.is_success() {
        return Ok(body.to_vec());
    }
    let message = crate::providers::client::redact(
        &format!(
            "The speech-to-text provider answered {status}: {}",
            provider_message(&body)
        ),
        api_key,
    );
    Err(if crate::providers::client::worth_retrying(status) {
        SttError::Transient(message)
    } else {
        SttError::Permanent(message)
    })
}

/// The provider's own error message (`{"error":{"message":...}}`, `{"error": "..."}` or
/// `{"detail": ...}`), else the start of the body.
fn provider_message(body: &[u8]) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let message = parsed
        .as_ref()
        .and_then(|value| {
            value
                .pointer("/error/message")
                .or_else(|| value.pointer("/error"))
                .or_else(|| value.pointer("/detail"))
        })
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    message.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_messages_are_read_from_the_usual_shapes() {
        assert_eq!(
            provider_message(br#"{"error":{"message":"model overloaded"}}"#),
            "model overloaded"
        );
        assert_eq!(provider_message(br#"{"error":"Invalid API key"}"#), "Invalid API key");
        assert_eq!(provider_message(br#"{"detail":"no"}"#), "no");
        assert_eq!(provider_message(b"Bad Gateway"), "Bad Gateway");
        assert_eq!(provider_message(&[b'x'; 1000]).len(), 300);
    }

    #[test]
    fn addresses_a_provider_cannot_reach_get_no_callbacks() {
        for url in [
            "http://127.0.0.1:8000",
            "http://localhost:8000",
            "http://app.localhost",
            "http://[::1]:8000",
            "http://0.0.0.0:8000",
            "http://10.0.0.5:8000",
            "http://192.168.1.20",
            "http://172.16.4.4",
            "http://169.254.1.1",
            "http://100.100.0.1",
            "http://[fd00::1]",
            "http://[fe80::1]",
            "http://insight:8000",
            "http://insight.local",
            "http://insight.internal",
        ] {
            assert!(!reachable(url), "{url}");
        }
        for url in [
            "https://insight.example.org",
            "https://research.example.org/insight",
            "https://203.0.113.7",
            "http://[2001:db8::7]",
        ] {
            assert!(reachable(url), "{url}");
        }
    }

    #[test]
    fn callback_tokens_differ_by_record_and_by_key() {
        let key = SecretKey::from_bytes(b"one key");
        let (a, b) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
        assert_eq!(callback_token(&key, a), callback_token(&key, a));
        assert_ne!(callback_token(&key, a), callback_token(&key, b));
        assert_ne!(
            callback_token(&key, a),
            callback_token(&SecretKey::from_bytes(b"another key"), a)
        );
        assert!(callback_token(&key, a).len() >= 42, "256 bits in base64");
    }
}
