//! SubRip (`.srt`) subtitles.
//!
//! - A cue is an optional index line (a number), a timing line
//!   (`00:00:01,000 --> 00:00:04,000`, with `,` or `.` before the milliseconds and optional
//!   `X1:... Y2:...` coordinates after it) and the cue text up to the next cue.
//! - Cues are found by their timing lines, not by blank lines, so files without blank lines
//!   between cues or with blank lines inside a cue's text are read too. A line that starts with a
//!   digit and holds `-->` is a timing line; if it cannot be read the file is
//!   [`IngestError::Invalid`], naming the line. A line of only digits directly before a timing
//!   line is that cue's index and is dropped. Text before the first cue is kept as an utterance
//!   without times.
//! - Each cue is one utterance with the cue's times, its lines joined with `\n`; cues are never
//!   merged. Dialogue lines (`- Hello.` / `- Hi.`) are kept as written. A `Name: ` prefix on the
//!   cue's first line gives the speaker (see [`super::text`] for when a prefix counts as a name).
//! - Markup is dropped as in WebVTT files ([`super::vtt`]): `<i>`, `<b>`, `<u>`, `<font ...>`,
//!   `{\an8}`-style overrides; character references such as `&amp;` are decoded.

use super::text;
use super::vtt::{self, Segment};
use super::{IngestError, Transcript, timecode};

/// Reads a SubRip file (see the module comment).
pub fn parse(bytes: &[u8]) -> Result<Transcript, IngestError> {
    let text = text::decode(bytes)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        return Err(no_text());
    }
    let lines: Vec<&str> = text.split('\n').collect();

    // Where the cues are: (index of the timing line, start, end).
    let mut timings = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let line = line.trim();
        if line.starts_with(|c: char| c.is_ascii_digit()) && line.contains("-->") {
            let Some((start, end)) = timecode::parse_cue_timing(line) else {
                return Err(IngestError::Invalid(format!(
                    "Line {} of the SubRip file has a timing that could not be read: expected a start and an \
                     end time such as \"00:00:01,000 --> 00:00:04,000\".",
                    index + 1
                )));
            };
            timings.push((index, start, end));
        }
    }
    if timings.is_empty() {
        return Err(IngestError::Invalid(
            "The file is not a SubRip (.srt) subtitle file: expected numbered cues with timings such as \
             \"00:00:01,000 --> 00:00:04,000\" followed by their text."
                .into(),
        ));
    }

    let mut cues: Vec<(Option<u64>, Option<u64>, Vec<Segment>)> = Vec::with_capacity(timings.len() + 1);
    let first_timing = timings.first().map_or(0, |(index, _, _)| *index);
    let preamble = cue_text(lines.get(..first_timing).unwrap_or_default(), true);
    cues.push((None, None, vtt::clean_cue(&preamble)));
    for (position, (index, start, end)) in timings.iter().enumerate() {
        let next = timings.get(position + 1);
        let until = next.map_or(lines.len(), |(next_index, _, _)| *next_index);
        let mut text = cue_text(lines.get(index + 1..until).unwrap_or_default(), next.is_some());
        if next.is_none() {
            drop_cut_off_cue(&mut text, index + 2)?;
        }
        cues.push((Some(*start), Some(*end), vtt::clean_cue(&text)));
    }
    let utterances = vtt::utterances(cues);
    if utterances.is_empty() {
        return Err(no_text());
    }
    Ok(Transcript {
        utterances,
        language: None,
    })
}

fn no_text() -> IngestError {
    IngestError::Invalid("The file has no text: expected a SubRip file with at least one cue that has words.".into())
}

/// The end of a file cut off inside the next cue: a lone index after a blank line is dropped,
/// and a timing line cut short (`2` then `00:00:0`) is reported. `first_line` is the line number
/// of `text[0]`.
fn drop_cut_off_cue(text: &mut Vec<&str>, first_line: usize) -> Result<(), IngestError> {
    while text.last().is_some_and(|line| line.trim().is_empty()) {
        text.pop();
    }
    let is_index = |line: &str| !line.trim().is_empty() && line.trim().chars().all(|c| c.is_ascii_digit());
    let count = text.len();
    match text.as_slice() {
        [.., before, index, cut] if before.trim().is_empty() && is_index(index) && timecode::is_cut_timing(cut) => {
            Err(IngestError::Invalid(format!(
                "Line {} of the SubRip file has a timing that was cut off: expected a start and an end time such \
                 as \"00:00:01,000 --> 00:00:04,000\". The file may not have been uploaded completely.",
                first_line + count - 1
            )))
        }
        [.., before, index] if before.trim().is_empty() && is_index(index) => {
            text.pop();
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The text lines between two timing lines, without the next cue's index line.
fn cue_text<'a>(lines: &[&'a str], before_a_cue: bool) -> Vec<&'a str> {
    let mut text: Vec<&str> = lines.to_vec();
    if before_a_cue
        && let Some(last) = text.last()
        && !last.trim().is_empty()
        && last.trim().chars().all(|c| c.is_ascii_digit())
    {
        text.pop();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::ingest::ParsedUtterance;
    use crate::engines::ingest::text::tests::{cases, check_utterances};
    use proptest::prelude::*;

    fn cue(speaker: Option<&str>, start_ms: u64, end_ms: u64, text: &str) -> ParsedUtterance {
        ParsedUtterance {
            speaker: speaker.map(str::to_owned),
            start_ms: Some(start_ms),
            end_ms: Some(end_ms),
            text: text.to_owned(),
        }
    }

    fn utterances(text: &str) -> Vec<ParsedUtterance> {
        match parse(text.as_bytes()) {
            Ok(transcript) => transcript.utterances,
            Err(error) => panic!("{text:?} was refused: {error}"),
        }
    }

    fn invalid_message(result: Result<Transcript, IngestError>) -> String {
        match result {
            Err(IngestError::Invalid(message)) => message,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn interview_fixture() {
        let bytes = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/srt_interview.srt"));
        let Ok(transcript) = parse(bytes) else {
            panic!("refused")
        };
        assert_eq!(transcript.language, None);
        assert_eq!(
            transcript.utterances,
            vec![
                cue(None, 1_200, 4_100, "FERNWAY WAREHOUSE – INTERVIEW WITH MARCO"),
                cue(
                    Some("INTERVIEWER"),
                    4_600,
                    8_300,
                    "How many orders do you\npick on a normal day?"
                ),
                cue(
                    Some("MARCO"),
                    8_900,
                    12_750,
                    "Around four hundred.\nOn Black Friday, triple that."
                ),
                cue(
                    Some("INTERVIEWER"),
                    13_300,
                    16_050,
                    "And how do you know\nwhat to pick first?"
                ),
                cue(
                    Some("MARCO"),
                    16_600,
                    21_900,
                    "The list prints at six.\nWe sort it by aisle, by hand."
                ),
                cue(None, 22_400, 24_800, "- Every morning?\n- Every single morning."),
                cue(
                    Some("MARCO"),
                    25_300,
                    30_450,
                    "If the printer jams,\nnobody picks anything until IT shows up."
                ),
                cue(None, 31_000, 33_700, "[forklift beeping]"),
                cue(
                    Some("INTERVIEWER"),
                    34_200,
                    38_900,
                    "What would you change\nif you could change one thing?"
                ),
                cue(
                    Some("MARCO"),
                    39_400,
                    44_600,
                    "Put the list on the scanners.\nPaper gets wet, gets lost, gets old."
                ),
            ]
        );
    }

    #[test]
    fn loose_layouts() {
        // No index lines, `.` before the milliseconds, coordinates, hours without padding.
        assert_eq!(
            utterances(
                "00:00:01.000 --> 00:00:02.500 X1:100 X2:600 Y1:20 Y2:50\nOne\n\n1:00:00,000 --> 1:00:01,000\nTwo\n"
            ),
            vec![cue(None, 1_000, 2_500, "One"), cue(None, 3_600_000, 3_601_000, "Two")]
        );
        // No blank lines between cues; a blank line inside a cue; extra blank lines.
        assert_eq!(
            utterances(
                "1\n00:00:01,000 --> 00:00:02,000\nOne\n2\n00:00:02,000 --> 00:00:03,000\nTwo\n\nstill two\n\n\n\n3\n00:00:03,000 --> 00:00:04,000\n42\n"
            ),
            vec![
                cue(None, 1_000, 2_000, "One"),
                cue(None, 2_000, 3_000, "Two\nstill two"),
                cue(None, 3_000, 4_000, "42")
            ]
        );
        // Text before the first cue is kept; a cue without text is skipped.
        assert_eq!(
            utterances(
                "Subtitles by Fernway\n\n1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:02,000 --> 00:00:03,000\nHi"
            ),
            vec![
                ParsedUtterance {
                    speaker: None,
                    start_ms: None,
                    end_ms: None,
                    text: "Subtitles by Fernway".into()
                },
                cue(None, 2_000, 3_000, "Hi"),
            ]
        );
    }

    #[test]
    fn markup_speakers_and_entities() {
        let text = "1\n00:00:01,000 --> 00:00:02,000\n<i>Anna:</i> Hi &amp; welcome\n\n2\n00:00:02,000 --> 00:00:03,000\n\
                    <b>Anna: <font color=\"#00ff00\">Still me</font></b>\n\n3\n00:00:03,000 --> 00:00:04,000\n{\\an8}{\\i1}Note: top{\\i0}\n\n\
                    4\n00:00:04,000 --> 00:00:05,000\n<I>I <3 you</I>\n\n5\n00:00:05,000 --> 00:00:06,000\n- Anna: one\n- Ben: two";
        assert_eq!(
            utterances(text),
            vec![
                cue(Some("Anna"), 1_000, 2_000, "Hi & welcome"),
                cue(Some("Anna"), 2_000, 3_000, "Still me"),
                cue(None, 3_000, 4_000, "Note: top"),
                cue(None, 4_000, 5_000, "I <3 you"),
                cue(None, 5_000, 6_000, "- Anna: one\n- Ben: two"),
            ]
        );
    }

    #[test]
    fn bom_crlf_and_utf16() {
        let text = "\u{feff}1\r\n00:00:01,000 --> 00:00:02,000\r\nHallo\r\n\r\n2\r\n00:00:02,000 --> 00:00:03,000\r\nTschüss\r\n";
        let expected = vec![cue(None, 1_000, 2_000, "Hallo"), cue(None, 2_000, 3_000, "Tschüss")];
        assert_eq!(utterances(text), expected);
        let utf16: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain(text.encode_utf16().skip(1).flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(parse(&utf16).map(|t| t.utterances), Ok(expected));
    }

    #[test]
    fn malformed_timing_names_the_line() {
        let message = invalid_message(parse(
            b"1\n00:00:01,000 --> 00:00:02,000\nHi\n\n2\n00:00:02,000 --> 00:00:0x,000\nHo",
        ));
        assert!(
            message.starts_with("Line 6 of the SubRip file has a timing that could not be read"),
            "{message}"
        );
        let message = invalid_message(parse(b"1\n00:00:01 --> 00:00:02\nHi"));
        assert!(message.starts_with("Line 2 "), "{message}");
    }

    #[test]
    fn cut_off_files() {
        // Cut after the next cue's index: the index is dropped.
        assert_eq!(
            utterances("1\n00:00:01,000 --> 00:00:02,000\nHi there\n\n2\n"),
            vec![cue(None, 1_000, 2_000, "Hi there")]
        );
        // Cut inside the text: the words that are there are kept.
        assert_eq!(
            utterances("1\n00:00:01,000 --> 00:00:02,000\nHi th"),
            vec![cue(None, 1_000, 2_000, "Hi th")]
        );
        // A number that is the cue's own text stays.
        assert_eq!(
            utterances("1\n00:00:01,000 --> 00:00:02,000\n42\n"),
            vec![cue(None, 1_000, 2_000, "42")]
        );
        // Cut inside the timing line, before or after the arrow.
        let message = invalid_message(parse(b"1\n00:00:01,000 --> 00:00:02,000\nHi\n\n2\n00:00:0"));
        assert!(
            message.starts_with("Line 6 of the SubRip file has a timing that was cut off"),
            "{message}"
        );
        let message = invalid_message(parse(
            b"1\n00:00:01,000 --> 00:00:02,000\nHi\n\n\n2\n00:00:03,000 --\n\n",
        ));
        assert!(message.starts_with("Line 7 "), "{message}");
        let message = invalid_message(parse(
            b"1\n00:00:01,000 --> 00:00:02,000\nHi\n\n2\n00:00:03,000 --> 00:00:04",
        ));
        assert!(
            message.starts_with("Line 6 of the SubRip file has a timing that could not be read"),
            "{message}"
        );
    }

    #[test]
    fn refusals() {
        for text in [
            "",
            "  \n\n",
            "1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:02,000 --> 00:00:03,000\n<i></i>\n",
        ] {
            let message = invalid_message(parse(text.as_bytes()));
            assert!(message.starts_with("The file has no text"), "{text:?}: {message}");
        }
        for text in ["Just some words", "WEBVTT\n\nNOTE nothing"] {
            let message = invalid_message(parse(text.as_bytes()));
            assert!(message.starts_with("The file is not a SubRip"), "{text:?}: {message}");
        }
        assert!(
            invalid_message(parse(b"1\n00:00:01,000 --> 00:00:02,000\n\xff\xfe\xfd"))
                .starts_with("The file is not UTF-8")
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases()))]

        #[test]
        fn any_input_parses_without_panicking(
            text in any::<String>(),
            lines in prop::collection::vec(prop_oneof![
                Just("00:00:01,000 --> 00:00:02,000".to_owned()),
                Just(String::new()),
                "[0-9]{1,3}",
                "[0-9:.,> -]{0,30}",
                "[<>&;{}/\\\\a-z .0-9]{0,20}",
            ], 0..20)
        ) {
            if let Ok(transcript) = parse(text.as_bytes()) {
                check_utterances(&transcript.utterances)?;
            }
            if let Ok(transcript) = parse(lines.join("\n").as_bytes()) {
                check_utterances(&transcript.utterances)?;
            }
        }

        #[test]
        fn no_word_is_lost(texts in prop::collection::vec("[a-z]{1,5}( [a-z]{1,5}){0,4}", 1..10)) {
            let mut file = String::new();
            for (index, text) in texts.iter().enumerate() {
                file.push_str(&format!("{}\n00:00:{index:02},000 --> 00:00:{index:02},500\n<i>{text}</i>\n\n", index + 1));
            }
            let Ok(transcript) = parse(file.as_bytes()) else { return Err(TestCaseError::fail("refused")) };
            check_utterances(&transcript.utterances)?;
            let got: Vec<&str> = transcript.utterances.iter().map(|u| u.text.as_str()).collect();
            let expected: Vec<&str> = texts.iter().map(String::as_str).collect();
            prop_assert_eq!(got, expected);
        }
    }
}
