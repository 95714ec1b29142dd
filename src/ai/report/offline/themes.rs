//! Step 3, themes: passages grouped by the stemmed term most of them share (see the
//! module docs).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use uuid::Uuid;

use super::{
    MAX_SHARED_THEMES, Material, OTHER_PASSAGES, Passage, QUERY_TERM_FACTOR, QUOTES_PER_THEME, Query, TITLE_TERMS,
};

pub(super) struct Theme {
    pub(super) heading: String,
    /// Passage numbers, best first.
    pub(super) members: Vec<usize>,
}

/// Groups the passages into themes (see the module docs).
pub(super) fn themes(passages: &[Passage], material: &Material, query: &Query) -> Vec<Theme> {
    let term_sets: Vec<BTreeSet<&str>> = passages
        .iter()
        .map(|passage| passage.terms.iter().map(|(term, _)| term.as_str()).collect())
        .collect();
    let mut idf: HashMap<&str, f32> = HashMap::new();
    for (term, word) in passages.iter().flat_map(|passage| &passage.terms) {
        idf.entry(term.as_str()).or_insert_with(|| material.idf(word));
    }
    let idf = |term: &str| idf.get(term).copied().unwrap_or_default();
    let weight = |term: &str| {
        let factor = if query.terms.contains_key(term) {
            QUERY_TERM_FACTOR
        } else {
            1.0
        };
        idf(term) * factor
    };
    // The best term among `members`: shared by at least `min` of them, by count × weight.
    let rank_terms = |members: &[usize], min: usize| -> Vec<&str> {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for &n in members {
            for &term in term_sets.get(n).into_iter().flatten() {
                *counts.entry(term).or_default() += 1;
            }
        }
        let mut ranked: Vec<(f32, usize, &str)> = counts
            .into_iter()
            .filter(|&(_, count)| count >= min)
            .map(|(term, count)| (count as f32 * weight(term), count, term))
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(b.2)));
        ranked.into_iter().map(|(_, _, term)| term).collect()
    };
    // Up to three terms shared by `min` members (`first` among them), the most frequent first.
    let title = |members: &[usize], first: Option<&str>, min: usize| -> String {
        let mut terms: Vec<&str> = first.into_iter().collect();
        for term in rank_terms(members, min) {
            if terms.len() == TITLE_TERMS {
                break;
            }
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
        let count = |term: &str| {
            members
                .iter()
                .filter(|&&n| term_sets.get(n).is_some_and(|terms| terms.contains(term)))
                .count()
        };
        terms.sort_by(|a, b| count(b).cmp(&count(a)).then(idf(b).total_cmp(&idf(a))).then(a.cmp(b)));
        let words: Vec<String> = terms.iter().map(|term| spelling(term, members, passages)).collect();
        format!("### Theme: {}", words.join(", "))
    };

    let mut unassigned: Vec<usize> = (0..passages.len()).collect();
    let mut themes = Vec::new();
    while themes.len() < MAX_SHARED_THEMES {
        let Some(term) = rank_terms(&unassigned, 2).into_iter().next() else {
            break;
        };
        let (members, rest): (Vec<usize>, Vec<usize>) = unassigned
            .iter()
            .partition(|&&n| term_sets.get(n).is_some_and(|terms| terms.contains(term)));
        unassigned = rest;
        themes.push(Theme {
            heading: title(&members, Some(term), 2),
            members,
        });
    }
    // The largest first; equal ones by their best passage.
    themes.sort_by_key(|theme: &Theme| (std::cmp::Reverse(theme.members.len()), theme.members.first().copied()));
    if !unassigned.is_empty() {
        let heading = if themes.is_empty() {
            title(&unassigned, None, 1)
        } else {
            OTHER_PASSAGES.to_owned()
        };
        themes.push(Theme {
            heading,
            members: unassigned,
        });
    }
    themes
}

/// How `term` is written in the passages: the most frequent spelling (lower case when it occurs
/// so, as words at the start of a sentence are capitalised; ties alphabetically).
pub(super) fn spelling(term: &str, members: &[usize], passages: &[Passage]) -> String {
    let mut spellings: BTreeMap<&str, usize> = BTreeMap::new();
    for passage in members.iter().filter_map(|&n| passages.get(n)) {
        for (_, word) in passage.terms.iter().filter(|(t, _)| t == term) {
            *spellings.entry(word.as_str()).or_default() += 1;
        }
    }
    let mut lower: BTreeMap<String, usize> = BTreeMap::new();
    for (&word, &count) in &spellings {
        if word.to_lowercase() == word {
            *lower.entry(word.to_owned()).or_default() += count;
        }
    }
    let pick = |map: Vec<(String, usize)>| {
        map.into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            .map(|(word, _)| word)
    };
    let choice = if lower.is_empty() {
        pick(
            spellings
                .into_iter()
                .map(|(word, count)| (word.to_owned(), count))
                .collect(),
        )
    } else {
        pick(lower.into_iter().collect())
    };
    choice.unwrap_or_else(|| term.to_owned())
}

/// The passages of a theme to quote: the best of different records first, then the best others;
/// in order of relevance.
pub(super) fn shown(members: &[usize], passages: &[Passage]) -> Vec<usize> {
    let mut chosen: Vec<usize> = Vec::new();
    let mut records: HashSet<Uuid> = HashSet::new();
    for &n in members {
        if chosen.len() < QUOTES_PER_THEME
            && let Some(passage) = passages.get(n)
            && records.insert(passage.source.record_id)
        {
            chosen.push(n);
        }
    }
    for &n in members {
        if chosen.len() < QUOTES_PER_THEME && !chosen.contains(&n) {
            chosen.push(n);
        }
    }
    chosen.sort_unstable();
    chosen
}
