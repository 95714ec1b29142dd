//! A transcript as one plain text and back, with the arithmetic between a place in that
//! text (a character offset, as REFI-QDA counts) and a place in a transcript (an
//! utterance and an offset in its words, as highlights count).
//!
//! Written, each utterance is one line, `Speaker: words`, and an utterance of no known
//! speaker is its words alone. Read, every line with words becomes an utterance: one
//! that starts with a speaker's label (as the text reader of uploads finds them) is that
//! speaker's, any other line is of an unknown speaker.

use std::collections::HashMap;

use crate::domain::record::{UNNAMED_SPEAKER, Utterance};
use crate::engines::ingest::ParsedUtterance;
use crate::engines::ingest::text::{Votes, inline_label};

/// A transcript written as plain text.
pub struct Written {
    pub text: String,
    /// Where each utterance's words begin in `text`, in characters, by utterance id.
    starts: HashMap<i64, usize>,
    /// How many characters each utterance's words have, by utterance id.
    lengths: HashMap<i64, usize>,
}

impl Written {
    /// The character offset in the text of an offset into an utterance's words, when the
    /// utterance is there and the offset within its words.
    pub fn position(&self, utterance_id: i64, offset: i64) -> Option<usize> {
        let start = *self.starts.get(&utterance_id)?;
        let offset = usize::try_from(offset).ok()?;
        (offset <= *self.lengths.get(&utterance_id)?).then_some(start + offset)
    }
}

/// Line breaks inside a speaker's name or words would start a new utterance when the
/// text is read back; a space takes the place of each, so offsets stay as they are.
fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// Writes the utterances one a line, `Speaker: words`.
pub fn write(utterances: &[Utterance]) -> Written {
    let mut text = String::new();
    let mut chars = 0;
    let mut starts = HashMap::new();
    let mut lengths = HashMap::new();
    for utterance in utterances {
        let speaker = one_line(utterance.speaker.trim());
        if !speaker.is_empty() && speaker != UNNAMED_SPEAKER {
            let label = format!("{speaker}: ");
            chars += label.chars().count();
            text.push_str(&label);
        }
        let words = one_line(&utterance.text);
        let length = words.chars().count();
        starts.insert(utterance.id, chars);
        lengths.insert(utterance.id, length);
        text.push_str(&words);
        text.push('\n');
        chars += length + 1;
    }
    Written { text, starts, lengths }
}

/// A plain text read as utterances.
#[derive(Debug)]
pub struct Read {
    pub utterances: Vec<ParsedUtterance>,
    /// Where each utterance's words are in the (normalised) text: first character and
    /// length, in characters; utterance `i` has id `i + 1`.
    spans: Vec<(usize, usize)>,
}

/// The text as positions count it: without a byte order mark, with `\n` for every line
/// break (as tools that read text files in Python, QualCoder among them, see it), and a
/// space for control characters a transcript cannot hold (NUL among them).
pub fn normalise(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.replace("\r\n", "\n")
        .chars()
        .map(|c| match c {
            '\r' => '\n',
            '\n' | '\t' => c,
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// Reads a normalised text (see [`normalise`]) as utterances, one a line with words.
pub fn read(text: &str) -> Read {
    // Labels that do not look like names by themselves count only when they recur, as
    // in the reader of uploads.
    let mut votes = Votes::default();
    for line in text.lines() {
        if let Some(label) = inline_label(line.trim_start()) {
            votes.add(&label.key);
        }
    }
    let mut utterances = Vec::new();
    let mut spans = Vec::new();
    let mut line_start = 0;
    for line in text.split('\n') {
        let line_chars = line.chars().count();
        let indent = line.len() - line.trim_start().len();
        let body = &line[indent..];
        let label = inline_label(body).filter(|label| label.strict || votes.count(&label.key) >= 2);
        let (speaker, words_at) = match &label {
            Some(label) => (Some(label.speaker.to_owned()), line.len() - label.rest.len()),
            None => (None, indent),
        };
        let words = line[words_at..].trim_end();
        if !words.is_empty() {
            spans.push((line_start + line[..words_at].chars().count(), words.chars().count()));
            utterances.push(ParsedUtterance {
                speaker,
                start_ms: None,
                end_ms: None,
                text: words.to_owned(),
            });
        }
        line_start += line_chars + 1;
    }
    Read { utterances, spans }
}

impl Read {
    /// The transcript places of the characters `start..end` of the text: the first
    /// utterance with words at or after `start` and the last with words before `end`,
    /// clamped to their words (a selection that begins on a speaker's label begins with
    /// the words). `None` when no words lie between.
    pub fn anchors(&self, start: usize, end: usize) -> Option<((i64, i64), (i64, i64))> {
        if end <= start {
            return None;
        }
        let first = self.spans.iter().position(|(at, len)| at + len > start)?;
        let last = self.spans.iter().rposition(|(at, _)| *at < end)?;
        if last < first {
            return None;
        }
        let (first_at, _) = self.spans[first];
        let (last_at, last_len) = self.spans[last];
        let from = start.saturating_sub(first_at);
        let to = (end - last_at).min(last_len);
        let id = |index: usize| i64::try_from(index + 1).unwrap_or(i64::MAX);
        let offset = |value: usize| i64::try_from(value).unwrap_or(i64::MAX);
        Some(((id(first), offset(from)), (id(last), offset(to))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utterance(id: i64, speaker: &str, text: &str) -> Utterance {
        Utterance {
            id,
            is_respondent: true,
            speaker: speaker.to_owned(),
            start_ms: None,
            end_ms: None,
            text: text.to_owned(),
        }
    }

    #[test]
    fn written_text_reads_back_to_the_same_utterances_and_places() {
        let utterances = [
            utterance(1, "Interviewer", "How much?"),
            utterance(2, "Anna", "Ça coûte trop cher.\nWay too much."),
            utterance(3, UNNAMED_SPEAKER, "(laughter)"),
        ];
        let written = write(&utterances);
        assert_eq!(
            written.text,
            "Interviewer: How much?\nAnna: Ça coûte trop cher. Way too much.\n(laughter)\n"
        );
        // "coûte" is characters 3..8 of Anna's words.
        let (from, to) = (written.position(2, 3).unwrap(), written.position(2, 8).unwrap());
        let chars: Vec<char> = written.text.chars().collect();
        assert_eq!(chars[from..to].iter().collect::<String>(), "coûte");
        assert_eq!(written.position(2, 40), None);
        assert_eq!(written.position(9, 0), None);

        let read = read(&normalise(&written.text));
        let speakers: Vec<_> = read.utterances.iter().map(|u| u.speaker.as_deref()).collect();
        assert_eq!(speakers, [Some("Interviewer"), Some("Anna"), None]);
        assert_eq!(read.utterances[1].text, "Ça coûte trop cher. Way too much.");
        assert_eq!(read.anchors(from, to), Some(((2, 3), (2, 8))));
    }

    #[test]
    fn a_selection_on_a_label_or_across_lines_is_clamped_to_the_words() {
        let text = "Anna: We email them.\n\nThe call dropped.\nBob: It fails.\n";
        let read = read(text);
        assert_eq!(read.utterances.len(), 3);
        assert_eq!(read.utterances[1].speaker, None);
        // From the start of Anna's label to the middle of the unlabelled line.
        assert_eq!(read.anchors(0, 30), Some(((1, 0), (2, 8))));
        // Only the blank line and a label: no words.
        assert_eq!(read.anchors(20, 22), None);
        assert_eq!(read.anchors(40, 44), None);
        assert_eq!(read.anchors(5, 5), None);
        assert_eq!(read.anchors(100, 120), None);
    }

    #[test]
    fn byte_order_marks_carriage_returns_and_nul_are_normalised() {
        assert_eq!(normalise("\u{feff}A: x\r\nB: y\rz\0"), "A: x\nB: y\nz ");
    }

    #[test]
    fn a_lower_case_label_counts_only_when_it_recurs() {
        let once = read("price: too high\n");
        assert_eq!(once.utterances[0].speaker, None);
        assert_eq!(once.utterances[0].text, "price: too high");
        let twice = read("interviewer: hi\ninterviewer: bye\n");
        assert_eq!(twice.utterances[0].speaker.as_deref(), Some("interviewer"));
    }
}
