//! What one piece of work sent and used: the instructions of its calls (as sent, the
//! material left out) and its tokens, for the provenance of what it wrote.

use std::sync::{Arc, Mutex, PoisonError};

use super::{Message, Role};
use crate::engines::ai::Usage;

/// Blocks of material in a user message: their content is data, not instructions.
const MATERIAL: &[&str] = &["transcripts", "findings", "reports", "web", "draft", "highlights"];
/// Distinct instructions kept per piece of work; a report of many sections sends a few.
const MOST_PROMPTS: usize = 16;

/// A piece of work's calls so far; clones share it.
#[derive(Debug, Clone, Default)]
pub struct Ledger(Arc<Mutex<Entries>>);

/// What a [`Ledger`] holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entries {
    pub calls: u32,
    pub usage: Usage,
    /// Each distinct (system prompt, user message template) sent, in order.
    pub prompts: Vec<(String, String)>,
}

impl Ledger {
    /// Notes one call that succeeded: what it sent and what it used.
    pub(super) fn note(&self, messages: &[Message], usage: Usage) {
        let system = messages
            .iter()
            .find(|m| m.role == Role::System)
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let user = messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map(|m| template(&m.content))
            .unwrap_or_default();
        let mut entries = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        entries.calls += 1;
        entries.usage += usage;
        let prompt = (system, user);
        if entries.prompts.len() < MOST_PROMPTS && !entries.prompts.contains(&prompt) {
            entries.prompts.push(prompt);
        }
    }

    /// What was noted since the last take, and a fresh start.
    pub fn take(&self) -> Entries {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A user message with the content of its material blocks left out: `<transcripts>…</transcripts>`.
pub fn template(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(4096));
    let mut rest = message;
    'scan: while let Some(at) = rest.find('<') {
        for tag in MATERIAL {
            let open = format!("<{tag}>");
            let close = format!("</{tag}>");
            if rest[at..].starts_with(&open)
                && let Some(end) = rest[at + open.len()..].find(&close)
            {
                out.push_str(&rest[..at]);
                out.push_str(&open);
                out.push('…');
                out.push_str(&close);
                rest = &rest[at + open.len() + end + close.len()..];
                continue 'scan;
            }
        }
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn material_is_left_out_of_the_template() {
        let message = "Study <b>\n<transcripts>\n[A, 00:01] Anna: hello\n</transcripts>\n\n## Task\nWrite <web>\nx\n</web> \
                       and <reports>unclosed";
        assert_eq!(
            template(message),
            "Study <b>\n<transcripts>…</transcripts>\n\n## Task\nWrite <web>…</web> and <reports>unclosed"
        );
        let ledger = Ledger::default();
        let messages = [Message::system("Be exact."), Message::user(message)];
        let usage = Usage {
            prompt_tokens: 10,
            completion_tokens: 2,
        };
        ledger.note(&messages, usage);
        ledger.note(&messages, usage);
        let entries = ledger.take();
        assert_eq!((entries.calls, entries.usage.prompt_tokens), (2, 20));
        assert_eq!(entries.prompts.len(), 1, "the same instructions once");
        assert_eq!(entries.prompts[0].0, "Be exact.");
        assert_eq!(ledger.take(), Entries::default());
    }
}
