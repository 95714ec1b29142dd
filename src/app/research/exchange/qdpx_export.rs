//! REFI-QDA projects (`.qdpx`) out: the workspace's tags are the codebook (groups as
//! codes holding codes), each record's transcript is a text source written one utterance
//! a line (`Speaker: words`), and each highlight is a coded selection whose character
//! range is where its words are in that text.

use chrono::SecondsFormat;
use uuid::Uuid;

use super::archive;
use super::qde::{self, Code, Selection, TextSource, User};
use super::text;
use crate::domain::highlight::{Highlight, HighlightStatus};
use crate::domain::paging::PageRequest;
use crate::domain::project::Project;
use crate::domain::tag::Tag;
use crate::error::Result;
use crate::services::Services;

/// A person's guid in the project, the same for the same address in every export.
fn user_guid(email: &str) -> String {
    Uuid::new_v5(&Uuid::NAMESPACE_OID, format!("insight:user:{email}").as_bytes()).to_string()
}

fn timestamp(at: chrono::DateTime<chrono::Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The codebook: tags in no group at the top, each group's tags inside it.
fn codebook(tags: &[Tag]) -> Vec<Code> {
    let code = |tag: &Tag, children: Vec<Code>| Code {
        guid: tag.id.to_string(),
        name: tag.name.clone(),
        color: Some(tag.color.clone()),
        description: tag.description.clone(),
        children,
    };
    let grouped = |tag: &Tag| tag.parent_id.is_some_and(|parent| tags.iter().any(|t| t.id == parent));
    tags.iter()
        .filter(|tag| !grouped(tag))
        .map(|group| {
            let children = tags
                .iter()
                .filter(|tag| tag.parent_id == Some(group.id))
                .map(|tag| code(tag, Vec::new()))
                .collect();
            code(group, children)
        })
        .collect()
}

/// The project as a `.qdpx` archive; answers it and how many highlights it holds.
pub(super) async fn export(
    services: &Services,
    user_id: Uuid,
    user_email: &str,
    project: &Project,
    highlights: &[Highlight],
) -> Result<(Vec<u8>, usize)> {
    let store = &services.store;
    let tags = store.list_tags(user_id, project.workspace_id).await?;
    let mut records = store
        .list_records(user_id, project.id, &PageRequest::everything())
        .await?
        .items;
    records.reverse();
    let exporter = user_guid(user_email);
    let mut users = vec![User {
        guid: exporter.clone(),
        name: user_email.to_owned(),
    }];
    let mut files = Vec::new();
    let mut sources = Vec::new();
    let mut exported = 0;
    for record in &records {
        let written = text::write(&store.utterances(record.id).await?);
        let mut selections = Vec::new();
        // Detached highlights quote words that are no longer in the transcript: there
        // is no place in the text to point at.
        for highlight in highlights
            .iter()
            .filter(|h| h.record_id == record.id && h.status == HighlightStatus::Ok)
        {
            let start = written.position(highlight.start.utterance_id, highlight.start.offset);
            let end = written.position(highlight.end.utterance_id, highlight.end.offset);
            let (Some(start), Some(end)) = (start, end) else {
                continue;
            };
            let author = highlight.author_email.as_deref().map(user_guid);
            if let Some(email) = &highlight.author_email
                && !users.iter().any(|user| &user.name == email)
            {
                users.push(User {
                    guid: user_guid(email),
                    name: email.clone(),
                });
            }
            selections.push(Selection {
                guid: highlight.id.to_string(),
                start: i64::try_from(start).unwrap_or(i64::MAX),
                end: i64::try_from(end).unwrap_or(i64::MAX),
                codes: highlight.tags.iter().map(|tag| tag.id.to_string()).collect(),
                note: highlight.note.clone(),
                creating_user: author,
                created_at: Some(timestamp(highlight.created_at)),
            });
            exported += 1;
        }
        let file = format!("{}.txt", record.id);
        sources.push(TextSource {
            guid: record.id.to_string(),
            name: record.name.clone(),
            plain_text_path: Some(format!("internal://{file}")),
            plain_text: None,
            creating_user: Some(exporter.clone()),
            created_at: Some(timestamp(record.created_at)),
            selections,
        });
        files.push((format!("sources/{file}"), written.text.into_bytes()));
    }
    let document = qde::Project {
        name: project.name.clone(),
        description: project.description.clone(),
        origin: format!("Insight {}", env!("CARGO_PKG_VERSION")),
        creating_user: Some(exporter),
        created_at: Some(timestamp(crate::domain::now())),
        users,
        codes: codebook(&tags),
        sources,
        other_sources: 0,
    };
    files.insert(0, ("project.qde".to_owned(), qde::write(&document).into_bytes()));
    Ok((archive::write(&files)?, exported))
}
