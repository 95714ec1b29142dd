//! What AI work costs: prices per model, the usage a workspace's work recorded, and the
//! estimate of a report before it is queued.

use serde::Serialize;
use utoipa::ToSchema;

/// Currency units per million tokens, in and out.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

impl Price {
    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.input + completion_tokens as f64 * self.output) / 1_000_000.0
    }
}

/// List prices of common hosted models (USD per million tokens, as their providers
/// publish them); a model matches the longest name its own starts with. Local and
/// unknown models cost 0.
const DEFAULT_PRICES: &[(&str, f64, f64)] = &[
    ("gpt-4o", 2.50, 10.00),
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4.1", 2.00, 8.00),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1-nano", 0.10, 0.40),
    ("gpt-5", 1.25, 10.00),
    ("gpt-5-mini", 0.25, 2.00),
    ("gpt-5-nano", 0.05, 0.40),
    ("o1", 15.00, 60.00),
    ("o3", 2.00, 8.00),
    ("o3-mini", 1.10, 4.40),
    ("o4-mini", 1.10, 4.40),
    ("claude-3-5-haiku", 0.80, 4.00),
    ("claude-3-5-sonnet", 3.00, 15.00),
    ("claude-3-7-sonnet", 3.00, 15.00),
    ("claude-sonnet-4", 3.00, 15.00),
    ("claude-haiku-4", 1.00, 5.00),
    ("claude-opus-4", 15.00, 75.00),
    ("gemini-2.0-flash", 0.10, 0.40),
    ("gemini-2.5-flash", 0.30, 2.50),
    ("gemini-2.5-pro", 1.25, 10.00),
    ("mistral-large", 2.00, 6.00),
    ("mistral-small", 0.10, 0.30),
];

/// The prices the instance charges its work at (`INSIGHT_LLM_PRICES` over the defaults).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prices {
    set: Vec<(String, Price)>,
}

impl Prices {
    /// Parses `model=input/output,...`; an empty value sets nothing.
    pub fn parse(value: &str) -> Result<Self, String> {
        let mut set = Vec::new();
        for item in value.split(',').map(str::trim).filter(|item| !item.is_empty()) {
            let problem = || {
                format!("INSIGHT_LLM_PRICES: {item:?} is not model=input/output (currency units per million tokens)")
            };
            let (model, prices) = item.split_once('=').ok_or_else(problem)?;
            let (input, output) = prices.split_once('/').ok_or_else(problem)?;
            let parse = |text: &str| {
                text.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|p| p.is_finite() && *p >= 0.0)
                    .ok_or_else(problem)
            };
            let model = model.trim();
            if model.is_empty() {
                return Err(problem());
            }
            set.push((
                model.to_owned(),
                Price {
                    input: parse(input)?,
                    output: parse(output)?,
                },
            ));
        }
        Ok(Self { set })
    }

    /// The model's price: as set, else the default of the longest known name it starts
    /// with (a dated snapshot such as `gpt-4o-mini-2024-07-18`), else 0.
    pub fn of(&self, model: &str) -> Price {
        if let Some((_, price)) = self.set.iter().find(|(name, _)| name.eq_ignore_ascii_case(model)) {
            return *price;
        }
        let lower = model.to_ascii_lowercase();
        // Provider prefixes such as `openai/` (OpenRouter) are not part of the name.
        let bare = lower.rsplit('/').next().unwrap_or(&lower);
        DEFAULT_PRICES
            .iter()
            .filter(|(name, _, _)| bare.starts_with(name))
            .max_by_key(|(name, _, _)| name.len())
            .map_or(
                Price {
                    input: 0.0,
                    output: 0.0,
                },
                |&(_, input, output)| Price { input, output },
            )
    }
}

super::string_enum! {
    /// What AI work was for.
    UsageKind {
        Report = "report",
        Chat = "chat",
        Assistant = "assistant",
        Persona = "persona",
        Suggestions = "suggestions",
        Themes = "themes",
        Interview = "interview",
    }
}

/// One line of a month's usage: a kind of work on one model.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct UsageLine {
    pub kind: UsageKind,
    pub model: String,
    pub calls: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cost: f64,
}

/// A workspace's usage in a month (`GET /workspaces/{id}/usage`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct UsageReport {
    /// `YYYY-MM`, in UTC.
    pub month: String,
    pub currency: String,
    pub total_cost: f64,
    /// The workspace's monthly budget, if it has one.
    pub budget: Option<f64>,
    pub lines: Vec<UsageLine>,
}

/// What a report would take (`POST /projects/{id}/reports/estimate`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Estimate {
    pub prompt_tokens: u64,
    /// A typical answer's length for each call (an eighth of the most it may write).
    pub completion_tokens: u64,
    pub cost: f64,
    pub currency: String,
    /// The model that would write it (`offline` for the offline engine, which costs nothing).
    pub model: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_are_set_defaulted_by_prefix_or_zero() {
        let prices = Prices::parse("gpt-4o-mini=1/2, my-local=0/0").expect("parses");
        assert_eq!(
            prices.of("gpt-4o-mini"),
            Price {
                input: 1.0,
                output: 2.0
            }
        );
        assert_eq!(
            prices.of("gpt-4o-2024-08-06"),
            Price {
                input: 2.5,
                output: 10.0
            }
        );
        assert_eq!(
            prices.of("openai/gpt-4.1-mini"),
            Price {
                input: 0.4,
                output: 1.6
            }
        );
        assert_eq!(
            prices.of("llama3.1:8b"),
            Price {
                input: 0.0,
                output: 0.0
            }
        );
        assert!((prices.of("gpt-4o").cost(1_000_000, 500_000) - 7.5).abs() < 1e-9);
        for bad in ["gpt=1", "=1/2", "x=a/b", "x=-1/2", "x=1/NaN"] {
            assert!(Prices::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Prices::parse("").expect("empty"), Prices::default());
    }
}

/// Tokens a piece of AI work used (a report's generation, an answer...).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
pub struct TokenUsage {
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
}

/// What produced a piece of AI output (a report's generation, a chat answer, a persona):
/// the engine and model, the instructions they were given, the material and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, ToSchema)]
pub struct Provenance {
    /// `offline` or `openai`.
    pub engine: String,
    /// The model that wrote; none for the offline engine.
    pub model: Option<String>,
    /// A digest of the instructions sent: two outputs of one version were asked alike
    /// (`offline-<release>` for the offline engine, which sends none).
    pub prompt_version: String,
    /// Each distinct instruction sent, as sent (personal data as placeholders), with the
    /// material of the user message left out.
    pub prompts: Vec<PromptSent>,
    /// The records it was written from, at the version it read.
    pub records: Vec<RecordVersion>,
    pub usage: TokenUsage,
    /// At the instance's prices when it was written, in the workspace's currency.
    pub cost: f64,
    pub duration_ms: u64,
    /// A report's: each section's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<SectionProvenance>,
}

/// One instruction sent to a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
pub struct PromptSent {
    pub system: String,
    /// The user message, its material blocks shown as `<transcripts>…</transcripts>`.
    pub user: String,
}

/// A record as a piece of AI output read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
pub struct RecordVersion {
    pub id: uuid::Uuid,
    /// The record's `updated_at` then.
    pub version: chrono::DateTime<chrono::Utc>,
}

/// A report section's share of its generation.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, ToSchema)]
pub struct SectionProvenance {
    pub title: String,
    pub prompt_version: String,
    pub usage: TokenUsage,
    pub cost: f64,
    pub duration_ms: u64,
}
