//! Transcription results that providers send back (Deepgram's callback carries the
//! transcript itself; AssemblyAI's only says it is ready, and the record's job fetches it).

use uuid::Uuid;

use crate::domain::record::RecordStatus;
use crate::engines::ingest::stt::{accept, read_deepgram_result};
use crate::error::{Error, Result};
use crate::services::Services;

/// How long a Deepgram callback waits for a running job, and how often it looks.
const CLAIM_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);
const CLAIM_STEP: std::time::Duration = std::time::Duration::from_millis(100);

/// AssemblyAI says the transcript `transcript_id` is ready: when it is a record's and the
/// callback's token is that record's, the record's job is woken to fetch it (answering the
/// record); else `None`, whichever of the two did not match.
pub async fn assemblyai_ready(services: &Services, transcript_id: &str, token: &str) -> Result<Option<Uuid>> {
    let job = format!("{}{transcript_id}", crate::engines::ingest::stt::ASSEMBLYAI_JOB);
    let Some(record_id) = services.store.record_for_stt_job(&job).await? else {
        return Ok(None);
    };
    let expected = crate::engines::ingest::stt::callback_token(&services.secret, record_id);
    if !crate::secret::KeyMaterial::new(expected).matches(token) {
        return Ok(None);
    }
    services.store.wake_record_job(record_id).await?;
    Ok(Some(record_id))
}

/// Files Deepgram's result for the record (whose callback credentials were checked): the
/// transcript becomes the record's, or the record shows why it could not. A replay, or a
/// record deleted meanwhile, changes nothing.
pub async fn deepgram_result(services: &Services, record_id: Uuid, body: &[u8]) -> Result<()> {
    let lease = chrono::Duration::seconds(i64::try_from(services.settings.jobs.job_lease_seconds).unwrap_or(60));
    // The job may be running for a moment (between sending the recording and noting
    // Deepgram's request id): wait for it a little before asking Deepgram to send again.
    let mut patience = CLAIM_PATIENCE;
    let job = loop {
        let settled = services.store.record_work(record_id).await?.is_none_or(|work| {
            work.status == RecordStatus::Finished.as_str() || work.status == RecordStatus::Error.as_str()
        });
        if settled {
            // A replay, or a record deleted meanwhile: nothing to do.
            return Ok(());
        }
        if let Some(job) = services.store.claim_waiting_record_job(record_id, lease).await? {
            break job;
        }
        if patience.is_zero() {
            return Err(Error::Conflict(
                "The record's transcription job is running just now; send the result again.".into(),
            ));
        }
        let step = CLAIM_STEP.min(patience);
        tokio::time::sleep(step).await;
        patience -= step;
    };
    let outcome =
        read_deepgram_result(body).and_then(|transcript| accept(transcript, services.settings.material.max_utterances));
    let settled = match outcome {
        Ok((transcribed, language)) => {
            services
                .store
                .finish_record(&job, Some(&transcribed), language.as_deref())
                .await?
        }
        Err(reason) => {
            tracing::warn!(%record_id, %reason, "Deepgram's callback holds no usable transcript");
            services.store.fail_record_job(&job, &reason).await?
        }
    };
    if !settled {
        return Err(Error::Conflict(
            "The record's transcription job was taken over meanwhile; send the result again.".into(),
        ));
    }
    Ok(())
}
