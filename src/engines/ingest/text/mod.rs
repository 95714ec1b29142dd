//! Plain-text and Markdown transcripts, and the text the DOCX and PDF readers extract (one line
//! per paragraph). Also home of [`decode()`], which every text-based parser uses to turn the
//! uploaded bytes into a `String`.
//!
//! # How lines become utterances
//!
//! - A line that starts with a speaker label starts a new utterance of that speaker.
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
//! When a line starts with a speaker label is the business of `speakers.rs`; what else a line
//! can be, of `lines.rs`; the bytes become text in `decode.rs`.

mod decode;
mod lines;
mod marks;
mod speakers;

pub use decode::decode;
pub(crate) use speakers::{InlineLabel, Votes, inline_label};

use super::{IngestError, ParsedUtterance, Transcript};
use decode::normalize_line_ends;
use lines::{Line, classify, find_name_lines_after_ranges};
use marks::{Candidate, Fallback};

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

    pub(crate) fn utterance(
        speaker: Option<&str>,
        start_ms: Option<u64>,
        end_ms: Option<u64>,
        text: &str,
    ) -> ParsedUtterance {
        ParsedUtterance {
            speaker: speaker.map(str::to_owned),
            start_ms,
            end_ms,
            text: text.to_owned(),
        }
    }

    pub(crate) fn said(speaker: &str, text: &str) -> ParsedUtterance {
        utterance(Some(speaker), None, None, text)
    }

    pub(crate) fn note(text: &str) -> ParsedUtterance {
        utterance(None, None, None, text)
    }

    pub(crate) fn at(speaker: &str, start_ms: u64, text: &str) -> ParsedUtterance {
        utterance(Some(speaker), Some(start_ms), None, text)
    }

    pub(crate) fn parsed(text: &str) -> Vec<ParsedUtterance> {
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

    pub(crate) fn speakers(text: &str) -> Vec<Option<String>> {
        parsed(text).into_iter().map(|u| u.speaker).collect()
    }

    pub(crate) fn invalid_message(result: Result<impl std::fmt::Debug, IngestError>) -> String {
        match result {
            Err(IngestError::Invalid(message)) => message,
            other => panic!("expected Invalid, got {other:?}"),
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

    // --- Empty and hostile input ---------------------------------------------------------------

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
