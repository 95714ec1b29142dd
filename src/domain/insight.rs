//! Insights: a project's findings, each a title and a Markdown body resting on highlights
//! as evidence, so a reader can go from the claim to what respondents said.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::highlight::{Highlight, HighlightStatus};
use super::patch::Patch;

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Insight {
    pub id: Uuid,
    pub project_id: Uuid,
    pub title: String,
    /// Markdown.
    pub body: String,
    /// The evidence, in the order the author gave.
    pub highlights: Vec<Highlight>,
    pub author_email: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A new insight.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct InsightCreate {
    #[schema(min_length = 1, max_length = 300)]
    pub title: String,
    #[serde(default)]
    #[schema(required = false, max_length = 50000)]
    pub body: Option<String>,
    /// Highlights of the same project.
    #[serde(default)]
    #[schema(required = false, max_items = 200)]
    pub highlight_ids: Vec<Uuid>,
}

/// A change to an insight; a field left out stays.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct InsightUpdate {
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, min_length = 1, max_length = 300)]
    pub title: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, max_length = 50000)]
    pub body: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<Uuid>>, required = false, max_items = 200)]
    pub highlight_ids: Patch<Vec<Uuid>>,
}

/// The heading of the section of a report that holds the insights it includes.
pub const REPORT_SECTION: &str = "## Insights";

/// The section of a report holding `insights`, in their order: each its title, its body (its
/// headings moved under the title's) and its evidence quoted with citations, a detached one
/// marked as such. Empty without insights.
pub fn report_section(insights: &[Insight]) -> String {
    if insights.is_empty() {
        return String::new();
    }
    let mut out = format!("{REPORT_SECTION}\n");
    for insight in insights {
        out.push_str(&format!("\n### {}\n", one_line(&insight.title)));
        let body = insight.body.trim();
        if !body.is_empty() {
            out.push('\n');
            out.push_str(&demote_headings(body));
            out.push('\n');
        }
        for highlight in &insight.highlights {
            let quote = highlight.quote.lines().map(one_line).collect::<Vec<_>>().join(" … ");
            out.push_str(&format!(
                "\n> \"{quote}\" — {} {}",
                one_line(&highlight.speaker),
                super::record::citation(&highlight.record_name, highlight.start.utterance_id, highlight.start_ms)
            ));
            if highlight.status == HighlightStatus::Detached {
                out.push_str(" _(the transcript has changed here since)_");
            }
            out.push('\n');
        }
    }
    out
}

/// `content` with its insights section replaced by `section` (removed when empty), right
/// under the report's `# title` line.
pub fn with_report_section(content: &str, section: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut inside = false;
    for line in content.lines() {
        if line.trim_end() == REPORT_SECTION {
            inside = true;
            continue;
        }
        if inside && (line.starts_with("## ") || line.starts_with("# ")) {
            inside = false;
        }
        if !inside {
            kept.push(line);
        }
    }
    let rest = kept.join("\n");
    let rest = rest.trim();
    let (title, rest) = match rest.split_once('\n') {
        Some((first, after)) if first.starts_with("# ") => (Some(first), after.trim()),
        None if rest.starts_with("# ") => (Some(rest), ""),
        _ => (None, rest),
    };
    let parts: Vec<&str> = [title.unwrap_or_default(), section.trim(), rest]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect();
    format!("{}\n", parts.join("\n\n"))
}

/// Headings of a body moved three levels down (at most to `######`), outside code fences,
/// so that they sit under the insight's own `###` title.
fn demote_headings(body: &str) -> String {
    let mut fenced = false;
    body.lines()
        .map(|line| {
            if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
                fenced = !fenced;
            }
            let text = line.trim_start_matches('#');
            let level = line.len() - text.len();
            if !fenced && level > 0 && text.starts_with(' ') {
                format!("{}{text}", "#".repeat((level + 3).min(6)))
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
