//! Citations in a model's Markdown, as `crate::engines::ai::quotes` reads them: `[record name, mm:ss]`,
//! `[record name, h:mm:ss]`, `[record name, #id]` (a record without times), several times
//! (`[A, 01:02, 01:30]`), a range (`[A, 01:02–01:30]`) or several records
//! (`[A, 01:02; B, 03:04]`), each found in text and resolved to the moment it cites. The
//! console links them to the transcript; exports link them to the console.

use std::collections::HashMap;
use std::ops::Range;

use uuid::Uuid;

use crate::engines::ai::text::normalize;

/// Which moment a `[record name, locator]` cites, over the records a text may cite (a
/// report's `records_ids`, a chat's record). Empty (`default()`), every citation stays text:
/// for readers who may not open transcripts (a shared report).
#[derive(Debug, Clone, Default)]
pub struct CitationIndex {
    records: Vec<Moments>,
    /// Record names in their comparison form (as the quote checker compares them) → records.
    by_name: HashMap<String, Vec<usize>>,
}

/// A record's id, name and utterances as `(utterance id, start_ms)`.
pub type RecordMoments<'a> = (Uuid, &'a str, &'a [(i64, Option<i64>)]);

#[derive(Debug, Clone)]
struct Moments {
    record_id: Uuid,
    utterance_ids: Vec<i64>,
    /// `(second, start_ms, utterance id)` of the utterances with a time, in order.
    timed: Vec<(i64, i64, i64)>,
}

impl CitationIndex {
    /// From each record's id, name and utterances.
    pub fn new(records: &[RecordMoments<'_>]) -> Self {
        let mut index = Self::default();
        for &(record_id, name, utterances) in records {
            index.add(record_id, name, utterances.iter().copied());
        }
        index
    }

    /// Adds a record and its utterances as `(utterance id, start_ms)`, in any order.
    pub fn add(&mut self, record_id: Uuid, name: &str, utterances: impl IntoIterator<Item = (i64, Option<i64>)>) {
        let (mut utterance_ids, mut timed) = (Vec::new(), Vec::new());
        for (id, start_ms) in utterances {
            utterance_ids.push(id);
            // A citation's time is its utterance's start in whole seconds, cut, not rounded.
            timed.extend(start_ms.map(|ms| (ms.max(0) / 1000, ms, id)));
        }
        timed.sort_unstable();
        self.by_name
            .entry(normalize(name))
            .or_default()
            .push(self.records.len());
        self.records.push(Moments {
            record_id,
            utterance_ids,
            timed,
        });
    }

    /// Whether no record was added: every citation stays text.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// `(record id, utterance id)` that `locator` (`mm:ss`, `h:mm:ss`, a range, `#id`) of the
    /// record named `record_name` points to. A time is the utterance starting in that second,
    /// or else the last one that started before it (a hand-edited time); none before the first.
    /// Of two records with one name, the one with an utterance starting at that second wins.
    pub fn resolve(&self, record_name: &str, locator: &str) -> Option<(Uuid, i64)> {
        self.find(self.named(record_name)?, locator)
    }

    /// The records of that name, compared as the quote checker compares them.
    fn named(&self, record_name: &str) -> Option<&[usize]> {
        self.by_name.get(&normalize(record_name)).map(Vec::as_slice)
    }

    fn find(&self, records: &[usize], locator: &str) -> Option<(Uuid, i64)> {
        let records = records.iter().filter_map(|&n| self.records.get(n));
        match parse_locator(locator)? {
            Locator::Utterance(id) => records
                .into_iter()
                .find(|record| record.utterance_ids.contains(&id))
                .map(|record| (record.record_id, id)),
            Locator::Second(second) => {
                let found: Vec<_> = records.filter_map(|record| record.at(second)).collect();
                let (_, record_id, utterance_id) = found.iter().find(|m| m.0).or(found.first())?;
                Some((*record_id, *utterance_id))
            }
        }
    }
}

impl Moments {
    /// The utterance a time cites, and whether one starts in that very second.
    fn at(&self, second: i64) -> Option<(bool, Uuid, i64)> {
        let last = self.timed.partition_point(|&(at, ..)| at <= second).checked_sub(1)?;
        let exact = self.timed.get(last)?.0 == second;
        // Of utterances starting in the cited second, the first.
        let at = if exact {
            self.timed.partition_point(|&(at, ..)| at < second)
        } else {
            last
        };
        Some((exact, self.record_id, self.timed.get(at)?.2))
    }
}

enum Locator {
    Utterance(i64),
    Second(i64),
}

/// `#id`, `mm:ss`, `h:mm:ss`, or a range of times (its start).
fn parse_locator(text: &str) -> Option<Locator> {
    if let Some(id) = text.strip_prefix('#') {
        let digits = !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
        return digits.then(|| id.parse().ok().map(Locator::Utterance)).flatten();
    }
    let mut times = text.split(['-', '\u{2013}', '\u{2014}']);
    let start = seconds(times.next()?)?;
    match (times.next(), times.next()) {
        (None, _) => Some(Locator::Second(start)),
        (Some(end), None) => seconds(end).map(|_| Locator::Second(start)),
        _ => None,
    }
}

/// Seconds of `mm:ss` or `h:mm:ss`, as `crate::engines::ai::timestamp` writes them.
fn seconds(time: &str) -> Option<i64> {
    let parts: Vec<&str> = time.trim().split(':').collect();
    let digits = |part: &str, len: Range<usize>| len.contains(&part.len()) && part.bytes().all(|b| b.is_ascii_digit());
    let well_formed = (2..=3).contains(&parts.len())
        && parts
            .iter()
            .enumerate()
            .all(|(n, part)| digits(part, if n == 0 { 1..3 } else { 2..3 }));
    well_formed.then(|| {
        parts
            .iter()
            .fold(0, |total, part| total * 60 + part.parse::<i64>().unwrap_or(0))
    })
}

/// A citation's byte range in the text and the `(record id, utterance id)` it cites.
pub type Link = (Range<usize>, (Uuid, i64));

/// Longest bracket content read as a citation: longer ones are prose, and the readings of
/// `;` and `,` would cost time without bound on hostile text.
const MAX_CITATION: usize = 1024;

/// The citations in `text`, as byte ranges to link and the moments they link to.
pub fn find_citations(text: &str, citations: &CitationIndex) -> Vec<Link> {
    // Bracket pairs, outer first: record names may hold brackets (`Interview [draft]`), and a
    // bracket left open (`see [1`) must not hide a citation after it.
    let (mut opened, mut pairs) = (Vec::new(), Vec::new());
    for (at, c) in text.char_indices() {
        match c {
            '[' => opened.push(at),
            ']' => pairs.extend(opened.pop().map(|open| (open, at))),
            _ => {}
        }
    }
    pairs.sort_unstable();
    let mut found = Vec::new();
    let mut linked_to = 0;
    for (open, close) in pairs {
        if open < linked_to || close - open > MAX_CITATION {
            continue;
        }
        let content = open + 1..close;
        // The whole as one record's citation first: a record may be named `Call, 01:00; Bo`.
        let mut links = part_links(text, content.clone(), citations);
        if let [(range, _)] = links.as_mut_slice()
            && *range == trimmed(text, content.clone())
        {
            *range = open..close + 1;
        }
        if links.is_empty() {
            let mut start = content.start;
            for part in text.get(content).unwrap_or_default().split(';') {
                links.extend(part_links(text, start..start + part.len(), citations));
                start += part.len() + 1;
            }
        }
        if !links.is_empty() {
            found.extend(links);
            linked_to = close + 1;
        }
    }
    found
}

/// One record's `name, locator[, locator…]` at `range`: read with the longest name that
/// resolves (a record may be named `A, 00:53`), linked whole when it has one locator, else
/// by each locator that resolves.
fn part_links(text: &str, range: Range<usize>, citations: &CitationIndex) -> Vec<Link> {
    let part = text.get(range.clone()).unwrap_or_default();
    let mut locators: Vec<Range<usize>> = Vec::new();
    let mut name_end = part.len();
    while let Some((head, _)) = part.get(..name_end).and_then(|name| name.rsplit_once(',')) {
        let locator = trimmed(text, range.start + head.len() + 1..range.start + name_end);
        let name = head.trim();
        if name.is_empty() || parse_locator(text.get(locator.clone()).unwrap_or_default()).is_none() {
            break;
        }
        locators.insert(0, locator);
        name_end = head.len();
        let Some(records) = citations.named(name) else {
            continue;
        };
        let links: Vec<Link> = locators
            .iter()
            .filter_map(|at| Some((at.clone(), citations.find(records, text.get(at.clone())?)?)))
            .collect();
        match links.as_slice() {
            [] => {}
            [(_, moment)] if locators.len() == 1 => return vec![(trimmed(text, range), *moment)],
            _ => return links,
        }
    }
    Vec::new()
}

/// `range` of `text` without the whitespace at its ends.
fn trimmed(text: &str, range: Range<usize>) -> Range<usize> {
    let inner = text.get(range.clone()).unwrap_or_default();
    let start = range.start + inner.len() - inner.trim_start().len();
    start..start + inner.trim().len()
}
