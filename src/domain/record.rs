//! Records: interview material in a project (a transcript, notes, a recording), held as
//! utterances, each one turn of speech with its speaker and, where the source says, its
//! time.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

super::string_enum! {
    /// Where a record is in its processing: `Uploaded` -> `InQueue` -> `InProgress` ->
    /// `Finished` | `Error` (with a reason in `error`).
    RecordStatus {
        Uploaded = "Uploaded",
        InQueue = "InQueue",
        InProgress = "InProgress",
        Finished = "Finished",
        Error = "Error",
    }
}

/// One turn of speech (or one paragraph of notes) as the source has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedUtterance {
    /// The speaker as the source names them; `None` when the source names nobody.
    pub speaker: Option<String>,
    /// Milliseconds from the start of the recording, when the source says.
    pub start_ms: Option<u64>,
    pub end_ms: Option<u64>,
    /// The words, trimmed, inner line breaks kept as `\n`. Never empty.
    pub text: String,
}

/// The speaker name given to text whose source names nobody.
pub const UNNAMED_SPEAKER: &str = "Unknown speaker";

super::string_enum! {
    /// What a record's material was read as: a text format, a recording (`audio`,
    /// transcribed) or an AI-led interview's transcript (`interview`).
    SourceFormat {
        Text = "text", Markdown = "markdown", Vtt = "vtt", Srt = "srt", Docx = "docx", Pdf = "pdf",
        Json = "json", Audio = "audio", Interview = "interview",
    }
}

/// Whether `tag` is a BCP 47 language tag in form (`en`, `de-CH`, `zh-Hant-TW`).
pub fn is_language_tag(tag: &str) -> bool {
    let mut parts = tag.split('-');
    let primary = parts.next().unwrap_or_default();
    (2..=3).contains(&primary.len())
        && primary.chars().all(|c| c.is_ascii_alphabetic())
        && parts.all(|part| (1..=8).contains(&part.len()) && part.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// A record as every record endpoint returns it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Record {
    pub id: Uuid,
    pub project_id: Uuid,
    pub name: String,
    pub status: RecordStatus,
    /// Why processing failed, when `status` is `Error`.
    pub error: Option<String>,
    /// The language of the material (BCP 47): as the upload or a person said, else
    /// detected once from its text when it was added (null when no language could be told).
    pub language: Option<String>,
    /// From the first to the last timestamp; null when the source has no times.
    pub duration_seconds: Option<f64>,
    pub word_count: i64,
    /// Distinct speakers.
    pub participants_count: i64,
    /// Distinct speakers marked as respondents.
    pub respondents_count: i64,
    pub respondent_names: Vec<String>,
    /// What the material was read as.
    #[schema(value_type = SourceFormat)]
    pub source_format: String,
    /// Whether the record's persona can be read without a token
    /// (`GET /insight/public/{rec_id}/persona-report`).
    pub is_public: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One turn of speech.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Utterance {
    /// Position in the record, from 1.
    pub id: i64,
    pub is_respondent: bool,
    pub speaker: String,
    pub start_ms: Option<i64>,
    pub end_ms: Option<i64>,
    pub text: String,
}

/// A record with its utterances (`GET /insight/{rec_id}/`).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RecordDetail {
    #[serde(flatten)]
    pub record: Record,
    pub utterances: Vec<Utterance>,
    /// For a record made by an AI-led interview whose workspace asks for consent: what
    /// the respondent accepted, and when; null otherwise.
    pub consent: Option<Consent>,
}

/// The consent text a respondent accepted before an interview.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Consent {
    /// The workspace's consent text version then.
    pub version: i64,
    pub text: String,
    pub accepted_at: DateTime<Utc>,
}

/// Utterances ready to store, with what the record learns from them.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcribed {
    pub utterances: Vec<Utterance>,
    pub word_count: i64,
    pub duration_seconds: Option<f64>,
}

/// Numbers the parsed utterances, names the unnamed speaker, and guesses who the
/// respondents are: the speaker who asks the most questions is the interviewer.
pub fn transcribe(parsed: Vec<ParsedUtterance>) -> Transcribed {
    let mut utterances: Vec<Utterance> = parsed
        .into_iter()
        .zip(1..)
        .map(|(utterance, id)| Utterance {
            id,
            is_respondent: true,
            speaker: utterance.speaker.unwrap_or_else(|| UNNAMED_SPEAKER.to_owned()),
            start_ms: utterance.start_ms.and_then(|ms| i64::try_from(ms).ok()),
            end_ms: utterance.end_ms.and_then(|ms| i64::try_from(ms).ok()),
            text: utterance.text,
        })
        .collect();
    if let Some(interviewer) = guess_interviewer(&utterances) {
        for utterance in &mut utterances {
            utterance.is_respondent = utterance.speaker != interviewer;
        }
    }
    let word_count = utterances
        .iter()
        .map(|u| u.text.split_whitespace().count() as i64)
        .sum();
    let first = utterances.iter().filter_map(|u| u.start_ms).min();
    let last = utterances.iter().filter_map(|u| u.end_ms.or(u.start_ms)).max();
    let duration_seconds = match (first, last) {
        (Some(first), Some(last)) if last > first => Some((last - first) as f64 / 1000.0),
        _ => None,
    };
    Transcribed {
        utterances,
        word_count,
        duration_seconds,
    }
}

/// With two or more speakers, the one whose turns hold the most questions (ties go to
/// whoever spoke first); with one speaker there is no interviewer: it is all the
/// respondent's material.
fn guess_interviewer(utterances: &[Utterance]) -> Option<String> {
    let mut questions: Vec<(&str, usize)> = Vec::new();
    for utterance in utterances {
        let asked = utterance.text.matches(['?', '？', '¿']).count().min(1)
            + usize::from(utterance.text.trim_end().ends_with(['?', '？']));
        match questions.iter_mut().find(|(speaker, _)| *speaker == utterance.speaker) {
            Some((_, count)) => *count += asked,
            None => questions.push((&utterance.speaker, asked)),
        }
    }
    if questions.len() < 2 {
        return None;
    }
    let mut best: Option<(&str, usize)> = None;
    for (speaker, count) in questions {
        if best.is_none_or(|(_, most)| count > most) {
            best = Some((speaker, count));
        }
    }
    best.map(|(speaker, _)| speaker.to_owned())
}

/// Speakers, in order of first appearance, with whether each is a respondent.
pub fn speakers(utterances: &[Utterance]) -> Vec<(String, bool)> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut speakers: Vec<(String, bool)> = Vec::new();
    for utterance in utterances {
        match seen.get(utterance.speaker.as_str()) {
            Some(&index) => {
                if let Some(entry) = speakers.get_mut(index) {
                    entry.1 |= utterance.is_respondent;
                }
            }
            None => {
                seen.insert(&utterance.speaker, speakers.len());
                speakers.push((utterance.speaker.clone(), utterance.is_respondent));
            }
        }
    }
    speakers
}

/// `mm:ss` (or `h:mm:ss` past an hour) of a time in milliseconds.
pub fn timestamp(ms: i64) -> String {
    let seconds = ms.max(0) / 1000;
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if hours > 0 {
        format!("{hours}:{minutes:02}:{seconds:02}")
    } else {
        format!("{minutes:02}:{seconds:02}")
    }
}

/// How reports and answers cite an utterance: `[record name, mm:ss]`, or `[record name, #id]`
/// (its number) when the record has no times.
pub fn citation(record_name: &str, utterance_id: i64, start_ms: Option<i64>) -> String {
    match start_ms {
        Some(ms) => format!("[{record_name}, {}]", timestamp(ms)),
        None => format!("[{record_name}, #{utterance_id}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(speaker: Option<&str>, start_ms: Option<u64>, text: &str) -> ParsedUtterance {
        ParsedUtterance {
            speaker: speaker.map(str::to_owned),
            start_ms,
            end_ms: start_ms.map(|ms| ms + 1_000),
            text: text.to_owned(),
        }
    }

    #[test]
    fn the_speaker_who_asks_is_the_interviewer() {
        let transcribed = transcribe(vec![
            line(Some("Anna"), Some(0), "Hi, thanks for having me."),
            line(Some("Mark"), Some(2_000), "How do you plan your week? And who helps?"),
            line(Some("Anna"), Some(5_000), "Mostly on Sunday evenings. Why do you ask?"),
            line(Some("Mark"), Some(9_000), "What happens when plans change?"),
            line(Some("Anna"), Some(12_000), "I redo everything by hand."),
        ]);
        let roles: Vec<(i64, &str, bool)> = transcribed
            .utterances
            .iter()
            .map(|u| (u.id, u.speaker.as_str(), u.is_respondent))
            .collect();
        assert_eq!(
            roles,
            [
                (1, "Anna", true),
                (2, "Mark", false),
                (3, "Anna", true),
                (4, "Mark", false),
                (5, "Anna", true)
            ]
        );
        assert_eq!(transcribed.word_count, 32);
        assert_eq!(transcribed.duration_seconds, Some(13.0));
        assert_eq!(
            speakers(&transcribed.utterances),
            [("Anna".to_owned(), true), ("Mark".to_owned(), false)]
        );
    }

    #[test]
    fn notes_without_speakers_are_the_respondents_and_have_no_duration() {
        let transcribed = transcribe(vec![
            line(None, None, "Wants exports."),
            line(None, None, "Hates the app?"),
        ]);
        assert!(
            transcribed
                .utterances
                .iter()
                .all(|u| u.is_respondent && u.speaker == UNNAMED_SPEAKER)
        );
        assert_eq!(transcribed.duration_seconds, None);
    }

    #[test]
    fn without_any_question_the_first_speaker_is_taken_for_the_interviewer() {
        let transcribed = transcribe(vec![line(Some("A"), None, "Tell me."), line(Some("B"), None, "Well.")]);
        assert_eq!(
            transcribed
                .utterances
                .iter()
                .map(|u| u.is_respondent)
                .collect::<Vec<_>>(),
            [false, true]
        );
    }
}
