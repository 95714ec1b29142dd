//! What each line of a transcript is: blank, a heading, a timestamp, a line that may start
//! with a speaker label, or text.

use super::marks::{Candidate, Fallback, bracketed, stamp_or_range};
use super::speakers::{inline_label, label_name};
use crate::engines::ingest::timecode;

#[derive(Debug)]
pub(super) enum Line<'a> {
    /// Empty, or markup only (a rule, a code fence, a heading without words).
    Blank,
    /// A Markdown heading's words, or export boilerplate: an utterance of nobody.
    Heading(&'a str),
    /// Only a timestamp or a range: times for the next utterance.
    Stamp {
        start: u64,
        end: Option<u64>,
        raw: &'a str,
    },
    /// A line that may start with a speaker label.
    Label(Candidate<'a>),
    /// `[00:01:02] text`: starts an utterance of the speaker named last.
    Stamped {
        start: u64,
        end: Option<u64>,
        text: &'a str,
    },
    Plain(&'a str),
}

pub(super) fn classify(line: &str) -> Line<'_> {
    let line = line.trim();
    if line.is_empty() || is_rule(line) {
        return Line::Blank;
    }
    if let Some(heading) = heading(line) {
        return if heading.is_empty() {
            Line::Blank
        } else {
            Line::Heading(heading)
        };
    }
    if is_boilerplate(line) {
        return Line::Heading(line);
    }
    if let Some((start, end)) = stamp_or_range(unwrap_brackets(line)) {
        return Line::Stamp { start, end, raw: line };
    }
    if let Some(candidate) = label_line(line) {
        return Line::Label(candidate);
    }
    if let Some(candidate) = otter_header(line) {
        return Line::Label(candidate);
    }
    if let Some((start, end, true, text)) = leading_stamp(line)
        && !text.is_empty()
    {
        return Line::Stamped { start, end, text };
    }
    Line::Plain(line)
}

/// In a Teams `.docx` download (and a DaVinci Resolve export) each turn is a range line, a line
/// with the speaker's name and the text: a name-like plain line between a range and a line of
/// text becomes a label.
pub(super) fn find_name_lines_after_ranges(lines: &mut [Line<'_>]) {
    // A time (not a range) inside a paragraph (text before and after it, as when a PDF line
    // breaks before "10:30") is text.
    for i in 1..lines.len() {
        let (
            Some(Line::Plain(_) | Line::Label(_) | Line::Stamped { .. }),
            Some(Line::Stamp { raw, end: None, .. }),
            Some(Line::Plain(_)),
        ) = (lines.get(i - 1), lines.get(i), lines.get(i + 1))
        else {
            continue;
        };
        let raw: &str = raw;
        if let Some(slot) = lines.get_mut(i) {
            *slot = Line::Plain(raw);
        }
    }
    for i in 1..lines.len() {
        let (Some(Line::Stamp { end: Some(_), .. }), Some(Line::Plain(name)), Some(Line::Plain(_) | Line::Label(_))) =
            (lines.get(i - 1), lines.get(i), lines.get(i + 1))
        else {
            continue;
        };
        let name: &str = name;
        let Some((key, strict)) = label_name(name) else {
            continue;
        };
        if let Some(slot) = lines.get_mut(i) {
            *slot = Line::Label(Candidate {
                speaker: name,
                key,
                strict,
                timed: false,
                start: None,
                end: None,
                rest: "",
                answer: None,
                needs_text_after: true,
                raw: name,
                fallback: Fallback::Plain(name),
            });
        }
    }
}

/// A line of only `-`, `*`, `_`, `=`, `` ` `` or `~` (three or more; spaces allowed): a
/// Markdown rule, a setext underline or a code fence.
fn is_rule(line: &str) -> bool {
    let mut count = 0;
    for c in line.chars() {
        match c {
            '-' | '*' | '_' | '=' | '`' | '~' | '—' | '–' => count += 1,
            c if c.is_whitespace() => {}
            _ => return false,
        }
    }
    count >= 3
}

/// The words of an ATX heading (`## Background ##` -> `Background`).
fn heading(line: &str) -> Option<&str> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let rest = line.get(hashes..)?;
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let words = rest.trim();
    let without_closing = words.trim_end_matches('#');
    if without_closing.is_empty() || without_closing.ends_with(char::is_whitespace) {
        return Some(without_closing.trim_end());
    }
    Some(words)
}

/// Lines transcription services add that nobody said.
fn is_boilerplate(line: &str) -> bool {
    let starts = |prefix: &str| {
        line.get(..prefix.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
    };
    (starts("transcribed by ") && line.to_ascii_lowercase().contains("otter.ai"))
        || starts("meeting ended after ")
        || starts("this editable transcript was computer generated")
}

/// The inside of `[...]` or `(...)`, or the line itself.
fn unwrap_brackets(text: &str) -> &str {
    for (open, close) in [('[', ']'), ('(', ')')] {
        if let Some(inner) = text.strip_prefix(open).and_then(|t| t.strip_suffix(close)) {
            return inner.trim();
        }
    }
    text
}

/// A timestamp at the start of a line: `[00:01:02]`, `(00:01:02)`, `[00:01:02 - 00:01:09]` or a
/// bare `00:01:02` followed by a space, then an optional `-` or `|`. Returns the times, whether
/// the stamp was in brackets, and the rest of the line.
fn leading_stamp(line: &str) -> Option<(u64, Option<u64>, bool, &str)> {
    let (start, end, bracketed, rest) = if let Some((inner, rest)) = bracketed(line) {
        let (start, end) = stamp_or_range(inner.trim())?;
        (start, end, true, rest)
    } else {
        let token = line.split_whitespace().next()?;
        let start = timecode::parse(token)?;
        let rest = line.strip_prefix(token)?;
        if !rest.starts_with(char::is_whitespace) {
            return None;
        }
        (start, None, false, rest)
    };
    let mut rest = rest.trim_start();
    for separator in ['-', '–', '—', '|'] {
        if let Some(after) = rest.strip_prefix(separator)
            && (after.is_empty() || after.starts_with(char::is_whitespace))
        {
            rest = after.trim_start();
            break;
        }
    }
    Some((start, end, bracketed, rest))
}

/// A Markdown list or quote marker (`- `, `* `, `+ `, `• `, `> `), up to three of them.
fn strip_list_markers(mut line: &str) -> &str {
    for _ in 0..3 {
        let mut stripped = false;
        for marker in ['-', '*', '+', '•', '>'] {
            if let Some(after) = line.strip_prefix(marker)
                && (after.starts_with(char::is_whitespace) || (marker == '>' && !after.is_empty()))
            {
                line = after.trim_start();
                stripped = true;
                break;
            }
        }
        if !stripped {
            break;
        }
    }
    line
}

/// A line that starts with `Name:` in one of the forms of the module comment.
fn label_line(line: &str) -> Option<Candidate<'_>> {
    let body = strip_list_markers(line);
    let (stamp, after_stamp, fallback) = match leading_stamp(body) {
        Some((start, end, bracketed, rest)) => {
            let fallback = if bracketed {
                Fallback::Stamped { start, end, text: rest }
            } else {
                Fallback::Plain(line)
            };
            (Some((start, end)), rest, fallback)
        }
        None => (None, body, Fallback::Plain(line)),
    };
    let label = inline_label(after_stamp)?;
    let (start, end) = match (stamp, label.stamp) {
        (Some((start, end)), _) | (None, Some((start, end))) => (Some(start), end),
        (None, None) => (None, None),
    };
    let (rest, answer) = match label.rest.split_once(" A: ") {
        Some((question, answer)) if label.speaker == "Q" && !question.trim().is_empty() => {
            (question.trim_end(), Some(answer.trim_start()))
        }
        _ => (label.rest, None),
    };
    Some(Candidate {
        speaker: label.speaker,
        key: label.key,
        strict: label.strict,
        timed: start.is_some(),
        start,
        end,
        rest,
        answer,
        needs_text_after: false,
        raw: line,
        fallback,
    })
}

/// Otter's `Speaker 1  0:03` (and the older Teams `.docx` layout `Anna Schmidt   0:03`): a name,
/// then a timestamp that ends the line.
fn otter_header(line: &str) -> Option<Candidate<'_>> {
    let unwrapped = strip_emphasis(line);
    let unwrapped = unwrapped.strip_suffix(':').unwrap_or(unwrapped);
    let (head, tail) = unwrapped.rsplit_once(char::is_whitespace)?;
    let inner = unwrap_brackets(tail);
    let start = timecode::parse(inner)?;
    let wide_gap = head.ends_with(char::is_whitespace)
        || unwrapped.get(head.len()..).is_some_and(|gap| gap.starts_with('\t'))
        || inner.len() != tail.len();
    let name = head.trim_end();
    let (key, strict) = label_name(name)?;
    Some(Candidate {
        speaker: name,
        key,
        strict: strict && wide_gap,
        timed: wide_gap,
        start: Some(start),
        end: None,
        rest: "",
        answer: None,
        needs_text_after: !wide_gap,
        raw: line,
        fallback: Fallback::Plain(line),
    })
}

/// `*text*`, `**text**` or `__text__` without the emphasis, or `text` itself.
fn strip_emphasis(text: &str) -> &str {
    for marker in ["***", "**", "*", "___", "__", "_"] {
        if let Some(inner) = text.strip_prefix(marker).and_then(|t| t.strip_suffix(marker))
            && !inner.starts_with(['*', '_'])
        {
            return inner.trim();
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_and_ranges() {
        assert_eq!(stamp_or_range("00:05:12"), Some((312_000, None)));
        assert_eq!(stamp_or_range("0:0:0.0 --> 0:0:5.0"), Some((0, Some(5_000))));
        assert_eq!(stamp_or_range("0:0:9.480-->0:0:15.120"), Some((9_480, Some(15_120))));
        assert_eq!(stamp_or_range("00:00:03:18 - 00:00:08:08"), Some((3_000, Some(8_000))));
        assert_eq!(stamp_or_range("00:01 – 00:04"), Some((1_000, Some(4_000))));
        for text in [
            "00:01 --> 00:04 align:start",
            "00:01 --> soon",
            "2024-03-12",
            "- 00:01",
            "10:30 am",
            "",
        ] {
            assert_eq!(stamp_or_range(text), None, "{text:?}");
        }
    }
}
