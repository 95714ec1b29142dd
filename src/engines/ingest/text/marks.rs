//! The small marks a transcript line is made of, which reading lines and judging
//! speaker labels both need: a time stamp or range, a bracketed prefix, and a speaker
//! label as found, before the votes decide whether it is one.

use crate::engines::ingest::timecode;

/// A speaker label found at the start of a line, to be taken if [`Votes::accepts`](super::speakers::Votes::accepts) it.
#[derive(Debug)]
pub(super) struct Candidate<'a> {
    pub(super) speaker: &'a str,
    pub(super) key: String,
    /// The name looks like a name by itself (capitalised words).
    pub(super) strict: bool,
    /// A timestamp came with the label.
    pub(super) timed: bool,
    pub(super) start: Option<u64>,
    pub(super) end: Option<u64>,
    pub(super) rest: &'a str,
    /// The answer of a `Q: ... A: ...` line.
    pub(super) answer: Option<&'a str>,
    /// Only a label if a line of text follows (Otter-style `Name 0:03` with one space, a name
    /// line after a range).
    pub(super) needs_text_after: bool,
    /// The whole line, kept as text if the label is refused or nothing follows it.
    pub(super) raw: &'a str,
    pub(super) fallback: Fallback<'a>,
}

/// How a line is read when its label is refused.
#[derive(Debug, Clone, Copy)]
pub(super) enum Fallback<'a> {
    Plain(&'a str),
    Stamped {
        start: u64,
        end: Option<u64>,
        text: &'a str,
    },
}

/// `00:01:02`, or a range `00:01:02 - 00:01:09` / `0:0:5.0 --> 0:0:9.480`.
pub(super) fn stamp_or_range(text: &str) -> Option<(u64, Option<u64>)> {
    if let Some(start) = timecode::parse(text) {
        return Some((start, None));
    }
    for separator in ["-->", "-", "–", "—"] {
        if let Some((start, end)) = text.split_once(separator) {
            return Some((timecode::parse(start.trim())?, Some(timecode::parse(end.trim())?)));
        }
    }
    None
}

/// `[inner]rest` or `(inner)rest`, the inside at most 40 characters long.
pub(super) fn bracketed(text: &str) -> Option<(&str, &str)> {
    let close = match text.chars().next()? {
        '[' => ']',
        '(' => ')',
        _ => return None,
    };
    let body = text.get(1..)?;
    let (at, _) = body
        .char_indices()
        .take(41)
        .find(|(_, c)| *c == close || *c == '(' || *c == '[')?;
    let inner = body.get(..at)?;
    let rest = body.get(at..)?.strip_prefix(close)?;
    Some((inner, rest))
}
