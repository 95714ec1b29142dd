//! Processing a record: transcribe a recording (text formats were read at upload), and
//! mark the record `Finished`, or `Error` with the reason.

use chrono::{DateTime, Utc};

use super::{Context, JobError, Kind};
use crate::config::Settings;
use crate::domain::job::JobKind;
use crate::domain::now;
use crate::domain::record::RecordStatus;
use crate::engines::ingest::Transcript;
use crate::engines::ingest::stt::{
    ASSEMBLYAI_JOB, AssemblyAi, Callback, DEEPGRAM_JOB, Deepgram, Listened, Progress, SETTINGS_HINT, SpeechToText,
    SttError, accept, callback_token,
};
use crate::store::{Job, RecordWork, Store};

/// A record's processing: its record moves with its job (back in the queue on a retry,
/// `Error` with the reason on a failure), and it waits out a file store that does not
/// answer without using up an attempt.
pub(super) struct ProcessRecord;

impl Kind for ProcessRecord {
    const KIND: JobKind = JobKind::ProcessRecord;
    type Claimed = ();

    fn workers(_settings: &Settings) -> usize {
        1
    }

    async fn run(context: &Context, job: &Job, (): ()) -> Result<(), JobError> {
        process(context, job).await
    }

    fn retry(
        store: &Store,
        job: &Job,
        run_at: DateTime<Utc>,
        reason: &str,
    ) -> impl Future<Output = anyhow::Result<bool>> + Send {
        store.requeue_record_job(job, run_at, reason)
    }

    fn fail(store: &Store, job: &Job, reason: &str) -> impl Future<Output = anyhow::Result<bool>> + Send {
        store.fail_record_job(job, reason)
    }

    fn wait(
        store: &Store,
        job: &Job,
        run_at: DateTime<Utc>,
    ) -> Option<impl Future<Output = anyhow::Result<bool>> + Send> {
        Some(store.wait_record_job(job, run_at))
    }
}

async fn process(context: &Context, job: &Job) -> Result<(), JobError> {
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
    let transcript = match stt {
        SpeechToText::OpenAi(provider) => {
            // The provider goes by the name's extension: the stored file's is the right one.
            let name = media_path.rsplit('/').next().unwrap_or(media_path);
            provider
                .transcribe(
                    recording(context, media_path).await?,
                    name,
                    work.media_type.as_deref(),
                    work.language.as_deref(),
                )
                .await
                .map_err(job_error)?
        }
        SpeechToText::AssemblyAi(provider) => {
            match transcribe_async(context, job, &work, provider, media_path).await? {
                Some(transcript) => transcript,
                // The job sleeps until the provider calls back or the next check.
                None => return Ok(()),
            }
        }
        SpeechToText::Deepgram(provider) => match listen(context, job, &work, provider, media_path).await? {
            Some(transcript) => transcript,
            // The job sleeps until Deepgram's callback finishes the record (and the job).
            None => return Ok(()),
        },
    };
    let (transcribed, language) =
        accept(transcript, context.settings.material.max_utterances).map_err(JobError::Permanent)?;
    let finished = store
        .finish_record(job, Some(&transcribed), language.as_deref())
        .await?;
    if let (true, SpeechToText::AssemblyAi(provider), Some(stt_job)) = (finished, stt, work.stt_job.as_deref())
        && let Some(transcript_id) = stt_job.strip_prefix(ASSEMBLYAI_JOB)
    {
        // Best effort: the record is finished either way.
        if let Err(SttError::Transient(reason) | SttError::Permanent(reason)) = provider.delete(transcript_id).await {
            tracing::warn!(record = %work.id, %transcript_id, %reason, "AssemblyAI's copy of the transcript could not be deleted");
        }
    }
    Ok(())
}

/// Deepgram: with a callback, the recording is sent and the job sleeps for
/// `INSIGHT_STT_CALLBACK_WAIT_SECONDS`; the callback finishes the record and the job
/// (`POST /api/webhooks/deepgram`). Woken without it, the job sends the recording
/// again, that wait counting as a failed attempt. Without an address Deepgram can reach,
/// Deepgram answers the transcript in the request.
async fn listen(
    context: &Context,
    job: &Job,
    work: &RecordWork,
    provider: &Deepgram,
    media_path: &str,
) -> Result<Option<Transcript>, JobError> {
    let store = &context.store;
    if let Some(request_id) = work
        .stt_job
        .as_deref()
        .and_then(|stt_job| stt_job.strip_prefix(DEEPGRAM_JOB))
    {
        store.forget_stt_job(work.id).await?;
        return Err(JobError::Transient(format!(
            "Deepgram did not call back within {} seconds (request {request_id}); the recording is sent again.",
            context.settings.speech.stt_callback_wait_seconds
        )));
    }
    let token = callback_token(&context.secret, work.id);
    let callback = provider.callback_url(work.id, &token);
    let listened = provider
        .listen(
            recording(context, media_path).await?,
            work.media_type.as_deref(),
            work.language.as_deref(),
            callback.as_deref(),
        )
        .await
        .map_err(job_error)?;
    match listened {
        Listened::Done(transcript) => Ok(Some(transcript)),
        Listened::Started(request_id) => {
            let at = now();
            let wait = chrono::TimeDelta::seconds(
                i64::try_from(context.settings.speech.stt_callback_wait_seconds).unwrap_or(3_600),
            );
            if !store
                .note_stt_job(job, &format!("{DEEPGRAM_JOB}{request_id}"), at, at + wait)
                .await?
            {
                tracing::warn!(record = %work.id, %request_id, "a transcription job's lease was lost after sending; it will be sent again");
            }
            Ok(None)
        }
    }
}

/// How long an asynchronous provider may take before the record is given up on.
const PROVIDER_PATIENCE: chrono::TimeDelta = chrono::TimeDelta::hours(24);

/// An asynchronous transcription, one step at a time: the first run sends the recording
/// and notes the provider's job; later runs (woken by the provider's callback, or by
/// `INSIGHT_STT_POLL_SECONDS`) check it. `None` while the provider works: the job then
/// sleeps without using up an attempt.
async fn transcribe_async(
    context: &Context,
    job: &Job,
    work: &RecordWork,
    provider: &AssemblyAi,
    media_path: &str,
) -> Result<Option<Transcript>, JobError> {
    let store = &context.store;
    let poll = chrono::TimeDelta::seconds(i64::try_from(context.settings.speech.stt_poll_seconds).unwrap_or(30));
    let sent = work
        .stt_job
        .as_deref()
        .and_then(|stt_job| stt_job.strip_prefix(ASSEMBLYAI_JOB))
        .zip(work.stt_submitted_at);
    let Some((transcript_id, submitted_at)) = sent else {
        let callback = provider.callback_url().map(|url| Callback {
            url: url.to_owned(),
            token: callback_token(&context.secret, work.id),
        });
        let transcript_id = provider
            .submit(
                recording(context, media_path).await?,
                work.language.as_deref(),
                callback,
            )
            .await
            .map_err(job_error)?;
        let at = now();
        if !store
            .note_stt_job(job, &format!("{ASSEMBLYAI_JOB}{transcript_id}"), at, at + poll)
            .await?
        {
            tracing::warn!(record = %work.id, %transcript_id, "a transcription job's lease was lost after sending; it will be sent again");
        }
        return Ok(None);
    };
    let overdue = now() - submitted_at > PROVIDER_PATIENCE;
    match provider.check(transcript_id).await {
        Ok(Progress::Done(transcript)) => Ok(Some(transcript)),
        Ok(Progress::Failed(reason)) | Err(SttError::Permanent(reason)) => Err(JobError::Permanent(reason)),
        Ok(Progress::Pending) | Err(SttError::Transient(_)) if overdue => Err(JobError::Permanent(format!(
            "AssemblyAI had not finished the transcription (id {transcript_id}) a day after it was sent."
        ))),
        pending => {
            // The work goes on at AssemblyAI while it is briefly unreachable: a failed check
            // is only a later check, not an attempt (the transcription is paid for).
            if let Err(SttError::Transient(reason)) = pending {
                tracing::warn!(record = %work.id, %reason, "checking on a transcription failed; checking again later");
            }
            if !store.wait_record_job(job, now() + poll).await? {
                tracing::warn!(record = %work.id, "a transcription job's lease was lost while it checked");
            }
            Ok(None)
        }
    }
}

fn job_error(error: SttError) -> JobError {
    match error {
        SttError::Transient(message) => JobError::Transient(message),
        SttError::Permanent(message) => JobError::Permanent(message),
    }
}

/// The record's recording from the file store, to send to the provider: one that is gone
/// fails the record; while the store does not answer, the record waits for it.
async fn recording(context: &Context, media_path: &str) -> Result<crate::providers::files::Reading, JobError> {
    context.files.read(media_path, None).await.map_err(|error| match error {
        crate::providers::files::FileError::Missing => {
            JobError::Permanent("The uploaded recording is missing.".to_owned())
        }
        crate::providers::files::FileError::Unavailable(reason) => JobError::Waiting(reason),
    })
}
