//! Findings a model notes from part of the material when it does not fit one call
//! (map-reduce): their shape, their schema, how they are grouped to fit, and their
//! quotes checked against the material.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::engines::ai::prompt::{Line, defuse};
use crate::engines::ai::quotes::QuoteSource;
use crate::engines::ai::text::{Spaces, normalize, one_line};

/// Findings with quotes, as drawn from part of the material.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct Notes {
    #[serde(default)]
    pub(super) findings: Vec<Finding>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(super) struct Finding {
    #[serde(default)]
    pub(super) finding: String,
    #[serde(default)]
    pub(super) quotes: Vec<Quote>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(super) struct Quote {
    #[serde(default)]
    pub(super) text: String,
    #[serde(default)]
    pub(super) citation: String,
}

pub(super) fn notes_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "findings": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "finding": {"type": "string"},
                        "quotes": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"text": {"type": "string"}, "citation": {"type": "string"}},
                                "required": ["text", "citation"],
                                "additionalProperties": false
                            }
                        }
                    },
                    "required": ["finding", "quotes"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["findings"],
        "additionalProperties": false
    })
}

pub(super) fn render_finding(finding: &Finding) -> String {
    let mut text = format!("- {}", defuse(&one_line(&finding.finding, Spaces::Kept)));
    for quote in &finding.quotes {
        text.push_str(&format!(
            "\n  - \"{}\" {}",
            defuse(&one_line(&quote.text, Spaces::Kept)),
            defuse(&quote.citation)
        ));
    }
    text
}

pub(super) fn render_findings(findings: &[Finding]) -> String {
    findings.iter().map(render_finding).collect::<Vec<_>>().join("\n")
}

/// The lines in order, in chunks of at most `budget` tokens (a line's newline
/// counted); a line longer than a chunk is truncated.
pub(super) fn chunk_lines(lines: &[Line], budget: usize) -> Vec<Vec<Line>> {
    let mut chunks = Vec::new();
    let mut chunk: Vec<Line> = Vec::new();
    let mut used = 0;
    for line in lines {
        let line = if line.tokens + 1 > budget {
            line.truncated(budget.saturating_sub(1))
        } else {
            line.clone()
        };
        if used + line.tokens + 1 > budget && !chunk.is_empty() {
            chunks.push(std::mem::take(&mut chunk));
            used = 0;
        }
        used += line.tokens + 1;
        chunk.push(line);
    }
    if !chunk.is_empty() {
        chunks.push(chunk);
    }
    chunks
}

/// Findings in order, in groups whose rendering takes at most `budget` tokens; one
/// finding alone over it is left out.
pub(super) fn group_findings(findings: Vec<Finding>, tokens: &[usize], budget: usize) -> Vec<Vec<Finding>> {
    let mut groups = Vec::new();
    let mut group = Vec::new();
    let mut used = 0;
    for (finding, &tokens) in findings.into_iter().zip(tokens) {
        if tokens > budget {
            continue;
        }
        if used + tokens > budget && !group.is_empty() {
            groups.push(std::mem::take(&mut group));
            used = 0;
        }
        used += tokens;
        group.push(finding);
    }
    if !group.is_empty() {
        groups.push(group);
    }
    groups
}

/// Checks that quotes are in the material, and sets their citations to the utterance
/// they come from.
pub(super) struct QuoteChecker {
    /// Each utterance's own words, with its citation.
    utterances: QuoteSource<String>,
}

impl QuoteChecker {
    pub(super) fn new(lines: &[Line]) -> Self {
        let utterances = lines
            .iter()
            .map(|line| (&line.text[line.words_from..], line.citation.clone()));
        Self {
            utterances: QuoteSource::new(utterances),
        }
    }

    /// The findings with their quotes checked; those left with no quote dropped.
    pub(super) fn check(&self, findings: Vec<Finding>) -> Vec<Finding> {
        let total = findings.len();
        let kept: Vec<Finding> = findings
            .into_iter()
            .filter_map(|finding| {
                let quotes: Vec<Quote> = finding.quotes.iter().filter_map(|quote| self.quote(quote)).collect();
                let text = finding.finding.trim();
                (!text.is_empty() && !quotes.is_empty()).then(|| Finding {
                    finding: text.to_owned(),
                    quotes,
                })
            })
            .collect();
        if kept.len() < total {
            tracing::debug!(
                dropped = total - kept.len(),
                "findings without a quote found in the material dropped"
            );
        }
        kept
    }

    fn quote(&self, quote: &Quote) -> Option<Quote> {
        let text = quote
            .text
            .trim()
            .trim_matches(|c: char| matches!(c, '"' | '“' | '”' | '„' | '«' | '»' | '\''))
            .trim_matches(|c: char| c == '…' || c == '.' || c.is_whitespace());
        let needle = normalize(text);
        if needle.chars().count() < 3 {
            return None;
        }
        let given = quote.citation.trim();
        let citation = self.utterances.find(&needle, |citation| citation == given)?;
        Some(Quote {
            text: text.to_owned(),
            citation: citation.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::tests::sources;
    use super::*;
    use crate::engines::ai::openai::count_tokens;
    use crate::engines::ai::prompt::{TRUNCATED, render_lines};

    #[test]
    fn chunks_never_split_an_utterance_and_truncate_a_long_one() {
        let mut sources = sources(40, 20);
        sources[7].text = "very ".repeat(2_000);
        let lines: Vec<Line> = sources.iter().map(Line::new).collect();
        let chunks = chunk_lines(&lines, 300);
        assert!(chunks.len() > 3);
        let all: Vec<&Line> = chunks.iter().flatten().collect();
        assert_eq!(all.len(), lines.len());
        for chunk in &chunks {
            let text = render_lines(chunk.iter());
            assert!(count_tokens(&text) <= 300, "{}", count_tokens(&text));
        }
        for (line, original) in all.iter().zip(&lines) {
            if line.citation == lines[7].citation && line.text.ends_with(TRUNCATED) {
                assert!(original.text.starts_with(line.text.trim_end_matches(TRUNCATED)));
                assert!(line.tokens <= 299);
            } else {
                assert_eq!(line.text, original.text);
            }
        }
        assert!(all[7].text.ends_with(TRUNCATED));
    }

    #[test]
    fn checks_quotes_against_the_material() {
        let lines: Vec<Line> = sources(4, 8).iter().map(Line::new).collect();
        let checker = QuoteChecker::new(&lines);
        let quote = |text: &str, citation: &str| Quote {
            text: text.into(),
            citation: citation.into(),
        };
        let findings = vec![
            Finding {
                finding: "Real.".into(),
                quotes: vec![
                    // Right words, wrong citation: fixed.
                    quote("“Point 2: asked for my address”", "[Interview 9, 00:00]"),
                    quote("not in the material", "[Interview 1, 00:00]"),
                    // The speaker label is no quote.
                    quote("Dana (respondent)", "[Interview 2, 00:07]"),
                ],
            },
            Finding {
                finding: "Invented.".into(),
                quotes: vec![quote("nothing like this", "[Interview 1, 00:00]")],
            },
        ];
        let checked = checker.check(findings);
        assert_eq!(
            checked,
            vec![Finding {
                finding: "Real.".into(),
                quotes: vec![quote("Point 2: asked for my address", "[Interview 1, 00:14]")]
            }]
        );
    }
}
