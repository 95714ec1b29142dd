//! The gate every text a model sees goes through: the engine for a piece of work,
//! cloaked as its workspace says (`cloak`, from `Material`) and charging its calls to the
//! workspaces whose material it reads, refused past their budgets; and a workspace's usage.

use std::sync::Arc;

use chrono::{DateTime, Datelike, TimeZone, Utc};
use uuid::Uuid;

use crate::app::Caller;
use crate::domain::now;
use crate::domain::usage::{UsageKind, UsageReport};
use crate::domain::workspace::{Need, Settings};
use crate::engines::ai::Engine;
use crate::engines::ai::Usage;
use crate::engines::ai::openai::Meter;
use crate::engines::privacy::{Cloak, Known};
use crate::error::{Error, Result, ValidationIssue};
use crate::services::Services;
use crate::store::Charge;
use crate::store::{Store, Target};

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
) -> Result<Engine> {
    engine_for(services, project_id, kind, material, true).await
}

async fn engine_for(
    services: &Services,
    project_id: Uuid,
    kind: UsageKind,
    material: &Material<'_>,
    check_budget: bool,
) -> Result<Engine> {
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
) -> Result<Engine> {
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
            return Err(Error::OverBudget(sentence));
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
pub async fn require_budget(services: &Services, workspace_id: Uuid) -> Result<()> {
    if matches!(services.engine, Engine::Offline) {
        return Ok(());
    }
    let settings = services.store.workspace_settings(workspace_id).await?;
    within_budget(services, workspace_id, &settings).await
}

/// The 402 of [`require_budget`], with the workspace's settings at hand.
async fn within_budget(services: &Services, workspace_id: Uuid, settings: &Settings) -> Result<()> {
    match spent(services, workspace_id, settings, "This workspace").await? {
        Some(sentence) => Err(Error::OverBudget(sentence)),
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
pub async fn require_project_budget(services: &Services, project_id: Uuid) -> Result<()> {
    if matches!(services.engine, Engine::Offline) {
        return Ok(());
    }
    match services.store.project_workspace(project_id).await? {
        Some(workspace_id) => require_budget(services, workspace_id).await,
        None => Ok(()),
    }
}

/// A workspace's usage in a month (`YYYY-MM`, UTC; this month without one), for any member.
pub async fn usage(store: &Store, caller: &Caller, workspace_id: Uuid, month: Option<&str>) -> Result<UsageReport> {
    caller
        .require(store, Target::Workspace(workspace_id), Need::Read)
        .await?;
    let at = match month {
        None => now(),
        Some(month) => chrono::NaiveDate::parse_from_str(&format!("{month}-01"), "%Y-%m-%d")
            .ok()
            .filter(|_| month.len() == 7)
            .and_then(|day| day.and_hms_opt(0, 0, 0))
            .map(|t| t.and_utc())
            .ok_or_else(|| {
                Error::validation(vec![
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
