//! The respondent's role, as they state it ("I'm a product manager at …").

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

use super::classify::{find_cue_from, matches_listed};
use super::cues::{Cues, ORGANISATION_NOUNS, ROLE_NOUNS, TRAILING_WORDS, phrases};
use super::units::Unit;
use super::{CLAUSE_PUNCTUATION, MAX_ROLE_CHARS, ROLE_WORDS};

/// How a role was said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RoleKind {
    /// A noun phrase: "product manager at Northwind".
    Noun,
    /// A clause: "I manage a team of five dispatchers".
    Clause,
}

pub(super) struct Role {
    pub(super) text: String,
    pub(super) kind: RoleKind,
    /// Whether the phrase says where ("… at Northwind"): its sentence is background too.
    pub(super) place: bool,
    /// The unit it comes from.
    pub(super) order: usize,
}

/// The role, from the first unit that states one: explicit statements first, then role nouns,
/// then what the respondent leads.
pub(super) fn find_role(units: &[&Unit], sets: &[&Cues]) -> Option<Role> {
    let stops: Vec<&str> = sets.iter().flat_map(|set| phrases(set.stops)).collect();
    let prepositions: Vec<&str> = sets.iter().flat_map(|set| phrases(set.prepositions)).collect();
    let occurrences = |unit: &Unit, cue: &str| -> Vec<Range<usize>> {
        let mut found = Vec::new();
        let mut from = 0;
        while let Some(at) = find_cue_from(&unit.folded, cue, from) {
            from = at.end;
            found.push(at);
        }
        found
    };
    let role = |unit: &Unit, words: &[Range<usize>], kind, place| {
        let range = role_range(unit, words, &prepositions)?;
        let text = unit.original(range);
        (!text.is_empty()).then(|| Role {
            text: text.to_owned(),
            kind,
            place,
            order: unit.order,
        })
    };
    let word = |unit: &Unit, range: &Range<usize>| unit.folded.get(range.clone()).unwrap_or_default().to_owned();

    // "My role is …": what follows, to the end of its clause.
    for unit in units {
        for cue in sets.iter().flat_map(|set| phrases(set.role_explicit)) {
            for at in occurrences(unit, cue) {
                let words = clause_words(&unit.folded, at.end, ROLE_WORDS, &stops);
                if let Some(found) = role(unit, &words, RoleKind::Noun, false) {
                    return Some(found);
                }
            }
        }
    }
    // "I'm a …": up to a role noun, and what follows it when a preposition carries it on.
    for unit in units {
        for &(cue, window) in sets.iter().flat_map(|set| set.role_noun.iter()) {
            for at in occurrences(unit, cue) {
                let words = clause_words(&unit.folded, at.end, ROLE_WORDS, &stops);
                let is_noun = |range: &Range<usize>| matches_listed(&word(unit, range), ROLE_NOUNS);
                let Some(mut noun) = words.iter().take(window).position(is_noun) else {
                    continue;
                };
                while words.get(noun + 1).is_some_and(is_noun) {
                    noun += 1;
                }
                // "руководитель отдела …": a team or an organisation carries it on too.
                let carried = words.get(noun + 1).is_some_and(|next| {
                    let next = word(unit, next);
                    prepositions.contains(&next.as_str()) || matches_listed(&next, ORGANISATION_NOUNS)
                });
                let end = if carried { words.len() } else { noun + 1 };
                if let Some(found) = role(unit, words.get(..end).unwrap_or_default(), RoleKind::Noun, carried) {
                    return Some(found);
                }
            }
        }
    }
    // "I lead …": the clause, when a team, an organisation or a role follows.
    for unit in units {
        for cue in sets.iter().flat_map(|set| phrases(set.role_verb)) {
            for at in occurrences(unit, cue) {
                let words = clause_words(&unit.folded, at.end, ROLE_WORDS, &stops);
                let leads = words.iter().take(6).any(|range| {
                    let word = word(unit, range);
                    matches_listed(&word, ORGANISATION_NOUNS) || matches_listed(&word, ROLE_NOUNS)
                });
                if !leads {
                    continue;
                }
                let all: Vec<Range<usize>> = std::iter::once(at.clone()).chain(words).collect();
                if let Some(found) = role(unit, &all, RoleKind::Clause, true) {
                    return Some(found);
                }
            }
        }
    }
    None
}

/// The words of `folded` from `start` to the end of their clause: up to punctuation, a spaced
/// dash, a stop word, or `max` words.
pub(super) fn clause_words(folded: &str, start: usize, max: usize, stops: &[&str]) -> Vec<Range<usize>> {
    let mut words: Vec<Range<usize>> = Vec::new();
    let Some(rest) = folded.get(start..) else {
        return words;
    };
    let mut last = start;
    for (at, word) in rest.unicode_word_indices() {
        let range = start + at..start + at + word.len();
        let gap = folded.get(last..range.start).unwrap_or_default();
        let leading = words.is_empty();
        let gap = if leading {
            gap.trim_start_matches([' ', ':', '-', '—', '–'])
        } else {
            gap
        };
        let dash = gap.contains('-') && gap.contains(' ');
        if words.len() == max || gap.contains(CLAUSE_PUNCTUATION) || dash || stops.contains(&word) {
            break;
        }
        last = range.end;
        words.push(range);
    }
    words
}

/// The range of a role phrase from its words: without trailing function words and prepositions,
/// at most [`MAX_ROLE_CHARS`] characters; `None` when nothing is left.
pub(super) fn role_range(unit: &Unit, words: &[Range<usize>], prepositions: &[&str]) -> Option<Range<usize>> {
    let mut words = words.to_vec();
    loop {
        while let Some(last) = words.last() {
            let word = unit.folded.get(last.clone()).unwrap_or_default();
            if TRAILING_WORDS.split_whitespace().any(|trailing| trailing == word) || prepositions.contains(&word) {
                words.pop();
            } else {
                break;
            }
        }
        let (first, last) = (words.first()?, words.last()?);
        let range = first.start..last.end;
        if unit.original(range.clone()).chars().count() <= MAX_ROLE_CHARS {
            return Some(range);
        }
        words.pop();
    }
}
