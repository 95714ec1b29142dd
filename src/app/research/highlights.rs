//! Highlights, as every door makes and changes them: a span of a finished record's
//! transcript checked against its text and quoted exactly, tagged with the workspace's
//! tags, annotated; suggestions accepted or rejected by a person.

use serde_json::json;
use uuid::Uuid;

use crate::app::Caller;
use crate::services::Services;

use crate::domain::highlight::{
    Anchor, Highlight, HighlightCreate, HighlightStatus, HighlightUpdate, SuggestionsQueued, slice_chars,
};
use crate::domain::paging::{Page, PageRequest};
use crate::domain::patch::Patch;
use crate::domain::record::{RecordStatus, Utterance};
use crate::domain::workspace::Need;
use crate::engines::ai::suggest::Suggestion;
use crate::error::{Error, Result, UnknownReferences, ValidationIssue, check_lengths};
use crate::store::{CreatedKey, HighlightFields, HighlightOrder, NewHighlight, RecordPlace, Store, Target};

/// Which highlights a list shows, as every door asks for them.
pub use crate::store::HighlightFilter;

pub const NOTE_MAX_CHARS: usize = 10_000;
pub const TAGS_MAX: usize = 50;

fn too_many(field: &str, count: usize, max: usize) -> Error {
    Error::validation(vec![
        ValidationIssue::new(
            vec![json!("body"), json!(field)],
            "too_long",
            format!("List should have at most {max} items after validation, not {count}"),
        )
        .with_ctx(json!({ "field_type": "List", "max_length": max, "actual_length": count })),
    ])
}

/// The record's place, when its transcript can be highlighted.
pub(crate) async fn finished_record(store: &Store, record_id: Uuid) -> Result<RecordPlace> {
    let place = store
        .record_place(record_id)
        .await?
        .ok_or_else(|| Error::not_found("Record"))?;
    if place.status != RecordStatus::Finished.as_str() {
        return Err(Error::conflict(
            "The record is still being processed (or could not be); its transcript can be highlighted once it is Finished.",
        ));
    }
    Ok(place)
}

/// Checks that every tag is one of the workspace's.
pub(crate) async fn check_tags(store: &Store, workspace_id: Uuid, tag_ids: &[Uuid]) -> Result<()> {
    if tag_ids.len() > TAGS_MAX {
        return Err(too_many("tag_ids", tag_ids.len(), TAGS_MAX));
    }
    let unknown = store.unknown_tags(workspace_id, tag_ids).await?;
    let mut references = UnknownReferences::default();
    references.add_all("tag", "tag_ids", tag_ids, &unknown);
    references.into_error().map_or(Ok(()), Err)
}

/// A span checked against the transcript: both ends on utterances of the record and
/// within their text, the end not before the start, and words between them. Spaces at
/// either edge are left out, so the quote begins and ends with a word. Answers the span
/// as stored and its exact words, utterances joined by a line break.
pub(crate) async fn place_span(
    store: &Store,
    record_id: Uuid,
    start: Anchor,
    end: Anchor,
) -> Result<(Anchor, Anchor, String)> {
    if end < start {
        return Err(Error::conflict(
            "A highlight ends where it starts or later: `end` comes before `start` in the transcript.",
        ));
    }
    let texts = store
        .utterance_texts(record_id, start.utterance_id, end.utterance_id)
        .await?;
    let mut unknown = UnknownReferences::default();
    if texts.first().map(|(id, _)| *id) != Some(start.utterance_id) {
        unknown.add("utterance", start.utterance_id, "start.utterance_id");
    }
    if texts.last().map(|(id, _)| *id) != Some(end.utterance_id) {
        unknown.add("utterance", end.utterance_id, "end.utterance_id");
    }
    if let Some(error) = unknown.into_error() {
        return Err(error);
    }
    let mut lines: Vec<Vec<char>> = texts.iter().map(|(_, text)| text.chars().collect()).collect();
    for (anchor, chars, field) in [(start, &lines[0], "start"), (end, &lines[lines.len() - 1], "end")] {
        if anchor.offset < 0 || anchor.offset as usize > chars.len() {
            return Err(Error::conflict(format!(
                "`{field}.offset` is {} but utterance {} has {} characters.",
                anchor.offset,
                anchor.utterance_id,
                chars.len()
            )));
        }
    }
    // Cut the first and last utterances to the span, then trim the edges.
    let last = lines.len() - 1;
    lines[last].truncate(end.offset as usize);
    lines[0].drain(..start.offset as usize);
    let (mut first_id, mut first_offset) = (start.utterance_id, start.offset);
    while !lines.is_empty() {
        let blank = lines[0].iter().take_while(|c| c.is_whitespace()).count();
        if blank < lines[0].len() {
            lines[0].drain(..blank);
            first_offset += blank as i64;
            break;
        }
        lines.remove(0);
        first_id += 1;
        first_offset = 0;
    }
    let (mut last_id, mut last_offset) = (end.utterance_id, end.offset);
    while let Some(line) = lines.last_mut() {
        let blank = line.iter().rev().take_while(|c| c.is_whitespace()).count();
        if blank < line.len() {
            line.truncate(line.len() - blank);
            last_offset -= blank as i64;
            break;
        }
        lines.pop();
        last_id -= 1;
        last_offset = texts
            .iter()
            .find(|(id, _)| *id == last_id)
            .map_or(0, |(_, text)| text.chars().count() as i64);
    }
    if lines.is_empty() {
        return Err(Error::conflict(
            "The span holds no words: select some of what was said.",
        ));
    }
    let quote = lines
        .iter()
        .map(|line| line.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("\n");
    let start = Anchor {
        utterance_id: first_id,
        offset: first_offset,
    };
    let end = Anchor {
        utterance_id: last_id,
        offset: last_offset,
    };
    Ok((start, end, quote))
}

/// Highlights a span of a finished record.
pub async fn create(store: &Store, caller: &Caller, record_id: Uuid, body: HighlightCreate) -> Result<Highlight> {
    caller.require(store, Target::Record(record_id), Need::Write).await?;
    let user_id = caller.id();
    let note = body.note.unwrap_or_default();
    check_lengths(&[("note", &note, NOTE_MAX_CHARS)])?;
    let place = finished_record(store, record_id).await?;
    check_tags(store, place.workspace_id, &body.tag_ids).await?;
    let (start, end, quote) = place_span(store, record_id, body.start, body.end).await?;
    let id = store
        .create_highlight(NewHighlight {
            record_id,
            start,
            end,
            quote: &quote,
            note: note.trim(),
            status: HighlightStatus::Ok,
            tag_ids: &body.tag_ids,
            created_by: Some(user_id),
            provenance: None,
        })
        .await?;
    get(store, caller, id).await
}

/// A highlight the user may see.
pub async fn get(store: &Store, caller: &Caller, highlight_id: Uuid) -> Result<Highlight> {
    let user_id = caller.id();
    store
        .get_highlight(user_id, highlight_id)
        .await?
        .ok_or_else(|| Error::not_found("Highlight"))
}

/// A record's highlights, suggestions among them, in transcript order.
pub async fn of_record(store: &Store, caller: &Caller, record_id: Uuid) -> Result<Vec<Highlight>> {
    let user_id = caller.id();
    caller.require(store, Target::Record(record_id), Need::Read).await?;
    let filter = HighlightFilter {
        record_id: Some(record_id),
        ..HighlightFilter::default()
    };
    let page = store
        .highlights(user_id, &filter, HighlightOrder::Transcript, &PageRequest::everything())
        .await?;
    Ok(page.items)
}

/// A page of a project's highlights, newest first, filtered.
pub async fn of_project(
    store: &Store,
    caller: &Caller,
    project_id: Uuid,
    filter: HighlightFilter,
    page: &PageRequest<CreatedKey>,
) -> Result<Page<Highlight, CreatedKey>> {
    let user_id = caller.id();
    caller.require(store, Target::Project(project_id), Need::Read).await?;
    let filter = HighlightFilter {
        project_id: Some(project_id),
        ..filter
    };
    Ok(store.highlights(user_id, &filter, HighlightOrder::Newest, page).await?)
}

/// A page of the highlights filed under a tag, across its workspace, newest first.
pub async fn of_tag(
    store: &Store,
    caller: &Caller,
    tag_id: Uuid,
    filter: HighlightFilter,
    page: &PageRequest<CreatedKey>,
) -> Result<Page<Highlight, CreatedKey>> {
    let user_id = caller.id();
    caller.require(store, Target::Tag(tag_id), Need::Read).await?;
    let filter = HighlightFilter {
        tag_id: Some(tag_id),
        ..filter
    };
    Ok(store.highlights(user_id, &filter, HighlightOrder::Newest, page).await?)
}

/// Changes a highlight: its tags, its note, its place (which quotes the words there and
/// makes a detached highlight whole again), or accepts a suggestion (`status: ok`).
pub async fn update(store: &Store, caller: &Caller, highlight_id: Uuid, body: HighlightUpdate) -> Result<Highlight> {
    let user_id = caller.id();
    let highlight = get(store, caller, highlight_id).await?;
    caller
        .require(store, Target::Highlight(highlight_id), Need::Write)
        .await?;
    let note = match body.note {
        Patch::Missing => highlight.note.clone(),
        Patch::Null => String::new(),
        Patch::Value(note) => {
            check_lengths(&[("note", &note, NOTE_MAX_CHARS)])?;
            note.trim().to_owned()
        }
    };
    let tag_ids = match body.tag_ids {
        Patch::Missing => None,
        Patch::Null => Some(Vec::new()),
        Patch::Value(ids) => {
            let place = store
                .record_place(highlight.record_id)
                .await?
                .ok_or_else(|| Error::not_found("Highlight"))?;
            check_tags(store, place.workspace_id, &ids).await?;
            Some(ids)
        }
    };
    let mut status = highlight.status;
    match body.status {
        Patch::Value(HighlightStatus::Ok) => {
            if status == HighlightStatus::Detached && body.start.as_value().is_none() && body.end.as_value().is_none() {
                return Err(Error::conflict(
                    "This highlight's words are no longer in the transcript: give it a new `start` and `end`, or delete it.",
                ));
            }
            status = HighlightStatus::Ok;
        }
        Patch::Value(other) => {
            return Err(Error::conflict(format!(
                "A highlight's status can only be set to `ok` (accepting a suggestion); `{}` is the service's to set.",
                other.as_str()
            )));
        }
        Patch::Missing | Patch::Null => {}
    }
    let (mut start, mut end, mut quote) = (highlight.start, highlight.end, highlight.quote.clone());
    if body.start.as_value().is_some() || body.end.as_value().is_some() {
        finished_record(store, highlight.record_id).await?;
        let asked_start = body.start.as_value().copied().unwrap_or(start);
        let asked_end = body.end.as_value().copied().unwrap_or(end);
        (start, end, quote) = place_span(store, highlight.record_id, asked_start, asked_end).await?;
        if status == HighlightStatus::Detached {
            status = HighlightStatus::Ok;
        }
    }
    let fields = HighlightFields {
        start,
        end,
        quote,
        note,
        status,
        tag_ids,
    };
    if !store.update_highlight(user_id, highlight_id, &fields).await? {
        return Err(Error::not_found("Highlight"));
    }
    get(store, caller, highlight_id).await
}

/// Asks for suggested highlights on a finished record, against `tag_ids` (every tag of
/// its workspace when empty); they are made in the background and wait, `suggested`, for
/// a person to accept or reject each. Answers whether any tag is there to suggest for.
pub async fn suggest(
    services: &Services,
    caller: &Caller,
    record_id: Uuid,
    tag_ids: &[Uuid],
) -> Result<SuggestionsQueued> {
    let store = &services.store;
    caller.require(store, Target::Record(record_id), Need::Write).await?;
    let user_id = caller.id();
    let place = finished_record(store, record_id).await?;
    crate::app::gate::require_budget(services, place.workspace_id).await?;
    check_tags(store, place.workspace_id, tag_ids).await?;
    if store.tags_for_record(record_id, tag_ids).await?.is_empty() {
        return Err(Error::conflict(
            "This workspace has no tags yet: make some (Settings › Tags), then ask for suggestions.",
        ));
    }
    let id = store.queue_suggestions(record_id, tag_ids, user_id).await?;
    Ok(SuggestionsQueued {
        id,
        record_id,
        status: "queued".to_owned(),
    })
}

/// Stores the engine's suggestions for a record, each one passage of one utterance with
/// one tag, skipping those over words the record has a highlight with that tag on
/// already (made, suggested or rejected) and those that no longer fit the transcript.
/// Answers how many were stored.
pub async fn store_suggestions(
    store: &Store,
    record_id: Uuid,
    requested_by: Option<Uuid>,
    suggestions: &[Suggestion],
    utterances: &[Utterance],
    provenance: &crate::domain::usage::Provenance,
) -> anyhow::Result<usize> {
    let mut stored = 0;
    for suggestion in suggestions {
        let Some(utterance) = utterances.iter().find(|u| u.id == suggestion.utterance_id) else {
            continue;
        };
        let Some(quote) = slice_chars(&utterance.text, suggestion.from, suggestion.to) else {
            continue;
        };
        if quote.trim().is_empty()
            || store
                .highlighted_with(
                    record_id,
                    suggestion.utterance_id,
                    (suggestion.from as i64, suggestion.to as i64),
                    suggestion.tag_id,
                )
                .await?
        {
            continue;
        }
        let anchor = |offset: usize| Anchor {
            utterance_id: suggestion.utterance_id,
            offset: offset as i64,
        };
        store
            .create_highlight(NewHighlight {
                record_id,
                start: anchor(suggestion.from),
                end: anchor(suggestion.to),
                quote,
                note: "",
                status: HighlightStatus::Suggested,
                tag_ids: &[suggestion.tag_id],
                created_by: requested_by,
                provenance: Some(provenance),
            })
            .await?;
        stored += 1;
    }
    Ok(stored)
}

/// Deletes a highlight, or rejects a suggestion (it is not suggested again).
pub async fn delete(store: &Store, caller: &Caller, highlight_id: Uuid) -> Result<()> {
    let user_id = caller.id();
    caller
        .require(store, Target::Highlight(highlight_id), Need::Write)
        .await?;
    if store.delete_highlight(user_id, highlight_id).await? {
        Ok(())
    } else {
        Err(Error::not_found("Highlight"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_many_tags_is_a_list_too_long() {
        let Error::Invalid(issues) = too_many("tag_ids", 51, TAGS_MAX) else {
            panic!("a validation error");
        };
        assert_eq!(issues[0].kind, "too_long");
    }
}
