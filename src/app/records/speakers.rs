//! A record's speakers: renaming one, and saying whether one is the respondent.

use uuid::Uuid;

use crate::app::Caller;
use crate::domain::workspace::Need;
use crate::error::{Error, Result, UnknownReferences, ValidationIssue};
use crate::store::{Store, Target};

fn no_speaker(speaker: &str) -> Error {
    UnknownReferences::one("speaker", format!("{speaker:?} of this record"), "speaker")
}

/// Renames `speaker` to `name` in every utterance of the record.
pub async fn rename(store: &Store, caller: &Caller, record_id: Uuid, speaker: &str, name: &str) -> Result<()> {
    caller.require(store, Target::Record(record_id), Need::Write).await?;
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err(Error::validation(vec![ValidationIssue::blank("name", name)]));
    }
    if !store.rename_speaker(record_id, speaker, trimmed).await? {
        return Err(no_speaker(speaker));
    }
    Ok(())
}

/// Marks `speaker`'s turns as the respondent's, or not.
pub async fn set_respondent(
    store: &Store,
    caller: &Caller,
    record_id: Uuid,
    speaker: &str,
    is_respondent: bool,
) -> Result<()> {
    caller.require(store, Target::Record(record_id), Need::Write).await?;
    if !store.set_speaker_respondent(record_id, speaker, is_respondent).await? {
        return Err(no_speaker(speaker));
    }
    Ok(())
}
