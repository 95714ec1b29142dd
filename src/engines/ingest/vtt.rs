//! WebVTT (`.vtt`) subtitles and meeting transcripts: Zoom (`Name: text` in the cue text),
//! Microsoft Teams (`<v Name>text</v>`), YouTube and other caption files.
//!
//! - The file must start with `WEBVTT` (after an optional byte order mark and blank lines).
//!   The header lines after it are dropped, except `Language: xx`, which becomes
//!   [`Transcript::language`].
//! - Blocks are separated by blank lines. `NOTE`, `STYLE` and `REGION` blocks are dropped. A cue
//!   is an optional identifier line, a timing line (`[hh:]mm:ss.ttt --> [hh:]mm:ss.ttt` and
//!   optional cue settings) and the cue text. A timing line that cannot be read (any line with
//!   `-->` is one, as in the WebVTT parsing rules) makes the file [`IngestError::Invalid`],
//!   naming the line. As in those rules, a line with `-->` also starts a new cue without a
//!   blank line before it, and a line of only spaces directly after the timing (as YouTube
//!   writes them) is part of the cue.
//! - A block of text without a timing line (cue text with a blank line inside, or text before the
//!   first cue) is not dropped: it is added to the cue before it, or kept as an utterance of its
//!   own without times if there is none. A lone cue identifier (a number or a Teams id) without
//!   its timing, as at the end of a cut-off file, is dropped.
//! - Cue text: every cue is one utterance with the cue's times, its lines joined with `\n`.
//!   Cues are never merged. Voice tags (`<v Name>`, `<v.loud Name>`) give the speaker; if one
//!   cue holds several voices, each voice's part is an utterance of its own with the cue's times.
//!   Without a voice tag, a `Name: ` prefix on the cue's first line gives the speaker (see
//!   [`super::text`] for when a prefix counts as a name).
//! - Markup is dropped: tags (`<c.yellow>`, `<i>`, `<b>`, `<u>`, `<ruby>`, `<rt>`, `<lang en>`,
//!   `<font ...>`), inline timestamps (`<00:00:01.000>`) and `{\an8}`-style overrides; `<br>`
//!   becomes a line break. A `<` that does not open one of these tags is kept as text. Character
//!   references (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&nbsp;` (as a space), `&lrm;`,
//!   `&rlm;`, `&#39;`, `&#x2019;`) are decoded; others are kept as written.

use super::text::{self, Votes};
use super::{IngestError, ParsedUtterance, Transcript, timecode};

/// Reads a WebVTT file (see the module comment).
pub fn parse(bytes: &[u8]) -> Result<Transcript, IngestError> {
    parse_str(&text::decode(bytes)?)
}

fn parse_str(text: &str) -> Result<Transcript, IngestError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(no_text());
    }
    let mut lines = text
        .split('\n')
        .enumerate()
        .map(|(index, line)| (index + 1, line.strip_suffix('\r').unwrap_or(line)))
        .skip_while(|(_, line)| line.trim().is_empty())
        .peekable();

    let signature = lines.next().map(|(_, line)| line.trim_start()).unwrap_or_default();
    let signed = signature
        .strip_prefix("WEBVTT")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']));
    if !signed {
        return Err(IngestError::Invalid(
            "The file is not a WebVTT file: it must start with the line \"WEBVTT\", followed by cues such as \
             \"00:00:01.000 --> 00:00:04.000\" and their text."
                .into(),
        ));
    }

    let mut language = None;
    while let Some((_, line)) = lines.next_if(|(_, line)| !line.trim().is_empty() && !line.contains("-->")) {
        if let Some((key, value)) = line.split_once(':')
            && key.trim().eq_ignore_ascii_case("language")
        {
            language = language_tag(value.trim());
        }
    }

    let mut cues: Vec<Cue<'_>> = Vec::new();
    let mut block: Vec<(usize, &str)> = Vec::new();
    // A block ends at a blank line, but is turned into a cue only when the next one starts, so
    // that the last block of the file is known.
    let mut ended = false;
    for (number, line) in lines {
        if line.trim().is_empty() {
            let after_timing = block.last().is_some_and(|(_, last)| last.contains("-->"));
            if line.is_empty() || !after_timing || ended {
                ended = true;
            }
            continue;
        }
        if ended {
            end_block(&mut block, &mut cues, false)?;
            ended = false;
        }
        if line.contains("-->") {
            let takes_timing = match block.as_slice() {
                [] => true,
                [(_, first)] => !first.contains("-->"),
                _ => false,
            };
            if !takes_timing {
                end_block(&mut block, &mut cues, false)?;
            }
        }
        block.push((number, line));
    }
    end_block(&mut block, &mut cues, true)?;

    let cleaned: Vec<(Option<u64>, Option<u64>, Vec<Segment>)> = cues
        .iter()
        .map(|cue| (cue.start_ms, cue.end_ms, clean_cue(&cue.lines)))
        .collect();
    let utterances = utterances(cleaned);
    if utterances.is_empty() {
        return Err(no_text());
    }
    Ok(Transcript { utterances, language })
}

fn no_text() -> IngestError {
    IngestError::Invalid("The file has no text: expected a WebVTT file with at least one cue that has words.".into())
}

#[derive(Debug)]
struct Cue<'a> {
    start_ms: Option<u64>,
    end_ms: Option<u64>,
    lines: Vec<&'a str>,
}

/// Turns a block of lines into a cue, a continuation of the cue before it, or nothing. `last`:
/// the block ends the file, which may have been cut off inside it.
fn end_block<'a>(block: &mut Vec<(usize, &'a str)>, cues: &mut Vec<Cue<'a>>, last: bool) -> Result<(), IngestError> {
    let lines = std::mem::take(block);
    let Some((_, first)) = lines.first() else { return Ok(()) };
    let timing = lines.iter().take(2).position(|(_, line)| line.contains("-->"));
    if let Some(position) = timing {
        let (number, line) = lines.get(position).copied().unwrap_or_default();
        let Some((start, end)) = timecode::parse_cue_timing(line) else {
            return Err(IngestError::Invalid(format!(
                "Line {number} of the WebVTT file has a cue timing that could not be read: expected a start \
                 and an end time such as \"00:00:01.000 --> 00:00:04.000\"."
            )));
        };
        let text = lines
            .get(position + 1..)
            .unwrap_or_default()
            .iter()
            .map(|(_, line)| *line)
            .collect();
        cues.push(Cue {
            start_ms: Some(start),
            end_ms: Some(end),
            lines: text,
        });
        return Ok(());
    }
    let keyword = first.split([' ', '\t']).next().unwrap_or_default();
    if matches!(keyword, "NOTE" | "STYLE" | "REGION") {
        return Ok(());
    }
    if let [(_, only)] = lines.as_slice()
        && is_cue_identifier(only.trim())
    {
        return Ok(());
    }
    if last
        && let [(number, cut)] | [(_, _), (number, cut)] = lines.as_slice()
        && (lines.len() == 1 || is_cue_identifier(first.trim()))
        && timecode::is_cut_timing(cut)
    {
        return Err(IngestError::Invalid(format!(
            "Line {number} of the WebVTT file has a cue timing that was cut off: expected a start and an end time \
             such as \"00:00:01.000 --> 00:00:04.000\". The file may not have been uploaded completely."
        )));
    }
    let text = lines.iter().map(|(_, line)| *line);
    match cues.last_mut() {
        Some(cue) => cue.lines.extend(text),
        None => cues.push(Cue {
            start_ms: None,
            end_ms: None,
            lines: text.collect(),
        }),
    }
    Ok(())
}

/// A number (`12`) or a Teams cue id (`d7f3a1c2-5b9e-4c1a-9a3e-2f1b6c8d9e0a/12-0`).
fn is_cue_identifier(line: &str) -> bool {
    let digits = line.chars().all(|c| c.is_ascii_digit());
    let teams =
        line.len() >= 8 && line.contains('/') && line.chars().all(|c| c.is_ascii_hexdigit() || c == '-' || c == '/');
    !line.is_empty() && (digits || teams)
}

/// A BCP 47 tag from a `Language:` header (`en`, `de-CH`, `pt_BR` becomes `pt-BR`).
fn language_tag(value: &str) -> Option<String> {
    let tag = value.replace('_', "-");
    let mut subtags = tag.split('-');
    let primary = subtags.next()?;
    if !(2..=3).contains(&primary.len()) || !primary.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    if !subtags.all(|s| (1..=8).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric())) {
        return None;
    }
    Some(tag)
}

/// Turns cleaned cues into utterances: a voice gives the speaker, else a `Name: ` prefix does if
/// [`Votes`] accept it. Shared with the SubRip parser.
pub(crate) fn utterances(cues: Vec<(Option<u64>, Option<u64>, Vec<Segment>)>) -> Vec<ParsedUtterance> {
    let mut votes = Votes::default();
    for (_, _, segments) in &cues {
        for segment in segments.iter().filter(|segment| segment.voice.is_none()) {
            if let Some(label) = segment.lines.first().and_then(|line| prefix(line)) {
                votes.add(&label.key);
            }
        }
    }
    let mut out = Vec::new();
    for (start_ms, end_ms, segments) in cues {
        for segment in segments {
            let Segment { voice, mut lines } = segment;
            let mut speaker = voice;
            if speaker.is_none()
                && let Some(first) = lines.first_mut()
                && let Some(label) = prefix(first)
                && (label.strict || label.stamp.is_some() || votes.count(&label.key) >= 2)
            {
                speaker = Some(label.speaker.to_owned());
                *first = label.rest.trim().to_owned();
            }
            let text = lines
                .iter()
                .map(|line| line.trim())
                .filter(|line| !line.is_empty())
                .collect::<Vec<_>>();
            if !text.is_empty() {
                out.push(ParsedUtterance {
                    speaker,
                    start_ms,
                    end_ms,
                    text: text.join("\n"),
                });
            }
        }
    }
    out
}

/// A `Name: ` prefix that leaves words after it.
fn prefix(line: &str) -> Option<text::InlineLabel<'_>> {
    text::inline_label(line.trim_start()).filter(|label| !label.rest.trim().is_empty())
}

/// The part of a cue one voice speaks: lines without markup, trimmed, none empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    pub(crate) voice: Option<String>,
    pub(crate) lines: Vec<String>,
}

/// Drops the markup of cue text (tags, inline timestamps, `{\...}` overrides), decodes character
/// references and splits the text where the voice changes. Shared with the SubRip parser.
pub(crate) fn clean_cue(lines: &[&str]) -> Vec<Segment> {
    let mut segments = Vec::new();
    let mut current = Segment {
        voice: None,
        lines: Vec::new(),
    };
    let mut line_text = String::new();
    for line in lines {
        let mut rest: &str = line;
        while let Some(c) = rest.chars().next() {
            let mut consumed = c.len_utf8();
            match c {
                '<' => match tag(rest) {
                    Some((Tag::Voice(name), length)) => {
                        consumed = length;
                        let has_text = !current.lines.is_empty() || !line_text.trim().is_empty();
                        if has_text && current.voice.as_ref() != Some(&name) {
                            end_line(&mut line_text, &mut current.lines);
                            segments.push(std::mem::replace(
                                &mut current,
                                Segment {
                                    voice: None,
                                    lines: Vec::new(),
                                },
                            ));
                        }
                        current.voice = Some(name);
                    }
                    Some((Tag::Break, length)) => {
                        consumed = length;
                        end_line(&mut line_text, &mut current.lines);
                    }
                    Some((Tag::Other, length)) => consumed = length,
                    None => line_text.push('<'),
                },
                '&' => match entity(rest) {
                    Some((decoded, length)) => {
                        consumed = length;
                        line_text.push(decoded);
                    }
                    None => line_text.push('&'),
                },
                '{' => match override_block(rest) {
                    Some(length) => consumed = length,
                    None => line_text.push('{'),
                },
                c => line_text.push(c),
            }
            rest = rest.get(consumed..).unwrap_or_default();
        }
        end_line(&mut line_text, &mut current.lines);
    }
    if !current.lines.is_empty() {
        segments.push(current);
    }
    segments
}

fn end_line(line: &mut String, lines: &mut Vec<String>) {
    let trimmed = line.trim();
    if !trimmed.is_empty() {
        lines.push(trimmed.to_owned());
    }
    line.clear();
}

enum Tag {
    Voice(String),
    Break,
    Other,
}

/// Tags that are dropped (`c`, `i`, ... of WebVTT, `font` and the like of SubRip).
const TAG_NAMES: &[&str] = &[
    "b", "br", "c", "em", "font", "i", "lang", "rp", "rt", "ruby", "s", "span", "strong", "u", "v",
];

/// The tag at the start of `text` (which starts with `<`) and its length in bytes.
fn tag(text: &str) -> Option<(Tag, usize)> {
    let body = text.get(1..)?;
    let (end, close) = body.char_indices().take(256).find(|(_, c)| *c == '>' || *c == '<')?;
    if close != '>' {
        return None;
    }
    let inner = body.get(..end)?;
    let length = end + 2;
    if inner.starts_with(|c: char| c.is_ascii_digit()) {
        return timecode::parse(inner).map(|_| (Tag::Other, length));
    }
    let (closing, inner) = match inner.strip_prefix('/') {
        Some(inner) => (true, inner),
        None => (false, inner),
    };
    let name_end = inner
        .find(|c: char| c.is_whitespace() || c == '.' || c == '/')
        .unwrap_or(inner.len());
    let name = inner.get(..name_end)?.to_ascii_lowercase();
    if !TAG_NAMES.contains(&name.as_str()) {
        return None;
    }
    if closing {
        return Some((Tag::Other, length));
    }
    match name.as_str() {
        "br" => Some((Tag::Break, length)),
        "v" => {
            let annotation = inner.get(name_end..)?;
            let annotation = annotation
                .split_once(char::is_whitespace)
                .map(|(_, name)| name)
                .unwrap_or_default();
            let voice = decode_entities(annotation.trim());
            if voice.trim().is_empty() {
                Some((Tag::Other, length))
            } else {
                Some((Tag::Voice(voice.trim().to_owned()), length))
            }
        }
        _ => Some((Tag::Other, length)),
    }
}

/// The character reference at the start of `text` (which starts with `&`) and its length.
fn entity(text: &str) -> Option<(char, usize)> {
    let (semicolon, _) = text.char_indices().take(12).find(|(_, c)| *c == ';')?;
    let name = text.get(1..semicolon)?;
    let decoded = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "lrm" => '\u{200e}',
        "rlm" => '\u{200f}',
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) if !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()) => {
                    u32::from_str_radix(hex, 16).ok()?
                }
                None if !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()) => number.parse().ok()?,
                _ => return None,
            };
            char::from_u32(code).filter(|c| *c != '\0')?
        }
    };
    Some((decoded, semicolon + 1))
}

fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let mut consumed = c.len_utf8();
        match (c == '&').then(|| entity(rest)).flatten() {
            Some((decoded, length)) => {
                out.push(decoded);
                consumed = length;
            }
            None => out.push(c),
        }
        rest = rest.get(consumed..).unwrap_or_default();
    }
    out
}

/// The length of a `{\an8}`-style override at the start of `text` (which starts with `{`).
fn override_block(text: &str) -> Option<usize> {
    if !text.get(1..)?.starts_with('\\') {
        return None;
    }
    let (end, close) = text
        .char_indices()
        .skip(1)
        .take(128)
        .find(|(_, c)| *c == '}' || *c == '{')?;
    (close == '}').then_some(end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::ingest::text::tests::{cases, check_utterances};
    use proptest::prelude::*;

    macro_rules! fixture {
        ($name:literal) => {
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/", $name))
        };
    }

    fn cue(speaker: Option<&str>, start_ms: u64, end_ms: u64, text: &str) -> ParsedUtterance {
        ParsedUtterance {
            speaker: speaker.map(str::to_owned),
            start_ms: Some(start_ms),
            end_ms: Some(end_ms),
            text: text.to_owned(),
        }
    }

    fn parsed(text: &str) -> Transcript {
        match parse(text.as_bytes()) {
            Ok(transcript) => transcript,
            Err(error) => panic!("{text:?} was refused: {error}"),
        }
    }

    fn utterances(text: &str) -> Vec<ParsedUtterance> {
        parsed(text).utterances
    }

    fn invalid_message(result: Result<Transcript, IngestError>) -> String {
        match result {
            Err(IngestError::Invalid(message)) => message,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    // --- Fixtures -------------------------------------------------------------------------

    #[test]
    fn zoom_transcript() {
        let Ok(transcript) = parse(fixture!("vtt_zoom.vtt")) else {
            panic!("refused")
        };
        assert_eq!(transcript.language, None);
        let u = transcript.utterances;
        assert_eq!(u.len(), 12);
        assert_eq!(
            u.first(),
            Some(&cue(
                Some("Ben Okafor"),
                2_310,
                7_890,
                "Okay, I think the recording is on. Thanks again for making time today, Anna."
            ))
        );
        assert_eq!(
            u.get(1),
            Some(&cue(Some("Anna Schmidt"), 8_400, 10_150, "Sure, happy to help."))
        );
        // Consecutive cues of one speaker stay apart.
        assert_eq!(
            u.get(4),
            Some(&cue(
                Some("Anna Schmidt"),
                27_600,
                35_210,
                "A normal week is, honestly, a lot of meetings. Monday is planning, Thursday is the release review."
            ))
        );
        // A lower-case display name counts because it recurs.
        assert_eq!(
            u.get(5),
            Some(&cue(
                Some("iPhone de Carla"),
                36_000,
                38_470,
                "Sorry, I dropped out for a second. Can you hear me?"
            ))
        );
        assert_eq!(
            u.last(),
            Some(&cue(
                Some("Anna Schmidt"),
                69_700,
                76_250,
                "Every week. And half of it is figuring out which version of the spreadsheet is the current one."
            ))
        );
    }

    #[test]
    fn teams_transcript() {
        let Ok(transcript) = parse(fixture!("vtt_teams.vtt")) else {
            panic!("refused")
        };
        let u = transcript.utterances;
        assert_eq!(u.len(), 10);
        assert_eq!(
            u.first(),
            Some(&cue(
                Some("Ben Okafor"),
                3_120,
                7_480,
                "Thanks for joining, Priya. Is it OK if I record this call?"
            ))
        );
        assert_eq!(
            u.get(1),
            Some(&cue(
                Some("Ben Okafor"),
                7_480,
                9_960,
                "It's only for our research team."
            ))
        );
        assert_eq!(
            u.get(2),
            Some(&cue(Some("Priya Raman (Guest)"), 10_550, 11_230, "Yes, of course."))
        );
        assert_eq!(
            u.get(4),
            Some(&cue(
                Some("Priya Raman (Guest)"),
                17_600,
                24_310,
                "Mostly email. We also have chat on the website, and R&D sends us bug reports in a Teams channel."
            ))
        );
        assert_eq!(
            u.last(),
            Some(&cue(
                Some("Priya Raman (Guest)"),
                45_900,
                51_480,
                "The customer called our CEO. So, <laughs> not the ideal way."
            ))
        );
    }

    #[test]
    fn youtube_captions() {
        let Ok(transcript) = parse(fixture!("vtt_youtube.vtt")) else {
            panic!("refused")
        };
        assert_eq!(transcript.language.as_deref(), Some("en"));
        let u = transcript.utterances;
        assert_eq!(u.len(), 9);
        assert_eq!(
            u.first(),
            Some(&cue(
                None,
                0,
                4_200,
                ">> So today I'm talking with Priya,\nwho runs customer support at Fernway."
            ))
        );
        assert_eq!(u.get(1), Some(&cue(None, 4_200, 6_900, ">> Hi, thanks for having me.")));
        assert_eq!(
            u.get(3),
            Some(&cue(
                None,
                12_500,
                16_720,
                ">> Honestly? A shared inbox.\n[laughs] Not very exciting."
            ))
        );
        assert_eq!(
            u.get(4),
            Some(&cue(
                None,
                17_100,
                23_400,
                "We tried three help desks\nin two years & moved back every time."
            ))
        );
        assert_eq!(
            u.get(6),
            Some(&cue(
                None,
                27_800,
                33_950,
                ">> Setup took weeks, and the agents hated\nthe extra clicks per ticket."
            ))
        );
        assert_eq!(
            u.last(),
            Some(&cue(None, 37_600, 40_250, ">> Speed, and fewer than 3 clicks."))
        );
        let all: String = u.iter().map(|u| u.text.as_str()).collect();
        for markup in ["STYLE", "NOTE", "::cue", "Kind", "align:", "<", "&amp;", "&gt;"] {
            assert!(!all.contains(markup), "{markup} left in {all}");
        }
    }

    // --- Structure -------------------------------------------------------------------------

    #[test]
    fn timings_without_hours_and_with_settings() {
        let t = utterances(
            "WEBVTT\n\n00:01.000 --> 00:04.500 line:0 position:20% size:60% align:start\nHello\n\n01:02:03.004 --> 01:02:05.000\nLater",
        );
        assert_eq!(
            t,
            vec![
                cue(None, 1_000, 4_500, "Hello"),
                cue(None, 3_723_004, 3_725_000, "Later")
            ]
        );
    }

    #[test]
    fn header_and_language() {
        let t =
            parsed("WEBVTT - Interview with Anna\nKind: captions\nLanguage: de-CH\n\n00:00.000 --> 00:01.000\nGrüezi");
        assert_eq!(t.language.as_deref(), Some("de-CH"));
        assert_eq!(t.utterances, vec![cue(None, 0, 1_000, "Grüezi")]);
        assert_eq!(
            parsed("WEBVTT\nLanguage: pt_BR\n\n00:00.000 --> 00:01.000\nOi")
                .language
                .as_deref(),
            Some("pt-BR")
        );
        assert_eq!(
            parsed("WEBVTT\nLanguage: English\n\n00:00.000 --> 00:01.000\nHi").language,
            None
        );
        assert_eq!(
            parsed("WEBVTT\nlanguage:   fr \n\n00:00.000 --> 00:01.000\nSalut")
                .language
                .as_deref(),
            Some("fr")
        );
        // A header without a blank line before the first cue.
        assert_eq!(
            parsed("WEBVTT\nLanguage: en\n00:00.000 --> 00:01.000\nHi").utterances,
            vec![cue(None, 0, 1_000, "Hi")]
        );
    }

    #[test]
    fn notes_styles_regions_and_ids_are_dropped() {
        let text = "WEBVTT\n\nREGION\nid:fred\nwidth:40%\n\nSTYLE\n::cue { color: red }\n\nNOTE a one-line note\n\nNOTE\n\
                    more notes\n\n1\n00:00:01.000 --> 00:00:02.000 region:fred\nOne\n\nintro-cue\n00:00:03.000 --> 00:00:04.000\nTwo\n\n\
                    NOTE again\n\n12\n";
        assert_eq!(
            utterances(text),
            vec![cue(None, 1_000, 2_000, "One"), cue(None, 3_000, 4_000, "Two")]
        );
    }

    #[test]
    fn voices() {
        let text = "WEBVTT\n\n00:00.000 --> 00:02.000\n<v Anna>Hi Ben.</v>\n<v.loud Ben Okafor>Hi!\nHow are you?</v>\n\n\
                    00:02.000 --> 00:03.000\n<v Anna>Fine.\n<v Anna>Really.\n\n00:03.000 --> 00:04.000\n<v>No name\n\n\
                    00:04.000 --> 00:05.000\n<v Anna &amp; Ben>Both: at once\n\n00:05.000 --> 00:06.000\n<v Anna></v>";
        assert_eq!(
            utterances(text),
            vec![
                cue(Some("Anna"), 0, 2_000, "Hi Ben."),
                cue(Some("Ben Okafor"), 0, 2_000, "Hi!\nHow are you?"),
                cue(Some("Anna"), 2_000, 3_000, "Fine.\nReally."),
                cue(None, 3_000, 4_000, "No name"),
                cue(Some("Anna & Ben"), 4_000, 5_000, "Both: at once"),
            ]
        );
    }

    #[test]
    fn name_prefix() {
        let text = "WEBVTT\n\n00:00.000 --> 00:01.000\nAnna Schmidt: Hello\nsecond line\n\n00:01.000 --> 00:02.000\n\
                    Note: not a speaker\n\n00:02.000 --> 00:03.000\nthe thing is: no speaker\n\n00:03.000 --> 00:04.000\nBen:\n";
        assert_eq!(
            utterances(text),
            vec![
                cue(Some("Anna Schmidt"), 0, 1_000, "Hello\nsecond line"),
                cue(None, 1_000, 2_000, "Note: not a speaker"),
                cue(None, 2_000, 3_000, "the thing is: no speaker"),
                cue(None, 3_000, 4_000, "Ben:"),
            ]
        );
    }

    #[test]
    fn markup_and_entities() {
        let text = "WEBVTT\n\n00:00.000 --> 00:01.000\n<c.yellow.bg_blue>A</c> <i>b</i> <b>c</b> <u>d</u> \
                    <ruby>漢<rt>kan</rt></ruby> <lang en>e</lang>\n\n00:01.000 --> 00:02.000\n\
                    &amp; &lt; &gt; &quot;q&quot; &apos;a&apos; x&nbsp;y &#39; &#x2019; &lrm;l&rlm; &unknown; & &#0; &#xZZ;\n\n\
                    00:02.000 --> 00:03.000\nI <3 it, 1 < 2 > 0, a <not a tag> here\n\n00:03.000 --> 00:04.000\n\
                    {\\an8}Top {not an override}<br>next<br/>line\n\n00:04.000 --> 00:05.000\n\
                    Karaoke<00:04.200> style<00:04.500> <c>words</c>";
        assert_eq!(
            utterances(text),
            vec![
                cue(None, 0, 1_000, "A b c d 漢kan e"),
                cue(
                    None,
                    1_000,
                    2_000,
                    "& < > \"q\" 'a' x y ' \u{2019} \u{200e}l\u{200f} &unknown; & &#0; &#xZZ;"
                ),
                cue(None, 2_000, 3_000, "I <3 it, 1 < 2 > 0, a <not a tag> here"),
                cue(None, 3_000, 4_000, "Top {not an override}\nnext\nline"),
                cue(None, 4_000, 5_000, "Karaoke style words"),
            ]
        );
    }

    #[test]
    fn blocks_without_timing_are_kept() {
        // Cue text with a blank line inside belongs to its cue; text before the first cue is kept.
        let text = "WEBVTT\n\nstray text before cues\n\n00:00.000 --> 00:01.000\nFirst part\n\nsecond part\n\n\
                    00:01.000 --> 00:02.000\nNext";
        assert_eq!(
            utterances(text),
            vec![
                ParsedUtterance {
                    speaker: None,
                    start_ms: None,
                    end_ms: None,
                    text: "stray text before cues".into()
                },
                cue(None, 0, 1_000, "First part\nsecond part"),
                cue(None, 1_000, 2_000, "Next"),
            ]
        );
    }

    #[test]
    fn cues_without_blank_lines_and_youtube_space_lines() {
        let text = "WEBVTT\n\n00:00.000 --> 00:01.000\nOne\n00:01.000 --> 00:02.000\nTwo\n\n\
                    00:00:02.000 --> 00:00:03.000 align:start position:0%\n \nthree<00:00:02.500><c> four</c>\n\n\
                    00:00:03.000 --> 00:00:03.010 align:start position:0%\nthree four\n \n\n";
        assert_eq!(
            utterances(text),
            vec![
                cue(None, 0, 1_000, "One"),
                cue(None, 1_000, 2_000, "Two"),
                cue(None, 2_000, 3_000, "three four"),
                cue(None, 3_000, 3_010, "three four"),
            ]
        );
    }

    #[test]
    fn bom_crlf_and_utf16() {
        let text = "\u{feff}WEBVTT\r\n\r\n1\r\n00:00:01.000 --> 00:00:02.000\r\nAnna: Hi\r\nthere\r\n\r\n2\r\n00:00:02.000 --> 00:00:03.000\r\nBen: Ho\r\n";
        let expected = vec![
            cue(Some("Anna"), 1_000, 2_000, "Hi\nthere"),
            cue(Some("Ben"), 2_000, 3_000, "Ho"),
        ];
        assert_eq!(utterances(text), expected);
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(text.encode_utf16().skip(1).flat_map(u16::to_le_bytes))
            .collect();
        assert_eq!(parse(&utf16).map(|t| t.utterances), Ok(expected));
    }

    // --- Refusals ------------------------------------------------------------------------------

    #[test]
    fn refuses_files_that_are_not_webvtt() {
        for text in [
            "1\n00:00:01,000 --> 00:00:02,000\nHi",
            "WEBVTTX\n\n00:01.000 --> 00:02.000\nHi",
            "Hello",
            "webvtt\n",
        ] {
            let message = invalid_message(parse(text.as_bytes()));
            assert!(
                message.starts_with("The file is not a WebVTT file"),
                "{text:?}: {message}"
            );
        }
    }

    #[test]
    fn empty_files_have_no_text() {
        for text in [
            "",
            " \n\n",
            "WEBVTT",
            "WEBVTT\n\n",
            "WEBVTT\nKind: captions\n\nNOTE hi\n\n00:01.000 --> 00:02.000\n<i> </i>\n\n7",
        ] {
            let message = invalid_message(parse(text.as_bytes()));
            assert!(message.starts_with("The file has no text"), "{text:?}: {message}");
        }
    }

    #[test]
    fn truncated_files() {
        let message = invalid_message(parse(
            b"WEBVTT\n\n1\n00:00:01.000 --> 00:00:02.000\nHi\n\n2\n00:00:02.000 --> 00:00",
        ));
        assert!(
            message.starts_with("Line 8 of the WebVTT file has a cue timing that could not be read"),
            "{message}"
        );
        // Cut inside the text: the words that are there are kept.
        assert_eq!(
            utterances("WEBVTT\n\n1\n00:00:01.000 --> 00:00:02.000\nHi\n\n2\n00:00:02.000 --> 00:00:03.000\nHow are y"),
            vec![cue(None, 1_000, 2_000, "Hi"), cue(None, 2_000, 3_000, "How are y")]
        );
        let message = invalid_message(parse(b"WEBVTT\n\n1\n00:00:01.000 --> 00:00:02.000\nHi\n\n2\n00:00:0"));
        assert!(
            message.starts_with("Line 8 of the WebVTT file has a cue timing that was cut off"),
            "{message}"
        );
        let message = invalid_message(parse(
            b"WEBVTT\n\n1\n00:00:01.000 --> 00:00:02.000\nHi\n\n00:00:02.000 -\n",
        ));
        assert!(message.starts_with("Line 7 "), "{message}");
        // Cut after a cue id: the id is dropped.
        assert_eq!(
            utterances("WEBVTT\n\n1\n00:00:01.000 --> 00:00:02.000\nHi\n\n3f0c2a9e-6b1d-4c5e-8a7f-2d9b1e4c6a80/18-0"),
            vec![cue(None, 1_000, 2_000, "Hi")]
        );
        let message = invalid_message(parse(
            b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nA line --> with an arrow",
        ));
        assert!(message.starts_with("Line 4 "), "{message}");
        let message = invalid_message(parse(b"WEBVTT\n\n00:00:01 --> 00:00:02\nHi"));
        assert!(message.starts_with("Line 3 "), "{message}");
    }

    // --- Speed -------------------------------------------------------------------------------

    #[test]
    fn three_hours_parse_quickly() {
        let mut text = String::from("WEBVTT\n\n");
        let mut words = 0;
        let mut cue_number = 0u64;
        while words < 30_000 {
            let start = cue_number * 4_000;
            let end = start + 3_900;
            let speaker = if cue_number.is_multiple_of(2) {
                "Ben Okafor"
            } else {
                "Anna Schmidt"
            };
            text.push_str(&format!(
                "3f0c2a9e-6b1d-4c5e-8a7f-2d9b1e4c6a80/{cue_number}-0\n{} --> {}\n<v {speaker}>So what we did \
                 was export the tickets &amp; sort them by hand.</v>\n\n",
                stamp(start),
                stamp(end)
            ));
            words += 11;
            cue_number += 1;
        }
        let started = std::time::Instant::now();
        let parsed = parse(text.as_bytes());
        let elapsed = started.elapsed();
        assert_eq!(
            parsed.map(|t| t.utterances.len()).ok(),
            usize::try_from(cue_number).ok()
        );
        let limit = if cfg!(debug_assertions) { 2_000 } else { 100 };
        assert!(elapsed.as_millis() < limit, "took {elapsed:?}");
    }

    #[test]
    fn hostile_input_stays_linear() {
        for unit in [
            "<",
            "<v ",
            "<c",
            "&",
            "&#",
            "{\\",
            "{",
            "<00:00:01.000",
            "A: ",
            "-->",
            "\u{feff}",
        ] {
            let cue_text = unit.repeat(200_000 / unit.len());
            let text = format!("WEBVTT\n\n00:00.000 --> 00:01.000\n{cue_text}\n");
            let started = std::time::Instant::now();
            let _ = parse(text.as_bytes());
            let elapsed = started.elapsed();
            let limit = if cfg!(debug_assertions) { 3_000 } else { 100 };
            assert!(elapsed.as_millis() < limit, "{unit:?} took {elapsed:?}");
        }
    }

    fn stamp(ms: u64) -> String {
        format!(
            "{:02}:{:02}:{:02}.{:03}",
            ms / 3_600_000,
            ms / 60_000 % 60,
            ms / 1_000 % 60,
            ms % 1_000
        )
    }

    // --- Properties ---------------------------------------------------------------------------

    fn cue_piece() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => Just("WORD".to_owned()),
            1 => prop::sample::select(vec![
                "<i>", "</i>", "<b>", "<c.yellow>", "</c>", "<v Anna>", "<v.x Ben B>", "</v>", "<00:00:01.500>", "&amp;",
                "&lt;", "&nbsp;", "{\\an8}", "Anna:", "Note:", "-", ">>", "<3", "<br>", "\n", "\n \n", "[laughs]",
            ])
            .prop_map(str::to_owned),
        ]
    }

    fn vtt_document() -> impl Strategy<Value = String> {
        let cue_text = prop::collection::vec(cue_piece(), 1..10).prop_map(|pieces| pieces.join(" "));
        prop::collection::vec(cue_text, 1..8).prop_map(|cues| {
            let mut counter = 0;
            let mut out = String::from("WEBVTT\n\n");
            for (index, text) in cues.iter().enumerate() {
                let index = u64::try_from(index).unwrap_or_default();
                out.push_str(&format!(
                    "{index}\n{} --> {}\n",
                    stamp(index * 1_000),
                    stamp(index * 1_000 + 900)
                ));
                let mut rest = text.as_str();
                while let Some(at) = rest.find("WORD") {
                    out.push_str(rest.get(..at).unwrap_or_default());
                    out.push_str(&format!("w{counter}x"));
                    counter += 1;
                    rest = rest.get(at + 4..).unwrap_or_default();
                }
                out.push_str(rest);
                out.push_str("\n\n");
            }
            out
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(cases()))]

        #[test]
        fn any_text_parses_without_panicking(text in any::<String>()) {
            if let Ok(transcript) = parse(format!("WEBVTT\n\n{text}").as_bytes()) {
                check_utterances(&transcript.utterances)?;
            }
            let _ = parse(text.as_bytes());
        }

        #[test]
        fn cue_like_lines_parse_without_panicking(
            lines in prop::collection::vec(prop_oneof![
                Just("00:00:01.000 --> 00:00:02.000".to_owned()),
                Just(String::new()),
                Just("NOTE".to_owned()),
                "[0-9:.,> -]{0,30}",
                "[<>&;{}/\\\\a-z .0-9]{0,20}",
            ], 0..20)
        ) {
            if let Ok(transcript) = parse(format!("WEBVTT\n{}", lines.join("\n")).as_bytes()) {
                check_utterances(&transcript.utterances)?;
            }
        }

        #[test]
        fn no_word_is_lost(text in vtt_document()) {
            let transcript = parse(text.as_bytes());
            let Ok(transcript) = transcript else {
                prop_assert!(!text.contains("w0x"), "refused text with words: {text:?} {transcript:?}");
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
