//! Step 3, themes: passages grouped by the stemmed term most of them share (see the
//! module docs).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use uuid::Uuid;

use unicode_segmentation::UnicodeSegmentation;

use super::{MAX_SHARED_THEMES, Material, OTHER_PASSAGES, Passage, QUERY_TERM_FACTOR, QUOTES_PER_THEME, Query};
use crate::engines::search::bm25::Analyzer;

/// Words in a theme's label.
const MIN_LABEL_WORDS: usize = 2;
const MAX_LABEL_WORDS: usize = 4;
/// Common English verbs in the past that end no "-ed" (a label ending on one reads as half a
/// sentence), separated by spaces.
const PAST_FORMS: &str = "became began bought brought came chose felt found gave got grew heard held kept knew left \
    lost made meant met paid put ran sat saw sent spent stood took told thought went won wrote";
/// Shared terms tried, best first, for a theme that can be named.
const TERMS_TRIED: usize = 12;

pub(super) struct Theme {
    pub(super) heading: String,
    /// Passage numbers, best first.
    pub(super) members: Vec<usize>,
}

/// Groups the passages into themes (see the module docs).
pub(super) fn themes(passages: &[Passage], material: &Material, query: &Query) -> Vec<Theme> {
    let (mut themes, unassigned) = shared_themes(passages, material, query);
    if !unassigned.is_empty() {
        // Alone, they are a theme when a phrase is said in more than one of them (or the one).
        let labeller = Labeller::new(passages, material);
        let heading = match themes.is_empty().then(|| labeller.label(&unassigned, None)).flatten() {
            Some((label, said)) if said >= unassigned.len().min(2) => format!("### Theme: {label}"),
            _ => OTHER_PASSAGES.to_owned(),
        };
        themes.push(Theme {
            heading,
            members: unassigned,
        });
    }
    themes
}

/// The themes of passages that share a term, largest first, and the passages in none.
pub(super) fn shared_themes(passages: &[Passage], material: &Material, query: &Query) -> (Vec<Theme>, Vec<usize>) {
    let labeller = Labeller::new(passages, material);
    let term_sets = &labeller.term_sets;
    let idf = |term: &str| labeller.idf(term);
    let weight = |term: &str| {
        let factor = if query.terms.contains_key(term) {
            QUERY_TERM_FACTOR
        } else {
            1.0
        };
        idf(term) * factor
    };
    // The terms shared by at least `min` of `members`, best (count × weight) first.
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

    let mut unassigned: Vec<usize> = (0..passages.len()).collect();
    let mut themes = Vec::new();
    'themes: while themes.len() < MAX_SHARED_THEMES {
        // The best shared term whose passages have a phrase to name them by.
        for term in rank_terms(&unassigned, 2).into_iter().take(TERMS_TRIED) {
            let (members, rest): (Vec<usize>, Vec<usize>) = unassigned
                .iter()
                .partition(|&&n| term_sets.get(n).is_some_and(|terms| terms.contains(term)));
            if let Some((label, _)) = labeller.label(&members, Some(term)) {
                // Passages that say every salient word of the name belong to the theme too.
                let named: Vec<String> = label
                    .unicode_words()
                    .filter_map(|word| labeller.salient(word))
                    .collect();
                let (joining, rest): (Vec<usize>, Vec<usize>) = rest.into_iter().partition(|&n| {
                    term_sets
                        .get(n)
                        .is_some_and(|terms| named.iter().all(|t| terms.contains(t.as_str())))
                });
                let mut members = members;
                members.extend(joining);
                members.sort_unstable();
                unassigned = rest;
                themes.push(Theme {
                    heading: format!("### Theme: {label}"),
                    members,
                });
                continue 'themes;
            }
        }
        break;
    }
    // The largest first; equal ones by their best passage.
    themes.sort_by_key(|theme: &Theme| (std::cmp::Reverse(theme.members.len()), theme.members.first().copied()));
    (themes, unassigned)
}

/// Names themes by phrases of their passages.
struct Labeller<'p, 'a> {
    passages: &'p [Passage<'a>],
    /// Each passage's salient terms.
    term_sets: Vec<BTreeSet<&'p str>>,
    /// Their IDF over the material.
    idfs: HashMap<&'p str, f32>,
    analyzer: &'p Analyzer,
}

impl<'p, 'a> Labeller<'p, 'a> {
    fn new(passages: &'p [Passage<'a>], material: &'p Material) -> Self {
        let term_sets = passages
            .iter()
            .map(|passage| passage.terms.iter().map(|(term, _)| term.as_str()).collect())
            .collect();
        let mut idfs: HashMap<&str, f32> = HashMap::new();
        for (term, word) in passages.iter().flat_map(|passage| &passage.terms) {
            idfs.entry(term.as_str()).or_insert_with(|| material.idf(word));
        }
        Self {
            passages,
            term_sets,
            idfs,
            analyzer: material.analyzer(),
        }
    }

    fn idf(&self, term: &str) -> f32 {
        self.idfs.get(term).copied().unwrap_or_default()
    }

    /// A theme's label: a phrase of [`MIN_LABEL_WORDS`] to [`MAX_LABEL_WORDS`] words as one of
    /// its quoted passages says it (within a clause, from a salient word to a salient word, holding
    /// `term` or another term all of them share, when `term` is given), preferring one that more
    /// passages say, then (in English) one that does not end on a word in -ed or -ly, then one
    /// that ends on such a term, then a shorter one,
    /// then one whose salient words more passages share (weighted by IDF); its first letter
    /// capitalised; with the number of passages that say it. `None` when no passage has such a
    /// phrase.
    fn label(&self, members: &[usize], term: Option<&str>) -> Option<(String, usize)> {
        let shared = |term: &str| {
            members
                .iter()
                .filter(|&&n| self.term_sets.get(n).is_some_and(|terms| terms.contains(term)))
                .count()
        };
        // The theme's term, and every other term all its passages share, name it as well.
        let common: Vec<&str> = match term {
            Some(term) => {
                let mut common: Vec<&str> = self
                    .term_sets
                    .get(members.first().copied().unwrap_or_default())
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|t| shared(t) == members.len())
                    .collect();
                if !common.contains(&term) {
                    common.push(term);
                }
                common
            }
            None => Vec::new(),
        };
        let names = |t: &Option<String>| t.as_deref().is_some_and(|t| common.contains(&t));
        let quotes: Vec<String> = members
            .iter()
            .filter_map(|&n| self.passages.get(n))
            .map(|passage| passage.quote.to_lowercase())
            .collect();
        let english = matches!(self.analyzer.language(), None | Some("en"));
        // ((said by, ends well, ends on the term, shorter), weight, phrase): the greatest wins;
        // the earlier on ties.
        type Rank = (usize, bool, bool, std::cmp::Reverse<usize>);
        let mut best: Option<(Rank, f32, String)> = None;
        // From the quotes shown, so the reader sees where the name comes from.
        for passage in shown(members, self.passages)
            .into_iter()
            .filter_map(|n| self.passages.get(n))
        {
            for clause in passage.quote.split(is_clause_break) {
                let words: Vec<(usize, &str)> = clause.unicode_word_indices().collect();
                let terms: Vec<Option<String>> = words.iter().map(|(_, word)| self.salient(word)).collect();
                for first in 0..words.len() {
                    for last in first + MIN_LABEL_WORDS - 1..(first + MAX_LABEL_WORDS).min(words.len()) {
                        let (Some(Some(_)), Some(Some(_))) = (terms.get(first), terms.get(last)) else {
                            continue;
                        };
                        let window = terms.get(first..=last).unwrap_or_default();
                        if term.is_some() && !window.iter().any(names) {
                            continue;
                        }
                        let (Some(&(from, _)), Some(&(to, word))) = (words.get(first), words.get(last)) else {
                            continue;
                        };
                        let Some(phrase) = clause.get(from..to + word.len()) else {
                            continue;
                        };
                        let phrase = phrase.split_whitespace().collect::<Vec<_>>().join(" ");
                        let lower = phrase.to_lowercase();
                        let said = quotes.iter().filter(|quote| quote.contains(&lower)).count();
                        let mut distinct: Vec<&String> = window.iter().flatten().collect();
                        distinct.sort_unstable();
                        distinct.dedup();
                        let weight: f32 = distinct.iter().map(|t| shared(t) as f32 * self.idf(t)).sum();
                        // English names end on their noun: not on a verb in the past or an adverb.
                        let lower = word.to_lowercase();
                        let ends_well = !(english
                            && (lower.ends_with("ed")
                                || lower.ends_with("ly")
                                || PAST_FORMS.split_whitespace().any(|past| past == lower)));
                        let term_last = term.is_none() || terms.get(last).is_some_and(names);
                        let rank = (said, ends_well, term_last, std::cmp::Reverse(last - first));
                        let candidate = (rank, weight, phrase);
                        let better = best
                            .as_ref()
                            .is_none_or(|best| candidate.0.cmp(&best.0).then(candidate.1.total_cmp(&best.1)).is_gt());
                        if better {
                            best = Some(candidate);
                        }
                    }
                }
            }
        }
        let ((said, ..), _, phrase) = best?;
        let mut chars = phrase.chars();
        let first = chars.next()?;
        Some((first.to_uppercase().chain(chars).collect(), said))
    }

    /// The term of `word` when it may name a theme (as [`super::salient_terms`] decides).
    fn salient(&self, word: &str) -> Option<String> {
        let mut terms = super::salient_terms(word, self.analyzer);
        (terms.len() == 1).then(|| terms.pop().map(|(term, _)| term)).flatten()
    }
}

/// Where a phrase cannot run on: punctuation other than apostrophes and hyphens.
fn is_clause_break(c: char) -> bool {
    !(c.is_alphanumeric() || c.is_whitespace() || matches!(c, '\'' | '\u{2019}' | '-' | '\u{2010}' | '\u{2011}'))
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
