//! What a unit says: goal, pain, behaviour, motivation or ideal solution, by its cues;
//! and whether it is background.

use std::ops::Range;

use super::cues::{Cues, NUMBER_WORDS, ORGANISATION_NOUNS, YEAR_WORDS, phrases};
use super::units::Unit;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Goal,
    Pain,
    Behavior,
    Motivation,
    Ideal,
}

/// What a unit says: its kind with the number of cues it hits, and whether it is background.
pub(super) struct Class {
    pub(super) kind: Option<(Kind, usize)>,
    pub(super) background: bool,
}

pub(super) fn classify(unit: &Unit, sets: &[&Cues]) -> Class {
    let hits = |list: fn(&Cues) -> &'static str| -> (Option<usize>, usize) {
        let mut first: Option<usize> = None;
        let mut count = 0;
        for set in sets {
            for cue in phrases(list(set)) {
                if let Some(range) = find_cue(&unit.folded, cue) {
                    count += 1;
                    first = Some(first.map_or(range.start, |at| at.min(range.start)));
                }
            }
        }
        (first, count)
    };
    let ideal = hits(|cues| cues.ideal);
    let kind = if ideal.1 > 0 {
        Some((Kind::Ideal, ideal.1))
    } else {
        // The earliest cue decides; on the same word, pains before goals before behaviours.
        let candidates = [
            (Kind::Pain, hits(|cues| cues.pains)),
            (Kind::Goal, hits(|cues| cues.goals)),
            (Kind::Behavior, hits(|cues| cues.behaviors)),
            (Kind::Motivation, hits(|cues| cues.motivations)),
        ];
        let mut best: Option<(usize, Kind, usize)> = None;
        for (kind, (first, count)) in candidates {
            if let Some(at) = first
                && best.is_none_or(|(best_at, ..)| at < best_at)
            {
                best = Some((at, kind, count));
            }
        }
        match best {
            Some((_, kind, count)) => Some((kind, count)),
            None => {
                let reasons = hits(|cues| cues.reasons);
                (reasons.1 > 0).then_some((Kind::Motivation, reasons.1))
            }
        }
    };
    let background = hits(|cues| cues.background).1 > 0
        || (hits(|cues| cues.tenure).1 > 0 && has_number(unit) && has_listed(unit, YEAR_WORDS))
        || (hits(|cues| cues.headcount).1 > 0 && has_number(unit))
        || (hits(|cues| cues.organisation).1 > 0 && has_listed(unit, ORGANISATION_NOUNS));
    Class { kind, background }
}

/// Where `cue` occurs in `folded` at word boundaries (a trailing `*`: the start of a word).
pub(super) fn find_cue(folded: &str, cue: &str) -> Option<Range<usize>> {
    find_cue_from(folded, cue, 0)
}

/// Where `cue` occurs in `folded` at word boundaries from byte `from` on.
pub(super) fn find_cue_from(folded: &str, cue: &str, mut from: usize) -> Option<Range<usize>> {
    let (needle, prefix) = match cue.strip_suffix('*') {
        Some(needle) => (needle, true),
        None => (cue, false),
    };
    let starts_word = needle.chars().next().is_some_and(char::is_alphanumeric);
    let ends_word = needle.chars().next_back().is_some_and(char::is_alphanumeric);
    while let Some(at) = folded.get(from..).and_then(|rest| rest.find(needle)) {
        let start = from + at;
        let end = start + needle.len();
        let before = folded.get(..start).and_then(|text| text.chars().next_back());
        let after = folded.get(end..).and_then(|text| text.chars().next());
        let before_ok = !starts_word || before.is_none_or(|c| !c.is_alphanumeric());
        let after_ok = prefix || !ends_word || after.is_none_or(|c| !c.is_alphanumeric());
        if before_ok && after_ok {
            return Some(start..end);
        }
        from = start + needle.chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// Whether `word` (folded) is in the space-separated `list` (see [`ROLE_NOUNS`] for the forms
/// of its entries).
pub(super) fn matches_listed(word: &str, list: &str) -> bool {
    list.split_whitespace().any(|entry| {
        if let Some(inner) = entry.strip_prefix('*').and_then(|entry| entry.strip_suffix('*')) {
            word.contains(inner)
        } else if let Some(prefix) = entry.strip_suffix('*') {
            word.starts_with(prefix)
        } else {
            word == entry || word.strip_suffix('s') == Some(entry) || word.strip_suffix("es") == Some(entry)
        }
    })
}

pub(super) fn has_listed(unit: &Unit, list: &str) -> bool {
    unit.words.iter().any(|word| matches_listed(word, list))
}

pub(super) fn has_number(unit: &Unit) -> bool {
    unit.text.chars().any(|c| c.is_ascii_digit())
        || unit
            .words
            .iter()
            .any(|word| NUMBER_WORDS.split_whitespace().any(|number| number == word))
}
