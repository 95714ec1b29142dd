//! The research repository in the console: highlighting a transcript (by selecting its
//! words, by keyboard, or a whole turn without the script), accepting or rejecting
//! suggestions, a project's highlights on a board by tag, its insights, and search across
//! the workspace. Every change goes through the same use cases as the JSON API
//! (`crate::app::research`).

use std::collections::HashMap;

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use uuid::Uuid;

use super::settings::{Message, on_the_form};
use super::{Button, ProjectNav, Shell, project_for, render};
use crate::app::research::highlights::HighlightFilter;
use crate::app::research::{highlights, insights, search, tags, themes};
use crate::domain::highlight::{Anchor, Highlight, HighlightCreate, HighlightStatus, HighlightUpdate};
use crate::domain::insight::{Insight, InsightCreate};
use crate::domain::paging::PageRequest;
use crate::domain::patch::Patch;
use crate::domain::project::Project;
use crate::domain::search::SearchHit;
use crate::domain::tag::Tag;
use crate::domain::theme::{ThemeAccept, ThemeProposal};
use crate::domain::workspace::Need;
use crate::doors::console::session::{Change, Fields, Visitor};
use crate::doors::console::{PageResult, page};
use crate::error::Error;
use crate::services::Services;

/// A piece of an utterance's text, and the highlights over it.
pub struct Segment {
    pub text: String,
    /// Space-separated ids of the highlights over it (empty: none).
    pub ids: String,
    /// Whether only suggestions cover it.
    pub suggested: bool,
}

/// An utterance's text cut where highlights begin and end (suggestions included,
/// detached highlights left out: their words are gone).
pub fn segments(utterance_id: i64, text: &str, highlights: &[Highlight]) -> Vec<Segment> {
    let chars: Vec<char> = text.chars().collect();
    let spans: Vec<(usize, usize, &Highlight)> = highlights
        .iter()
        .filter(|h| h.status != HighlightStatus::Detached)
        .filter(|h| h.start.utterance_id <= utterance_id && utterance_id <= h.end.utterance_id)
        .map(|h| {
            let from = if h.start.utterance_id == utterance_id {
                h.start.offset.max(0) as usize
            } else {
                0
            };
            let to = if h.end.utterance_id == utterance_id {
                h.end.offset.max(0) as usize
            } else {
                chars.len()
            };
            (from.min(chars.len()), to.min(chars.len()), h)
        })
        .filter(|(from, to, _)| from < to)
        .collect();
    let mut cuts: Vec<usize> = vec![0, chars.len()];
    for (from, to, _) in &spans {
        cuts.push(*from);
        cuts.push(*to);
    }
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2)
        .map(|pair| {
            let (from, to) = (pair[0], pair[1]);
            let over: Vec<&Highlight> = spans
                .iter()
                .filter(|(start, end, _)| *start <= from && to <= *end)
                .map(|(_, _, h)| *h)
                .collect();
            Segment {
                text: chars[from..to].iter().collect(),
                ids: over.iter().map(|h| h.id.to_string()).collect::<Vec<_>>().join(" "),
                suggested: !over.is_empty() && over.iter().all(|h| h.status == HighlightStatus::Suggested),
            }
        })
        .collect()
}

/// The form fields of a highlight: its span (or a whole turn), its tags and note.
#[derive(Default)]
struct HighlightForm {
    start_utterance: Option<i64>,
    start_offset: Option<i64>,
    end_utterance: Option<i64>,
    end_offset: Option<i64>,
    /// A whole turn, when the script did not place the span.
    utterance: Option<i64>,
    tag_ids: Vec<Uuid>,
    note: String,
    back: String,
}

fn read_form(fields: &Fields) -> Result<HighlightForm, Error> {
    let mut form = HighlightForm::default();
    let number = |value: &str| value.trim().parse::<i64>().ok();
    for (key, value) in fields {
        match key.as_str() {
            "start_utterance" => form.start_utterance = number(value),
            "start_offset" => form.start_offset = number(value),
            "end_utterance" => form.end_utterance = number(value),
            "end_offset" => form.end_offset = number(value),
            "utterance" => form.utterance = number(value),
            "tag_ids" => form.tag_ids.push(
                value
                    .parse()
                    .map_err(|_| Error::conflict("The form sent a tag that is not an id; reload the page"))?,
            ),
            "note" => form.note = value.clone(),
            "back" => form.back = value.clone(),
            _ => {}
        }
    }
    Ok(form)
}

/// Where a form returns to: a page of the console, never elsewhere.
fn back_to(back: &str, fallback: String) -> String {
    if back.starts_with('/') && !back.starts_with("//") && !back.contains('\\') {
        back.to_owned()
    } else {
        fallback
    }
}

async fn create_highlight(
    State(services): State<Services>,
    Path(record_id): Path<Uuid>,
    Change(visitor, fields): Change<Fields>,
) -> PageResult {
    let form = read_form(&fields)?;
    let (start, end) = match (
        form.start_utterance,
        form.start_offset,
        form.end_utterance,
        form.end_offset,
    ) {
        (Some(su), Some(so), Some(eu), Some(eo)) => (
            Anchor {
                utterance_id: su,
                offset: so,
            },
            Anchor {
                utterance_id: eu,
                offset: eo,
            },
        ),
        _ => {
            let Some(turn) = form.utterance else {
                return Err(Error::conflict(
                    "Select the words to highlight in the transcript, or choose a turn, then highlight.",
                )
                .into());
            };
            let length = crate::app::records::utterance_length(&services, &visitor.caller, record_id, turn).await?;
            (
                Anchor {
                    utterance_id: turn,
                    offset: 0,
                },
                Anchor {
                    utterance_id: turn,
                    offset: length,
                },
            )
        }
    };
    let body = HighlightCreate {
        start,
        end,
        tag_ids: form.tag_ids,
        note: Some(form.note),
    };
    let made = highlights::create(&services.store, &visitor.caller, record_id, body).await?;
    Ok(Redirect::to(&format!("/r/{record_id}?done=highlighted#u{}", made.start.utterance_id)).into_response())
}

async fn suggest(
    State(services): State<Services>,
    Path(record_id): Path<Uuid>,
    Change(visitor, fields): Change<Fields>,
) -> PageResult {
    let form = read_form(&fields)?;
    highlights::suggest(&services, &visitor.caller, record_id, &form.tag_ids).await?;
    Ok(Redirect::to(&format!("/r/{record_id}?done=suggesting#highlights")).into_response())
}

/// Accepts a suggestion, or saves a highlight's tags and note.
async fn update_highlight(
    State(services): State<Services>,
    Path(highlight_id): Path<Uuid>,
    Change(visitor, fields): Change<Fields>,
) -> PageResult {
    let form = read_form(&fields)?;
    let accept = fields.iter().any(|(key, value)| key == "accept" && value == "1");
    let update = if accept {
        HighlightUpdate {
            status: Patch::Value(HighlightStatus::Ok),
            ..HighlightUpdate::default()
        }
    } else {
        HighlightUpdate {
            tag_ids: Patch::Value(form.tag_ids),
            note: Patch::Value(form.note),
            ..HighlightUpdate::default()
        }
    };
    let saved = highlights::update(&services.store, &visitor.caller, highlight_id, update).await?;
    let back = back_to(&form.back, format!("/r/{}#highlights", saved.record_id));
    Ok(Redirect::to(&back).into_response())
}

/// Deletes a highlight, or rejects a suggestion.
async fn delete_highlight(
    State(services): State<Services>,
    Path(highlight_id): Path<Uuid>,
    Change(visitor, fields): Change<Fields>,
) -> PageResult {
    let form = read_form(&fields)?;
    let highlight = highlights::get(&services.store, &visitor.caller, highlight_id).await?;
    highlights::delete(&services.store, &visitor.caller, highlight_id).await?;
    let back = back_to(&form.back, format!("/r/{}#highlights", highlight.record_id));
    Ok(Redirect::to(&back).into_response())
}

/// A column of the board: a tag and its highlights (`tag: None` for the untagged).
struct Column {
    tag: Option<Tag>,
    highlights: Vec<Highlight>,
}

#[derive(Template)]
#[template(path = "highlights_board.html")]
struct BoardPage {
    shell: Shell,
    nav: ProjectNav,
    project: Project,
    csrf: String,
    can_write: bool,
    columns: Vec<Column>,
    tags: Vec<Tag>,
    tag_filter: Option<Uuid>,
    speaker: String,
    status: String,
    total: usize,
    /// Where the cards' forms return.
    back: String,
    /// Themes proposed for the untagged highlights, waiting for a person.
    themes: Vec<ThemeProposal>,
    /// How many highlights no tag files.
    untagged: usize,
    /// Themes were just asked for.
    asked: bool,
}

#[derive(serde::Deserialize, Default)]
struct BoardQuery {
    #[serde(default)]
    tag_id: String,
    #[serde(default)]
    speaker: String,
    #[serde(default)]
    status: String,
    /// `asked` after themes were asked for.
    #[serde(default)]
    themes: String,
}

/// Highlights shown on a board, and insights on their page, at most.
const BOARD_MAX: usize = 500;

/// The first [`BOARD_MAX`] of a list.
fn most<K>() -> PageRequest<K> {
    PageRequest {
        limit: BOARD_MAX,
        after: None,
    }
}

async fn board(
    State(services): State<Services>,
    visitor: Visitor,
    Path(project_id): Path<Uuid>,
    Query(query): Query<BoardQuery>,
) -> PageResult {
    let (role, project) = project_for(&services, &visitor, project_id, Need::Read).await?;
    let tag_filter = query.tag_id.trim().parse::<Uuid>().ok();
    let status = HighlightStatus::parse(query.status.trim());
    let filter = HighlightFilter {
        tag_id: tag_filter,
        speaker: Some(query.speaker.trim().to_owned()).filter(|s| !s.is_empty()),
        status,
        ..HighlightFilter::default()
    };
    let page_request = most();
    let found = highlights::of_project(&services.store, &visitor.caller, project_id, filter, &page_request).await?;
    let all_tags = tags::list(&services.store, &visitor.caller, project.workspace_id).await?;
    let mut columns: Vec<Column> = all_tags
        .iter()
        .filter(|tag| tag_filter.is_none_or(|id| id == tag.id))
        .map(|tag| Column {
            tag: Some(tag.clone()),
            highlights: found
                .items
                .iter()
                .filter(|h| h.tags.iter().any(|t| t.id == tag.id))
                .cloned()
                .collect(),
        })
        .filter(|column| !column.highlights.is_empty())
        .collect();
    let untagged: Vec<Highlight> = found.items.iter().filter(|h| h.tags.is_empty()).cloned().collect();
    let untagged_count = untagged.iter().filter(|h| h.status == HighlightStatus::Ok).count();
    let proposals = themes::list(&services.store, &visitor.caller, project_id).await?;
    if !untagged.is_empty() {
        columns.push(Column {
            tag: None,
            highlights: untagged,
        });
    }
    let html = BoardPage {
        shell: Shell::of(&visitor),
        nav: ProjectNav::new(project_id, "highlights"),
        csrf: visitor.csrf.clone(),
        can_write: role.allows(Need::Write),
        total: found.items.len(),
        back: format!("/p/{project_id}/highlights"),
        columns,
        tags: all_tags,
        tag_filter,
        speaker: query.speaker.trim().to_owned(),
        status: status.map_or("", HighlightStatus::as_str).to_owned(),
        themes: proposals,
        untagged: untagged_count,
        asked: query.themes == "asked",
        project,
    };
    Ok(page(StatusCode::OK, render(&html)))
}

/// Asks for themes over the project's untagged highlights.
async fn propose_themes(
    State(services): State<Services>,
    Path(project_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    themes::request(&services, &visitor.caller, project_id).await?;
    Ok(Redirect::to(&format!("/p/{project_id}/highlights?themes=asked#themes")).into_response())
}

/// Accepts a proposed theme under the name the form gives, or rejects it.
async fn decide_theme(
    State(services): State<Services>,
    Path((theme_id, decision)): Path<(Uuid, String)>,
    Change(visitor, fields): Change<Fields>,
) -> PageResult {
    let mut name = None;
    for (key, value) in fields {
        if key == "name" {
            name = Some(value);
        }
    }
    let store = &services.store;
    let project_id = themes::project_of(store, &visitor.caller, theme_id).await?;
    match decision.as_str() {
        "accept" => {
            let body = ThemeAccept {
                name,
                description: None,
            };
            themes::accept(store, &visitor.caller, theme_id, body).await?;
        }
        "reject" => themes::reject(store, &visitor.caller, theme_id).await?,
        _ => return Err(Error::not_found("Page").into()),
    }
    Ok(Redirect::to(&format!("/p/{project_id}/highlights#themes")).into_response())
}

#[derive(Template)]
#[template(path = "insights.html")]
struct InsightsPage {
    shell: Shell,
    nav: ProjectNav,
    project: Project,
    csrf: String,
    can_write: bool,
    insights: Vec<Insight>,
    /// The project's highlights a new insight may cite.
    evidence: Vec<Highlight>,
    /// The project's reports an insight may join: id and title.
    reports: Vec<(Uuid, String)>,
    /// The reports including each insight.
    included: HashMap<Uuid, Vec<(Uuid, String)>>,
    message: Message,
}

impl InsightsPage {
    fn reports_of(&self, insight_id: &Uuid) -> &[(Uuid, String)] {
        self.included.get(insight_id).map_or(&[], Vec::as_slice)
    }

    /// The reports the insight may still join.
    fn reports_for(&self, insight_id: &Uuid) -> Vec<&(Uuid, String)> {
        let included = self.reports_of(insight_id);
        self.reports
            .iter()
            .filter(|(id, _)| !included.iter().any(|(other, _)| other == id))
            .collect()
    }
}

async fn insights_page(
    services: &Services,
    visitor: &Visitor,
    project_id: Uuid,
    status: StatusCode,
    message: Message,
) -> PageResult {
    let (role, project) = project_for(services, visitor, project_id, Need::Read).await?;
    let list = insights::list(&services.store, &visitor.caller, project_id, &most()).await?;
    let evidence = highlights::of_project(
        &services.store,
        &visitor.caller,
        project_id,
        HighlightFilter {
            status: Some(HighlightStatus::Ok),
            ..HighlightFilter::default()
        },
        &most(),
    )
    .await?;
    let reports = crate::app::reports::list(services, &visitor.caller, project_id, false, &most())
        .await?
        .items
        .into_iter()
        .map(|report| (report.id, report.title))
        .collect();
    let ids: Vec<Uuid> = list.items.iter().map(|insight| insight.id).collect();
    let included = crate::app::reports::including(services, &visitor.caller, project_id, &ids).await?;
    let html = InsightsPage {
        shell: Shell::of(visitor),
        nav: ProjectNav::new(project_id, "insights"),
        csrf: visitor.csrf.clone(),
        can_write: role.allows(Need::Write),
        insights: list.items,
        evidence: evidence.items,
        reports,
        included,
        message,
        project,
    };
    Ok(page(status, render(&html)))
}

async fn show_insights(State(services): State<Services>, visitor: Visitor, Path(project_id): Path<Uuid>) -> PageResult {
    insights_page(&services, &visitor, project_id, StatusCode::OK, Message::default()).await
}

async fn create_insight(
    State(services): State<Services>,
    Path(project_id): Path<Uuid>,
    Change(visitor, fields): Change<Fields>,
) -> PageResult {
    let mut draft = InsightCreate {
        title: String::new(),
        body: None,
        highlight_ids: Vec::new(),
    };
    for (key, value) in fields {
        match key.as_str() {
            "title" => draft.title = value,
            "body" => draft.body = Some(value),
            "highlight_ids" => {
                if let Ok(id) = value.parse() {
                    draft.highlight_ids.push(id);
                }
            }
            _ => {}
        }
    }
    match insights::create(&services.store, &visitor.caller, project_id, draft).await {
        Ok(made) => Ok(Redirect::to(&format!("/p/{project_id}/insights#insight-{}", made.id)).into_response()),
        Err(error) if on_the_form(&error) => {
            let status = crate::doors::status(&error);
            insights_page(&services, &visitor, project_id, status, Message::error(&error)).await
        }
        Err(error) => Err(error.into()),
    }
}

async fn delete_insight(
    State(services): State<Services>,
    Path(insight_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    let insight = insights::get(&services.store, &visitor.caller, insight_id).await?;
    insights::delete(&services.store, &visitor.caller, insight_id).await?;
    Ok(Redirect::to(&format!("/p/{}/insights", insight.project_id)).into_response())
}

/// Includes an insight in a report of its project, or takes it out (`take_out`).
async fn insight_in_report(
    State(services): State<Services>,
    Path(insight_id): Path<Uuid>,
    Change(visitor, fields): Change<Fields>,
) -> PageResult {
    let (mut report_id, mut take_out) = (None, false);
    for (key, value) in &fields {
        match key.as_str() {
            "report_id" => report_id = value.parse::<Uuid>().ok(),
            "take_out" => take_out = true,
            _ => {}
        }
    }
    let insight = insights::get(&services.store, &visitor.caller, insight_id).await?;
    let project_id = insight.project_id;
    let report_id = report_id.ok_or_else(|| Error::not_found("Report"))?;
    let store = &services.store;
    if take_out {
        crate::app::reports::exclude_insight(store, &visitor.caller, project_id, report_id, insight_id).await?;
    } else {
        crate::app::reports::include_insight(store, &visitor.caller, project_id, report_id, insight_id).await?;
    }
    Ok(Redirect::to(&format!("/p/{project_id}/insights#insight-{insight_id}")).into_response())
}

#[derive(Template)]
#[template(path = "search.html")]
struct SearchPage {
    shell: Shell,
    q: String,
    kind: String,
    project_id: Option<Uuid>,
    projects: Vec<Project>,
    hits: Vec<SearchHit>,
    total: usize,
    searched: bool,
    next: Option<String>,
    error: Option<String>,
}

/// Hits on a page of the search page.
const SEARCH_PAGE: usize = 20;

async fn search_page(State(services): State<Services>, visitor: Visitor, RawQuery(raw): RawQuery) -> PageResult {
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(raw.as_deref().unwrap_or("").as_bytes())
        .map(|(key, value)| (key.into_owned(), value.trim().to_owned()))
        .collect();
    let field = |name: &str| {
        pairs
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.clone())
            .unwrap_or_default()
    };
    let q = field("q");
    let kind = field("kind");
    let project_id = field("project_id").parse::<Uuid>().ok();
    let offset = field("start").parse::<i64>().unwrap_or(0).max(0);
    let projects: Vec<Project> = crate::app::projects::list(&services, &visitor.caller)
        .await?
        .into_iter()
        .filter(|project| project.workspace_id == visitor.current.id)
        .collect();
    let (mut hits, mut total, mut next, mut error) = (Vec::new(), 0, None, None);
    let mut status = StatusCode::OK;
    if !q.is_empty() {
        let query = search::Query {
            q: q.clone(),
            workspace_id: Some(visitor.current.id),
            project_id,
            kind: crate::engines::search::index::Kind::parse(&kind),
            ..search::Query::default()
        };
        let request = PageRequest {
            limit: SEARCH_PAGE,
            after: Some(offset),
        };
        match search::search(&services, &visitor.caller, query, &request).await {
            Ok((results, more)) => {
                hits = results.hits;
                total = results.total;
                next = more.map(|start| {
                    let mut url = url::form_urlencoded::Serializer::new(String::new());
                    url.append_pair("q", &q);
                    if !kind.is_empty() {
                        url.append_pair("kind", &kind);
                    }
                    if let Some(project_id) = project_id {
                        url.append_pair("project_id", &project_id.to_string());
                    }
                    url.append_pair("start", &start.to_string());
                    format!("/search?{}", url.finish())
                });
            }
            Err(Error::Invalid(issues)) => {
                error = issues.first().map(|issue| issue.msg.clone());
            }
            // The index being built: said on the page, with the form to try again.
            Err(Error::Unavailable(detail)) => {
                error = Some(detail);
                status = StatusCode::SERVICE_UNAVAILABLE;
            }
            Err(other) => return Err(other.into()),
        }
    }
    let html = SearchPage {
        shell: Shell::of(&visitor),
        searched: !q.is_empty(),
        q,
        kind,
        project_id,
        projects,
        hits,
        total,
        next,
        error,
    };
    Ok(page(status, render(&html)))
}

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/r/{record_id}/highlights", post(create_highlight))
        .route("/r/{record_id}/highlights/suggest", post(suggest))
        .route("/h/{highlight_id}", post(update_highlight))
        .route("/h/{highlight_id}/delete", post(delete_highlight))
        .route("/p/{project_id}/highlights", get(board))
        .route("/p/{project_id}/insights", get(show_insights).post(create_insight))
        .route("/i/{insight_id}/delete", post(delete_insight))
        .route("/i/{insight_id}/report", post(insight_in_report))
        .route("/p/{project_id}/themes", post(propose_themes))
        .route("/t/{theme_id}/{decision}", post(decide_theme))
        // Reached as `/search` by a browser asking for HTML (the JSON API's door sends it here).
        .route("/console/search", get(search_page))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn highlight(from: (i64, i64), to: (i64, i64), status: HighlightStatus) -> Highlight {
        Highlight {
            id: Uuid::new_v4(),
            record_id: Uuid::nil(),
            record_name: String::new(),
            project_id: Uuid::nil(),
            start: Anchor {
                utterance_id: from.0,
                offset: from.1,
            },
            end: Anchor {
                utterance_id: to.0,
                offset: to.1,
            },
            quote: String::new(),
            speaker: String::new(),
            is_respondent: true,
            start_ms: None,
            tags: Vec::new(),
            note: String::new(),
            status,
            author_email: None,
            insights: Vec::new(),
            created_at: chrono::Utc::now(),
            updated_at: chrono::Utc::now(),
            provenance: None,
        }
    }

    #[test]
    fn an_utterance_is_cut_where_highlights_begin_and_end() {
        let made = highlight((1, 4), (2, 3), HighlightStatus::Ok);
        let offered = highlight((2, 0), (2, 9), HighlightStatus::Suggested);
        let gone = highlight((2, 0), (2, 5), HighlightStatus::Detached);
        let all = [made.clone(), offered.clone(), gone];
        let first = segments(1, "Ça coûte", &all);
        let texts: Vec<&str> = first.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts, ["Ça c", "oûte"]);
        assert_eq!(first[1].ids, made.id.to_string());
        let second = segments(2, "and then more", &all);
        let texts: Vec<&str> = second.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts, ["and", " then ", "more"]);
        assert_eq!(second[0].ids, format!("{} {}", made.id, offered.id));
        assert!(!second[0].suggested);
        assert!(second[1].suggested);
        assert!(second[2].ids.is_empty());
    }

    #[test]
    fn a_form_returns_only_to_a_console_page() {
        assert_eq!(back_to("/p/1/highlights", "/x".into()), "/p/1/highlights");
        assert_eq!(back_to("//evil.example", "/x".into()), "/x");
        assert_eq!(back_to("https://evil.example", "/x".into()), "/x");
        assert_eq!(back_to("/\\evil", "/x".into()), "/x");
    }
}
