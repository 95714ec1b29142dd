//! Highlights: the unit of research evidence, a span of a transcript (from one utterance
//! and character to another) with the words it quotes, its tags and a note. When the
//! transcript under it is corrected, a highlight follows its words or is marked detached,
//! never left quoting what is no longer there.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::patch::Patch;

/// Where a highlight starts or ends: an utterance and an offset in its text, counted in
/// Unicode scalar values (a start offset is the first character in, an end offset the
/// first after).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
pub struct Anchor {
    #[schema(minimum = 1)]
    pub utterance_id: i64,
    #[schema(minimum = 0)]
    pub offset: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HighlightStatus {
    /// Made or accepted by a person, and quoting the transcript as it is.
    Ok,
    /// The transcript under it was corrected so that its words are gone: the quote is what
    /// it said, and a person should place it again (or delete it).
    Detached,
    /// Proposed by the AI and not yet accepted (`PATCH {status: ok}`) or rejected (`DELETE`).
    Suggested,
}

impl HighlightStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            HighlightStatus::Ok => "ok",
            HighlightStatus::Detached => "detached",
            HighlightStatus::Suggested => "suggested",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "ok" => Some(HighlightStatus::Ok),
            "detached" => Some(HighlightStatus::Detached),
            "suggested" => Some(HighlightStatus::Suggested),
            _ => None,
        }
    }
}

/// A tag as a highlight shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct TagRef {
    pub id: Uuid,
    pub name: String,
    pub color: String,
}

/// An insight that cites a highlight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct InsightRef {
    pub id: Uuid,
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Highlight {
    pub id: Uuid,
    pub record_id: Uuid,
    pub record_name: String,
    pub project_id: Uuid,
    pub start: Anchor,
    pub end: Anchor,
    /// The words highlighted, exactly; utterances are joined by a line break.
    pub quote: String,
    /// Who says the first words.
    pub speaker: String,
    pub is_respondent: bool,
    /// When the first utterance begins, when the record has times.
    pub start_ms: Option<i64>,
    pub tags: Vec<TagRef>,
    pub note: String,
    pub status: HighlightStatus,
    /// Who made it (or asked for the suggestion); null once that account is gone.
    pub author_email: Option<String>,
    /// The insights that cite it as evidence.
    pub insights: Vec<InsightRef>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// What suggested it (left out of a person's highlight).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false, nullable = false)]
    pub provenance: Option<crate::domain::usage::Provenance>,
}

/// A new highlight.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct HighlightCreate {
    pub start: Anchor,
    /// At or after `start`.
    pub end: Anchor,
    /// Tags of the record's workspace.
    #[serde(default)]
    #[schema(required = false, max_items = 50)]
    pub tag_ids: Vec<Uuid>,
    #[serde(default)]
    #[schema(required = false, max_length = 10000)]
    pub note: Option<String>,
}

/// A change to a highlight: a field left out stays. `status: "ok"` accepts a suggestion;
/// new `start` and `end` place it again (a detached one becomes `ok`).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct HighlightUpdate {
    #[serde(default)]
    #[schema(value_type = Option<Vec<Uuid>>, required = false, max_items = 50)]
    pub tag_ids: Patch<Vec<Uuid>>,
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, max_length = 10000)]
    pub note: Patch<String>,
    /// Only `ok`, which accepts a suggestion.
    #[serde(default)]
    #[schema(value_type = Option<HighlightStatus>, required = false)]
    pub status: Patch<HighlightStatus>,
    #[serde(default)]
    #[schema(value_type = Option<Anchor>, required = false)]
    pub start: Patch<Anchor>,
    #[serde(default)]
    #[schema(value_type = Option<Anchor>, required = false)]
    pub end: Patch<Anchor>,
}

/// Asking for suggestions (`POST /insight/{rec_id}/highlights/suggest`).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
pub struct SuggestRequest {
    /// Tags of the record's workspace to suggest for; left out or empty, all of them.
    #[serde(default)]
    #[schema(required = false, max_items = 50)]
    pub tag_ids: Vec<Uuid>,
}

/// Suggestions on their way: they appear among the record's highlights, `suggested`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SuggestionsQueued {
    pub id: Uuid,
    pub record_id: Uuid,
    /// `queued`.
    pub status: String,
}

/// Characters `from..to` of `text` (offsets in Unicode scalar values), when in range.
pub fn slice_chars(text: &str, from: usize, to: usize) -> Option<&str> {
    if from > to {
        return None;
    }
    let mut bounds = text.char_indices().map(|(at, _)| at).chain(std::iter::once(text.len()));
    let start = bounds.nth(from)?;
    let end = if to == from { start } else { bounds.nth(to - from - 1)? };
    Some(&text[start..end])
}

/// Where the words `old[from..to]` (in characters) are in `new`, the utterance's text
/// after a correction, or `None` when they are gone. Words before the change stay where
/// they were, words after it move by what it added or removed; words the change touched
/// are looked for as they were, nearest their old place. A piece that runs on into the
/// next utterance (`to_end`) must still end the text, one that began in the previous
/// utterance (`from_start`) must still begin it.
pub fn follow(old: &str, new: &str, from: usize, to: usize, from_start: bool, to_end: bool) -> Option<(usize, usize)> {
    let old_chars: Vec<char> = old.chars().collect();
    let new_chars: Vec<char> = new.chars().collect();
    if to > old_chars.len() || from > to {
        return None;
    }
    let prefix = old_chars.iter().zip(&new_chars).take_while(|(a, b)| a == b).count();
    let room = old_chars.len().min(new_chars.len()) - prefix;
    let suffix = old_chars
        .iter()
        .rev()
        .zip(new_chars.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    let changed_from = prefix;
    let changed_to = old_chars.len() - suffix;
    let shift = |at: usize| at + new_chars.len() - old_chars.len();
    if old_chars == new_chars || to <= changed_from && !(to_end && to == old_chars.len()) {
        return Some((from, to));
    }
    if from >= changed_to && !(from_start && from == 0) {
        return Some((shift(from), shift(to)));
    }
    let piece = &old_chars[from..to];
    if piece.is_empty() || piece.iter().all(|c| c.is_whitespace()) {
        return None;
    }
    let fits = |at: usize| {
        (!from_start || at == 0)
            && (!to_end || at + piece.len() == new_chars.len())
            && new_chars[at..].starts_with(piece)
    };
    (0..=new_chars.len().saturating_sub(piece.len()))
        .filter(|&at| new_chars.len() >= piece.len() && fits(at))
        .min_by_key(|&at| at.abs_diff(from))
        .map(|at| (at, at + piece.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_by_characters_not_bytes() {
        assert_eq!(slice_chars("Çà coûte trop", 0, 2), Some("Çà"));
        assert_eq!(slice_chars("Çà coûte trop", 3, 8), Some("coûte"));
        assert_eq!(slice_chars("abc", 3, 3), Some(""));
        assert_eq!(slice_chars("abc", 1, 4), None);
        assert_eq!(slice_chars("abc", 2, 1), None);
    }

    #[test]
    fn an_edit_elsewhere_in_the_utterance_keeps_or_shifts_the_words() {
        let old = "The price is too high for us.";
        // "price" is 4..9.
        let after = "The price is much too high for small teams like us.";
        assert_eq!(follow(old, after, 4, 9, false, false), Some((4, 9)));
        let before = "Honestly, the price is too high for us.";
        let (from, to) = follow(old, before, 4, 9, false, false).expect("followed");
        assert_eq!(slice_chars(before, from, to), Some("price"));
    }

    #[test]
    fn an_edit_under_the_words_finds_them_again_or_lets_go() {
        let old = "We pay per seat and it hurts.";
        // "pay per seat" is 3..15.
        let retyped = "We pay per seat, and it really hurts.";
        let (from, to) = follow(old, retyped, 3, 15, false, false).expect("followed");
        assert_eq!(slice_chars(retyped, from, to), Some("pay per seat"));
        let rewritten = "We pay per user and it hurts.";
        assert_eq!(follow(old, rewritten, 3, 15, false, false), None);
    }

    #[test]
    fn a_piece_that_runs_into_the_next_utterance_must_still_end_its_text() {
        let old = "I tried to export. It failed";
        // From "It" to the end, continuing in the next utterance.
        let moved = "I tried to export twice. It failed";
        let (from, to) = follow(old, moved, 19, 28, false, true).expect("followed");
        assert_eq!(slice_chars(moved, from, to), Some("It failed"));
        let cut = "I tried to export. It failed, then";
        assert_eq!(follow(old, cut, 19, 28, false, true), None);
        // A whole middle utterance changed is gone.
        assert_eq!(follow("all of it", "all of this", 0, 9, true, true), None);
        assert_eq!(follow("all of it", "all of it", 0, 9, true, true), Some((0, 9)));
    }

    #[test]
    fn the_nearest_copy_of_repeated_words_is_taken() {
        let old = "no, no, no";
        // The last "no" (8..10), after the text grew in front.
        let new = "well no, no, no";
        assert_eq!(follow(old, new, 8, 10, false, false), Some((13, 15)));
    }
}
