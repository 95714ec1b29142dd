//! The speech-to-text provider that transcribes recordings.

use clap::Args;

use super::check::{checked, parse_http_url, ranged};

/// Audio and video records need a speech-to-text provider; text, documents and
/// transcripts do not. Without one, a recording upload gets 503 with a sentence naming
/// these settings. Record processing is described in the [API guide](api.md#records).
///
/// Choosing a provider (keys are placeholders; callbacks need `INSIGHT_PUBLIC_URL` to be
/// the address the provider can reach, e.g. your reverse proxy):
///
/// ```sh
/// # any OpenAI-compatible server: OpenAI, Groq, faster-whisper-server, LocalAI...
/// INSIGHT_STT_BASE_URL=https://api.openai.com/v1 INSIGHT_STT_API_KEY=sk-... cargo run --release -- serve
/// # AssemblyAI, calling back to the public URL (EU: INSIGHT_STT_BASE_URL=https://api.eu.assemblyai.com)
/// INSIGHT_STT_PROVIDER=assemblyai INSIGHT_STT_API_KEY=... \
///   INSIGHT_PUBLIC_URL=https://insight.example.org cargo run --release -- serve
/// # Deepgram, posting the transcript to the public URL
/// INSIGHT_STT_PROVIDER=deepgram INSIGHT_STT_API_KEY=... \
///   INSIGHT_PUBLIC_URL=https://insight.example.org cargo run --release -- serve
/// ```
///
/// The providers' callbacks arrive at `POST /api/webhooks/assemblyai` and
/// `POST /api/webhooks/deepgram`; the reverse proxy must pass them through.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Speech-to-text", verbatim_doc_comment)]
pub struct SpeechSettings {
    /// Speech-to-text provider: `openai`, `assemblyai` or `deepgram`.
    ///
    /// - `openai`: an OpenAI-compatible `/audio/transcriptions`, answered in the request
    ///   while the record's job waits. Needs `INSIGHT_STT_BASE_URL`; unset, there is no
    ///   provider and audio and video get 503.
    ///
    /// - `assemblyai`: asynchronous; AssemblyAI calls back when a transcript is ready. Needs
    ///   `INSIGHT_STT_API_KEY`. Callbacks need `INSIGHT_PUBLIC_URL` to be an address
    ///   AssemblyAI can reach; without one the job checks every `INSIGHT_STT_POLL_SECONDS`.
    ///
    /// - `deepgram`: calls back with the transcript when `INSIGHT_PUBLIC_URL` is an address
    ///   Deepgram can reach, else answers in the request. Needs `INSIGHT_STT_API_KEY`.
    #[arg(long, env = "INSIGHT_STT_PROVIDER", default_value = "openai", value_parser = checked(parse_stt_provider))]
    pub stt_provider: SttProvider,

    /// The provider's API, e.g. `https://api.openai.com/v1` (OpenAI, Groq,
    /// faster-whisper-server, LocalAI...) or AssemblyAI's EU region
    /// `https://api.eu.assemblyai.com`; unset, https://api.assemblyai.com for `assemblyai`,
    /// https://api.deepgram.com for `deepgram`, and no provider for `openai` (audio and video
    /// uploads get 503).
    #[arg(long, env = "INSIGHT_STT_BASE_URL", value_parser = checked(parse_http_url))]
    pub stt_base_url: Option<String>,

    /// The provider's API key: a bearer token for `openai`, the `authorization` header for
    /// `assemblyai`, `Token <key>` for `deepgram`. Never logged.
    #[arg(long, env = "INSIGHT_STT_API_KEY", hide_env_values = true)]
    pub stt_api_key: Option<String>,

    /// Speech-to-text model; unset, `whisper-1` for `openai`, `nova-3` for `deepgram` and the
    /// provider's default for `assemblyai` (a comma-separated list there is its
    /// `speech_models`).
    #[arg(long, env = "INSIGHT_STT_MODEL")]
    pub stt_model: Option<String>,

    /// `assemblyai`: seconds between checks on a transcription that has not called back yet
    /// (the callback, when it comes, makes the check at once).
    #[arg(long, env = "INSIGHT_STT_POLL_SECONDS", default_value_t = 30, value_parser = ranged::<u64>(1..=3_600))]
    pub stt_poll_seconds: u64,

    /// `deepgram`: seconds to wait for its callback before sending the recording again
    /// (Deepgram keeps no transcript to check on; each resend is an attempt of the job, see
    /// `INSIGHT_JOB_MAX_ATTEMPTS`).
    #[arg(long, env = "INSIGHT_STT_CALLBACK_WAIT_SECONDS", default_value_t = 3_600, value_parser = ranged::<u64>(1..=86_400))]
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
        _ => Err("must be openai, assemblyai or deepgram".into()),
    }
}
