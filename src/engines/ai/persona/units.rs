//! The material and its units: the respondent's utterances, cut into sentences (and the
//! clauses of long ones), each a verbatim slice with a folded form for matching cues.

use std::collections::BTreeSet;
use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

use super::cues::{FILLERS, FILLERS_BEFORE_COMMA, NOISE, NOISE_BEFORE_COMMA};
use super::{CLAUSE_WORDS, MAX_SENTENCE_WORDS, MIN_WORDS};
use crate::domain::record::Utterance;

/// The utterances the persona is made of (see the module docs).
pub(super) fn material(utterances: &[Utterance]) -> Vec<&Utterance> {
    if utterances.iter().any(|u| u.is_respondent) {
        return utterances.iter().filter(|u| u.is_respondent).collect();
    }
    let interviewer = most_questions(utterances);
    utterances
        .iter()
        .filter(|u| Some(u.speaker.as_str()) != interviewer)
        .collect()
}

/// The speaker whose utterances hold the most questions (ties: who spoke first); `None` when
/// nobody asks.
pub(super) fn most_questions(utterances: &[Utterance]) -> Option<&str> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for utterance in utterances {
        let asked = usize::from(utterance.text.contains(['?', '？', '¿']));
        match counts.iter_mut().find(|(speaker, _)| *speaker == utterance.speaker) {
            Some((_, count)) => *count += asked,
            None => counts.push((&utterance.speaker, asked)),
        }
    }
    let mut best: Option<(&str, usize)> = None;
    for (speaker, count) in counts {
        if count > 0 && best.is_none_or(|(_, most)| count > most) {
            best = Some((speaker, count));
        }
    }
    best.map(|(speaker, _)| speaker)
}

/// The speaker of the material with the most words (ties: who spoke first).
pub(super) fn main_speaker<'a>(material: &[&'a Utterance]) -> Option<&'a str> {
    let mut words: Vec<(&str, usize)> = Vec::new();
    for utterance in material {
        let count = utterance.text.unicode_words().count();
        match words.iter_mut().find(|(speaker, _)| *speaker == utterance.speaker) {
            Some((_, total)) => *total += count,
            None => words.push((&utterance.speaker, count)),
        }
    }
    let mut best: Option<(&str, usize)> = None;
    for (speaker, count) in words {
        if best.is_none_or(|(_, most)| count > most) {
            best = Some((speaker, count));
        }
    }
    best.map(|(speaker, _)| speaker)
}

/// A sentence, or a clause of a long one, that the respondent said: a verbatim slice of the
/// utterance, with its folded form for matching cues.
pub(super) struct Unit<'a> {
    pub(super) utterance_id: i64,
    pub(super) speaker: &'a str,
    pub(super) text: &'a str,
    /// Lower case, apostrophes straight, runs of whitespace one space.
    pub(super) folded: String,
    /// For each byte of `folded`, the byte of `text` its character comes from; then `text.len()`.
    pub(super) offsets: Vec<usize>,
    /// Its words in lower case.
    pub(super) words: BTreeSet<String>,
    pub(super) word_count: usize,
    /// Position in the material.
    pub(super) order: usize,
}

impl<'a> Unit<'a> {
    pub(super) fn new(utterance: &'a Utterance, text: &'a str, order: usize) -> Self {
        let (folded, offsets) = fold(text);
        let words = folded.unicode_words().map(str::to_owned).collect();
        Self {
            utterance_id: utterance.id,
            speaker: &utterance.speaker,
            text,
            folded,
            offsets,
            words,
            word_count: text.unicode_words().count(),
            order,
        }
    }

    /// The slice of `text` that a range of `folded` comes from.
    pub(super) fn original(&self, range: Range<usize>) -> &'a str {
        let start = self.offsets.get(range.start).copied().unwrap_or(self.text.len());
        let end = self.offsets.get(range.end).copied().unwrap_or(self.text.len());
        self.text.get(start..end).unwrap_or_default().trim()
    }
}

/// `text` in lower case with straight apostrophes and quotation marks and single spaces,
/// and where each of its bytes comes from.
pub(super) fn fold(text: &str) -> (String, Vec<usize>) {
    let mut folded = String::with_capacity(text.len());
    let mut offsets = Vec::with_capacity(text.len() + 1);
    for (at, c) in text.char_indices() {
        let c = match c {
            '\u{2018}' | '\u{2019}' | '\u{02BC}' | '\u{FF07}' | '`' | '\u{00B4}' => '\'',
            '\u{201C}' | '\u{201D}' => '"',
            c if c.is_whitespace() => ' ',
            c => c.to_lowercase().next().unwrap_or(c),
        };
        if c == ' ' && folded.ends_with(' ') {
            continue;
        }
        offsets.extend(std::iter::repeat_n(at, c.len_utf8()));
        folded.push(c);
    }
    offsets.push(text.len());
    (folded, offsets)
}

/// The sentences of the material, cut and trimmed (see the module docs), in order.
pub(super) fn units<'a>(material: &[&'a Utterance]) -> Vec<Unit<'a>> {
    let mut units = Vec::new();
    for &utterance in material {
        for (_, sentence) in utterance.text.split_sentence_bound_indices() {
            let sentence = strip_fillers(sentence.trim());
            if sentence.trim_end().ends_with(['?', '？']) || sentence.starts_with('¿') {
                continue;
            }
            for piece in clauses(sentence) {
                if piece.unicode_words().nth(MIN_WORDS - 1).is_some() {
                    units.push(Unit::new(utterance, piece, units.len()));
                }
            }
        }
    }
    units
}

/// `sentence` without the fillers of speech it starts with.
pub(super) fn strip_fillers(sentence: &str) -> &str {
    let mut rest = sentence.trim();
    loop {
        let end = rest
            .char_indices()
            .find(|&(_, c)| !c.is_alphabetic())
            .map_or(rest.len(), |(at, _)| at);
        let (word, after) = rest.split_at(end);
        let word = word.to_lowercase();
        let listed = |list: &str| list.split_whitespace().any(|filler| filler == word);
        let (space_ok, noise) = match () {
            () if listed(NOISE) => (true, true),
            () if listed(NOISE_BEFORE_COMMA) => (false, true),
            () if listed(FILLERS) => (true, false),
            () if listed(FILLERS_BEFORE_COMMA) => (false, false),
            () => return rest,
        };
        let next = match after.chars().next() {
            Some(',') => after.get(1..).unwrap_or_default(),
            Some(c) if c.is_whitespace() && space_ok => after,
            _ => return rest,
        };
        let next = next.trim_start();
        let capital = next.chars().next().is_some_and(char::is_uppercase);
        if next.unicode_words().nth(MIN_WORDS - 1).is_none() || !(noise || capital) {
            return rest;
        }
        rest = next;
    }
}

/// A sentence, or its clauses when it is too long (see the module docs).
pub(super) fn clauses(sentence: &str) -> Vec<&str> {
    if sentence.unicode_words().nth(MAX_SENTENCE_WORDS).is_none() {
        return vec![sentence];
    }
    // Cut after clause punctuation followed by a space.
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut chars = sentence.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let spaced = chars.peek().is_some_and(|&(_, next)| next.is_whitespace());
        if matches!(c, ',' | ';' | ':' | '—' | '–') && spaced {
            let end = at + c.len_utf8();
            pieces.push(start..end);
            start = end;
        }
    }
    pieces.push(start..sentence.len());

    // Consecutive pieces joined up to CLAUSE_WORDS words; a piece still too long by words.
    let mut out: Vec<&str> = Vec::new();
    let mut current: Option<Range<usize>> = None;
    let words = |range: &Range<usize>| sentence.get(range.clone()).unwrap_or_default().unicode_words().count();
    for piece in pieces {
        current = match current {
            Some(range) if words(&range) + words(&piece) <= CLAUSE_WORDS => Some(range.start..piece.end),
            Some(range) => {
                flush(sentence, range, &mut out);
                Some(piece)
            }
            None => Some(piece),
        };
    }
    if let Some(range) = current {
        flush(sentence, range, &mut out);
    }
    out.retain(|piece| !piece.is_empty());
    out
}

/// Pushes the clause `range` of `sentence`, cut into windows of words when still too long.
pub(super) fn flush<'s>(sentence: &'s str, range: Range<usize>, out: &mut Vec<&'s str>) {
    let text = sentence.get(range).unwrap_or_default();
    if text.unicode_words().nth(MAX_SENTENCE_WORDS).is_none() {
        out.push(trim_clause(text));
        return;
    }
    let indices: Vec<Range<usize>> = text
        .unicode_word_indices()
        .map(|(at, word)| at..at + word.len())
        .collect();
    for window in indices.chunks(CLAUSE_WORDS) {
        if let (Some(first), Some(last)) = (window.first(), window.last()) {
            out.push(trim_clause(text.get(first.start..last.end).unwrap_or_default()));
        }
    }
}

pub(super) fn trim_clause(text: &str) -> &str {
    text.trim()
        .trim_end_matches([',', ';', ':', '—', '–'])
        .trim_start_matches([',', ';', ':', '—', '–'])
        .trim()
}
