//! REFI-QDA projects (`.qdpx`) in, from any tool: text sources become records (split
//! into utterances as `text` reads them), codes join the workspace's tags by name, and
//! each coded segment is placed on the transcript its text source became.

use std::collections::HashMap;
use std::path::PathBuf;

use uuid::Uuid;

use super::archive::Archive;
use super::qde::{self, Code, Refusal, Selection};
use super::text;
use crate::app::Caller;
use crate::app::research::highlights::{NOTE_MAX_CHARS, place_span};
use crate::app::research::tags;
use crate::domain::exchange::{QdpxImport, QdpxSkipped};
use crate::domain::highlight::HighlightStatus;
use crate::domain::project::NewProject;
use crate::domain::tag::{TagCreate, name_key};
use crate::domain::workspace::Need;
use crate::engines::ingest::{Format, ParsedUtterance, Transcript};
use crate::error::{Error, Result, ValidationIssue};
use crate::services::Services;
use crate::store::{NewHighlight, Target};

/// A refusal of the file sent, on the `file` field of the form.
pub(crate) fn invalid_file(message: impl Into<String>) -> Error {
    Error::validation(vec![ValidationIssue::new(
        vec![serde_json::json!("body"), serde_json::json!("file")],
        "value_error",
        message,
    )])
}

/// A text source read and split into utterances, with its coded segments.
struct Source {
    name: String,
    read: text::Read,
    selections: Vec<Selection>,
}

/// What Insight takes of a `.qdpx`, read before anything is written.
struct Parsed {
    name: String,
    description: String,
    codes: Vec<Code>,
    sources: Vec<Source>,
    skipped_sources: usize,
}

/// Reads the archive at `path` (blocking: call off the async threads).
fn parse(path: PathBuf, budget: u64, limits: qde::Limits) -> Result<Parsed, Refusal> {
    let file = std::fs::File::open(&path).map_err(|error| format!("The upload could not be read back: {error}."))?;
    let mut archive = Archive::open(std::io::BufReader::new(file), budget)?;
    let project = archive.read_project(limits)?;
    let mut parsed = Parsed {
        name: project.name,
        description: project.description,
        codes: project.codes,
        sources: Vec::new(),
        skipped_sources: project.other_sources,
    };
    for source in project.sources {
        let content = match (&source.plain_text, &source.plain_text_path) {
            (Some(inline), _) => Some(inline.clone()),
            (None, Some(path)) => archive
                .source(path)?
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
            (None, None) => None,
        };
        let read = content.map(|content| text::read(&text::normalise(&content)));
        match read {
            Some(read) if !read.utterances.is_empty() => parsed.sources.push(Source {
                name: source.name,
                read,
                selections: source.selections,
            }),
            _ => parsed.skipped_sources += 1,
        }
    }
    Ok(parsed)
}

/// A source's name as a record's: without the extension of a document file.
fn record_title(name: &str, index: usize) -> String {
    let name = name.trim();
    let stem = match name.rsplit_once('.') {
        Some((stem, extension))
            if !stem.is_empty()
                && ["txt", "md", "docx", "doc", "rtf", "odt", "pdf", "html", "htm"]
                    .contains(&extension.to_ascii_lowercase().as_str()) =>
        {
            stem
        }
        _ => name,
    };
    if stem.is_empty() {
        format!("Source {}", index + 1)
    } else {
        stem.to_owned()
    }
}

/// A colour as tags keep it (`#rrggbb`), from what a tool wrote.
fn tag_color(color: Option<&str>) -> Option<String> {
    let hex = color?.trim().strip_prefix('#')?;
    if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    match hex.len() {
        6 => Some(format!("#{hex}")),
        3 => Some(format!("#{}", hex.chars().flat_map(|c| [c, c]).collect::<String>())),
        _ => None,
    }
}

fn truncated(text: &str, max: usize) -> String {
    text.trim().chars().take(max).collect::<String>().trim().to_owned()
}

/// The workspace's tags by name, as the import finds and makes them (new ones in the
/// import's holding workspace).
struct Tags<'a> {
    services: &'a Services,
    user_id: Uuid,
    holding: Uuid,
    /// By name key: the tag's id and whether it is in a group.
    by_name: HashMap<String, (Uuid, bool)>,
    /// Each code's tag, by the code's guid.
    of_code: HashMap<String, Uuid>,
}

impl Tags<'_> {
    /// The tag for a code: the workspace's tag of that name, or a new one in `group`.
    async fn tag_for(&mut self, code: &Code, group: Option<Uuid>) -> Result<Option<Uuid>> {
        let name = truncated(&code.name, 100);
        if name.is_empty() {
            return Ok(None);
        }
        let id = match self.by_name.get(&name_key(&name)) {
            Some((id, _)) => *id,
            None => {
                let body = TagCreate {
                    name: name.clone(),
                    color: tag_color(code.color.as_deref()),
                    description: Some(truncated(&code.description, 2000)),
                    parent_id: group,
                };
                let tag = tags::create_for_import(&self.services.store, self.user_id, self.holding, body).await?;
                self.by_name.insert(name_key(&name), (tag.id, group.is_some()));
                tag.id
            }
        };
        self.of_code.insert(code.guid.clone(), id);
        Ok(Some(id))
    }

    /// A top-level code and everything under it: groups are one level deep in Insight,
    /// so codes nested deeper join the top code's group.
    async fn add(&mut self, code: &Code) -> Result<()> {
        let top = self.tag_for(code, None).await?;
        // A tag already in a group cannot hold others.
        let group = top.filter(|id| self.by_name.values().any(|(tag, grouped)| tag == id && !grouped));
        let mut below: Vec<&Code> = code.children.iter().collect();
        while let Some(child) = below.pop() {
            self.tag_for(child, group).await?;
            below.extend(child.children.iter());
        }
        Ok(())
    }
}

/// Whether the user may import a project into the workspace (his role there allows
/// writing); checked before the upload is read.
pub async fn may_import(services: &Services, caller: &Caller, workspace_id: Uuid) -> Result<()> {
    caller
        .require(&services.store, Target::Workspace(workspace_id), Need::Write)
        .await?;
    Ok(())
}

/// Makes a new project of the workspace from a `.qdpx` archive (at `path`, of at most
/// the upload limit): its text sources become records, its codes tags, its coded
/// segments highlights. Everything is read and checked before anything is written; should
/// writing fail half-way, the new project is deleted again.
pub async fn import(services: &Services, caller: &Caller, workspace_id: Uuid, path: PathBuf) -> Result<QdpxImport> {
    let user_id = caller.id();
    caller
        .require(&services.store, Target::Workspace(workspace_id), Need::Write)
        .await?;
    let _permit = services.import_permit().await?;
    let upload_bytes = std::fs::metadata(&path).map(|meta| meta.len()).unwrap_or(u64::MAX);
    let ceiling = services.settings.material.max_upload_bytes.saturating_mul(10);
    let budget = super::text_budget(&services.settings, upload_bytes, ceiling);
    let limits = super::qde_limits(&services.settings, budget);
    let parsed = match tokio::task::spawn_blocking(move || parse(path, budget, limits)).await {
        Ok(parsed) => parsed.map_err(super::refused)?,
        Err(error) if error.is_panic() => {
            return Err(invalid_file("The .qdpx file could not be read; it may be damaged."));
        }
        Err(error) => return Err(anyhow::anyhow!("reading the .qdpx failed: {error}").into()),
    };
    let limit = services.settings.material.max_utterances;
    if let Some(source) = parsed
        .sources
        .iter()
        .find(|source| source.read.utterances.len() > limit)
    {
        return Err(invalid_file(format!(
            "The source “{}” has {} lines of text; a record may have at most {limit} utterances (INSIGHT_MAX_UTTERANCES).",
            source.name,
            source.read.utterances.len()
        )));
    }
    let name = match truncated(&parsed.name, 200) {
        name if name.is_empty() => "Imported project".to_owned(),
        name => name,
    };
    let new = NewProject {
        name,
        description: truncated(&parsed.description, 10_000),
        research_goals: String::new(),
        interview_guide: String::new(),
    };
    services
        .check_quota(crate::app::quota::Counted::Projects { owner_id: user_id })
        .await?;
    // Written into a holding workspace nobody sees, and moved into the workspace in one
    // transaction once complete: a failure, or a kill, leaves nothing visible.
    let (holding, _hold) = services.store.begin_import().await?;
    let filled = async {
        let project_id = services.store.create_import_project(user_id, holding, &new).await?;
        let summary = fill(services, user_id, workspace_id, holding, project_id, parsed).await?;
        if !services.store.publish_import(holding, workspace_id).await? {
            return Err(anyhow::anyhow!("the import's holding workspace was removed before it completed").into());
        }
        Ok(summary)
    }
    .await;
    if filled.is_err()
        && let Err(cleanup) = services.store.drop_import(holding).await
    {
        tracing::error!(holding = %holding, error = %cleanup, "a failed import could not be removed; the sweep will");
    }
    filled
}

/// A range of a text source with every code applied to it and every memo on it.
struct Coded {
    start: i64,
    end: i64,
    tag_ids: Vec<Uuid>,
    notes: Vec<String>,
}

/// One highlight per range: tools that write one selection per coding (AQDA, QualCoder)
/// would otherwise make one highlight per tag on the same words.
fn coded(selections: &[Selection], of_code: &HashMap<String, Uuid>) -> Vec<Coded> {
    let mut ranges: Vec<Coded> = Vec::new();
    for selection in selections {
        let at = match ranges
            .iter()
            .position(|known| (known.start, known.end) == (selection.start, selection.end))
        {
            Some(at) => at,
            None => {
                ranges.push(Coded {
                    start: selection.start,
                    end: selection.end,
                    tag_ids: Vec::new(),
                    notes: Vec::new(),
                });
                ranges.len() - 1
            }
        };
        let range = &mut ranges[at];
        for id in selection.codes.iter().filter_map(|guid| of_code.get(guid)) {
            if !range.tag_ids.contains(id) {
                range.tag_ids.push(*id);
            }
        }
        if !selection.note.is_empty() && !range.notes.contains(&selection.note) {
            range.notes.push(selection.note.clone());
        }
    }
    ranges
}

async fn fill(
    services: &Services,
    user_id: Uuid,
    workspace_id: Uuid,
    holding: Uuid,
    project_id: Uuid,
    parsed: Parsed,
) -> Result<QdpxImport> {
    let existing = services.store.list_tags(user_id, workspace_id).await?;
    let mut tags = Tags {
        services,
        user_id,
        holding,
        by_name: existing
            .iter()
            .map(|tag| (name_key(&tag.name), (tag.id, tag.parent_id.is_some())))
            .collect(),
        of_code: HashMap::new(),
    };
    for code in &parsed.codes {
        tags.add(code).await?;
    }
    let mut summary = QdpxImport {
        project_id,
        records: 0,
        tags: tags.of_code.values().collect::<std::collections::HashSet<_>>().len(),
        highlights: 0,
        skipped: QdpxSkipped {
            sources: parsed.skipped_sources,
            segments: 0,
        },
    };
    for (index, source) in parsed.sources.into_iter().enumerate() {
        // The workspace's access was checked at the start; the project is not visible yet.
        let permit = crate::app::records::intake::within_quota(services, project_id).await?;
        services.store.touch_import(holding).await?;
        let utterances: Vec<ParsedUtterance> = source.read.utterances.clone();
        let record_id = crate::app::records::intake::file_transcript(
            services,
            permit,
            Some(record_title(&source.name, index)),
            None,
            Format::Text,
            Some(source.name.clone()),
            Transcript {
                utterances,
                language: None,
            },
            "file",
        )
        .await?;
        summary.records += 1;
        for Coded {
            start,
            end,
            tag_ids,
            notes,
        } in coded(&source.selections, &tags.of_code)
        {
            let anchors = usize::try_from(start)
                .ok()
                .zip(usize::try_from(end).ok())
                .and_then(|(start, end)| source.read.anchors(start, end));
            let Some(((from_id, from), (to_id, to))) = anchors else {
                summary.skipped.segments += 1;
                continue;
            };
            let start = crate::domain::highlight::Anchor {
                utterance_id: from_id,
                offset: from,
            };
            let end = crate::domain::highlight::Anchor {
                utterance_id: to_id,
                offset: to,
            };
            let (start, end, quote) = match place_span(&services.store, record_id, start, end).await {
                Ok(placed) => placed,
                Err(error @ Error::Internal(_)) => return Err(error),
                // Out of the transcript, or no words in it: the segment is left out.
                Err(_) => {
                    summary.skipped.segments += 1;
                    continue;
                }
            };
            let note = truncated(&notes.join("\n\n"), NOTE_MAX_CHARS);
            services
                .store
                .create_highlight(NewHighlight {
                    record_id,
                    start,
                    end,
                    quote: &quote,
                    note: &note,
                    status: HighlightStatus::Ok,
                    tag_ids: &tag_ids,
                    created_by: Some(user_id),
                    provenance: None,
                })
                .await?;
            summary.highlights += 1;
        }
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_colours_and_lengths_as_insight_keeps_them() {
        assert_eq!(record_title("anna-interview.txt", 0), "anna-interview");
        assert_eq!(record_title("Interview 2.5", 0), "Interview 2.5");
        assert_eq!(record_title(" .txt ", 3), ".txt");
        assert_eq!(record_title("", 3), "Source 4");
        assert_eq!(tag_color(Some("#D62728")).as_deref(), Some("#D62728"));
        assert_eq!(tag_color(Some("#f80")).as_deref(), Some("#ff8800"));
        assert_eq!(tag_color(Some("red")), None);
        assert_eq!(tag_color(Some("#12345g")), None);
        assert_eq!(truncated("  abc  ", 2), "ab");
    }
}
