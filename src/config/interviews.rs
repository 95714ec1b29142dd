//! Voice interviews over LiveKit, and the interviewer agent that runs them.

use clap::Args;

use super::check::checked;

/// Typed AI-led interviews need no setting of their own, but three shared ones matter:
///
/// - `INSIGHT_PUBLIC_URL` makes the room links (`INSIGHT_PUBLIC_URL/interview/{access_token}`);
///   set it to the address respondents reach.
/// - `INSIGHT_SECRET_KEY` (or the key file in `INSIGHT_DATA_DIR`) derives every link and
///   session; changing it makes every link handed out so far stop working.
/// - `INSIGHT_PUBLIC_RATE_PER_MINUTE` and `INSIGHT_PUBLIC_RATE_BURST` limit the public
///   endpoints, and `INSIGHT_QUOTA_ROOMS_PER_DAY` the rooms a user may create.
///
/// With a model (`INSIGHT_LLM_BASE_URL`) the model interviews; without, the offline
/// interviewer asks the guide's questions.
///
/// Voice interviews run on a LiveKit server with the interviewer agent
/// `agents/livekit/interviewer.py`. They need all four settings below, and the agent
/// running with matching settings.
///
/// Point LiveKit's webhooks at `INSIGHT_PUBLIC_URL/api/webhooks/livekit` (LiveKit signs
/// them with the same API key and secret): the respondent joining starts a room not
/// started yet, and the room finishing completes an interview whose transcript is in.
///
/// The agent (`pip install -r agents/livekit/requirements.txt`, then
/// `python agents/livekit/interviewer.py start`) reads its own environment, described in
/// its docstring: `INSIGHT_URL` (Insight's base URL), `INSIGHT_AGENT_SECRET` (the same
/// secret), `LIVEKIT_URL`, `LIVEKIT_API_KEY`, `LIVEKIT_API_SECRET` (the same LiveKit
/// project), and `AGENT_LLM_*`, `AGENT_STT_*`, `AGENT_TTS_*` for the model,
/// speech-to-text and text-to-speech it speaks through (any OpenAI-compatible servers).
#[derive(Debug, Clone, Args)]
#[command(
    next_help_heading = "Interviews and voice interviews (LiveKit)",
    verbatim_doc_comment
)]
pub struct InterviewsSettings {
    /// LiveKit server for voice interviews, e.g. wss://example.livekit.cloud (`ws://`,
    /// `https://` and `http://` are also accepted); with the API key and secret, the join
    /// answer carries a LiveKit access token.
    ///
    /// The three LiveKit settings go together: all three or none, else the start stops
    /// naming the missing ones. With all three, the join answer carries
    /// `livekit: {url, token, room, identity, expires_at}`, a LiveKit access token for the
    /// respondent, and `POST /api/webhooks/livekit` accepts LiveKit's webhooks. The
    /// respondent's token alone makes no interview: nobody asks questions and no transcript
    /// comes back unless the agent runs, and the agent needs `INSIGHT_AGENT_SECRET`.
    #[arg(long, env = "INSIGHT_LIVEKIT_URL", value_parser = checked(parse_livekit_url))]
    pub livekit_url: Option<String>,

    /// LiveKit API key, named in the access tokens. Needs the URL and secret.
    #[arg(long, env = "INSIGHT_LIVEKIT_API_KEY", hide_env_values = true)]
    pub livekit_api_key: Option<String>,

    /// LiveKit API secret: signs access tokens (HS256), verifies LiveKit's webhooks. Never
    /// logged. Needs the URL and key.
    ///
    /// Unset, `POST /api/webhooks/livekit` answers 401.
    #[arg(long, env = "INSIGHT_LIVEKIT_API_SECRET", hide_env_values = true)]
    pub livekit_api_secret: Option<String>,

    /// The interviewer agent's secret (16 or more characters), sent as X-Agent-Secret to
    /// agent-config and session-report; unset, those answer 401.
    ///
    /// The agent sends it to `GET /api/interviews/agent-config/{room_id}` (its instructions)
    /// and `POST /api/interviews/session-report` (the transcript). Unset, no secret can be
    /// right, so the agent can neither start an interview nor deliver its transcript. Give
    /// the agent the same value.
    #[arg(long, env = "INSIGHT_AGENT_SECRET", hide_env_values = true, value_parser = checked(parse_agent_secret))]
    pub agent_secret: Option<crate::secret::KeyMaterial>,
}

fn parse_livekit_url(value: &str) -> Result<String, String> {
    if ["ws://", "wss://", "http://", "https://"]
        .iter()
        .any(|scheme| value.starts_with(scheme))
    {
        Ok(value.trim_end_matches('/').to_owned())
    } else {
        Err("must be a wss://, ws://, https:// or http:// URL".into())
    }
}

fn parse_agent_secret(value: &str) -> Result<crate::secret::KeyMaterial, String> {
    if value.chars().count() >= 16 {
        Ok(crate::secret::KeyMaterial::new(value))
    } else {
        Err("must be at least 16 characters long".into())
    }
}
