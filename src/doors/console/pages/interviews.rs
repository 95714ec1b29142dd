//! A project's interviews: making links (rooms) for respondents, following their status
//! live, cancelling one, opening the record a completed interview became, and a preview
//! of the page respondents see. Rooms are made, listed and cancelled by the same use case
//! as the JSON API's (`interview::rooms`).

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::get;
use serde::Deserialize;
use uuid::Uuid;

use super::{Button, ConfirmDelete, ProjectNav, Shell};
use crate::app::interview::rooms;
use crate::domain::interview::{Room, RoomCreate, RoomStatus};
use crate::domain::paging::PageRequest;
use crate::domain::project::Project;
use crate::domain::workspace::Need;
use crate::doors::console::session::{Change, Visitor};
use crate::doors::console::{PageResult, page};
use crate::doors::respondent as respondent_page;
use crate::error::Error;
use crate::services::Services;

/// The languages the respondent's page speaks (`interview::page`); a room in another
/// language gets English page text, so the form offers only these.
const LANGUAGES: &[(&str, &str)] = &[
    ("en", "English"),
    ("de", "Deutsch"),
    ("fr", "Français"),
    ("es", "Español"),
    ("ru", "Русский"),
];

/// The create form as typed, kept to show again beside its errors.
#[derive(Deserialize, Clone)]
struct LinksForm {
    #[serde(default = "one")]
    count: String,
    #[serde(default = "thirty")]
    max_duration_minutes: String,
    #[serde(default = "seven")]
    expires_in_days: String,
    #[serde(default = "english")]
    language: String,
    #[serde(default)]
    topics_for_respondent: String,
    #[serde(default)]
    interview_guide_override: String,
}

fn one() -> String {
    "1".into()
}
fn thirty() -> String {
    "30".into()
}
fn seven() -> String {
    "7".into()
}
fn english() -> String {
    "en".into()
}

impl Default for LinksForm {
    fn default() -> Self {
        Self {
            count: one(),
            max_duration_minutes: thirty(),
            expires_in_days: seven(),
            language: english(),
            topics_for_respondent: String::new(),
            interview_guide_override: String::new(),
        }
    }
}

/// A field's problem, in words, for the summary and beside the field.
struct FieldError {
    field: &'static str,
    sentence: String,
}

impl LinksForm {
    /// What the form asks for, or what is wrong with it (every problem at once).
    fn rooms(&self, project_id: Uuid) -> Result<RoomCreate, Vec<FieldError>> {
        let mut errors = Vec::new();
        let mut number = |field: &'static str, value: &str, what: &str, max: i64| match value.trim().parse::<i64>() {
            Ok(n) if (1..=max).contains(&n) => Some(n),
            _ => {
                errors.push(FieldError {
                    field,
                    sentence: format!("Enter {what} between 1 and {max}"),
                });
                None
            }
        };
        let count = number("count", &self.count, "how many links to make", 100);
        let minutes = number(
            "max_duration_minutes",
            &self.max_duration_minutes,
            "a duration in minutes",
            240,
        );
        let days = number("expires_in_days", &self.expires_in_days, "a number of days", 90);
        if !LANGUAGES.iter().any(|(code, _)| *code == self.language) {
            errors.push(FieldError {
                field: "language",
                sentence: "Choose one of the languages offered".into(),
            });
        }
        if self.topics_for_respondent.chars().count() > 5000 {
            errors.push(FieldError {
                field: "topics_for_respondent",
                sentence: "Keep the topics under 5,000 characters".into(),
            });
        }
        if self.interview_guide_override.chars().count() > 50000 {
            errors.push(FieldError {
                field: "interview_guide_override",
                sentence: "Keep the interview guide under 50,000 characters".into(),
            });
        }
        let text = |value: &str| Some(value.trim().to_owned()).filter(|value| !value.is_empty());
        match (count, minutes, days) {
            (Some(count), Some(minutes), Some(days)) if errors.is_empty() => Ok(RoomCreate {
                project_id,
                count: Some(count),
                room_name: None,
                max_duration_minutes: Some(minutes),
                expires_in_days: Some(days),
                language: Some(self.language.clone()),
                topics_for_respondent: text(&self.topics_for_respondent),
                research_goals_override: None,
                interview_guide_override: text(&self.interview_guide_override),
            }),
            _ => Err(errors),
        }
    }
}

#[derive(Template)]
#[template(path = "interviews.html")]
struct InterviewsPage {
    shell: Shell,
    nav: ProjectNav,
    project: Project,
    rooms: Vec<Room>,
    /// How many of the newest rooms were just made (shown as new).
    created: usize,
    form: LinksForm,
    errors: Vec<FieldError>,
    languages: &'static [(&'static str, &'static str)],
    can_write: bool,
    csrf: String,
    /// Why new interviews wait: the workspace spent its budget for AI work.
    budget_spent: Option<String>,
}

impl InterviewsPage {
    /// The error of `field`, if it has one.
    fn error_of(&self, field: &str) -> Option<&str> {
        self.errors
            .iter()
            .find(|error| error.field == field)
            .map(|error| error.sentence.as_str())
    }

    /// Whether the room's link can still be used (so it is worth copying).
    fn open(&self, room: &Room) -> bool {
        matches!(room.status, RoomStatus::Pending | RoomStatus::Active)
    }
}

/// How many rooms the page lists (newest first); the JSON API pages through the rest.
const SHOWN: usize = 500;

async fn interviews_page(
    services: &Services,
    visitor: &Visitor,
    project_id: Uuid,
    form: LinksForm,
    errors: Vec<FieldError>,
    created: usize,
) -> PageResult {
    let (role, project) = super::project_for(services, visitor, project_id, Need::Read).await?;
    let shown = PageRequest {
        limit: SHOWN,
        after: None,
    };
    let rooms = rooms::list(services, &visitor.caller, Some(project_id), &shown)
        .await?
        .items;
    let budget_spent = crate::app::gate::project_budget_spent(services, project_id).await?;
    let status = if errors.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    let html = InterviewsPage {
        shell: Shell::of(visitor),
        nav: ProjectNav::new(project_id, "interviews"),
        project,
        created: created.min(rooms.len()),
        rooms,
        form,
        errors,
        languages: LANGUAGES,
        can_write: role.allows(Need::Write),
        csrf: visitor.csrf.clone(),
        budget_spent,
    };
    Ok(page(status, super::render(&html)))
}

#[derive(Deserialize)]
struct ShowQuery {
    created: Option<usize>,
}

async fn show(
    State(services): State<Services>,
    visitor: Visitor,
    Path(project_id): Path<Uuid>,
    Query(query): Query<ShowQuery>,
) -> PageResult {
    let created = query.created.unwrap_or(0);
    interviews_page(
        &services,
        &visitor,
        project_id,
        LinksForm::default(),
        Vec::new(),
        created,
    )
    .await
}

async fn create(
    State(services): State<Services>,
    Path(project_id): Path<Uuid>,
    Change(visitor, form): Change<LinksForm>,
) -> PageResult {
    let body = match form.rooms(project_id) {
        Ok(body) => body,
        Err(errors) => return interviews_page(&services, &visitor, project_id, form, errors, 0).await,
    };
    let made = rooms::create(&services, &visitor.caller, body).await?;
    Ok(Redirect::to(&format!("/p/{project_id}/interviews?created={}#rooms", made.len())).into_response())
}

async fn confirm_cancel(
    State(services): State<Services>,
    visitor: Visitor,
    Path((project_id, room_id)): Path<(Uuid, Uuid)>,
) -> PageResult {
    let room = rooms::writable_room(&services.store, &visitor.caller, project_id, room_id).await?;
    Ok(ConfirmDelete::ask(
        &visitor,
        format!("Cancel the interview link “{}”?", room.room_name),
        "Cancel the link",
        "The link stops working: the respondent is told the interview was cancelled, and an interview in \
         progress stops without keeping a record. The link stays in the list as cancelled. This cannot be undone."
            .to_owned(),
        format!("/p/{project_id}/interviews/{room_id}/cancel"),
        format!("/p/{project_id}/interviews"),
    ))
}

async fn cancel(
    State(services): State<Services>,
    Path((project_id, room_id)): Path<(Uuid, Uuid)>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    let room = rooms::owned_room(&services.store, &visitor.caller, room_id).await?;
    if room.project_id != project_id {
        return Err(Error::not_found("Interview room").into());
    }
    rooms::cancel(&services, &visitor.caller, room_id).await?;
    Ok(Redirect::to(&format!("/p/{project_id}/interviews#rooms")).into_response())
}

#[derive(Deserialize)]
struct PreviewQuery {
    language: Option<String>,
    topics_for_respondent: Option<String>,
    max_duration_minutes: Option<i64>,
}

/// The respondent's page for the project as the create form would set it up, from the
/// respondent page's own renderer; no room is made and nothing can be joined.
async fn preview(
    State(services): State<Services>,
    visitor: Visitor,
    Path(project_id): Path<Uuid>,
    Query(query): Query<PreviewQuery>,
) -> PageResult {
    let (_, project) = super::project_for(&services, &visitor, project_id, Need::Read).await?;
    let language = query.language.unwrap_or_else(english);
    let topics = query.topics_for_respondent.unwrap_or_default();
    let settings = crate::app::protection::settings(&services.store, &visitor.caller, project.workspace_id).await?;
    let html = respondent_page::render_preview(
        &respondent_page::PageRoom {
            token: "preview",
            room_name: &project.name,
            project_name: &project.name,
            status: RoomStatus::Pending.as_str(),
            language: &language,
            topics_for_respondent: &topics,
            max_duration_minutes: query.max_duration_minutes.unwrap_or(30).clamp(1, 240),
            consent_text: settings.consent_text.as_deref(),
        },
        &format!("/p/{project_id}/interviews"),
    );
    Ok(page(StatusCode::OK, html))
}

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/p/{project_id}/interviews", get(show).post(create))
        .route("/p/{project_id}/interviews/preview", get(preview))
        .route(
            "/p/{project_id}/interviews/{room_id}/cancel",
            get(confirm_cancel).post(cancel),
        )
}
