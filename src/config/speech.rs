//! The speech-to-text provider that transcribes recordings.

use clap::Args;

use super::*;

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Speech to text")]
pub struct SpeechSettings {
    /// Speech-to-text provider: `openai` (any OpenAI-compatible `/audio/transcriptions`,
    /// answered while the upload's job waits), `assemblyai` (asynchronous: AssemblyAI calls
    /// back when a transcript is ready) or `deepgram` (calls back with the transcript when
    /// Insight's public URL is reachable, else answers at once) [env: INSIGHT_STT_PROVIDER].
    #[arg(long, env = "INSIGHT_STT_PROVIDER", default_value = "openai", value_parser = parse_stt_provider)]
    pub stt_provider: SttProvider,

    /// Speech-to-text: the provider's base URL (e.g. https://api.openai.com/v1). With
    /// `openai`, unset means no provider and audio and video uploads get 503; it defaults
    /// to https://api.assemblyai.com and https://api.deepgram.com for the others [env: INSIGHT_STT_BASE_URL].
    #[arg(long, env = "INSIGHT_STT_BASE_URL", value_parser = parse_stt_base_url)]
    pub stt_base_url: Option<String>,

    /// Speech-to-text API key (a bearer token for `openai`, the `authorization` header
    /// for `assemblyai`, `Token <key>` for `deepgram`) [env: INSIGHT_STT_API_KEY].
    #[arg(long, env = "INSIGHT_STT_API_KEY", hide_env_values = true)]
    pub stt_api_key: Option<String>,

    /// Speech-to-text model; unset, `whisper-1` for `openai`, `nova-3` for `deepgram` and the
    /// provider's default for `assemblyai` (a comma-separated list there is its
    /// `speech_models`) [env: INSIGHT_STT_MODEL].
    #[arg(long, env = "INSIGHT_STT_MODEL")]
    pub stt_model: Option<String>,

    /// Asynchronous speech-to-text: seconds between checks on a transcription that has not
    /// called back yet (the callback, when it comes, makes the check at once) [env: INSIGHT_STT_POLL_SECONDS].
    #[arg(long, env = "INSIGHT_STT_POLL_SECONDS", default_value_t = 30, value_parser = parse_stt_poll_seconds)]
    pub stt_poll_seconds: u64,

    /// Deepgram: seconds to wait for its callback before sending the recording again
    /// (Deepgram keeps no transcript to check on; each resend is an attempt) [env: INSIGHT_STT_CALLBACK_WAIT_SECONDS].
    #[arg(long, env = "INSIGHT_STT_CALLBACK_WAIT_SECONDS", default_value_t = 3_600, value_parser = parse_stt_callback_wait_seconds)]
    pub stt_callback_wait_seconds: u64,
}

/// Which speech-to-text protocol transcribes recordings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SttProvider {
    /// OpenAI-compatible `POST /audio/transcriptions`, answered in the request.
    OpenAi,
    /// AssemblyAI's `/v2/upload` and `/v2/transcript`, which calls back when done.
    AssemblyAi,
    /// Deepgram's `/v1/listen`, with a callback or answered in the request.
    Deepgram,
}

fn parse_stt_provider(value: &str) -> Result<SttProvider, String> {
    match value.trim().to_ascii_lowercase().as_str() {
        "openai" => Ok(SttProvider::OpenAi),
        "assemblyai" => Ok(SttProvider::AssemblyAi),
        "deepgram" => Ok(SttProvider::Deepgram),
        _ => Err(format!(
            "INSIGHT_STT_PROVIDER (--stt-provider) must be openai, assemblyai or deepgram, not {value:?}"
        )),
    }
}

fn parse_stt_base_url(value: &str) -> Result<String, String> {
    if value.starts_with("http://") || value.starts_with("https://") {
        Ok(value.trim_end_matches('/').to_owned())
    } else {
        Err(format!(
            "INSIGHT_STT_BASE_URL (--stt-base-url) must be an http:// or https:// URL, not {value:?}"
        ))
    }
}

fn parse_stt_poll_seconds(value: &str) -> Result<u64, String> {
    parse_number(value, "INSIGHT_STT_POLL_SECONDS", "--stt-poll-seconds", 1..=3_600)
}

fn parse_stt_callback_wait_seconds(value: &str) -> Result<u64, String> {
    parse_number(
        value,
        "INSIGHT_STT_CALLBACK_WAIT_SECONDS",
        "--stt-callback-wait-seconds",
        1..=86_400,
    )
}
