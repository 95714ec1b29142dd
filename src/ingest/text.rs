//! Plain-text and Markdown transcripts, and the text the DOCX and PDF readers extract (one line
//! per paragraph). Also home of [`decode`], which every text-based parser uses to turn the
//! uploaded bytes into a `String`.
//!
//! # How lines become utterances
//!
//! - A line that starts with a speaker label (see below) starts a new utterance of that speaker.
//!   Consecutive labelled lines of one speaker stay separate utterances.
//! - A line without a label directly after a labelled line (no blank line between) continues
//!   that utterance, joined with `\n`. After a blank line it starts a new utterance of the
//!   speaker named last (`None` before anyone is named, and after a heading).
//! - A label with nothing after it (`Anna Schmidt (00:01:02):`, Otter's `Speaker 1  0:03`)
//!   takes the lines that follow as its text, even after a blank line. If no text follows, the
//!   label line itself is kept as a speakerless utterance, so that no word is lost.
//! - Timestamps: `[00:01:02] Anna: ...`, `00:01:02 Anna: ...`, `Anna (00:01:02): ...` give the
//!   utterance's `start_ms`; `[00:01:02 - 00:01:09]` gives `end_ms` too; `[00:01:02] text`
//!   without a label starts an utterance of the speaker named last. A line holding only a
//!   timestamp or a range (Google Meet's `00:05:12`, a Teams `.docx` download's
//!   `0:0:5.0 --> 0:0:9.480`, DaVinci Resolve's `[00:00:03:18 - 00:00:08:08]`) gives its times
//!   to the next utterance, unless it stands inside a paragraph (text directly before and after
//!   it), where it is text. After a range, a name-only line followed by text is the speaker
//!   (the Teams `.docx` and Resolve layouts).
//! - Markdown: `#` headings become speakerless utterances of their own and forget the current
//!   speaker; rules (`---`, `***`), code fences and list / quote markers before a label are
//!   dropped. Everything else, emphasis inside the text included, is kept as written.
//! - Known export boilerplate (Otter's `Transcribed by https://otter.ai`, Google Meet's
//!   `Meeting ended after 00:29:49` and its "computer generated" notice) is kept as a
//!   speakerless utterance so that it is not put in the last speaker's mouth.
//! - Line breaks: `\n`, `\r\n`, `\r`, and the vertical tab, form feed, NEL, line and paragraph
//!   separators that text extracted from Word and PDF files may hold.
//!
//! # When a line starts with a speaker label
//!
//! A label is `Name:` followed by a space, a tab or the end of the line (or `Name：` with the
//! full-width colon of CJK text), optionally wrapped in Markdown emphasis (`**Name:**`,
//! `**Name**:`, `*Name:*`, `__Name__:`) or brackets (`[Name]:`), optionally after a list or
//! quote marker (`- `, `* `, `> `) and a timestamp (`[00:01:02] Name:`, `00:01:02 Name:`),
//! optionally with a parenthesis after the name that is either a timestamp
//! (`Name (00:01:02):`) or part of the name (`Anna (PM):`, `Ben Okafor (he/him):`).
//! A line that is a name and a timestamp (`Speaker 1  0:03` as Otter writes it, `Anna   0:03`,
//! `*Joe (00:00)*`) is a label too when the two are separated by two spaces, a tab or
//! brackets; with a single space (as PDF text may have it) only if the name starts at least two
//! such lines and a line of text follows directly.
//!
//! The name itself must look like a name, so that ordinary prose (`The problem was: ...`,
//! `See http://...`, `Time: 10:30`, `Note: ...`) is not read as a speaker:
//! - 1 to 4 words and at most 40 characters; it starts with a letter; it holds only letters,
//!   digits, spaces, `'`, `’`, `-`, `_`, and `.` only to end a short abbreviation (`Dr.`, `J.`);
//!   so no sentence punctuation (`,;!?"&`) and no `/` (URLs: `http://` also lacks the space
//!   after the colon);
//! - it is not a word that usually introduces notes or metadata rather than speech: `Note`,
//!   `Time`, `Date`, `Summary`, `Background`, `Next steps`, ... (see [`STOP_LABELS`]), nor a
//!   numbered heading (`Step 3`, `Question 2`, `Part IV`), and the text after it is not just a
//!   time (`Start: 10:30`);
//! - every word starts with a capital (or a caseless letter, or a digit: `Speaker 2`, `P3`,
//!   `安娜`), apart from name particles such as `van` or `de` after the first word. A name that
//!   fails only this test (`anna`, `iPhone de Carla`), and any label with a full-width colon,
//!   still counts if the same label starts at least two lines of the file; a label with a
//!   timestamp counts without it.
//!
//! `Q:` and `A:` are speakers (`Q` and `A`); a line `Q: ... A: ...` is split into the two.
//! Known limits: a single capitalised word that is not in the stop list (`Yesterday: ...`), or a
//! lower-case lead-in that starts two lines (`the idea was: ...`), is read as a speaker; a bare
//! name on its own line without a timestamp (`Anna` then her text) is not. The heuristic favours
//! transcripts, which is what this parser is for, and whatever it decides, every word of the
//! source stays in a `text` or a `speaker`.

use std::borrow::Cow;
use std::collections::HashMap;

use super::{IngestError, ParsedUtterance, Transcript, timecode};

/// Labels that introduce notes, metadata or headings rather than a speaker's words (compared
/// case-insensitively with the whole name). Sorted, for a binary search.
pub(crate) const STOP_LABELS: &[&str] = &[
    "action item",
    "action items",
    "actions",
    "address",
    "agenda",
    "aside",
    "attendee",
    "attendees",
    "attention",
    "background",
    "bcc",
    "budget",
    "caution",
    "caveat",
    "cc",
    "company",
    "conclusion",
    "conclusions",
    "cons",
    "context",
    "cost",
    "date",
    "day",
    "deadline",
    "decision",
    "decisions",
    "definition",
    "disclaimer",
    "duration",
    "e-mail",
    "e.g.",
    "edit",
    "edited",
    "eg",
    "email",
    "example",
    "examples",
    "fax",
    "feedback",
    "finding",
    "findings",
    "from",
    "fw",
    "fwd",
    "fyi",
    "goal",
    "goals",
    "hint",
    "hypothesis",
    "i.e.",
    "ie",
    "important",
    "industry",
    "insight",
    "insights",
    "issue",
    "issues",
    "key insight",
    "key insights",
    "key takeaways",
    "kind",
    "language",
    "length",
    "link",
    "links",
    "location",
    "mail",
    "meeting",
    "mobile",
    "n.b.",
    "name",
    "nb",
    "next step",
    "next steps",
    "note",
    "notes",
    "objective",
    "objectives",
    "observation",
    "observations",
    "outcome",
    "outcomes",
    "p.s.",
    "participants",
    "phone",
    "place",
    "pps",
    "present",
    "price",
    "problem",
    "problems",
    "product",
    "project",
    "pros",
    "ps",
    "quote",
    "quotes",
    "re",
    "reason",
    "reasons",
    "recommendation",
    "recommendations",
    "recording",
    "reference",
    "references",
    "reminder",
    "requirement",
    "requirements",
    "result",
    "results",
    "role",
    "room",
    "scope",
    "sent",
    "solution",
    "solutions",
    "source",
    "sources",
    "speakers",
    "status",
    "subject",
    "summary",
    "tag",
    "tags",
    "takeaway",
    "takeaways",
    "team",
    "tel",
    "time",
    "tip",
    "title",
    "tldr",
    "to",
    "to do",
    "todo",
    "topic",
    "topics",
    "total",
    "transcript",
    "update",
    "updated",
    "url",
    "venue",
    "version",
    "warning",
    "web",
    "website",
    "when",
    "where",
];

/// First words of numbered headings (`Step 3:`, `Question 2:`, `Part IV:`), which are no speakers.
const NUMBERED_HEADINGS: &[&str] = &[
    "chapter", "day", "example", "exercise", "fig.", "figure", "item", "option", "page", "part", "phase", "point",
    "question", "round", "scenario", "section", "slide", "step", "story", "table", "task", "theme", "topic", "week",
];

/// Lower-case words that may follow the first word of a name (`Ludwig van Beethoven`).
const NAME_PARTICLES: &[&str] = &[
    "al", "bin", "binti", "da", "das", "de", "del", "della", "der", "di", "do", "dos", "du", "el", "la", "le", "st.",
    "ten", "ter", "van", "von", "y", "zu",
];

/// The longest name a label may have, in characters.
const MAX_NAME_CHARS: usize = 40;

/// The uploaded bytes as text: UTF-8 (a byte order mark is dropped), or UTF-16 with a byte order
/// mark (or without one, when the zero bytes of ASCII text show the byte order). Line ends
/// become `\n`.
pub fn decode(bytes: &[u8]) -> Result<String, IngestError> {
    let text = if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        utf8(rest)?
    } else if bytes.starts_with(&[0xFF, 0xFE, 0, 0]) || bytes.starts_with(&[0, 0, 0xFE, 0xFF]) {
        return Err(IngestError::Invalid(
            "The file is UTF-32 text, which is not supported: save it as UTF-8 and upload it again.".into(),
        ));
    } else if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        utf16(rest, false)?
    } else if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        utf16(rest, true)?
    } else if let Some(text) = sniff_utf16(bytes).and_then(|big_endian| utf16(bytes, big_endian).ok())
        && !text
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{b}' | '\u{c}'))
    {
        text
    } else {
        utf8(bytes)?
    };
    if text.contains('\0') {
        return Err(IngestError::Invalid(
            "The file looks like a binary file, not text: expected a transcript saved as UTF-8 text.".into(),
        ));
    }
    Ok(normalize_line_ends(&text).into_owned())
}

/// Reads a plain-text or Markdown transcript from the uploaded bytes (see the module comment).
pub fn parse(bytes: &[u8]) -> Result<Transcript, IngestError> {
    parse_str(&decode(bytes)?)
}

/// Reads a plain-text or Markdown transcript, or the text extracted from a DOCX or PDF file with
/// one line per paragraph (see the module comment).
pub fn parse_str(text: &str) -> Result<Transcript, IngestError> {
    let text = normalize_line_ends(text);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut lines: Vec<Line<'_>> = text
        .split(['\n', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}'])
        .map(classify)
        .collect();
    find_name_lines_after_ranges(&mut lines);

    let mut votes = Votes::default();
    for line in &lines {
        if let Line::Label(label) = line {
            votes.add(&label.key);
        }
    }

    let mut builder = Builder::default();
    let mut iter = lines.iter().peekable();
    while let Some(line) = iter.next() {
        let next_is_text = matches!(
            iter.peek(),
            Some(Line::Plain(_) | Line::Label(_) | Line::Stamped { .. })
        );
        match line {
            Line::Blank => builder.blank(),
            Line::Heading(text) => builder.heading(text),
            Line::Stamp { start, end, .. } => builder.stamp(*start, *end),
            Line::Label(label) if votes.accepts(label) && (!label.needs_text_after || next_is_text) => {
                builder.label(label);
            }
            Line::Label(label) => match label.fallback {
                Fallback::Plain(text) => builder.plain(text),
                Fallback::Stamped { start, end, text } => builder.stamped(start, end, text),
            },
            Line::Stamped { start, end, text } => builder.stamped(*start, *end, text),
            Line::Plain(text) => builder.plain(text),
        }
    }
    let utterances = builder.finish();
    if utterances.is_empty() {
        return Err(IngestError::Invalid(
            "The file has no text: expected a transcript or notes with at least one line of words.".into(),
        ));
    }
    Ok(Transcript {
        utterances,
        language: None,
    })
}

// ---------------------------------------------------------------------------------------------
// Decoding

fn utf8(bytes: &[u8]) -> Result<String, IngestError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(text.to_owned()),
        Err(error) => {
            let before = bytes.get(..error.valid_up_to()).unwrap_or_default();
            let line = before.iter().filter(|b| **b == b'\n').count() + 1;
            Err(IngestError::Invalid(format!(
                "The file is not UTF-8 text (line {line} holds bytes of another encoding): save it as \
                 UTF-8 and upload it again."
            )))
        }
    }
}

fn utf16(bytes: &[u8], big_endian: bool) -> Result<String, IngestError> {
    let invalid = || {
        IngestError::Invalid(
            "The file is not valid UTF-16 text: it is cut off or holds broken characters. Save it as \
             UTF-8 and upload it again."
                .into(),
        )
    };
    let pairs = bytes.chunks_exact(2);
    if !pairs.remainder().is_empty() {
        return Err(invalid());
    }
    let units = pairs.map(|pair| match pair {
        [a, b] if big_endian => u16::from_be_bytes([*a, *b]),
        [a, b] => u16::from_le_bytes([*a, *b]),
        _ => 0xFFFF,
    });
    let mut text = String::with_capacity(bytes.len() / 2);
    for unit in char::decode_utf16(units) {
        text.push(unit.map_err(|_| invalid())?);
    }
    if let Some(rest) = text.strip_prefix('\u{feff}') {
        return Ok(rest.to_owned());
    }
    Ok(text)
}

/// UTF-16 without a byte order mark: most characters of a transcript are ASCII, whose other byte
/// is zero. Looks at the first 4 KiB; `Some(true)` for big endian. The caller still checks that
/// the decoded text has no control characters, so that binary data is not taken for text.
fn sniff_utf16(bytes: &[u8]) -> Option<bool> {
    let sample = bytes.get(..4096).unwrap_or(bytes);
    let pairs = sample.len() / 2;
    if pairs < 4 || !bytes.len().is_multiple_of(2) {
        return None;
    }
    let (mut even_zeros, mut odd_zeros) = (0, 0);
    for pair in sample.chunks_exact(2) {
        if let [a, b] = pair {
            even_zeros += usize::from(*a == 0);
            odd_zeros += usize::from(*b == 0);
        }
    }
    let many = |zeros: usize| zeros * 10 >= pairs * 6;
    let few = |zeros: usize| zeros * 10 <= pairs;
    if many(odd_zeros) && few(even_zeros) {
        Some(false)
    } else if many(even_zeros) && few(odd_zeros) {
        Some(true)
    } else {
        None
    }
}

/// `\r\n` and lone `\r` become `\n`.
fn normalize_line_ends(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' {
            out.push('\n');
            if chars.peek() == Some(&'\n') {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

// ---------------------------------------------------------------------------------------------
// Line classification

#[derive(Debug)]
enum Line<'a> {
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

/// A speaker label found at the start of a line, to be taken if [`Votes::accepts`] it.
#[derive(Debug)]
struct Candidate<'a> {
    speaker: &'a str,
    key: String,
    /// The name looks like a name by itself (capitalised words).
    strict: bool,
    /// A timestamp came with the label.
    timed: bool,
    start: Option<u64>,
    end: Option<u64>,
    rest: &'a str,
    /// The answer of a `Q: ... A: ...` line.
    answer: Option<&'a str>,
    /// Only a label if a line of text follows (Otter-style `Name 0:03` with one space, a name
    /// line after a range).
    needs_text_after: bool,
    /// The whole line, kept as text if the label is refused or nothing follows it.
    raw: &'a str,
    fallback: Fallback<'a>,
}

/// How a line is read when its label is refused.
#[derive(Debug, Clone, Copy)]
enum Fallback<'a> {
    Plain(&'a str),
    Stamped {
        start: u64,
        end: Option<u64>,
        text: &'a str,
    },
}

fn classify(line: &str) -> Line<'_> {
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
fn find_name_lines_after_ranges(lines: &mut [Line<'_>]) {
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

/// `00:01:02`, or a range `00:01:02 - 00:01:09` / `0:0:5.0 --> 0:0:9.480`.
fn stamp_or_range(text: &str) -> Option<(u64, Option<u64>)> {
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

/// `[inner]rest` or `(inner)rest`, the inside at most 40 characters long.
fn bracketed(text: &str) -> Option<(&str, &str)> {
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

/// A `Name:` prefix as found at the start of a subtitle cue or after a line's list marker and
/// timestamp.
#[derive(Debug)]
pub(crate) struct InlineLabel<'a> {
    /// The name as written, with a parenthesis that is part of it (`Anna (PM)`).
    pub(crate) speaker: &'a str,
    /// The name in lower case, to count how often it starts a line.
    pub(crate) key: String,
    /// The name looks like a name by itself (see the module comment).
    pub(crate) strict: bool,
    /// A timestamp in the parenthesis after the name.
    pub(crate) stamp: Option<(u64, Option<u64>)>,
    /// The words after the label, trimmed at the start.
    pub(crate) rest: &'a str,
}

/// Reads `Name: rest` (with the emphasis and parenthesis forms of the module comment) at the
/// start of `text`. The rest may be empty.
pub(crate) fn inline_label(text: &str) -> Option<InlineLabel<'_>> {
    let emphasis_len = text.chars().take_while(|c| *c == '*' || *c == '_').count();
    let emphasis = text.get(..emphasis_len)?;
    if emphasis_len > 3 || emphasis.chars().any(|c| !emphasis.starts_with(c)) {
        return None;
    }
    let body = text.get(emphasis_len..)?;
    if emphasis_len == 0
        && let Some((name, after)) = bracketed(body)
    {
        // `[Name]: text`
        let name = name.trim();
        let rest = after.strip_prefix(':')?;
        if (!rest.is_empty() && !rest.starts_with(char::is_whitespace)) || stamp_or_range(name).is_some() {
            return None;
        }
        let (key, strict) = label_name(name)?;
        return Some(InlineLabel {
            speaker: name,
            key,
            strict,
            stamp: None,
            rest: rest.trim_start(),
        });
    }
    let (name_end, _) = body
        .char_indices()
        .take(MAX_NAME_CHARS + 24)
        .find(|(_, c)| matches!(c, ':' | '：' | '(' | '[') || (emphasis_len > 0 && (*c == '*' || *c == '_')))?;
    let name = body.get(..name_end)?.trim();
    let mut after = body.get(name_end..)?;
    let mut speaker = name;
    let mut stamp = None;
    if let Some((inner, rest)) = bracketed(after) {
        if let Some(found) = stamp_or_range(inner.trim()) {
            stamp = Some(found);
        } else {
            let role = inner.trim();
            if role.is_empty()
                || role
                    .chars()
                    .any(|c| matches!(c, ':' | '：' | '[' | ']' | '(' | ')' | '{' | '}'))
            {
                return None;
            }
            let speaker_len = body.len() - rest.len();
            speaker = body.get(..speaker_len)?.trim();
        }
        after = rest.trim_start();
    }
    let mut closed = emphasis.is_empty();
    if !closed && let Some(rest) = after.strip_prefix(emphasis) {
        after = rest.trim_start();
        closed = true;
    }
    let (mut rest, full_width) = match after.strip_prefix(':') {
        Some(rest) => (rest, false),
        None => (after.strip_prefix('：')?, true),
    };
    if !closed {
        rest = rest.strip_prefix(emphasis)?;
    }
    if !full_width && !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = rest.trim_start();
    if timecode::parse(rest.trim_end()).is_some() {
        return None;
    }
    let (key, strict) = label_name(name)?;
    if speaker.chars().count() > MAX_NAME_CHARS {
        return None;
    }
    let key = if speaker.len() == name.len() {
        key
    } else {
        speaker.to_lowercase()
    };
    Some(InlineLabel {
        speaker,
        key,
        strict: strict && !full_width,
        stamp,
        rest,
    })
}

/// Checks that `name` has the shape of a speaker's name and is no stop label. Returns the name in
/// lower case and whether it is capitalised like a name.
pub(crate) fn label_name(name: &str) -> Option<(String, bool)> {
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS || !name.chars().next()?.is_alphabetic() {
        return None;
    }
    let words: Vec<&str> = name.split_whitespace().collect();
    if words.len() > 4 {
        return None;
    }
    let mut strict = true;
    for (index, word) in words.iter().enumerate() {
        if !word
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '\'' | '’' | '-' | '_' | '.'))
        {
            return None;
        }
        if let Some(dot) = word.find('.') {
            let before = word.get(..dot)?;
            if dot + 1 != word.len() || before.chars().count() > 3 || before.contains('.') {
                return None;
            }
        }
        let first = word.chars().next()?;
        let particle = index > 0 && NAME_PARTICLES.contains(&word.to_lowercase().as_str());
        if first.is_lowercase() && !particle {
            strict = false;
        }
    }
    let key = words.join(" ").to_lowercase();
    if STOP_LABELS.binary_search(&key.as_str()).is_ok() {
        return None;
    }
    if let [first, number] = words.as_slice()
        && NUMBERED_HEADINGS.contains(&first.to_lowercase().as_str())
        && (number.chars().all(|c| c.is_ascii_digit() || c == '.')
            || number.chars().all(|c| matches!(c, 'I' | 'V' | 'X' | 'i' | 'v' | 'x'))
            || number.chars().count() == 1)
    {
        return None;
    }
    Some((key, strict))
}

/// How often each label starts a line: a name that does not look like a name by itself is a
/// speaker only if it recurs.
#[derive(Debug, Default)]
pub(crate) struct Votes(HashMap<String, usize>);

impl Votes {
    pub(crate) fn add(&mut self, key: &str) {
        if let Some(count) = self.0.get_mut(key) {
            *count += 1;
        } else {
            self.0.insert(key.to_owned(), 1);
        }
    }

    pub(crate) fn count(&self, key: &str) -> usize {
        self.0.get(key).copied().unwrap_or(0)
    }

    fn accepts(&self, candidate: &Candidate<'_>) -> bool {
        candidate.strict || candidate.timed || self.count(&candidate.key) >= 2
    }
}

// ---------------------------------------------------------------------------------------------
// Building utterances

#[derive(Debug)]
struct Open {
    speaker: Option<String>,
    start_ms: Option<u64>,
    end_ms: Option<u64>,
    text: String,
    /// The label line, emitted as text if no words follow the label.
    raw: Option<String>,
}

#[derive(Debug, Default)]
struct Builder {
    out: Vec<ParsedUtterance>,
    open: Option<Open>,
    last_speaker: Option<String>,
    pending: Option<(u64, Option<u64>)>,
    /// The previous line was part of the open utterance (no blank line since).
    in_paragraph: bool,
}

impl Builder {
    fn close(&mut self) {
        let Some(open) = self.open.take() else { return };
        let text = open.text.trim();
        if !text.is_empty() {
            self.out.push(ParsedUtterance {
                speaker: open.speaker,
                start_ms: open.start_ms,
                end_ms: open.end_ms,
                text: text.to_owned(),
            });
        } else if let Some(raw) = open.raw {
            self.push_note(&raw);
        }
    }

    fn push_note(&mut self, text: &str) {
        let text = text.trim();
        if !text.is_empty() {
            self.out.push(ParsedUtterance {
                speaker: None,
                start_ms: None,
                end_ms: None,
                text: text.to_owned(),
            });
        }
    }

    fn start(&mut self, speaker: Option<String>, times: Option<(u64, Option<u64>)>, text: &str, raw: Option<&str>) {
        self.close();
        let times = times.or(self.pending.take());
        self.pending = None;
        self.open = Some(Open {
            speaker,
            start_ms: times.map(|(start, _)| start),
            end_ms: times.and_then(|(_, end)| end),
            text: text.trim().to_owned(),
            raw: raw.map(str::to_owned),
        });
        self.in_paragraph = true;
    }

    fn blank(&mut self) {
        if self.open.as_ref().is_some_and(|open| !open.text.is_empty()) {
            self.close();
        }
        self.in_paragraph = false;
    }

    fn heading(&mut self, text: &str) {
        self.close();
        self.push_note(text);
        self.last_speaker = None;
        self.in_paragraph = false;
    }

    fn stamp(&mut self, start: u64, end: Option<u64>) {
        self.close();
        self.pending = Some((start, end));
        self.in_paragraph = false;
    }

    fn label(&mut self, label: &Candidate<'_>) {
        let times = label.start.map(|start| (start, label.end));
        let speaker = label.speaker.to_owned();
        self.last_speaker = Some(speaker.clone());
        self.start(Some(speaker), times, label.rest, Some(label.raw));
        if let Some(answer) = label.answer {
            self.close();
            self.last_speaker = Some("A".to_owned());
            self.start(Some("A".to_owned()), None, answer, Some("A:"));
        }
    }

    fn stamped(&mut self, start: u64, end: Option<u64>, text: &str) {
        self.start(self.last_speaker.clone(), Some((start, end)), text, None);
    }

    fn plain(&mut self, text: &str) {
        if let Some(open) = self.open.as_mut()
            && (self.in_paragraph || open.text.is_empty())
        {
            if !open.text.is_empty() {
                open.text.push('\n');
            }
            open.text.push_str(text.trim());
            self.in_paragraph = true;
            return;
        }
        self.start(self.last_speaker.clone(), None, text, None);
    }

    fn finish(mut self) -> Vec<ParsedUtterance> {
        self.close();
        self.out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    macro_rules! fixture {
        ($name:literal) => {
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $name))
        };
    }

    fn utterance(speaker: Option<&str>, start_ms: Option<u64>, end_ms: Option<u64>, text: &str) -> ParsedUtterance {
        ParsedUtterance {
            speaker: speaker.map(str::to_owned),
            start_ms,
            end_ms,
            text: text.to_owned(),
        }
    }

    fn said(speaker: &str, text: &str) -> ParsedUtterance {
        utterance(Some(speaker), None, None, text)
    }

    fn note(text: &str) -> ParsedUtterance {
        utterance(None, None, None, text)
    }

    fn at(speaker: &str, start_ms: u64, text: &str) -> ParsedUtterance {
        utterance(Some(speaker), Some(start_ms), None, text)
    }

    fn parsed(text: &str) -> Vec<ParsedUtterance> {
        match parse_str(text) {
            Ok(transcript) => transcript.utterances,
            Err(error) => panic!("{text:?} was refused: {error}"),
        }
    }

    fn parsed_bytes(bytes: &[u8]) -> Vec<ParsedUtterance> {
        match parse(bytes) {
            Ok(transcript) => transcript.utterances,
            Err(error) => panic!("refused: {error}"),
        }
    }

    fn speakers(text: &str) -> Vec<Option<String>> {
        parsed(text).into_iter().map(|u| u.speaker).collect()
    }

    fn invalid_message(result: Result<impl std::fmt::Debug, IngestError>) -> String {
        match result {
            Err(IngestError::Invalid(message)) => message,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

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

    #[test]
    fn word_lists_are_sorted_and_lower_case() {
        assert!(STOP_LABELS.windows(2).all(|pair| matches!(pair, [a, b] if a < b)));
        for word in STOP_LABELS.iter().chain(NUMBERED_HEADINGS).chain(NAME_PARTICLES) {
            assert_eq!(word.to_lowercase(), *word);
        }
    }

    // --- Fixtures -------------------------------------------------------------------------

    #[test]
    fn plain_interview() {
        let u = parsed_bytes(fixture!("text_plain_interview.txt"));
        assert_eq!(
            u,
            vec![
                note(
                    "Customer interview - Northwind Logistics\nDate: 14 May 2024\nNote: recorded with consent, \
                     names changed."
                ),
                said("Interviewer", "Thanks for joining. Can you describe your role?"),
                said(
                    "Respondent",
                    "Sure. I run the dispatch team, eight people.\nWe plan routes for about sixty drivers."
                ),
                said("Interviewer", "What does a typical morning look like?"),
                said(
                    "Respondent",
                    "Chaos, honestly. Orders come in overnight through the portal at \
                     https://portal.northwind.example/orders and someone has to sort them by hand."
                ),
                said("Respondent", "It takes two of us until 9:30 most days."),
                said("Interviewer", "What have you tried so far?"),
                said(
                    "Respondent",
                    "We tested a routing tool last year.\nThe problem was: it didn't know our depots.\nTime: 10:30 is \
                     when the first trucks have to leave, so we gave up after a month."
                ),
                said("Interviewer", "If you had a magic wand, what would you change?"),
                said(
                    "Respondent",
                    "The sorting. If the orders arrived sorted by depot, we'd save two hours a day."
                ),
                said("Interviewer", "That's really helpful. Thank you."),
            ]
        );
    }

    #[test]
    fn markdown_interview() {
        let u = parsed_bytes(fixture!("text_markdown_interview.md"));
        assert_eq!(
            u,
            vec![
                note("Interview: Anna Schmidt, Product Manager at Fernway"),
                note("*Recorded 12 March 2025 over Zoom. Notes by Ben Okafor.*"),
                note("Background"),
                said("Ben", "Thanks for taking the time. How do you plan a release today?"),
                said(
                    "Anna",
                    "Mostly in spreadsheets. We export tickets every Friday and then argue about priorities."
                ),
                said("Ben", "Who is in that meeting?"),
                said(
                    "Anna",
                    "The tech leads, design, and me. Sometimes sales joins, which is when it gets *loud*."
                ),
                note("Pain points"),
                said("Ben", "What is the hardest part?"),
                said(
                    "Anna",
                    "Keeping everyone on the same page. Honestly, it's the meetings — \"alignment\" takes hours."
                ),
                said(
                    "Anna",
                    "Last quarter we shipped the wrong thing twice because the spreadsheet was out of date."
                ),
                said("Ben", "If you could change one thing, what would it be?"),
                said(
                    "Anna",
                    "One place where priorities live.\nAnd everyone can see *why* something moved."
                ),
                note("Quotes"),
                said("Anna", "I'd pay for that tomorrow."),
            ]
        );
    }

    #[test]
    fn bracketed_timestamps() {
        let u = parsed_bytes(fixture!("text_timestamped.txt"));
        assert_eq!(u.len(), 11);
        assert_eq!(
            u.first(),
            Some(&at(
                "Interviewer",
                3_000,
                "Could you start by telling me what you do at Fernway?"
            ))
        );
        assert_eq!(
            u.get(1),
            Some(&at(
                "Priya Raman",
                9_000,
                "I lead customer support. Twelve agents, two time zones."
            ))
        );
        assert_eq!(
            u.get(3),
            Some(&at(
                "Priya Raman",
                25_000,
                "Email, mostly. Some chat.\nThe phone line we switched off last year."
            ))
        );
        assert_eq!(
            u.get(6),
            Some(&at("Interviewer", 62_000, "And what do you use to track tickets?"))
        );
        assert_eq!(
            u.last(),
            Some(&at("Interviewer", 97_000, "Thank you, that's really useful."))
        );
    }

    #[test]
    fn otter_export() {
        let u = parsed_bytes(fixture!("text_otter.txt"));
        assert_eq!(u.len(), 11);
        assert_eq!(
            u.first(),
            Some(&at(
                "Speaker 1",
                3_000,
                "Okay, I think we're recording. Thanks for making the time, Marco."
            ))
        );
        assert_eq!(
            u.get(3),
            Some(&at(
                "Marco Rossi",
                19_000,
                "The pick list prints at six. We sort it by aisle, by hand, on the big table by the office.\nTakes \
                 maybe forty minutes if nobody calls in sick."
            ))
        );
        assert_eq!(u.get(8), Some(&at("Speaker 1", 62_000, "Two years?")));
        assert_eq!(
            u.get(9),
            Some(&at("Marco Rossi", 63_000, "Two years. I still have the ticket number."))
        );
        assert_eq!(u.last(), Some(&note("Transcribed by https://otter.ai")));
    }

    #[test]
    fn google_meet_export() {
        let u = parsed_bytes(fixture!("text_google_meet.txt"));
        assert_eq!(
            u.first(),
            Some(&note(
                "Support tooling interview (2025-04-03 14:00 GMT+2) - Transcript\nAttendees\nBen Okafor, Priya \
                 Raman\nTranscript"
            ))
        );
        assert_eq!(u.get(1).and_then(|u| u.speaker.as_deref()), None);
        assert_eq!(
            u.get(2),
            Some(&at(
                "Ben Okafor",
                0,
                "Hi Priya, thanks for joining. Is it OK if I keep the transcript?"
            ))
        );
        assert_eq!(u.get(3), Some(&said("Priya Raman", "Sure, go ahead.")));
        assert_eq!(
            u.get(8),
            Some(&at("Ben Okafor", 312_000, "You said mostly. When does it not work?"))
        );
        assert_eq!(
            u.get(9),
            Some(&said(
                "Priya Raman",
                "When someone forgets to update the doc. Then a customer waits a whole day."
            ))
        );
        assert_eq!(u.last(), Some(&note("Meeting ended after 00:07:41 👋")));
        assert_eq!(u.len(), 13);
    }

    #[test]
    fn question_and_answer_interview() {
        let u = parsed_bytes(fixture!("text_qa_interview.txt"));
        assert_eq!(
            u,
            vec![
                note(
                    "Written interview with Dana Lee, operations manager at Brightside Clinics\nAnswers received by \
                     email, 2 June 2025."
                ),
                said("Q", "How many clinics do you run scheduling for?"),
                said("A", "Fourteen, across three regions."),
                said("Q", "What does your team use for shift planning today?"),
                said(
                    "A",
                    "A big Excel workbook. Each clinic has a tab, and I merge them every Sunday evening.\nIt breaks \
                     whenever someone adds a column."
                ),
                said("Q", "How long does the merge take?"),
                said("A", "About three hours, longer in December."),
                said("Q", "Who else touches the workbook?"),
                said("A", "The regional leads. Three of them, plus me."),
                said("Q", "What would make you switch tools?"),
                said("A", "If it did the merge for me. Honestly, that's it."),
            ]
        );
    }

    #[test]
    fn utf16_windows_file() {
        let u = parsed_bytes(fixture!("text_windows_utf16le.txt"));
        assert_eq!(
            u,
            vec![
                note("Interview Kundin Spedition Müller, 3. Juni 2025"),
                said("Interviewer", "Wie planen Sie heute Ihre Touren?"),
                said(
                    "Kundin",
                    "Mit Excel, ehrlich gesagt. Und sehr viel Telefon.\nJeden Morgen rufe ich die Fahrer einzeln an."
                ),
                said("Interviewer", "Wie lange dauert das?"),
                said("Kundin", "Gut eine Stunde. Im Winter länger, wegen der Straßen."),
                said("Interviewer", "Was würde Ihnen am meisten helfen?"),
                said(
                    "Kundin",
                    "Wenn die Fahrer ihre Änderungen selbst eintragen könnten – direkt vom Handy."
                ),
            ]
        );
    }

    // --- What DOCX and PDF extraction produce -----------------------------------------------

    #[test]
    fn word_document_paragraphs() {
        // One line per paragraph, a manual line break as a line of its own, a table's cells.
        let text = "Interview with Anna, product manager\nDate:\t12 March 2025\nInterviewer: Thanks for taking the \
                    time. How do you plan a release today?\nAnna: Mostly in spreadsheets.\nInterviewer: What is the \
                    hardest part?\nAnna: Keeping everyone on the same page.\nHonestly, it’s the meetings — \
                    “alignment” takes hours & nobody <likes> it.\n\nTool\tUsed for\nJira\tTickets\n\nInterviewer: \
                    Thank you, Anna.";
        assert_eq!(
            parsed(text),
            vec![
                note("Interview with Anna, product manager\nDate:\t12 March 2025"),
                said(
                    "Interviewer",
                    "Thanks for taking the time. How do you plan a release today?"
                ),
                said("Anna", "Mostly in spreadsheets."),
                said("Interviewer", "What is the hardest part?"),
                said(
                    "Anna",
                    "Keeping everyone on the same page.\nHonestly, it’s the meetings — “alignment” takes hours & \
                     nobody <likes> it."
                ),
                said("Anna", "Tool\tUsed for\nJira\tTickets"),
                said("Interviewer", "Thank you, Anna."),
            ]
        );
    }

    #[test]
    fn teams_docx_layout() {
        let text = "0:0:0.0 --> 0:0:5.0\nAnna Schmidt\nHi everyone, can you hear me?\n\n0:0:5.0 --> 0:0:9.480\nBen \
                    Okafor\nYes, loud and clear.\n\n0:0:9.480 --> 0:0:15.120\nAnna Schmidt\nGreat. Let's talk about \
                    onboarding.\n\n";
        assert_eq!(
            parsed(text),
            vec![
                utterance(
                    Some("Anna Schmidt"),
                    Some(0),
                    Some(5_000),
                    "Hi everyone, can you hear me?"
                ),
                utterance(Some("Ben Okafor"), Some(5_000), Some(9_480), "Yes, loud and clear."),
                utterance(
                    Some("Anna Schmidt"),
                    Some(9_480),
                    Some(15_120),
                    "Great. Let's talk about onboarding."
                ),
            ]
        );
    }

    #[test]
    fn pdf_text_of_an_interview() {
        // As `pdftotext -layout` gives the LibreOffice export of the Word interview.
        let text = "Interview with Anna, product manager\nDate: 12 March 2025\n\nInterviewer: Thanks for taking the \
                    time.\n\nAnna: Mostly in spreadsheets. We export tickets every Friday and then\nargue about \
                    priorities.\n\n\n\nTool                                     Used for\n\nInterviewer: Thank you, \
                    Anna.\n\u{c}";
        assert_eq!(
            parsed(text),
            vec![
                note("Interview with Anna, product manager\nDate: 12 March 2025"),
                said("Interviewer", "Thanks for taking the time."),
                said(
                    "Anna",
                    "Mostly in spreadsheets. We export tickets every Friday and then\nargue about priorities."
                ),
                said("Anna", "Tool                                     Used for"),
                said("Interviewer", "Thank you, Anna."),
            ]
        );
    }

    #[test]
    fn teams_docx_layout_without_empty_paragraphs() {
        let text = "0:0:0.0 --> 0:0:5.0\nAnna Schmidt\nHi everyone.\n0:0:5.0 --> 0:0:9.480\nBen Okafor\nHello!";
        assert_eq!(
            parsed(text),
            vec![
                utterance(Some("Anna Schmidt"), Some(0), Some(5_000), "Hi everyone."),
                utterance(Some("Ben Okafor"), Some(5_000), Some(9_480), "Hello!"),
            ]
        );
    }

    #[test]
    fn older_teams_docx_and_resolve_layouts() {
        let teams = "Anna Schmidt   0:03\nHi everyone.\nBen Okafor   0:09\nHello!";
        assert_eq!(
            parsed(teams),
            vec![
                at("Anna Schmidt", 3_000, "Hi everyone."),
                at("Ben Okafor", 9_000, "Hello!")
            ]
        );
        let resolve = "[00:00:03:18 - 00:00:08:08]\nJoe\n Welcome to the show.\n\n[00:00:08:10 - 00:00:15:22]\nAdam\n \
                       Thanks for having me.";
        assert_eq!(
            parsed(resolve),
            vec![
                utterance(Some("Joe"), Some(3_000), Some(8_000), "Welcome to the show."),
                utterance(Some("Adam"), Some(8_000), Some(15_000), "Thanks for having me."),
            ]
        );
        let emphasised = "*Joe (00:00)*\nWelcome.\n\n*Adam (1:02:43)*\nThanks.";
        assert_eq!(
            parsed(emphasised),
            vec![at("Joe", 0, "Welcome."), at("Adam", 3_763_000, "Thanks.")]
        );
    }

    #[test]
    fn pdf_text_with_page_breaks_and_separators() {
        let text = "Interviewer: First question?\u{c}Anna: An answer that goes over\u{b}two lines.\u{2028}And a \
                    third.\u{2029}Interviewer: Next.";
        assert_eq!(
            parsed(text),
            vec![
                said("Interviewer", "First question?"),
                said("Anna", "An answer that goes over\ntwo lines.\nAnd a third."),
                said("Interviewer", "Next."),
            ]
        );
    }

    // --- Label forms ----------------------------------------------------------------------

    #[test]
    fn label_forms() {
        let text = "**Anna:** one\n**Anna**: two\n*Anna:* three\n__Anna__: four\n- **Anna:** five\n> Anna: six\n\
                    [00:01:02] Anna: seven\n00:01:03 Anna: eight\nAnna (00:01:04): nine\n(00:01:05) Anna: ten\n\
                    [00:01:06 - 00:01:09] Anna: eleven\nAnna (PM): twelve\nBen Okafor (he/him): thirteen\n\
                    Dr. Ng: fourteen\n[Anna]: fifteen\nAnna : seize\nSpeaker 2: seventeen\nANNA: eighteen\n\
                    Ludwig van Beethoven: nineteen\n安娜：二十\n安娜：二十一\n00:01:10 - Anna: twenty-two";
        let u = parsed(text);
        let expected = vec![
            said("Anna", "one"),
            said("Anna", "two"),
            said("Anna", "three"),
            said("Anna", "four"),
            said("Anna", "five"),
            said("Anna", "six"),
            at("Anna", 62_000, "seven"),
            at("Anna", 63_000, "eight"),
            at("Anna", 64_000, "nine"),
            at("Anna", 65_000, "ten"),
            utterance(Some("Anna"), Some(66_000), Some(69_000), "eleven"),
            said("Anna (PM)", "twelve"),
            said("Ben Okafor (he/him)", "thirteen"),
            said("Dr. Ng", "fourteen"),
            said("Anna", "fifteen"),
            said("Anna", "seize"),
            said("Speaker 2", "seventeen"),
            said("ANNA", "eighteen"),
            said("Ludwig van Beethoven", "nineteen"),
            said("安娜", "二十"),
            said("安娜", "二十一"),
            at("Anna", 70_000, "twenty-two"),
        ];
        assert_eq!(u, expected);
    }

    #[test]
    fn label_alone_on_its_line_takes_the_next_lines() {
        let text = "Speaker 1 (00:00:02):\nHello and welcome.\n\nSpeaker 2 (00:00:05):\n\nThanks for having me.\n\
                    Glad to be here.";
        assert_eq!(
            parsed(text),
            vec![
                at("Speaker 1", 2_000, "Hello and welcome."),
                at("Speaker 2", 5_000, "Thanks for having me.\nGlad to be here."),
            ]
        );
        // A label that nothing follows is kept as text rather than lost.
        assert_eq!(parsed("Anna: Hi.\n\nBen:\n"), vec![said("Anna", "Hi."), note("Ben:")]);
        assert_eq!(
            parsed("Interviewer:\n# Part 2\n"),
            vec![note("Interviewer:"), note("Part 2")]
        );
    }

    #[test]
    fn lowercase_names_count_when_they_recur() {
        assert_eq!(
            speakers("anna: hi\nben b: hello\nanna: how are you\nben b: fine"),
            vec![
                Some("anna".into()),
                Some("ben b".into()),
                Some("anna".into()),
                Some("ben b".into())
            ]
        );
        assert_eq!(
            parsed("we agreed on one thing: ship it\nAnd then we left."),
            vec![note("we agreed on one thing: ship it\nAnd then we left.")]
        );
    }

    // --- Not labels -------------------------------------------------------------------------

    #[test]
    fn prose_is_not_a_label() {
        for line in [
            "Note: bring the laptop",
            "NOTE: bring the laptop",
            "Time: 10:30",
            "Start: 10:30",
            "Date: 12 March 2025",
            "See http://example.com/a:b for details",
            "http://example.com",
            "https: //example.com",
            "The problem was: it didn't scale.",
            "So here's the thing: we never tested it.",
            "Step 3: export the tickets",
            "Question 2: how often?",
            "Part IV: the end",
            "Summary: good call",
            "Next steps: send the deck",
            "Hello, Anna: are you there?",
            "Why? Because: reasons",
            "10:30: standup",
            "Anna:Ben",
            "e.g.: this",
            "A really quite long speaker name that goes on: and on",
            "One two three four five: six",
            "Q&A: later",
            "[laughs]: what",
            "**Note:** nothing",
            "We met at 10:30",
            "Lunch 12:30",
        ] {
            assert_eq!(parsed(line), vec![note(line)], "{line:?}");
        }
        // Lowercase words that introduce something are not names, even if they recur.
        assert_eq!(
            speakers("The idea was: one\nThe idea was: two"),
            vec![Some("The idea was".to_owned()), Some("The idea was".to_owned())],
            "a recurring lead-in is read as a label (documented limitation)"
        );
    }

    #[test]
    fn otter_header_needs_two_spaces_or_a_following_line() {
        assert_eq!(
            parsed("Anna Schmidt  0:03\nHi."),
            vec![at("Anna Schmidt", 3_000, "Hi.")]
        );
        assert_eq!(
            parsed("Anna Schmidt\t0:03\nHi."),
            vec![at("Anna Schmidt", 3_000, "Hi.")]
        );
        // One space: only when the name recurs and text follows directly.
        assert_eq!(
            parsed("Anna Schmidt 0:03\nHi.\n\nBen 0:05\nHello.\n\nAnna Schmidt 0:08\nBye.\nAnna Schmidt 0:09"),
            vec![
                at("Anna Schmidt", 3_000, "Hi."),
                said("Anna Schmidt", "Ben 0:05\nHello."),
                at("Anna Schmidt", 8_000, "Bye.\nAnna Schmidt 0:09"),
            ]
        );
        assert_eq!(
            parsed("Call Anna 10:30\n\nthen lunch"),
            vec![note("Call Anna 10:30"), note("then lunch")]
        );
    }

    // --- Structure --------------------------------------------------------------------------

    #[test]
    fn paragraphs_and_continuations() {
        let text = "Preface line one\npreface line two\n\nAnna: First.\ncontinued\n\nNew paragraph of Anna.\n\n\n\
                    Another one.\nBen: Ben speaks.\n# Heading\nAfter the heading.";
        assert_eq!(
            parsed(text),
            vec![
                note("Preface line one\npreface line two"),
                said("Anna", "First.\ncontinued"),
                said("Anna", "New paragraph of Anna."),
                said("Anna", "Another one."),
                said("Ben", "Ben speaks."),
                note("Heading"),
                note("After the heading."),
            ]
        );
    }

    #[test]
    fn standalone_timestamps_go_to_the_next_utterance() {
        // A time on a line of its own inside a paragraph is text.
        assert_eq!(
            parsed("Anna: The bus leaves at\n10:30\nand I am late."),
            vec![said("Anna", "The bus leaves at\n10:30\nand I am late.")]
        );
        let text = "00:00:00\n\nAnna: Hi.\nBen: Hello.\n[00:05:12]\nAnna: Later.\n(00:06:00)\n\nStill Anna.";
        assert_eq!(
            parsed(text),
            vec![
                at("Anna", 0, "Hi."),
                said("Ben", "Hello."),
                at("Anna", 312_000, "Later."),
                at("Anna", 360_000, "Still Anna.")
            ]
        );
        assert_eq!(
            parsed("[00:00:05] Anna: Hi.\n[00:00:09] and more\nplain"),
            vec![at("Anna", 5_000, "Hi."), at("Anna", 9_000, "and more\nplain")]
        );
        assert_eq!(
            parsed("[00:00:05] Note: check"),
            vec![utterance(None, Some(5_000), None, "Note: check")]
        );
    }

    #[test]
    fn markdown_markup_is_dropped() {
        let text = "---\ntitle: Interview\n---\n\n# Anna ##\n\n```\nAnna: in a fence\n```\n\n***\nBen: end\n####### not a \
                    heading\n#hashtag";
        assert_eq!(
            parsed(text),
            vec![
                note("title: Interview"),
                note("Anna"),
                said("Anna", "in a fence"),
                said("Ben", "end\n####### not a heading\n#hashtag"),
            ]
        );
    }

    #[test]
    fn question_and_answer_on_one_line() {
        assert_eq!(
            parsed("Q: Why? A: Because."),
            vec![said("Q", "Why?"), said("A", "Because.")]
        );
        assert_eq!(parsed("Q: What is A: B?"), vec![said("Q", "What is"), said("A", "B?")]);
        assert_eq!(parsed("Q: A: nothing"), vec![said("Q", "A: nothing")]);
    }

    // --- Encodings and empty input ---------------------------------------------------------

    #[test]
    fn decodes_encodings_and_line_ends() {
        assert_eq!(
            decode(b"\xEF\xBB\xBFAnna: Hi\r\nBen: Ho\rX"),
            Ok("Anna: Hi\nBen: Ho\nX".to_owned())
        );
        let utf16le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("Zoë\r\n€".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(decode(&utf16le), Ok("Zoë\n€".to_owned()));
        let utf16be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain("Zoë 𝄞".encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(decode(&utf16be), Ok("Zoë 𝄞".to_owned()));
        let no_bom: Vec<u8> = "Anna: Hallo, wie geht's?"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(decode(&no_bom), Ok("Anna: Hallo, wie geht's?".to_owned()));
        let no_bom_be: Vec<u8> = "Anna: Hallo, wie geht's?"
            .encode_utf16()
            .flat_map(u16::to_be_bytes)
            .collect();
        assert_eq!(decode(&no_bom_be), Ok("Anna: Hallo, wie geht's?".to_owned()));
        assert_eq!(decode(b""), Ok(String::new()));
    }

    #[test]
    fn refuses_what_is_not_text() {
        let latin1 = invalid_message(decode(b"Anna: Hi\nBen: Gr\xFC\xDFe"));
        assert!(
            latin1.starts_with("The file is not UTF-8 text") && latin1.contains("line 2"),
            "{latin1}"
        );
        let zip = invalid_message(decode(b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00\xb1"));
        assert!(zip.starts_with("The file"), "{zip}");
        let odd = invalid_message(decode(&[0xFF, 0xFE, 0x41, 0x00, 0x42]));
        assert!(odd.contains("UTF-16"), "{odd}");
        let lone_surrogate = invalid_message(decode(&[0xFF, 0xFE, 0x00, 0xD8, 0x41, 0x00]));
        assert!(lone_surrogate.contains("UTF-16"), "{lone_surrogate}");
        let utf32 = invalid_message(decode(&[0xFF, 0xFE, 0, 0, 0x41, 0, 0, 0]));
        assert!(utf32.contains("UTF-32"), "{utf32}");
        let garbage = invalid_message(decode(&[0x00, 0x9F, 0x92, 0x96, 0x00, 0x01]));
        assert!(garbage.starts_with("The file is not UTF-8 text"), "{garbage}");
        let garbage = invalid_message(decode(&[0x01, 0x00, 0x02, 0x00, 0x41, 0x00, 0x42, 0x00]));
        assert!(garbage.contains("binary"), "{garbage}");
        let nul = invalid_message(decode(b"Anna\0: Hi there, this has a NUL"));
        assert!(nul.contains("binary"), "{nul}");
    }

    #[test]
    fn empty_input_has_no_text() {
        for input in [
            "",
            "   ",
            "\n\n\t\n",
            "\u{feff}",
            "---\n***\n",
            "00:00:01\n[00:05:12]",
            "#\n##  ##",
        ] {
            let message = invalid_message(parse_str(input));
            assert!(message.starts_with("The file has no text"), "{input:?}: {message}");
        }
        assert!(invalid_message(parse(b"\xEF\xBB\xBF \r\n")).starts_with("The file has no text"));
    }

    #[test]
    fn bom_and_crlf_in_text() {
        assert_eq!(
            parsed_bytes(b"\xEF\xBB\xBFAnna: Hi\r\nthere\r\n\r\nBen: Ho"),
            vec![said("Anna", "Hi\nthere"), said("Ben", "Ho")]
        );
        assert_eq!(
            parsed("\u{feff}Anna: Hi\r\nthere\r\rBen: Ho"),
            vec![said("Anna", "Hi\nthere"), said("Ben", "Ho")]
        );
    }

    #[test]
    fn large_and_hostile_input_stays_linear() {
        let mut interview = String::new();
        for turn in 0..3_000 {
            let speaker = if turn % 2 == 0 { "Interviewer" } else { "Anna Schmidt" };
            interview.push_str(&format!(
                "[{:02}:{:02}:{:02}] {speaker}: ",
                turn / 1_200,
                turn / 20 % 60,
                turn * 3 % 60
            ));
            interview.push_str("So what we did was export the tickets and sort them by hand.\n");
        }
        let mut inputs = vec![interview];
        for unit in [
            "[", "(", "**", "# ", "a: ", "Anna: ", "0:", "-->", "> ", "- ", "\t", "::", "Q: A: ", "w 0:01\n",
        ] {
            inputs.push(unit.repeat(300_000 / unit.len()));
        }
        // A 3-hour interview well within 100 ms; 300 kB of hostile input without quadratic blow-up
        // (which would take seconds).
        for (index, input) in inputs.iter().enumerate() {
            let started = std::time::Instant::now();
            let _ = parse_str(input);
            let elapsed = started.elapsed();
            let limit = match (cfg!(debug_assertions), index) {
                (true, _) => 5_000,
                (false, 0) => 100,
                (false, _) => 500,
            };
            assert!(elapsed.as_millis() < limit, "{:?} took {elapsed:?}", input.get(..20));
        }
    }

    // --- Properties ---------------------------------------------------------------------------

    /// 512 cases unless `PROPTEST_CASES` says otherwise.
    pub(crate) fn cases() -> u32 {
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|cases| cases.parse().ok())
            .unwrap_or(512)
    }

    pub(crate) fn check_utterances(utterances: &[ParsedUtterance]) -> Result<(), TestCaseError> {
        for u in utterances {
            prop_assert!(!u.text.is_empty() && u.text.trim() == u.text, "{u:?}");
            if let Some(speaker) = &u.speaker {
                prop_assert!(!speaker.is_empty() && speaker.trim() == speaker, "{u:?}");
            }
        }
        Ok(())
    }

    /// Pieces that lines of transcripts are made of, markup and traps included.
    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => Just("WORD".to_owned()),
            1 => prop::sample::select(vec![
                "Anna:", "**Ben:**", "**Ben**:", "[00:01:02]", "00:01:02", "(00:01:02)", "Note:", "Q:", "A:", "#", "##",
                "-", "*", ">", "---", "http://x.example/a:b", "Time:", "10:30", "Speaker 1  0:03", "(PM):", "：",
                "[Anna]:", "\t", "  ", "**", "_", "0:0:5.0 --> 0:0:9.480", "Transcribed by", "•", "&amp;", "<i>",
            ])
            .prop_map(str::to_owned),
            1 => "[a-zA-Z0-9.,!?'’()\\[\\]:*_#>-]{1,6}",
        ]
    }

    fn document() -> impl Strategy<Value = String> {
        let line = prop::collection::vec(piece(), 0..8).prop_map(|pieces| pieces.join(" "));
        prop::collection::vec(line, 0..12).prop_map(|lines| {
            // Number the words so that each can be looked for.
            let mut counter = 0;
            let mut out = String::new();
            for (index, line) in lines.iter().enumerate() {
                if index > 0 {
                    out.push('\n');
                }
                let mut rest = line.as_str();
                while let Some(at) = rest.find("WORD") {
                    out.push_str(rest.get(..at).unwrap_or_default());
                    out.push_str(&format!("w{counter}x"));
                    counter += 1;
                    rest = rest.get(at + 4..).unwrap_or_default();
                }
                out.push_str(rest);
            }
            out
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases()))]

        #[test]
        fn any_text_parses_without_panicking(text in any::<String>()) {
            if let Ok(transcript) = parse_str(&text) {
                check_utterances(&transcript.utterances)?;
            }
        }

        #[test]
        fn any_bytes_decode_without_panicking(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            if let Ok(transcript) = parse(&bytes) {
                check_utterances(&transcript.utterances)?;
            }
        }

        #[test]
        fn no_word_is_lost(text in document()) {
            let Ok(transcript) = parse_str(&text) else {
                prop_assert!(!text.contains("w0x"), "refused text with words: {text:?}");
                return Ok(());
            };
            check_utterances(&transcript.utterances)?;
            let mut all = String::new();
            for u in &transcript.utterances {
                all.push_str(u.speaker.as_deref().unwrap_or_default());
                all.push('\n');
                all.push_str(&u.text);
                all.push('\n');
            }
            let mut counter = 0;
            while text.contains(&format!("w{counter}x")) {
                prop_assert!(all.contains(&format!("w{counter}x")), "w{counter}x lost from {text:?}: {transcript:?}");
                counter += 1;
            }
        }
    }
}
