//! A record's persona: when the stored one is still good, when one is written at once
//! (the offline engine) and when it is left to a worker, and how soon a failed one is
//! tried again.

use crate::domain::persona::{Persona, PersonaReport, PersonaWritten};
use crate::domain::record::{Record, RecordStatus};
use crate::domain::usage::{Provenance, RecordVersion};
use crate::engines::ai::Engine;
use crate::error::{Error, Result};
use crate::services::Services;

/// How long after a failed persona job a request queues it again.
const RETRY_COOLDOWN_SECONDS: i64 = 300;

/// Where the record's persona is.
pub enum Current {
    /// Written from the record as it is now.
    Written(Box<PersonaReport>),
    /// Being written (or waiting for the record to be processed); ask again.
    Pending,
    /// The last attempt for this version of the record failed; it is tried again in
    /// `seconds`. `reason` is what failed, for the record's owner only.
    Failed { seconds: u64, reason: Option<String> },
}

/// A record its owner made public, for anyone with its address; else a 404.
pub async fn public_record(services: &Services, record_id: uuid::Uuid) -> Result<Record> {
    services
        .store
        .get_public_record(record_id)
        .await?
        .ok_or_else(|| crate::error::Error::not_found("Record"))
}

/// The persona of `record`: the stored one if it is of the record as it is now, written
/// at once by the offline engine, or queued for a worker. `public` is a stranger asking:
/// no provider's or processing's messages.
pub async fn current(services: &Services, record: &Record, public: bool) -> Result<Current> {
    match record.status {
        RecordStatus::Finished => {}
        RecordStatus::Error => {
            let why = match (public, record.error.as_deref()) {
                (false, Some(error)) => format!(": {error}"),
                _ => ".".to_owned(),
            };
            return Err(Error::conflict(format!(
                "The record could not be processed, so it has no transcript to write a persona from{why}"
            )));
        }
        // Written once the record is processed.
        _ => return Ok(Current::Pending),
    }
    let store = &services.store;
    let written = |persona: Persona, markdown: String, generated_at, provenance: Option<Provenance>| {
        Current::Written(Box::new(PersonaReport {
            record_id: record.id,
            status: PersonaWritten::Completed,
            persona,
            markdown,
            generated_at,
            provenance,
        }))
    };
    if let Some(stored) = store.persona(record.id).await?
        && stored.record_version == record.updated_at
    {
        return Ok(written(
            stored.persona.0,
            stored.markdown,
            stored.generated_at,
            stored.provenance.map(|p| p.0),
        ));
    }
    if let Engine::Offline = services.engine {
        let utterances = store.utterances(record.id).await?;
        let started = std::time::Instant::now();
        let (persona, _) = services
            .engine
            .persona(&record.name, &utterances, record.language.as_deref())
            .await
            .map_err(|error| Error::Unavailable(format!("The persona could not be written: {error}")))?;
        let markdown = crate::engines::ai::persona::render_markdown(&persona);
        let provenance = crate::app::provenance::provenance(
            &services.settings.model.llm_prices,
            &services.engine,
            vec![RecordVersion {
                id: record.id,
                version: record.updated_at,
            }],
            started.elapsed(),
        );
        let generated_at = store
            .save_persona(record.id, record.updated_at, &persona, &markdown, &provenance)
            .await?;
        return Ok(written(persona, markdown, generated_at, Some(provenance)));
    }
    let job = store.persona_job(record.id).await?;
    // The job may have finished since the persona was looked at.
    if job
        .as_ref()
        .is_some_and(|job| job.status == "done" && job.updated_at >= record.updated_at)
        && let Some(stored) = store.persona(record.id).await?
        && stored.record_version == record.updated_at
    {
        return Ok(written(
            stored.persona.0,
            stored.markdown,
            stored.generated_at,
            stored.provenance.map(|p| p.0),
        ));
    }
    if let Some(job) = job.filter(|job| job.status == "failed" && job.updated_at >= record.updated_at) {
        // Failed for this version of the record: tried again after a pause, not at every
        // poll (each attempt costs model calls).
        let again_at = job.updated_at + chrono::Duration::seconds(RETRY_COOLDOWN_SECONDS);
        let wait = (again_at - crate::domain::now()).num_seconds();
        if wait > 0 {
            return Ok(Current::Failed {
                seconds: wait as u64,
                reason: (!public).then(|| job.last_error.unwrap_or_else(|| "unknown error".to_owned())),
            });
        }
    }
    store.queue_persona(record.id, record.updated_at).await?;
    Ok(Current::Pending)
}
