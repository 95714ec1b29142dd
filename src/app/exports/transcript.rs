//! A record's transcript as plain text, WebVTT and SubRip, each written so that Insight's own
//! importers (`crate::engines::ingest`) read it back to the same utterances: speakers, times and words.
//! For Word, a [`Document`] of one paragraph per utterance.

use std::fmt::Write;

pub use crate::domain::record::timestamp as clock;
use crate::domain::record::{Record, Utterance};

use super::document::{Block, Document, Span};

/// An utterance's times in milliseconds: its own, or else where the one before ended and
/// how long its words take to say (at least a second), for the utterances of a transcript
/// that has times at all.
fn timings(utterances: &[Utterance]) -> Vec<(i64, i64)> {
    let mut timings = Vec::with_capacity(utterances.len());
    let mut previous_end = 0;
    for (n, utterance) in utterances.iter().enumerate() {
        let start = utterance.start_ms.unwrap_or(previous_end).max(0);
        let next_start = utterances
            .get(n + 1)
            .and_then(|next| next.start_ms)
            .filter(|&next| next > start);
        let spoken = (utterance.text.split_whitespace().count() as i64 * 400).max(1000);
        let end = utterance
            .end_ms
            .filter(|&end| end > start)
            .or(next_start)
            .unwrap_or(start + spoken);
        timings.push((start, end));
        previous_end = end;
    }
    timings
}

/// Whether the transcript has times to write subtitles with.
pub fn has_times(utterances: &[Utterance]) -> bool {
    utterances.iter().any(|utterance| utterance.start_ms.is_some())
}

/// `hh:mm:ss{separator}mmm`.
fn timecode(ms: i64, separator: char) -> String {
    let ms = ms.max(0);
    let (hours, minutes, seconds, millis) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    format!("{hours:02}:{minutes:02}:{seconds:02}{separator}{millis:03}")
}

/// Lines of an utterance's text without blank ones, which would end a cue.
fn cue_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim_end).filter(|line| !line.trim().is_empty())
}

/// One utterance a paragraph: `[00:01:02 - 00:01:09] Anna: words`, a label only where the
/// utterance has a speaker and times only where it has them.
pub fn txt(utterances: &[Utterance]) -> String {
    let mut out = String::new();
    for utterance in utterances {
        if !out.is_empty() {
            out.push('\n');
        }
        match (utterance.start_ms, utterance.end_ms) {
            (Some(start), Some(end)) if end > start => {
                let _ = write!(out, "[{} - {}] ", timecode(start, '.'), timecode(end, '.'));
            }
            (Some(start), _) => {
                let _ = write!(out, "[{}] ", timecode(start, '.'));
            }
            _ => {}
        }
        if !utterance.speaker.trim().is_empty() {
            let _ = write!(out, "{}: ", utterance.speaker.trim());
        }
        let text: Vec<&str> = cue_lines(&utterance.text).collect();
        out.push_str(&text.join("\n"));
        out.push('\n');
    }
    out
}

/// The characters WebVTT cue text and voice names must escape.
fn vtt_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// WebVTT: a cue per utterance, the speaker as its voice (`<v Anna>`).
pub fn vtt(record: &Record, utterances: &[Utterance]) -> String {
    let mut out = String::from("WEBVTT\n");
    if let Some(language) = record.language.as_deref().filter(|l| !l.contains('\n')) {
        let _ = writeln!(out, "Language: {language}");
    }
    for (n, (utterance, (start, end))) in utterances.iter().zip(timings(utterances)).enumerate() {
        let _ = write!(
            out,
            "\n{}\n{} --> {}\n",
            n + 1,
            timecode(start, '.'),
            timecode(end, '.')
        );
        let text: Vec<String> = cue_lines(&utterance.text).map(vtt_escape).collect();
        let text = text.join("\n");
        if utterance.speaker.trim().is_empty() {
            let _ = writeln!(out, "{text}");
        } else {
            let _ = writeln!(out, "<v {}>{text}</v>", vtt_escape(utterance.speaker.trim()));
        }
    }
    out
}

/// SubRip: a numbered cue per utterance, the speaker as a `Name: ` prefix.
pub fn srt(utterances: &[Utterance]) -> String {
    let mut out = String::new();
    for (n, (utterance, (start, end))) in utterances.iter().zip(timings(utterances)).enumerate() {
        let _ = write!(out, "{}\n{} --> {}\n", n + 1, timecode(start, ','), timecode(end, ','));
        let text: Vec<&str> = cue_lines(&utterance.text).collect();
        if utterance.speaker.trim().is_empty() {
            let _ = writeln!(out, "{}\n", text.join("\n"));
        } else {
            let _ = writeln!(out, "{}: {}\n", utterance.speaker.trim(), text.join("\n"));
        }
    }
    out
}

/// The transcript for Word: the speaker in bold and the time, linked to its moment in the
/// console, then the words.
pub fn document(
    record: &Record,
    utterances: &[Utterance],
    byline: Vec<String>,
    moment: impl Fn(i64) -> String,
) -> Document {
    let blocks = utterances
        .iter()
        .map(|utterance| {
            let mut spans = Vec::new();
            if !utterance.speaker.trim().is_empty() {
                spans.push(Span::bold(utterance.speaker.trim()));
            }
            if let Some(start) = utterance.start_ms {
                if !spans.is_empty() {
                    spans.push(Span::plain("  "));
                }
                spans.push(Span {
                    text: clock(start),
                    link: Some(moment(utterance.id)),
                    ..Span::default()
                });
            }
            if !spans.is_empty() {
                spans.push(Span::plain("\n"));
            }
            spans.push(Span::plain(utterance.text.trim()));
            Block::Paragraph(spans)
        })
        .collect();
    Document {
        title: record.name.clone(),
        byline,
        blocks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utterance(id: i64, speaker: &str, start: Option<i64>, end: Option<i64>, text: &str) -> Utterance {
        Utterance {
            id,
            is_respondent: speaker == "Anna",
            speaker: speaker.into(),
            start_ms: start,
            end_ms: end,
            text: text.into(),
        }
    }

    #[test]
    fn missing_times_are_filled_from_neighbours() {
        let utterances = [
            utterance(1, "Ben", Some(1_000), None, "Hello there"),
            utterance(2, "Anna", Some(4_000), Some(9_500), "Hi"),
            utterance(3, "Ben", None, None, "one two three four five"),
        ];
        assert_eq!(
            timings(&utterances),
            vec![(1_000, 4_000), (4_000, 9_500), (9_500, 11_500)]
        );
        assert_eq!(timecode(3_723_045, ','), "01:02:03,045");
        assert_eq!(clock(3_723_045), "1:02:03");
        assert_eq!(clock(65_000), "01:05");
    }

    #[test]
    fn cue_text_is_escaped_and_keeps_no_blank_line() {
        let utterances = [utterance(1, "A <b>", Some(0), Some(1000), "x --> y & z\n\nnext")];
        let record_text = srt(&utterances);
        assert_eq!(
            record_text,
            "1\n00:00:00,000 --> 00:00:01,000\nA <b>: x --> y & z\nnext\n\n"
        );
        assert_eq!(vtt_escape("x --> y & z"), "x --&gt; y &amp; z");
    }
}
