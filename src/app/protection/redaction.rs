//! Redacting a record for good: its stored transcript rewritten with the placeholders a
//! model would see, its recording deleted, what was derived from it marked or written
//! again, and an audit entry.

use uuid::Uuid;

use crate::app::Caller;
use crate::app::accounts::audit::{self};
use crate::app::gate::{Material, cloak};
use crate::domain::privacy::{PiiCounts, RedactionReceipt};
use crate::domain::record::RecordStatus;
use crate::domain::workspace::{Need, Settings};
use crate::engines::privacy::Kind;
use crate::error::{Error, Result};
use crate::services::Services;
use crate::store::Target;

/// What marks a report written from a redacted record.
const REASON: &str = "A record it was written from was redacted; generate it again so that it quotes the redacted \
                      transcript.";

/// Redacts the record (writers): every personal value of its transcript, speakers and
/// name becomes a placeholder (`[PERSON_1]`, numbered as model calls number them), its
/// recording is deleted, its highlights, chat threads and the turns of the AI-led
/// interview it came from are rewritten alike, its persona is written again, and the
/// completed reports written from it are rewritten alike (earlier versions too) and marked
/// for regeneration. A record still being processed is a 409.
pub async fn redact(services: &Services, caller: &Caller, record_id: Uuid) -> Result<RedactionReceipt> {
    let actor = caller.actor();
    caller
        .require(&services.store, Target::Record(record_id), Need::Write)
        .await?;
    let store = &services.store;
    let record = store
        .record_by_id(record_id)
        .await?
        .ok_or_else(|| Error::not_found("Record"))?;
    if record.status != RecordStatus::Finished {
        return Err(Error::conflict(
            "The record is still being processed; redact it once it is finished.",
        ));
    }
    let (workspace_id, settings) = store.project_settings(record.project_id).await?;
    let utterances = store.utterances(record_id).await?;
    // The workspace's people too: a respondent of another interview named in this one.
    let (people, addresses) = match workspace_id {
        Some(workspace_id) => store.workspace_people(workspace_id).await?,
        None => Default::default(),
    };
    let material = Material {
        people,
        addresses,
        speakers: utterances.iter().map(|u| u.speaker.as_str()).collect(),
        labels: vec![record.name.as_str()],
        texts: utterances.iter().map(|u| u.text.as_str()).collect(),
    };
    // Redaction conceals whatever the workspace sends models.
    let forced = Settings {
        pseudonymise: true,
        ..settings
    };
    let cloak = cloak(&forced, &material);
    let rewritten: Vec<(i64, String, String)> = utterances
        .iter()
        .map(|u| (u.id, cloak.conceal(&u.speaker), cloak.conceal(&u.text)))
        .collect();
    let name = cloak.conceal(&record.name);
    let conceal = |text: &str| cloak.conceal(text);
    let redacted = store
        .redact_record(record_id, &name, &rewritten, &conceal, REASON)
        .await?
        .ok_or_else(|| Error::not_found("Record"))?;
    if let Some(path) = &redacted.media_path {
        services.files.delete(path).await;
    }
    // The answer comes once the index's files here hold nothing of the old words either.
    services.search.purged().await;
    let counts = cloak.counts();
    let n = |kind: Kind| counts.get(&kind).copied().unwrap_or(0) as u64;
    let replaced = PiiCounts {
        email: n(Kind::Email),
        phone: n(Kind::Phone),
        card: n(Kind::Card),
        iban: n(Kind::Iban),
        ip: n(Kind::Ip),
        url: n(Kind::Url),
        person: n(Kind::Person),
    };
    audit::record(
        store,
        audit::Entry {
            workspace_id,
            actor,
            action: "record.redacted",
            target: Some(("record", record_id.to_string())),
            detail: serde_json::json!({ "replaced": replaced, "recording_deleted": redacted.media_path.is_some(),
                "reports_marked": redacted.reports }),
        },
    )
    .await?;
    Ok(RedactionReceipt {
        record_id,
        replaced,
        recording_deleted: redacted.media_path.is_some(),
        reports_marked: redacted.reports,
        highlights: redacted.highlights,
        chat_messages: redacted.chat_messages,
    })
}
