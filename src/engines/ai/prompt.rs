//! What every prompt to a model shares: material as data inside labelled blocks, one
//! utterance a line, and the token arithmetic of a request.

use super::openai::{Message, count_tokens};
use super::text::{Spaces, one_line};
use super::{Source, citation};

/// Share of the context window left unused: other models' tokenizers count more
/// tokens than `o200k_base` for the same text.
pub(crate) const MARGIN_PERCENT: usize = 10;
/// Tokens a chat template adds around each message.
pub(crate) const MESSAGE_TOKENS: usize = 8;
/// Marks an utterance cut to fit a chunk.
pub(crate) const TRUNCATED: &str = " […truncated]";
/// The blocks that hold data in a user message.
const BLOCK_TAGS: [&str; 8] = [
    "transcripts",
    "findings",
    "draft",
    "reports",
    "web",
    "research_goals",
    "interview_guide",
    "topics_told_to_the_respondent",
];

/// One utterance as a line of material.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub(crate) text: String,
    pub(crate) tokens: usize,
    pub(crate) citation: String,
    /// Where the utterance's own words start in `text`.
    pub(crate) words_from: usize,
}

impl Line {
    pub(crate) fn new(source: &Source) -> Self {
        let (prefix, words) = line_parts(source);
        let words_from = prefix.len();
        let text = prefix + &words;
        Self {
            tokens: count_tokens(&text),
            citation: citation(source),
            text,
            words_from,
        }
    }
    pub(crate) fn truncated(&self, max: usize) -> Self {
        let marker = count_tokens(TRUNCATED);
        let boundaries: Vec<usize> = self.text.char_indices().map(|(index, _)| index).collect();
        let (mut low, mut high) = (0, boundaries.len());
        // The longest prefix that fits, by binary search over char boundaries.
        while low < high {
            let middle = (low + high).div_ceil(2);
            if count_tokens(&self.text[..boundaries[middle - 1]]) + marker <= max {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        let end = if low == 0 { 0 } else { boundaries[low - 1] };
        let text = format!("{}{TRUNCATED}", &self.text[..end]);
        Self {
            tokens: count_tokens(&text),
            text,
            citation: self.citation.clone(),
            words_from: self.words_from.min(end),
        }
    }
}

/// The text with anything that would open or close one of the data blocks made inert
/// (`<` becomes `‹`), so material cannot end its block and speak as the prompt.
pub(crate) fn defuse(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (index, _) in lower.match_indices('<') {
        let rest = &lower[index + 1..];
        let rest = rest.trim_start();
        let rest = rest.strip_prefix('/').unwrap_or(rest).trim_start();
        if BLOCK_TAGS.iter().any(|tag| rest.starts_with(tag)) {
            out.push_str(&text[last..index]);
            out.push('‹');
            last = index + 1;
        }
    }
    out.push_str(&text[last..]);
    out
}

pub(crate) fn render_lines<'a>(lines: impl Iterator<Item = &'a Line>) -> String {
    lines.map(|line| line.text.as_str()).collect::<Vec<_>>().join("\n")
}
/// Tokens of a request's messages, as a chat template lays them out.
pub(crate) fn prompt_tokens(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|message| count_tokens(&message.content) + MESSAGE_TOKENS)
        .sum::<usize>()
        + 3
}

/// The study's text as a prompt shows it: trimmed, or `(not given)`.
pub(crate) fn given(text: &str) -> String {
    if text.trim().is_empty() {
        "(not given)".to_owned()
    } else {
        text.trim().to_owned()
    }
}

/// An utterance as a line of material, `[record name, mm:ss] Speaker (role): text`,
/// defused; as [`Line`] holds it, without counting its tokens.
pub(crate) fn line_text(source: &Source) -> String {
    let (prefix, words) = line_parts(source);
    prefix + &words
}

/// A line's prefix (citation, speaker, role) and the utterance's words, each defused.
fn line_parts(source: &Source) -> (String, String) {
    let speaker = one_line(source.speaker.trim(), Spaces::Kept);
    let speaker = if speaker.is_empty() {
        "Speaker".to_owned()
    } else {
        speaker
    };
    let role = if source.is_respondent {
        "respondent"
    } else {
        "interviewer"
    };
    let prefix = defuse(&format!("{} {speaker} ({role}): ", citation(source)));
    (prefix, defuse(&one_line(source.text.trim(), Spaces::Kept)))
}
