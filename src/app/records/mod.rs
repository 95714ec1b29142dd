//! Records: interview material in a project.

pub mod correction;
pub mod intake;
pub mod removal;
pub mod speakers;
pub mod transcription;

use uuid::Uuid;

use crate::app::Caller;
use crate::app::accounts::audit::{self};
use crate::domain::highlight::Highlight;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::privacy::PiiReport;
use crate::domain::record::{Consent, Record, RecordDetail, Utterance, is_language_tag};
use crate::domain::tag::Tag;
use crate::domain::workspace::{Need, Role};
use crate::error::{Error, Result, ValidationIssue};
use crate::services::Services;
use crate::store::{CreatedKey, Store, Target};

/// The user's record with its utterances; 404 when he cannot see it.
pub async fn detail(store: &Store, caller: &Caller, record_id: Uuid) -> Result<RecordDetail> {
    let user_id = caller.id();
    let record = store
        .get_record(user_id, record_id)
        .await?
        .ok_or_else(|| Error::not_found("Record"))?;
    let (utterances, consent) = tokio::try_join!(store.utterances(record_id), store.record_consent(record_id))?;
    Ok(RecordDetail {
        record,
        utterances,
        consent,
    })
}

/// A record the user's role allows `need` on (unseen is a 404, seen but not allowed a 403),
/// with that role and its project's name.
pub async fn of_user(
    services: &Services,
    caller: &Caller,
    record_id: Uuid,
    need: Need,
) -> Result<(Role, Record, String)> {
    let user_id = caller.id();
    let store = &services.store;
    let role = caller.require(store, Target::Record(record_id), need).await?;
    let record = store
        .get_record(user_id, record_id)
        .await?
        .ok_or_else(|| Error::not_found("Record"))?;
    let project_name = store
        .project_name(user_id, record.project_id)
        .await?
        .unwrap_or_default();
    Ok((role, record, project_name))
}

/// One utterance of a record, to correct it, for those who may change the record (an
/// utterance it does not have is a 404), with the record and its project's name.
pub async fn utterance(
    services: &Services,
    caller: &Caller,
    record_id: Uuid,
    utterance_id: i64,
) -> Result<(Record, String, Utterance)> {
    let (_, record, project_name) = of_user(services, caller, record_id, Need::Write).await?;
    let utterance = services
        .store
        .utterances(record_id)
        .await?
        .into_iter()
        .find(|u| u.id == utterance_id)
        .ok_or_else(|| Error::not_found("Utterance"))?;
    Ok((record, project_name, utterance))
}

/// A page of the project's records, newest first.
pub async fn list(
    services: &Services,
    caller: &Caller,
    project_id: Uuid,
    page: &PageRequest<CreatedKey>,
) -> Result<Page<Record, CreatedKey>> {
    let user_id = caller.id();
    caller
        .require(&services.store, Target::Project(project_id), Need::Read)
        .await?;
    Ok(services.store.list_records(user_id, project_id, page).await?)
}

/// A record's utterances, in order, for those who may read it.
pub async fn utterances(services: &Services, caller: &Caller, record_id: Uuid) -> Result<Vec<Utterance>> {
    caller
        .require(&services.store, Target::Record(record_id), Need::Read)
        .await?;
    Ok(services.store.utterances(record_id).await?)
}

/// A speaker of a record, a respondent when any of his turns is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Speaker {
    pub name: String,
    pub is_respondent: bool,
}

/// The speakers of a transcript by name, each a respondent when any of his turns is.
pub fn speakers(utterances: &[Utterance]) -> Vec<Speaker> {
    let mut by_name = std::collections::BTreeMap::new();
    for utterance in utterances {
        by_name
            .entry(utterance.speaker.clone())
            .and_modify(|respondent: &mut bool| *respondent |= utterance.is_respondent)
            .or_insert(utterance.is_respondent);
    }
    by_name
        .into_iter()
        .map(|(name, is_respondent)| Speaker { name, is_respondent })
        .collect()
}

/// Everything a person reading a record sees, read with one role check: the record, its
/// transcript and speakers, its highlights and its workspace's tags, whether it has a
/// recording, the personal data it holds and the respondent's consent.
pub struct View {
    pub role: Role,
    pub record: Record,
    pub project_name: String,
    pub workspace_id: Uuid,
    pub utterances: Vec<Utterance>,
    pub speakers: Vec<Speaker>,
    pub highlights: Vec<Highlight>,
    pub tags: Vec<Tag>,
    pub has_recording: bool,
    pub pii: PiiReport,
    pub consent: Option<Consent>,
}

/// A record as a person reads it (see [`View`]).
pub async fn view(services: &Services, caller: &Caller, record_id: Uuid) -> Result<View> {
    let store = &services.store;
    let (role, record, project_name) = of_user(services, caller, record_id, Need::Read).await?;
    let (utterances, highlights, place, media, pii, consent) = tokio::try_join!(
        async { Ok::<_, Error>(store.utterances(record_id).await?) },
        crate::app::research::highlights::of_record(store, caller, record_id),
        async { Ok(store.record_place(record_id).await?) },
        async { Ok(store.record_media(record_id).await?) },
        crate::app::protection::pii(store, caller, record_id),
        async { Ok(store.record_consent(record_id).await?) },
    )?;
    let workspace_id = place
        .map(|place| place.workspace_id)
        .ok_or_else(|| Error::not_found("Record"))?;
    let tags = crate::app::research::tags::list(store, caller, workspace_id).await?;
    Ok(View {
        role,
        speakers: speakers(&utterances),
        record,
        project_name,
        workspace_id,
        utterances,
        highlights,
        tags,
        has_recording: media.is_some(),
        pii,
        consent,
    })
}

/// A record's recording in the file store (its path and media type), for those who may
/// read the record.
pub async fn recording(services: &Services, caller: &Caller, record_id: Uuid) -> Result<(String, Option<String>)> {
    caller
        .require(&services.store, Target::Record(record_id), Need::Read)
        .await?;
    services
        .store
        .record_media(record_id)
        .await?
        .ok_or_else(|| Error::NotFound("This record has no recording".into()))
}

/// What a person changes about a record: a field left `None` stays as it is.
#[derive(Debug, Default)]
pub struct Changes<'a> {
    pub name: Option<&'a str>,
    pub is_public: Option<bool>,
    /// A BCP 47 tag: the record's text is indexed again in that language.
    pub language: Option<&'a str>,
}

/// Renames a record, makes it public or private, or says its language; a change of
/// sharing is an audit entry.
pub async fn update(services: &Services, caller: &Caller, record_id: Uuid, changes: Changes<'_>) -> Result<Record> {
    let user_id = caller.id();
    let actor = &caller.actor();
    let store = &services.store;
    caller.require(store, Target::Record(record_id), Need::Write).await?;
    if let Some(blank) = changes.name.filter(|name| name.trim().is_empty()) {
        return Err(Error::validation(vec![ValidationIssue::blank("name", blank)]));
    }
    if let Some(tag) = changes.language.filter(|tag| !is_language_tag(tag.trim())) {
        return Err(Error::validation(vec![
            ValidationIssue::new(
                vec![serde_json::json!("body"), serde_json::json!("language")],
                "string_pattern_mismatch",
                "String should be a BCP 47 language tag such as en or de-CH",
            )
            .with_input(serde_json::json!(tag)),
        ]));
    }
    let before = store.get_record(user_id, record_id).await?;
    let record = store
        .update_record(
            user_id,
            record_id,
            changes.name.map(str::trim),
            changes.is_public,
            changes.language.map(str::trim),
        )
        .await?
        .ok_or_else(|| Error::not_found("Record"))?;
    if before.is_some_and(|before| before.is_public != record.is_public) {
        audit::record(
            store,
            audit::Entry {
                workspace_id: store.project_workspace(record.project_id).await?,
                actor: actor.clone(),
                action: "record.shared",
                target: Some(("record", record_id.to_string())),
                detail: serde_json::json!({ "is_public": record.is_public }),
            },
        )
        .await?;
    }
    Ok(record)
}

/// How many characters an utterance of the record says (a highlight of the whole turn ends
/// there), for those who may read the record; an utterance it does not have is a 409.
pub async fn utterance_length(services: &Services, caller: &Caller, record_id: Uuid, utterance_id: i64) -> Result<i64> {
    caller
        .require(&services.store, Target::Record(record_id), Need::Read)
        .await?;
    let texts = services
        .store
        .utterance_texts(record_id, utterance_id, utterance_id)
        .await?;
    Ok(texts.first().map_or(0, |(_, text)| text.chars().count() as i64))
}
