//! Correcting a transcript by hand: one utterance's text or speaker, whichever door the
//! correction came in by.

use uuid::Uuid;

use crate::app::Caller;
use crate::domain::record::{RecordDetail, RecordStatus};
use crate::domain::workspace::Need;
use crate::error::{Error, Result, ValidationIssue};
use crate::store::{CorrectionRefused, Store, Target};

/// Corrects utterance `utterance_id` of the record: its `text`, its `speaker`, or both
/// (`None` leaves a field as it is), and answers the record with its utterances.
///
/// - The caller must be allowed to change the record (a viewer gets 403, a stranger 404).
/// - Both are trimmed; one that is blank is a 422 at `["body", "text"]` or
///   `["body", "speaker"]`.
/// - A new `speaker` moves just this utterance to that name. If the record already has a
///   speaker of that name, the utterance takes their role (a respondent if any of their
///   turns is); a name new to the record keeps the role the utterance had. To rename a
///   speaker everywhere, rename the speaker instead.
/// - The record must be `Finished` (409 otherwise) and have the utterance (404
///   "Utterance not found").
/// - The change is one transaction; the record's `updated_at` (its version) moves, so its
///   search index, chat passages and persona are made again from the corrected
///   transcript the next time they are asked for. A correction that changes nothing
///   writes nothing and leaves the version as it is.
pub async fn correct_utterance(
    store: &Store,
    caller: &Caller,
    record_id: Uuid,
    utterance_id: i64,
    text: Option<String>,
    speaker: Option<String>,
) -> Result<RecordDetail> {
    let user_id = caller.id();
    caller.require(store, Target::Record(record_id), Need::Write).await?;
    let mut issues = Vec::new();
    let mut trimmed = |field: &str, value: &Option<String>| {
        let value = value.as_deref()?;
        let trimmed = value.trim();
        if trimmed.is_empty() {
            issues.push(ValidationIssue::blank(field, value));
        }
        Some(trimmed.to_owned())
    };
    let text = trimmed("text", &text);
    let speaker = trimmed("speaker", &speaker);
    if !issues.is_empty() {
        return Err(Error::validation(issues));
    }
    store
        .correct_utterance(user_id, record_id, utterance_id, text.as_deref(), speaker.as_deref())
        .await?
        .map_err(|refused| match refused {
            CorrectionRefused::RecordNotFound => Error::not_found("Record"),
            CorrectionRefused::UtteranceNotFound => Error::not_found("Utterance"),
            CorrectionRefused::NotFinished(RecordStatus::Error) => {
                Error::conflict("The record could not be processed, so it has no transcript to correct.")
            }
            CorrectionRefused::NotFinished(status) => Error::conflict(format!(
                "The record is still being processed ({}); its transcript can be corrected once it is Finished.",
                status.as_str()
            )),
        })?;
    super::detail(store, caller, record_id).await
}
