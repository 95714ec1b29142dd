//! Voice interviews over LiveKit, and the interviewer agent that runs them.

use clap::Args;

#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Interviews and voice")]
pub struct InterviewsSettings {
    /// LiveKit server for voice interviews, e.g. wss://example.livekit.cloud; with the API key and
    /// secret, the join answer carries a LiveKit access token [env: INSIGHT_LIVEKIT_URL].
    #[arg(long, env = "INSIGHT_LIVEKIT_URL", value_parser = parse_livekit_url)]
    pub livekit_url: Option<String>,

    /// LiveKit API key [env: INSIGHT_LIVEKIT_API_KEY].
    #[arg(long, env = "INSIGHT_LIVEKIT_API_KEY", hide_env_values = true)]
    pub livekit_api_key: Option<String>,

    /// LiveKit API secret: signs access tokens, verifies LiveKit's webhooks [env: INSIGHT_LIVEKIT_API_SECRET].
    #[arg(long, env = "INSIGHT_LIVEKIT_API_SECRET", hide_env_values = true)]
    pub livekit_api_secret: Option<String>,

    /// The interviewer agent's secret (16 or more characters), sent as X-Agent-Secret to
    /// agent-config and session-report; unset, those answer 401 [env: INSIGHT_AGENT_SECRET].
    #[arg(long, env = "INSIGHT_AGENT_SECRET", hide_env_values = true, value_parser = parse_agent_secret)]
    pub agent_secret: Option<crate::secret::KeyMaterial>,
}

fn parse_livekit_url(value: &str) -> Result<String, String> {
    if ["ws://", "wss://", "http://", "https://"]
        .iter()
        .any(|scheme| value.starts_with(scheme))
    {
        Ok(value.trim_end_matches('/').to_owned())
    } else {
        Err(format!(
            "INSIGHT_LIVEKIT_URL (--livekit-url) must be a wss://, ws://, https:// or http:// URL, not {value:?}"
        ))
    }
}

fn parse_agent_secret(value: &str) -> Result<crate::secret::KeyMaterial, String> {
    if value.chars().count() >= 16 {
        Ok(crate::secret::KeyMaterial::new(value))
    } else {
        Err("INSIGHT_AGENT_SECRET (--agent-secret) must be at least 16 characters long".into())
    }
}
