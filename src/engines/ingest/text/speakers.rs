//! When a line starts with a speaker label.
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

use std::collections::HashMap;

use super::marks::{Candidate, bracketed, stamp_or_range};
use crate::engines::ingest::timecode;

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

    pub(super) fn accepts(&self, candidate: &Candidate<'_>) -> bool {
        candidate.strict || candidate.timed || self.count(&candidate.key) >= 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::ingest::text::tests::{at, note, parsed, said, speakers, utterance};

    #[test]
    fn word_lists_are_sorted_and_lower_case() {
        assert!(STOP_LABELS.windows(2).all(|pair| matches!(pair, [a, b] if a < b)));
        for word in STOP_LABELS.iter().chain(NUMBERED_HEADINGS).chain(NAME_PARTICLES) {
            assert_eq!(word.to_lowercase(), *word);
        }
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
}
