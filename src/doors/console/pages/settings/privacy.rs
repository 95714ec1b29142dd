//! The workspace's privacy and cost: whether personal data is pseudonymised before a
//! model sees it, the names it counts as personal, the consent text respondents accept,
//! retention, the monthly budget, and this month's AI usage. Every member reads it;
//! admins change it through the same use case as the JSON API (`trust`).

use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::get;
use serde::Deserialize;

use super::{Done, Message, on_the_form};
use crate::app::{gate, protection};
use crate::domain::patch::Patch;
use crate::domain::usage::UsageReport;
use crate::domain::workspace::{Need, Settings, SettingsUpdate};
use crate::doors::console::pages::{SettingsNav, Shell, render};
use crate::doors::console::session::{Change, Visitor};
use crate::doors::console::{PageResult, page};
use crate::error::{Error, ValidationIssue};
use crate::services::Services;

const DONE: &[(&str, &str)] = &[("saved", "The privacy and cost settings are saved.")];

#[derive(Template)]
#[template(path = "settings_privacy.html")]
struct PrivacyPage {
    shell: Shell,
    nav: SettingsNav,
    csrf: String,
    can_manage: bool,
    settings: Settings,
    /// The listed names, one per line, as the form shows them.
    names: String,
    usage: UsageReport,
    message: Message,
}

impl PrivacyPage {
    fn money(&self, amount: &f64) -> String {
        format!("{amount:.2} {}", self.usage.currency)
    }

    fn number(&self, value: &Option<i64>) -> String {
        value.map(|v| v.to_string()).unwrap_or_default()
    }

    /// "November 2026".
    fn month_name(&self) -> String {
        chrono::NaiveDate::parse_from_str(&format!("{}-01", self.usage.month), "%Y-%m-%d")
            .map(|day| day.format("%B %Y").to_string())
            .unwrap_or_else(|_| self.usage.month.clone())
    }

    fn budget(&self) -> String {
        self.settings.monthly_budget.map(|b| b.to_string()).unwrap_or_default()
    }
}

async fn render_page(services: &Services, visitor: &Visitor, status: StatusCode, message: Message) -> PageResult {
    let workspace_id = visitor.current.id;
    let (settings, usage) = tokio::try_join!(
        protection::settings(&services.store, &visitor.caller, workspace_id),
        gate::usage(&services.store, &visitor.caller, workspace_id, None),
    )?;
    let html = PrivacyPage {
        shell: Shell::of(visitor),
        nav: SettingsNav::new(visitor, "privacy"),
        csrf: visitor.csrf.clone(),
        can_manage: visitor.current.role.allows(Need::Manage),
        names: settings.known_names.join("\n"),
        settings,
        usage,
        message,
    };
    Ok(page(status, render(&html)))
}

async fn show(State(services): State<Services>, visitor: Visitor, Query(done): Query<Done>) -> PageResult {
    render_page(&services, &visitor, StatusCode::OK, Message::done(&done, DONE)).await
}

#[derive(Deserialize)]
struct PrivacyForm {
    /// A checkbox: sent only when ticked.
    #[serde(default)]
    pseudonymise: Option<String>,
    #[serde(default)]
    known_names: String,
    #[serde(default)]
    consent_text: String,
    #[serde(default)]
    retention_recordings_days: String,
    #[serde(default)]
    retention_records_days: String,
    #[serde(default)]
    monthly_budget: String,
    #[serde(default)]
    currency: String,
}

/// A number field: empty is none; anything else must be a number.
fn number<T: std::str::FromStr>(field: &str, raw: &str, issues: &mut Vec<ValidationIssue>) -> Patch<T> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Patch::Null;
    }
    match raw.replace(',', ".").parse() {
        Ok(value) => Patch::Value(value),
        Err(_) => {
            issues.push(ValidationIssue::value_error(
                vec!["body".into(), field.into()],
                &format!("the {} must be a number, or empty", field.replace('_', " ")),
            ));
            Patch::Missing
        }
    }
}

async fn save(State(services): State<Services>, Change(visitor, form): Change<PrivacyForm>) -> PageResult {
    let mut issues = Vec::new();
    let update = SettingsUpdate {
        pseudonymise: Patch::Value(form.pseudonymise.is_some()),
        known_names: Patch::Value(form.known_names.lines().map(str::to_owned).collect()),
        retention_recordings_days: number(
            "retention_recordings_days",
            &form.retention_recordings_days,
            &mut issues,
        ),
        retention_records_days: number("retention_records_days", &form.retention_records_days, &mut issues),
        consent_text: Patch::Value(form.consent_text.replace("\r\n", "\n")),
        monthly_budget: number("monthly_budget", &form.monthly_budget, &mut issues),
        currency: Patch::Value(form.currency.trim().to_uppercase()),
    };
    let saved = if issues.is_empty() {
        protection::update_settings(&services.store, &visitor.caller, visitor.current.id, update)
            .await
            .map(drop)
    } else {
        Err(Error::validation(issues))
    };
    match saved {
        Ok(()) => Ok(Redirect::to("/settings/privacy?done=saved").into_response()),
        Err(error) if on_the_form(&error) => {
            let status = crate::doors::status(&error);
            render_page(&services, &visitor, status, Message::error(&error)).await
        }
        Err(error) => Err(error.into()),
    }
}

pub fn routes() -> Router<Services> {
    Router::new().route("/settings/privacy", get(show).post(save))
}
