//! The provenance of AI output: what an engine's ledger noted, priced, with the records
//! read and the time taken.

use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::domain::report::TokenUsage;
use crate::domain::usage::{Prices, PromptSent, Provenance, RecordVersion, SectionProvenance};
use crate::engines::ai::Engine;
use crate::engines::ai::openai::Entries;

/// The provenance of what `engine` wrote since its ledger was last taken.
pub fn provenance(prices: &Prices, engine: &Engine, records: Vec<RecordVersion>, elapsed: Duration) -> Provenance {
    let entries = engine.take_ledger();
    let (usage, cost) = priced(prices, engine, &entries);
    Provenance {
        engine: engine.name().to_owned(),
        model: matches!(engine, Engine::OpenAi(_)).then(|| engine.model().to_owned()),
        prompt_version: version(engine, &entries.prompts),
        prompts: entries
            .prompts
            .into_iter()
            .map(|(system, user)| PromptSent { system, user })
            .collect(),
        records,
        usage,
        cost,
        duration_ms: millis(elapsed),
        sections: Vec::new(),
    }
}

/// One report section's share, from what `engine` noted since the last take; its
/// instructions go into `prompts` (each once) for the report's provenance.
pub fn section(
    prices: &Prices,
    engine: &Engine,
    title: &str,
    elapsed: Duration,
    prompts: &mut Vec<PromptSent>,
) -> SectionProvenance {
    let entries = engine.take_ledger();
    let (usage, cost) = priced(prices, engine, &entries);
    let prompt_version = version(engine, &entries.prompts);
    for (system, user) in entries.prompts {
        let sent = PromptSent { system, user };
        if !prompts.contains(&sent) {
            prompts.push(sent);
        }
    }
    SectionProvenance {
        title: title.to_owned(),
        prompt_version,
        usage,
        cost,
        duration_ms: millis(elapsed),
    }
}

/// A report's provenance from its sections'.
pub fn report(
    engine: &Engine,
    sections: Vec<SectionProvenance>,
    prompts: Vec<PromptSent>,
    records: Vec<RecordVersion>,
    elapsed: Duration,
) -> Provenance {
    let pairs: Vec<(String, String)> = prompts.iter().map(|p| (p.system.clone(), p.user.clone())).collect();
    Provenance {
        engine: engine.name().to_owned(),
        model: matches!(engine, Engine::OpenAi(_)).then(|| engine.model().to_owned()),
        prompt_version: version(engine, &pairs),
        prompts,
        records,
        usage: TokenUsage {
            prompt_tokens: sections.iter().map(|s| s.usage.prompt_tokens).sum(),
            completion_tokens: sections.iter().map(|s| s.usage.completion_tokens).sum(),
        },
        cost: sections.iter().map(|s| s.cost).sum(),
        duration_ms: millis(elapsed),
        sections,
    }
}

fn priced(prices: &Prices, engine: &Engine, entries: &Entries) -> (TokenUsage, f64) {
    let usage = TokenUsage {
        prompt_tokens: i64::try_from(entries.usage.prompt_tokens).unwrap_or(i64::MAX),
        completion_tokens: i64::try_from(entries.usage.completion_tokens).unwrap_or(i64::MAX),
    };
    let cost = match engine {
        Engine::Offline => 0.0,
        Engine::OpenAi(_) => prices
            .of(engine.model())
            .cost(entries.usage.prompt_tokens, entries.usage.completion_tokens),
    };
    (usage, cost)
}

/// A short digest of the instructions; the offline engine's release, which sends none.
fn version(engine: &Engine, prompts: &[(String, String)]) -> String {
    if matches!(engine, Engine::Offline) {
        return format!("offline-{}", env!("CARGO_PKG_VERSION"));
    }
    let mut digest = Sha256::new();
    for (system, user) in prompts {
        digest.update(system.as_bytes());
        digest.update([0]);
        digest.update(user.as_bytes());
        digest.update([0]);
    }
    digest.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect()
}

fn millis(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}
