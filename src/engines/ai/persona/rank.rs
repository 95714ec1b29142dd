//! The most informative units of a list first, near-duplicates dropped; the quotes.

use std::collections::BTreeSet;

use unicode_segmentation::UnicodeSegmentation;

use super::units::{Unit, fold};
use super::{MAX_QUOTES, MIN_QUOTES};
use crate::domain::persona::PersonaQuote;
use crate::engines::ai::text::normalize;

/// How much a unit tells: its distinct longer words, its cues and numbers; very long ones lose.
pub(super) fn informative(unit: &Unit, hits: usize) -> i64 {
    let long = unit
        .words
        .iter()
        .filter(|word| word.chars().count() >= 4)
        .count()
        .min(25) as i64;
    let mut score = long + 2 * hits.min(3) as i64;
    if unit.text.chars().any(|c| c.is_ascii_digit()) {
        score += 3;
    }
    if unit.word_count > 40 {
        score -= (unit.word_count as i64 - 40) / 2;
    }
    score
}

/// The best `limit` units, without near-duplicates.
pub(super) fn rank<'u, 'a>(mut items: Vec<(&'u Unit<'a>, i64)>, limit: usize) -> Vec<&'u Unit<'a>> {
    items.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.order.cmp(&b.0.order)));
    let mut kept: Vec<&Unit> = Vec::new();
    for (unit, _) in items {
        if kept.len() == limit {
            break;
        }
        if !kept.iter().any(|other| similar(other, unit)) {
            kept.push(unit);
        }
    }
    kept
}

/// Whether two units say nearly the same: one contains the other, or they share most words.
pub(super) fn similar(a: &Unit, b: &Unit) -> bool {
    let (left, right) = (normalize(a.text), normalize(b.text));
    let (left, right) = (bare(&left), bare(&right));
    if left.contains(&right) || right.contains(&left) {
        return true;
    }
    let shared = a.words.intersection(&b.words).count();
    let all = a.words.union(&b.words).count();
    all > 0 && shared * 5 >= all * 4
}

/// `text` without leading and trailing punctuation and spaces.
pub(super) fn bare(text: &str) -> String {
    text.trim_matches(|c: char| !c.is_alphanumeric()).to_owned()
}

pub(super) fn content_words(text: &str) -> BTreeSet<String> {
    let (folded, _) = fold(text);
    folded
        .unicode_words()
        .filter(|word| word.chars().count() >= 4)
        .map(str::to_owned)
        .collect()
}

/// The units joined by spaces, `None` for none.
pub(super) fn join(units: &[&Unit]) -> Option<String> {
    let texts: Vec<&str> = units.iter().map(|unit| unit.text).collect();
    (!texts.is_empty()).then(|| texts.join(" "))
}

/// Quotes taken in turn from the lists, then from the other sentences when too few.
pub(super) fn choose_quotes(units: &[Unit], lists: [&Vec<&Unit>; 5]) -> Vec<PersonaQuote> {
    let mut chosen: Vec<&Unit> = Vec::new();
    let fits = |unit: &Unit, chosen: &[&Unit]| {
        !unit.text.contains('"')
            && !chosen
                .iter()
                .any(|other| other.order == unit.order || similar(other, unit))
    };
    let rounds = lists.iter().map(|list| list.len()).max().unwrap_or_default();
    'rounds: for round in 0..rounds {
        for list in lists {
            if chosen.len() == MAX_QUOTES {
                break 'rounds;
            }
            if let Some(&unit) = list.get(round)
                && fits(unit, &chosen)
            {
                chosen.push(unit);
            }
        }
    }
    if chosen.len() < MIN_QUOTES {
        let mut rest: Vec<(&Unit, i64)> = units.iter().map(|unit| (unit, informative(unit, 0))).collect();
        rest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.order.cmp(&b.0.order)));
        for (unit, _) in rest {
            if chosen.len() == MIN_QUOTES {
                break;
            }
            if fits(unit, &chosen) {
                chosen.push(unit);
            }
        }
    }
    chosen
        .into_iter()
        .map(|unit| PersonaQuote {
            text: unit.text.to_owned(),
            utterance_id: unit.utterance_id,
        })
        .collect()
}
