//! An archive in as a new project. Everything is read and checked before anything is
//! written; every row gets a new id (so one archive can be imported twice, or beside the
//! project it came from), references that point at nothing the archive holds are left
//! out, and the rows are written in one transaction after the recordings are kept.
//! Should that fail, the recordings kept and the tags made are removed again.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek};
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{ArchiveImport, Counts, Manifest};
use crate::app::Caller;
use crate::app::accounts::audit::{self};
use crate::app::quota::Counted;
use crate::app::records::intake::{TempFile, recording_key, upload_path};
use crate::app::research::exchange::{Refusal, invalid_file, refused, text_budget};
use crate::domain::highlight::HighlightStatus;
use crate::domain::interview::RoomStatus;
use crate::domain::project::ProjectStatus;
use crate::domain::record::RecordStatus;
use crate::domain::report::{ReportStatus, VersionKind};
use crate::domain::tag::{TagCreate, name_key};
use crate::domain::workspace::Need;
use crate::error::{Error, Result};
use crate::services::Services;
use crate::store::{ProjectDump, RoomLink, Target};

/// The statuses a theme proposal has (`store::themes`).
const THEME_STATUSES: [&str; 3] = ["suggested", "accepted", "rejected"];

/// What a report still being written when it was archived becomes.
const INTERRUPTED: &str = "The report was still being written when its project was archived; generate it again.";

/// The archive read: its rows, and each recording unpacked to a temporary file, by the
/// index of its record.
struct Parsed {
    manifest: Manifest,
    dump: ProjectDump,
    recordings: Vec<(usize, TempFile)>,
}

/// Most tags an archive may carry (the codebooks of real projects hold hundreds).
pub const MAX_TAGS: u64 = 10_000;
/// The most JSON one tag can take: a 100-character name and 2,000-character description,
/// each character escaped (`\uXXXX`), its ids, colour and dates.
const TAG_BYTES: u64 = 16 * 1024;
/// The most JSON `manifest.json` and `project.json` can take: the manifest's few fields;
/// the project's name, description, goals and guide, each within its limit, escaped.
const MANIFEST_BYTES: u64 = 64 * 1024;
const PROJECT_BYTES: u64 = 1024 * 1024;

/// The most bytes the entry `name` may unpack to: what it can hold at most, for the
/// entries whose size is bound by their kind; the rest share the text budget.
fn entry_limit(name: &str) -> u64 {
    match name {
        super::MANIFEST => MANIFEST_BYTES,
        super::PROJECT => PROJECT_BYTES,
        super::TAGS => MAX_TAGS * TAG_BYTES,
        _ => u64::MAX,
    }
}

/// A JSON entry of the archive, parsed as it unpacks (whitespace or padding is never
/// held), within its own limit and what is left of `budget`.
fn json_entry<T: DeserializeOwned, R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    name: &str,
    budget: &mut u64,
) -> Result<T, Refusal> {
    let file = zip
        .by_name(name)
        .map_err(|_| format!("The archive has no {name}: it is not a whole Insight project archive."))?;
    let (own, shared) = (entry_limit(name), *budget);
    let limit = own.min(shared);
    let mut counted = CountedReader {
        inner: file.take(limit.saturating_add(1)),
        read: 0,
    };
    let parsed = serde_json::from_reader(WithoutNul::new(std::io::BufReader::new(&mut counted)));
    if counted.read > limit {
        return Err(Refusal::TooLarge(if own <= shared {
            format!(
                "The archive's {name} unpacks to more than the {limit} bytes such an entry can hold; nothing was imported."
            )
        } else {
            format!(
                "The archive's {name} unpacks to more than Insight reads for this upload ({limit} bytes left of the \
                 text budget, INSIGHT_IMPORT_MAX_EXPANSION times the upload); it may be a zip bomb. Nothing was imported."
            )
        }));
    }
    *budget -= counted.read;
    parsed.map_err(|error| {
        if error.is_io() {
            Refusal::Invalid(format!("The archive is damaged: {name} cannot be unpacked."))
        } else {
            Refusal::Invalid(format!("The archive's {name} is not what Insight writes: {error}."))
        }
    })
}

/// A reader that counts what it hands out.
struct CountedReader<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for CountedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// JSON with every escaped NUL character (`\u0000`) taken out as it streams: Insight
/// never writes one (text comes in without them) and PostgreSQL cannot keep one.
struct WithoutNul<R> {
    inner: R,
    /// Bytes read but not yet decided (a `\u000` cut by the end of a read).
    carry: Vec<u8>,
    /// Bytes decided, waiting for the caller.
    ready: Vec<u8>,
    at: usize,
    /// Whether what was handed out ends in an odd number of backslashes.
    odd: bool,
    done: bool,
}

const NUL: &[u8] = b"\\u0000";

impl<R: Read> WithoutNul<R> {
    fn new(inner: R) -> Self {
        Self {
            inner,
            carry: Vec::new(),
            ready: Vec::new(),
            at: 0,
            odd: false,
            done: false,
        }
    }

    fn refill(&mut self) -> std::io::Result<()> {
        let mut chunk = [0u8; 8192];
        let n = self.inner.read(&mut chunk)?;
        self.done = n == 0;
        self.carry.extend_from_slice(&chunk[..n]);
        self.ready.clear();
        self.at = 0;
        let mut i = 0;
        while i < self.carry.len() {
            let rest = &self.carry[i..];
            if rest[0] == b'\\' && !self.odd {
                if rest.starts_with(NUL) {
                    i += NUL.len();
                    continue;
                }
                if !self.done && NUL.starts_with(rest) {
                    break;
                }
            }
            self.odd = rest[0] == b'\\' && !self.odd;
            self.ready.push(rest[0]);
            i += 1;
        }
        self.carry.drain(..i);
        Ok(())
    }
}

impl<R: Read> Read for WithoutNul<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.ready.len() {
            if self.done {
                return Ok(0);
            }
            self.refill()?;
        }
        let n = buf.len().min(self.ready.len() - self.at);
        buf[..n].copy_from_slice(&self.ready[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Reads the archive at `path` (blocking: call off the async threads). `text_budget`
/// bounds what its JSON unpacks to, `file_budget` its recordings.
fn parse(path: PathBuf, data_dir: PathBuf, text_budget: u64, file_budget: u64) -> Result<Parsed, Refusal> {
    let file = std::fs::File::open(&path).map_err(|error| format!("The upload could not be read back: {error}."))?;
    let mut zip = zip::ZipArchive::new(std::io::BufReader::new(file)).map_err(|_| {
        "The file is not an Insight project archive: it is not a zip archive (or it is damaged).".to_owned()
    })?;
    let mut budget = text_budget;
    let manifest: Manifest = json_entry(&mut zip, super::MANIFEST, &mut budget)?;
    if manifest.format != super::FORMAT {
        return Err(Refusal::Invalid(format!(
            "The archive's manifest names the format “{}”; Insight reads “{}”.",
            manifest.format,
            super::FORMAT
        )));
    }
    if manifest.version > super::VERSION || manifest.version == 0 {
        return Err(Refusal::Invalid(format!(
            "The archive is of version {} of the format, written by {}; this Insight reads versions up to {}. \
             Upgrade this Insight to import it.",
            manifest.version,
            manifest.generator,
            super::VERSION
        )));
    }
    let dump = ProjectDump {
        project: json_entry(&mut zip, super::PROJECT, &mut budget)?,
        records: json_entry(&mut zip, super::RECORDS, &mut budget)?,
        reports: json_entry(&mut zip, super::REPORTS, &mut budget)?,
        tags: json_entry(&mut zip, super::TAGS, &mut budget)?,
        highlights: json_entry(&mut zip, super::HIGHLIGHTS, &mut budget)?,
        insights: json_entry(&mut zip, super::INSIGHTS, &mut budget)?,
        themes: json_entry(&mut zip, super::THEMES, &mut budget)?,
        interviews: json_entry(&mut zip, super::INTERVIEWS, &mut budget)?,
    };
    if dump.tags.len() as u64 > MAX_TAGS {
        return Err(Refusal::TooLarge(format!(
            "The archive's tags.json holds {} tags; an archive may carry at most {MAX_TAGS}.",
            dump.tags.len()
        )));
    }
    let mut recordings = Vec::new();
    let mut budget = file_budget;
    for (index, record) in dump.records.iter().enumerate() {
        let Some(name) = &record.recording else {
            continue;
        };
        if !name.starts_with(super::RECORDINGS) || name.contains("..") {
            return Err(Refusal::Invalid(format!(
                "records.json names the recording “{name}”, outside the recordings folder."
            )));
        }
        let target = upload_path(&data_dir).map_err(|_| "The data folder cannot hold the recordings.".to_owned())?;
        let temp = TempFile(Some(target.clone()));
        let mut file = zip
            .by_name(name)
            .map_err(|_| format!("records.json names the recording {name}, which is not in the archive."))?;
        let mut out =
            std::fs::File::create(&target).map_err(|error| format!("A recording cannot be unpacked: {error}."))?;
        let copied = std::io::copy(&mut (&mut file).take(budget.saturating_add(1)), &mut out)
            .map_err(|_| format!("The archive is damaged: {name} cannot be unpacked."))?;
        if copied > budget {
            return Err(Refusal::TooLarge(
                "The archive's recordings unpack to more than INSIGHT_MAX_ARCHIVE_BYTES.".to_owned(),
            ));
        }
        out.sync_all()
            .map_err(|error| format!("A recording cannot be unpacked: {error}."))?;
        budget -= copied;
        recordings.push((index, temp));
    }
    Ok(Parsed {
        manifest,
        dump,
        recordings,
    })
}

/// Old ids to new ones.
#[derive(Default)]
struct Ids(HashMap<Uuid, Uuid>);

impl Ids {
    /// A new id for `old`; a row whose id came before in `entry` is refused, as the
    /// store would refuse it.
    fn new_for(&mut self, old: Uuid, entry: &str) -> Result<Uuid> {
        let new = Uuid::new_v4();
        if self.0.insert(old, new).is_some() {
            return Err(invalid_file(format!("The archive's {entry} has the id {old} twice.")));
        }
        Ok(new)
    }

    fn get(&self, old: &Uuid) -> Option<Uuid> {
        self.0.get(old).copied()
    }

    /// `olds` that are known, mapped, each once, in order.
    fn map_all(&self, olds: &[Uuid]) -> Vec<Uuid> {
        let mut seen = HashSet::new();
        olds.iter()
            .filter_map(|old| self.get(old))
            .filter(|new| seen.insert(*new))
            .collect()
    }
}

/// Provenance names the records a text came from (`records: [{id, version}]`).
fn remap_provenance(value: &mut Option<sqlx::types::Json<Value>>, records: &Ids) {
    let Some(Value::Array(sources)) = value.as_mut().and_then(|json| json.0.get_mut("records")) else {
        return;
    };
    for source in sources {
        let old = source
            .get("id")
            .and_then(Value::as_str)
            .and_then(|id| Uuid::parse_str(id).ok());
        if let (Some(new), Some(object)) = (old.and_then(|old| records.get(&old)), source.as_object_mut()) {
            object.insert("id".to_owned(), json!(new));
        }
    }
}

fn refuse_status(entry: &str, status: &str) -> Error {
    invalid_file(format!(
        "The archive's {entry} has a status Insight does not know: “{status}”."
    ))
}

/// Makes a new project of the workspace from an archive (at `path`).
pub async fn import(services: &Services, caller: &Caller, workspace_id: Uuid, path: PathBuf) -> Result<ArchiveImport> {
    let user_id = caller.id();
    let actor = &caller.actor();
    caller
        .require(&services.store, Target::Workspace(workspace_id), Need::Write)
        .await?;
    let data_dir = services.settings.storage.data_dir.clone();
    let _permit = services.import_permit().await?;
    let upload_bytes = std::fs::metadata(&path).map(|meta| meta.len()).unwrap_or(u64::MAX);
    // The JSON is the project's text: at most what one upload may be, and no more than
    // the archive's size times the expansion allowed (recordings have their own budget).
    let text_budget = text_budget(
        &services.settings,
        upload_bytes,
        services.settings.material.max_upload_bytes,
    );
    let file_budget = services.settings.material.max_archive_bytes;
    let parsed = match tokio::task::spawn_blocking(move || parse(path, data_dir, text_budget, file_budget)).await {
        Ok(parsed) => parsed.map_err(refused)?,
        Err(error) if error.is_panic() => {
            return Err(invalid_file("The archive could not be read; it may be damaged."));
        }
        Err(error) => return Err(anyhow::anyhow!("reading the archive failed: {error}").into()),
    };
    let Parsed {
        manifest,
        mut dump,
        recordings,
    } = parsed;
    within_quotas(services, user_id, &dump).await?;
    // The tags the archive needs and the workspace lacks are made in a holding workspace
    // nobody sees, and moved into the workspace in the transaction that writes the rows:
    // a failure, or a kill, leaves no tag behind.
    let (holding, _hold) = services.store.begin_import().await?;
    let restored = async {
        let tags = Tags::resolve(services, user_id, workspace_id, holding, &dump).await?;
        let kept = restore(services, user_id, workspace_id, holding, &mut dump, &tags, recordings).await?;
        Ok::<_, Error>((tags, kept))
    }
    .await;
    let (tags, kept) = match restored {
        Ok(done) => done,
        Err(error) => {
            if let Err(cleanup) = services.store.drop_import(holding).await {
                tracing::warn!(holding = %holding, error = %cleanup, "a failed import could not be removed; the sweep will");
            }
            return Err(error);
        }
    };
    let imported = Counts {
        tags: tags.of_archive.values().collect::<HashSet<_>>().len(),
        ..Counts::of(&dump, kept)
    };
    audit::record(
        &services.store,
        audit::Entry {
            workspace_id: Some(workspace_id),
            actor: actor.clone(),
            action: "project.imported",
            target: Some(("project", dump.project.id.to_string())),
            detail: json!({
                "format": "archive",
                "from": { "project_id": manifest.project_id, "generator": manifest.generator, "exported_at": manifest.exported_at },
                "imported": imported,
            }),
        },
    )
    .await?;
    Ok(ArchiveImport {
        project_id: dump.project.id,
        imported,
    })
}

/// An imported project counts against the importer's quotas as one made by hand would:
/// his projects, and the records and reports one project may hold.
async fn within_quotas(services: &Services, user_id: Uuid, dump: &ProjectDump) -> Result<()> {
    services.check_quota(Counted::Projects { owner_id: user_id }).await?;
    let quotas = &services.settings.quotas;
    let reports = dump.reports.iter().filter(|report| !report.is_deleted).count();
    for (count, limit, what, setting) in [
        (
            dump.records.len(),
            quotas.records_per_project,
            "records",
            "INSIGHT_QUOTA_RECORDS_PER_PROJECT",
        ),
        (
            reports,
            quotas.reports_per_project,
            "reports",
            "INSIGHT_QUOTA_REPORTS_PER_PROJECT",
        ),
    ] {
        if i64::try_from(count).unwrap_or(i64::MAX) > limit {
            return Err(Error::Conflict(format!(
                "The archive's project holds {count} {what}; a project may hold at most {limit} ({setting})."
            )));
        }
    }
    Ok(())
}

/// The archive's tags as the workspace's: found by name, or made (groups first).
struct Tags {
    of_archive: HashMap<Uuid, Uuid>,
    made: Vec<Uuid>,
}

impl Tags {
    async fn resolve(
        services: &Services,
        user_id: Uuid,
        workspace_id: Uuid,
        holding: Uuid,
        dump: &ProjectDump,
    ) -> Result<Self> {
        let existing = services.store.list_tags(user_id, workspace_id).await?;
        let mut by_name: HashMap<String, (Uuid, bool)> = existing
            .iter()
            .map(|tag| (name_key(&tag.name), (tag.id, tag.parent_id.is_some())))
            .collect();
        let mut tags = Self {
            of_archive: HashMap::new(),
            made: Vec::new(),
        };
        let mut ordered: Vec<_> = dump.tags.iter().collect();
        ordered.sort_by_key(|tag| tag.parent_id.is_some());
        for tag in ordered {
            if let Some((id, _)) = by_name.get(&name_key(&tag.name)) {
                tags.of_archive.insert(tag.id, *id);
                continue;
            }
            // Only a tag outside any group can hold others.
            let parent_id = tag
                .parent_id
                .and_then(|parent| tags.of_archive.get(&parent).copied())
                .filter(|parent| by_name.values().any(|(id, grouped)| id == parent && !grouped));
            let body = TagCreate {
                name: tag.name.clone(),
                color: Some(tag.color.clone()),
                description: Some(tag.description.clone()),
                parent_id,
            };
            let made =
                match crate::app::research::tags::create_for_import(&services.store, user_id, holding, body).await {
                    Ok(made) => made,
                    Err(error) => {
                        return Err(match error {
                            Error::Invalid(_) => {
                                invalid_file(format!("The archive's tag “{}” is not one Insight can make.", tag.name))
                            }
                            error => error,
                        });
                    }
                };
            by_name.insert(name_key(&made.name), (made.id, made.parent_id.is_some()));
            tags.of_archive.insert(tag.id, made.id);
            tags.made.push(made.id);
        }
        Ok(tags)
    }
}

/// Gives every row a new id, drops references to nothing, checks what the store would
/// refuse, keeps the recordings and writes the rows; how many recordings were kept.
async fn restore(
    services: &Services,
    user_id: Uuid,
    workspace_id: Uuid,
    holding: Uuid,
    dump: &mut ProjectDump,
    tags: &Tags,
    recordings: Vec<(usize, TempFile)>,
) -> Result<usize> {
    let limit = services.settings.material.max_utterances;
    ProjectStatus::parse(&dump.project.status).ok_or_else(|| refuse_status("project.json", &dump.project.status))?;
    dump.project.id = Uuid::new_v4();
    let mut records = Ids::default();
    for record in &mut dump.records {
        record.id = records.new_for(record.id, "records.json")?;
        let status =
            RecordStatus::parse(&record.status).ok_or_else(|| refuse_status("records.json", &record.status))?;
        if matches!(status, RecordStatus::Uploaded | RecordStatus::InProgress) {
            // Processing starts again here, as for an upload.
            record.status = RecordStatus::InQueue.as_str().to_owned();
        }
        record.utterances.sort_by_key(|utterance| utterance.id);
        record.utterances.dedup_by_key(|utterance| utterance.id);
        if record.utterances.len() > limit {
            return Err(invalid_file(format!(
                "The record “{}” has {} utterances; a record may have at most {limit} (INSIGHT_MAX_UTTERANCES).",
                record.name,
                record.utterances.len()
            )));
        }
        record.media_path = None;
        // The type a recording is served with: only sound or video, as for an upload.
        record.media_type = record
            .media_type
            .as_deref()
            .and_then(crate::engines::ingest::playable_type);
        if let Some(persona) = &mut record.persona {
            remap_provenance(&mut persona.provenance, &records);
        }
    }
    let mut highlights = Ids::default();
    dump.highlights
        .retain(|highlight| records.get(&highlight.record_id).is_some());
    for highlight in &mut dump.highlights {
        HighlightStatus::parse(&highlight.status).ok_or_else(|| refuse_status("highlights.json", &highlight.status))?;
        highlight.id = highlights.new_for(highlight.id, "highlights.json")?;
        highlight.record_id = records.get(&highlight.record_id).unwrap_or(highlight.record_id);
        let mut seen = HashSet::new();
        highlight.tag_ids = highlight
            .tag_ids
            .iter()
            .filter_map(|tag| tags.of_archive.get(tag).copied())
            .filter(|tag| seen.insert(*tag))
            .collect();
        remap_provenance(&mut highlight.provenance, &records);
    }
    let mut insights = Ids::default();
    for insight in &mut dump.insights {
        insight.id = insights.new_for(insight.id, "insights.json")?;
        insight.highlight_ids = highlights.map_all(&insight.highlight_ids);
    }
    let (presets, prompts) = services.store.library_ids(workspace_id).await?;
    for report in &mut dump.reports {
        report.id = Uuid::new_v4();
        let status =
            ReportStatus::parse(&report.status).ok_or_else(|| refuse_status("reports.json", &report.status))?;
        if matches!(status, ReportStatus::Queued | ReportStatus::Generating) {
            report.status = ReportStatus::Failed.as_str().to_owned();
            report.gen_error = Some(INTERRUPTED.to_owned());
        }
        report.records_ids.0 = records.map_all(&report.records_ids.0);
        report.insight_ids = insights.map_all(&report.insight_ids);
        report.preset_id = report.preset_id.filter(|id| presets.contains(id));
        report.prompts_ids.0.retain(|id| prompts.contains(id));
        report.versions.sort_by_key(|version| version.version);
        report.versions.dedup_by_key(|version| version.version);
        remap_provenance(&mut report.gen_provenance, &records);
        for version in &mut report.versions {
            if VersionKind::parse(&version.kind).is_none() {
                return Err(invalid_file(format!(
                    "The archive's reports.json has a version of a kind Insight does not know: “{}”.",
                    version.kind
                )));
            }
            remap_provenance(&mut version.provenance, &records);
        }
    }
    for theme in &mut dump.themes {
        if !THEME_STATUSES.contains(&theme.status.as_str()) {
            return Err(refuse_status("themes.json", &theme.status));
        }
        theme.id = Uuid::new_v4();
        theme.highlight_ids.0 = highlights.map_all(&theme.highlight_ids.0);
    }
    let mut links = Vec::new();
    for room in &mut dump.interviews {
        let status = RoomStatus::parse(&room.status).ok_or_else(|| refuse_status("interviews.json", &room.status))?;
        if status == RoomStatus::Active {
            // Its respondent is talking to the Insight it came from.
            room.status = RoomStatus::Cancelled.as_str().to_owned();
        }
        room.id = Uuid::new_v4();
        room.record_id = room.record_id.and_then(|id| records.get(&id));
        room.turns.sort_by_key(|turn| turn.position);
        room.turns.dedup_by_key(|turn| turn.position);
        let (token_nonce, token_hash) = crate::app::interview::rooms::new_link(services, room.id);
        links.push(RoomLink {
            token_nonce,
            token_hash,
        });
    }
    let mut kept = Vec::new();
    for (index, temp) in &recordings {
        let (Some(record), Some(path)) = (dump.records.get_mut(*index), temp.0.as_ref()) else {
            continue;
        };
        let key = recording_key(record.recording.as_deref(), "bin");
        if let Err(error) = services.files.keep(path, &key).await {
            forget(services, &kept).await;
            return Err(error);
        }
        record.media_path = Some(key.clone());
        kept.push(key);
        services.store.touch_import(holding).await?;
    }
    if let Err(error) = services
        .store
        .restore_project(workspace_id, user_id, dump, &links, holding)
        .await
    {
        forget(services, &kept).await;
        return Err(match unfit_value(&error) {
            Some(reason) => invalid_file(format!(
                "The archive holds a value this Insight's database cannot keep ({reason}); nothing was imported."
            )),
            None => error.into(),
        });
    }
    Ok(kept.len())
}

/// PostgreSQL's reason for refusing a value the archive's JSON allowed (a date before
/// 4713 BC, a number too large for its column): its data exceptions, SQLSTATE class 22.
fn unfit_value(error: &anyhow::Error) -> Option<String> {
    error
        .chain()
        .find_map(|cause| match cause.downcast_ref::<sqlx::Error>()? {
            sqlx::Error::Database(database) => database
                .code()
                .filter(|code| code.len() == 5 && code.starts_with("22"))
                .map(|_| database.message().to_owned()),
            _ => None,
        })
}

async fn forget(services: &Services, keys: &[String]) {
    for key in keys {
        services.files.delete(key).await;
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::WithoutNul;

    /// A reader that hands out one byte at a time, so escapes are cut at every place.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let Some((first, rest)) = self.0.split_first() else {
                return Ok(0);
            };
            buf[0] = *first;
            self.0 = rest;
            Ok(1)
        }
    }

    fn without_nul(json: Vec<u8>) -> Vec<u8> {
        let mut out = Vec::new();
        WithoutNul::new(json.as_slice()).read_to_end(&mut out).expect("read");
        let mut trickled = Vec::new();
        WithoutNul::new(Trickle(&json))
            .read_to_end(&mut trickled)
            .expect("read");
        assert_eq!(out, trickled, "the same, however the input is cut");
        out
    }

    #[test]
    fn escaped_nul_characters_are_taken_out_and_nothing_else() {
        let cases: [(&str, &str); 5] = [
            (r#"{"a":"x"}"#, r#"{"a":"x"}"#),
            (r#"{"a":"x\u0000y"}"#, r#"{"a":"xy"}"#),
            (r#"{"a":"\u0000\u0000"}"#, r#"{"a":""}"#),
            // A backslash, then the text u0000: kept.
            (r#"{"a":"\\u0000"}"#, r#"{"a":"\\u0000"}"#),
            (r#"{"a":"\\\u0000"}"#, r#"{"a":"\\"}"#),
        ];
        for (json, expected) in cases {
            let out = String::from_utf8(without_nul(json.as_bytes().to_vec())).expect("utf-8");
            assert_eq!(out, expected, "{json}");
            let _: serde_json::Value = serde_json::from_str(&out).expect("still JSON");
        }
    }
}
