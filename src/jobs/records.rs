//! Processing a record: transcribe a recording (text formats were read at upload), and
//! mark the record `Finished`, or `Error` with the reason.

use super::{Context, JobError};
use crate::domain::record::{RecordStatus, transcribe};
use crate::ingest::stt::{SETTINGS_HINT, SttError};
use crate::store::Job;

pub(super) async fn process(context: &Context, job: &Job) -> Result<(), JobError> {
    let store = &context.store;
    let Some(work) = store.record_work(job.subject_id).await? else {
        // The record was deleted meanwhile: nothing to do.
        store.complete_job(job).await?;
        return Ok(());
    };
    store.set_record_status(work.id, RecordStatus::InProgress, None).await?;
    let Some(media_path) = &work.media_path else {
        store.finish_record(job, None, None).await?;
        return Ok(());
    };
    let Some(stt) = &context.stt else {
        return Err(JobError::Permanent(SETTINGS_HINT.to_owned()));
    };
    let path = context.settings.data_dir.join(media_path);
    // The provider goes by the name's extension: the stored file's is the right one.
    let name = media_path.rsplit('/').next().unwrap_or(media_path);
    let transcript = stt
        .transcribe(&path, name, work.media_type.as_deref(), work.language.as_deref())
        .await
        .map_err(|error| match error {
            SttError::Transient(message) => JobError::Transient(message),
            SttError::Permanent(message) => JobError::Permanent(message),
        })?;
    if transcript.utterances.is_empty() {
        return Err(JobError::Permanent(
            "The recording holds no speech the provider could transcribe.".to_owned(),
        ));
    }
    if transcript.utterances.len() > context.settings.max_utterances {
        return Err(JobError::Permanent(format!(
            "The transcription has {} utterances; the limit is {} (INSIGHT_MAX_UTTERANCES).",
            transcript.utterances.len(),
            context.settings.max_utterances
        )));
    }
    let transcribed = transcribe(transcript.utterances);
    store
        .finish_record(job, Some(&transcribed), transcript.language.as_deref())
        .await?;
    Ok(())
}
