//! Trust: what a workspace decides about its participants' data (pseudonymisation, the
//! names it counts as personal, retention, consent, budget), and the cloaks that keep
//! personal data from the models its work calls.

pub mod erasure;
pub mod provenance;
pub mod redaction;

use std::sync::Arc;

use chrono::{DateTime, Datelike, TimeZone, Utc};
use uuid::Uuid;

use crate::accounts::access;
use crate::accounts::audit::{self, Actor};
use crate::ai::Engine;
use crate::ai::Usage;
use crate::ai::openai::Meter;
use crate::domain::now;
use crate::domain::patch::Patch;
use crate::domain::privacy::{PiiCounts, PiiReport};
use crate::domain::usage::{UsageKind, UsageReport};
use crate::domain::workspace::{Need, Settings, SettingsUpdate};
use crate::error::{ApiError, ApiResult, ValidationIssue};
use crate::privacy::{Cloak, Detector, Kind, Known};
use crate::services::Services;
use crate::store::Charge;
use crate::store::{Store, Target};

/// A workspace's settings, for any member.
pub async fn settings(store: &Store, user_id: Uuid, workspace_id: Uuid) -> ApiResult<Settings> {
    access::require(store, user_id, Target::Workspace(workspace_id), Need::Read).await?;
    Ok(store.workspace_settings(workspace_id).await?)
}

/// Changes a workspace's settings (admins and owners); a field left out stays. The
/// audit entry names the fields changed, never their values.
pub async fn update_settings(
    store: &Store,
    user_id: Uuid,
    actor: Actor,
    workspace_id: Uuid,
    update: SettingsUpdate,
) -> ApiResult<Settings> {
    access::require(store, user_id, Target::Workspace(workspace_id), Need::Manage).await?;
    check_update(&update)?;
    let before = store.workspace_settings(workspace_id).await?;
    let mut after = before.clone();
    if let Patch::Value(on) = update.pseudonymise {
        after.pseudonymise = on;
    }
    if let Patch::Value(names) = update.known_names {
        // Spaces folded, blanks and repeats left out.
        let mut kept: Vec<String> = Vec::new();
        for name in &names {
            let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
            if !name.is_empty() && !kept.contains(&name) {
                kept.push(name);
            }
        }
        after.known_names = kept;
    }
    nullable(update.retention_recordings_days, &mut after.retention_recordings_days);
    nullable(update.retention_records_days, &mut after.retention_records_days);
    let consent = match update.consent_text {
        Patch::Value(text) if text.trim().is_empty() => Patch::Null,
        Patch::Value(text) => Patch::Value(text.trim().to_owned()),
        other => other,
    };
    nullable(consent, &mut after.consent_text);
    nullable(update.monthly_budget, &mut after.monthly_budget);
    if let Patch::Value(currency) = update.currency {
        after.currency = currency;
    }
    let saved = store.save_workspace_settings(workspace_id, &after).await?;
    let changed: Vec<&str> = [
        ("pseudonymise", before.pseudonymise != saved.pseudonymise),
        ("known_names", before.known_names != saved.known_names),
        (
            "retention_recordings_days",
            before.retention_recordings_days != saved.retention_recordings_days,
        ),
        (
            "retention_records_days",
            before.retention_records_days != saved.retention_records_days,
        ),
        ("consent_text", before.consent_text != saved.consent_text),
        ("monthly_budget", before.monthly_budget != saved.monthly_budget),
        ("currency", before.currency != saved.currency),
    ]
    .into_iter()
    .filter_map(|(field, changed)| changed.then_some(field))
    .collect();
    if !changed.is_empty() {
        audit::record(
            store,
            audit::Entry {
                workspace_id: Some(workspace_id),
                actor,
                action: "settings.changed",
                target: Some(("workspace", workspace_id.to_string())),
                detail: serde_json::json!({ "fields": changed, "pseudonymise": saved.pseudonymise }),
            },
        )
        .await?;
    }
    Ok(saved)
}

/// The limits the API document's schema states, checked again for the doors without one
/// (a console form): every problem at once.
fn check_update(update: &SettingsUpdate) -> ApiResult<()> {
    let mut issues = Vec::new();
    let mut problem = |field: &str, sentence: &str| {
        issues.push(ValidationIssue::value_error(
            vec!["body".into(), field.into()],
            sentence,
        ));
    };
    for (field, days) in [
        ("retention_recordings_days", &update.retention_recordings_days),
        ("retention_records_days", &update.retention_records_days),
    ] {
        if days.as_value().is_some_and(|d| !(1..=36_500).contains(d)) {
            problem(field, "a number of days from 1 to 36500, or none to keep everything");
        }
    }
    if update
        .monthly_budget
        .as_value()
        .is_some_and(|b| !b.is_finite() || !(0.0..=1e9).contains(b))
    {
        problem("monthly_budget", "an amount from 0 to 1000000000, or none for no limit");
    }
    if update
        .currency
        .as_value()
        .is_some_and(|c| c.len() != 3 || !c.chars().all(|c| c.is_ascii_uppercase()))
    {
        problem(
            "currency",
            "a currency code of three capital letters, such as USD or EUR",
        );
    }
    if update
        .consent_text
        .as_value()
        .is_some_and(|t| t.chars().count() > 20_000)
    {
        problem("consent_text", "a consent text of 20000 characters at most");
    }
    if update.known_names.as_value().is_some_and(|n| n.len() > 500) {
        problem("known_names", "500 names at most");
    }
    if issues.is_empty() {
        Ok(())
    } else {
        Err(ApiError::validation(issues))
    }
}

fn nullable<T>(patch: Patch<T>, field: &mut Option<T>) {
    match patch {
        Patch::Missing => {}
        Patch::Null => *field = None,
        Patch::Value(value) => *field = Some(value),
    }
}

/// What a piece of work sends a model, as the cloak needs to know it: the speakers
/// (personal names unless they name a role), the labels that may be names as a whole
/// (the records' names, which citations carry), and the texts, in order.
#[derive(Debug, Clone, Default)]
pub struct Material<'a> {
    /// Names known to be personal beyond the speakers: the workspace's respondents.
    pub people: Vec<String>,
    /// Addresses whose local parts spell names: the workspace's members and invitees.
    pub addresses: Vec<String>,
    pub speakers: Vec<&'a str>,
    pub labels: Vec<&'a str>,
    pub texts: Vec<&'a str>,
}

/// The names a workspace's work counts as personal: its list, the speakers', and the
/// labels.
pub fn known_names(settings: &Settings, material: &Material<'_>) -> Known {
    let mut known = Known::default();
    for name in &settings.known_names {
        known.add_listed(name);
    }
    for name in &material.people {
        known.add(name);
    }
    for address in &material.addresses {
        known.add_from_address(address);
    }
    for speaker in &material.speakers {
        known.add_speaker(speaker);
    }
    for label in &material.labels {
        known.add_label(label);
    }
    known
}

/// The cloak for work on this material: off when the workspace turned pseudonymisation
/// off; else seeded with the material in order, so that each value's placeholder is the
/// material's own (the speakers first, in the order they speak).
pub fn cloak(settings: &Settings, material: &Material<'_>) -> Cloak {
    if !settings.pseudonymise {
        return Cloak::off();
    }
    let known = known_names(settings, material);
    let texts: Vec<&str> = material
        .speakers
        .iter()
        .chain(&material.labels)
        .chain(&material.texts)
        .copied()
        .collect();
    Cloak::new(known, &texts)
}

/// The engine for work on a project's material: cloaked as its workspace says, and
/// charging its calls to the workspace as `kind`.
pub async fn engine_for_project(
    services: &Services,
    project_id: Uuid,
    kind: UsageKind,
    material: &Material<'_>,
) -> anyhow::Result<Engine> {
    Ok(engine_for(services, project_id, kind, material, false).await?)
}

/// [`engine_for_project`] for new work a person asks for (a chat question): refused with
/// 402 past the workspace's budget, with its settings read once for both.
pub async fn engine_for_new_work(
    services: &Services,
    project_id: Uuid,
    kind: UsageKind,
    material: &Material<'_>,
) -> ApiResult<Engine> {
    engine_for(services, project_id, kind, material, true).await
}

async fn engine_for(
    services: &Services,
    project_id: Uuid,
    kind: UsageKind,
    material: &Material<'_>,
    check_budget: bool,
) -> ApiResult<Engine> {
    if matches!(services.engine, Engine::Offline) {
        return Ok(Engine::Offline);
    }
    let (workspace_id, settings) = services.store.project_settings(project_id).await?;
    if let (true, Some(workspace_id)) = (check_budget, workspace_id) {
        within_budget(services, workspace_id, &settings).await?;
    }
    let meter = workspace_id.map(|workspace_id| meter(services, workspace_id, Some(project_id), kind));
    let material = with_people(services, workspace_id.as_slice(), &settings, material).await?;
    Ok(services
        .engine
        .for_work(cloak_off_thread(settings, &material).await?, meter))
}

/// The material with the people its workspaces know of, whose names are personal in any
/// record (a respondent of one interview named in another, a member by name).
async fn with_people<'a>(
    services: &Services,
    workspace_ids: &[Uuid],
    settings: &Settings,
    material: &Material<'a>,
) -> anyhow::Result<Material<'a>> {
    let mut material = material.clone();
    if settings.pseudonymise {
        for &workspace_id in workspace_ids {
            let (people, addresses) = services.store.workspace_people(workspace_id).await?;
            material.people.extend(people);
            material.addresses.extend(addresses);
        }
    }
    Ok(material)
}

/// Material larger than this is read for personal data off the async threads.
const INLINE_BYTES: usize = 256 * 1024;

/// [`cloak`], off the async threads for a large material (a whole project's report).
async fn cloak_off_thread(settings: Settings, material: &Material<'_>) -> anyhow::Result<Cloak> {
    let size: usize = material.texts.iter().map(|t| t.len()).sum();
    if !settings.pseudonymise || size <= INLINE_BYTES {
        return Ok(cloak(&settings, material));
    }
    let owned: [Vec<String>; 3] = [&material.speakers, &material.labels, &material.texts]
        .map(|part| part.iter().map(|t| (*t).to_owned()).collect());
    let (people, addresses) = (material.people.clone(), material.addresses.clone());
    tokio::task::spawn_blocking(move || {
        let [speakers, labels, texts] = &owned;
        fn view(part: &[String]) -> Vec<&str> {
            part.iter().map(String::as_str).collect()
        }
        cloak(
            &settings,
            &Material {
                people,
                addresses,
                speakers: view(speakers),
                labels: view(labels),
                texts: view(texts),
            },
        )
    })
    .await
    .map_err(|error| anyhow::anyhow!("reading the material for personal data stopped: {error}"))
}

/// The engine for new work across workspaces (the research assistant over several
/// projects): cloaked if any of them pseudonymises, with all their names known; refused
/// with 402 when any of them spent its budget, and each charged the calls' full cost.
///
/// Every workspace whose material a call reads pays for the whole call, rather than a
/// share: simple to explain, and no choice of which projects to ask over makes a
/// workspace's material cheaper to read than asking over it alone.
pub async fn engine_for_workspaces(
    services: &Services,
    workspace_ids: &[Uuid],
    project_id: Option<Uuid>,
    kind: UsageKind,
    material: &Material<'_>,
) -> ApiResult<Engine> {
    if matches!(services.engine, Engine::Offline) {
        return Ok(Engine::Offline);
    }
    let mut merged = Settings {
        pseudonymise: workspace_ids.is_empty(),
        ..Settings::default()
    };
    let mut each = Vec::with_capacity(workspace_ids.len());
    for &workspace_id in workspace_ids {
        let settings = services.store.workspace_settings(workspace_id).await?;
        merged.pseudonymise |= settings.pseudonymise;
        merged.known_names.extend(settings.known_names.iter().cloned());
        each.push((workspace_id, settings));
    }
    for (workspace_id, settings) in &each {
        // Among several, the sentence names the workspace, so that the asker knows which.
        let who = match services.store.workspace_name(*workspace_id).await? {
            Some(name) if each.len() > 1 => format!("The workspace \u{201c}{name}\u{201d}"),
            _ => "This workspace".to_owned(),
        };
        if let Some(sentence) = spent(services, *workspace_id, settings, &who).await? {
            return Err(ApiError::PaymentRequired(sentence));
        }
    }
    // A line names the project only in the workspace that holds it.
    let home = match project_id {
        Some(project_id) => services
            .store
            .project_workspace(project_id)
            .await?
            .map(|workspace_id| (workspace_id, project_id)),
        None => None,
    };
    let payers: Vec<(Uuid, Option<Uuid>)> = workspace_ids
        .iter()
        .map(|&workspace_id| {
            let project = home
                .filter(|(home, _)| *home == workspace_id)
                .map(|(_, project)| project);
            (workspace_id, project)
        })
        .collect();
    let meter = (!payers.is_empty()).then(|| meter_for(services, payers, kind));
    let material = with_people(services, workspace_ids, &merged, material).await?;
    Ok(services
        .engine
        .for_work(cloak_off_thread(merged, &material).await?, meter))
}

/// Charges model calls at the instance's prices to each workspace it names (with the
/// project, if any, that the call's line names in that workspace).
struct WorkspaceMeter {
    store: Store,
    prices: crate::domain::usage::Prices,
    payers: Vec<(Uuid, Option<Uuid>)>,
    kind: UsageKind,
}

fn meter(services: &Services, workspace_id: Uuid, project_id: Option<Uuid>, kind: UsageKind) -> Arc<dyn Meter> {
    meter_for(services, vec![(workspace_id, project_id)], kind)
}

fn meter_for(services: &Services, payers: Vec<(Uuid, Option<Uuid>)>, kind: UsageKind) -> Arc<dyn Meter> {
    Arc::new(WorkspaceMeter {
        store: services.store.clone(),
        prices: services.settings.model.llm_prices.clone(),
        payers,
        kind,
    })
}

impl Meter for WorkspaceMeter {
    fn charge(&self, model: &str, usage: Usage, duration: std::time::Duration) {
        let at = now();
        let charges: Vec<Charge> = self
            .payers
            .iter()
            .map(|&(workspace_id, project_id)| Charge {
                workspace_id,
                project_id,
                kind: self.kind,
                model: model.to_owned(),
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
                cost: self.prices.of(model).cost(usage.prompt_tokens, usage.completion_tokens),
                duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
                at,
            })
            .collect();
        let store = self.store.clone();
        // The call is answered already; its charges are written beside what comes next.
        tokio::spawn(async move {
            for charge in charges {
                if let Err(error) = store.charge(&charge).await {
                    tracing::warn!(error = %format!("{error:#}"), workspace = %charge.workspace_id, "charging a model call failed");
                }
            }
        });
    }
}

/// The first moment of the month `at` is in (UTC), and of the next.
fn month_bounds(at: DateTime<Utc>) -> (DateTime<Utc>, DateTime<Utc>) {
    let first = Utc
        .with_ymd_and_hms(at.year(), at.month(), 1, 0, 0, 0)
        .single()
        .unwrap_or(at);
    let (year, month) = if at.month() == 12 {
        (at.year() + 1, 1)
    } else {
        (at.year(), at.month() + 1)
    };
    let next = Utc.with_ymd_and_hms(year, month, 1, 0, 0, 0).single().unwrap_or(at);
    (first, next)
}

/// Refuses new AI work (402) of a workspace that spent its monthly budget; work already
/// running finishes. The offline engine costs nothing and is never refused.
pub async fn require_budget(services: &Services, workspace_id: Uuid) -> ApiResult<()> {
    if matches!(services.engine, Engine::Offline) {
        return Ok(());
    }
    let settings = services.store.workspace_settings(workspace_id).await?;
    within_budget(services, workspace_id, &settings).await
}

/// The 402 of [`require_budget`], with the workspace's settings at hand.
async fn within_budget(services: &Services, workspace_id: Uuid, settings: &Settings) -> ApiResult<()> {
    match spent(services, workspace_id, settings, "This workspace").await? {
        Some(sentence) => Err(ApiError::PaymentRequired(sentence)),
        None => Ok(()),
    }
}

/// The sentence saying that the workspace (called `who` in it) spent its monthly
/// budget, if it did.
async fn spent(
    services: &Services,
    workspace_id: Uuid,
    settings: &Settings,
    who: &str,
) -> anyhow::Result<Option<String>> {
    let Some(budget) = settings.monthly_budget else {
        return Ok(None);
    };
    let (from, _) = month_bounds(now());
    let spent = services.store.spent_since(workspace_id, from).await?;
    Ok((spent >= budget).then(|| {
        format!(
            "{who} spent its monthly budget for AI work ({spent:.2} of {budget:.2} {}); new work \
             starts again next month, or when an admin raises the budget.",
            settings.currency
        )
    }))
}

/// Whether the workspace a project belongs to spent its monthly budget: the sentence
/// saying so, for the workspace's own people (never with the offline engine, which
/// costs nothing).
pub async fn project_budget_spent(services: &Services, project_id: Uuid) -> anyhow::Result<Option<String>> {
    if matches!(services.engine, Engine::Offline) {
        return Ok(None);
    }
    match services.store.project_settings(project_id).await? {
        (Some(workspace_id), settings) => spent(services, workspace_id, &settings, "This workspace").await,
        (None, _) => Ok(None),
    }
}

/// [`require_budget`] for the workspace a project belongs to.
pub async fn require_project_budget(services: &Services, project_id: Uuid) -> ApiResult<()> {
    if matches!(services.engine, Engine::Offline) {
        return Ok(());
    }
    match services.store.project_workspace(project_id).await? {
        Some(workspace_id) => require_budget(services, workspace_id).await,
        None => Ok(()),
    }
}

/// A workspace's usage in a month (`YYYY-MM`, UTC; this month without one), for any member.
pub async fn usage(store: &Store, user_id: Uuid, workspace_id: Uuid, month: Option<&str>) -> ApiResult<UsageReport> {
    access::require(store, user_id, Target::Workspace(workspace_id), Need::Read).await?;
    let at = match month {
        None => now(),
        Some(month) => chrono::NaiveDate::parse_from_str(&format!("{month}-01"), "%Y-%m-%d")
            .ok()
            .filter(|_| month.len() == 7)
            .and_then(|day| day.and_hms_opt(0, 0, 0))
            .map(|t| t.and_utc())
            .ok_or_else(|| {
                ApiError::validation(vec![
                    ValidationIssue::value_error(
                        vec!["query".into(), "month".into()],
                        "a month as YYYY-MM, e.g. 2026-11",
                    )
                    .with_input(serde_json::json!(month)),
                ])
            })?,
    };
    let (from, to) = month_bounds(at);
    let settings = store.workspace_settings(workspace_id).await?;
    let lines = store.usage_lines(workspace_id, from, to).await?;
    Ok(UsageReport {
        month: from.format("%Y-%m").to_string(),
        currency: settings.currency,
        // A fold from +0: an empty sum of floats is -0.
        total_cost: lines.iter().fold(0.0, |total, line| total + line.cost),
        budget: settings.monthly_budget,
        lines,
    })
}

/// What kinds of personal data a record holds, and how many distinct values of each.
pub async fn pii(store: &Store, user_id: Uuid, record_id: Uuid) -> ApiResult<PiiReport> {
    access::require(store, user_id, Target::Record(record_id), Need::Read).await?;
    let record = store
        .record_by_id(record_id)
        .await?
        .ok_or_else(|| ApiError::not_found("Record"))?;
    let (_, settings) = store.project_settings(record.project_id).await?;
    let utterances = store.utterances(record_id).await?;
    let material = Material {
        speakers: utterances.iter().map(|u| u.speaker.as_str()).collect(),
        ..Material::default()
    };
    let detector = Detector::new(known_names(&settings, &material));
    let mut texts: Vec<&str> = Vec::with_capacity(utterances.len() * 2);
    for utterance in &utterances {
        texts.push(&utterance.speaker);
        texts.push(&utterance.text);
    }
    let counts = tokio::task::spawn_blocking({
        let texts: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
        move || {
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            crate::privacy::counts(&detector, &texts)
        }
    })
    .await
    .map_err(|error| anyhow::anyhow!("counting personal data stopped: {error}"))?;
    let n = |kind: Kind| counts.get(&kind).copied().unwrap_or(0) as u64;
    Ok(PiiReport {
        pseudonymise: settings.pseudonymise,
        kinds: PiiCounts {
            email: n(Kind::Email),
            phone: n(Kind::Phone),
            card: n(Kind::Card),
            iban: n(Kind::Iban),
            ip: n(Kind::Ip),
            url: n(Kind::Url),
            person: n(Kind::Person),
        },
    })
}
