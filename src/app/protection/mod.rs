//! Protection: what a workspace decides about its participants' data (pseudonymisation,
//! the names it counts as personal, retention, consent, budget), what personal data a
//! record holds, and erasing or redacting it for good. The cloak itself is put on every
//! model call by `app::gate`.

pub mod erasure;
pub mod redaction;

use uuid::Uuid;

use crate::app::Caller;
use crate::app::accounts::audit::{self};
use crate::app::gate::{Material, known_names};
use crate::domain::patch::Patch;
use crate::domain::privacy::{PiiCounts, PiiReport};
use crate::domain::workspace::{Need, Settings, SettingsUpdate};
use crate::engines::privacy::{Detector, Kind};
use crate::error::{Error, Result, ValidationIssue};
use crate::store::{Store, Target};

/// A workspace's settings, for any member.
pub async fn settings(store: &Store, caller: &Caller, workspace_id: Uuid) -> Result<Settings> {
    caller
        .require(store, Target::Workspace(workspace_id), Need::Read)
        .await?;
    Ok(store.workspace_settings(workspace_id).await?)
}

/// Changes a workspace's settings (admins and owners); a field left out stays. The
/// audit entry names the fields changed, never their values.
pub async fn update_settings(
    store: &Store,
    caller: &Caller,
    workspace_id: Uuid,
    update: SettingsUpdate,
) -> Result<Settings> {
    let actor = caller.actor();
    caller
        .require(store, Target::Workspace(workspace_id), Need::Manage)
        .await?;
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
fn check_update(update: &SettingsUpdate) -> Result<()> {
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
        Err(Error::validation(issues))
    }
}

fn nullable<T>(patch: Patch<T>, field: &mut Option<T>) {
    match patch {
        Patch::Missing => {}
        Patch::Null => *field = None,
        Patch::Value(value) => *field = Some(value),
    }
}

/// What kinds of personal data a record holds, and how many distinct values of each.
pub async fn pii(store: &Store, caller: &Caller, record_id: Uuid) -> Result<PiiReport> {
    caller.require(store, Target::Record(record_id), Need::Read).await?;
    let record = store
        .record_by_id(record_id)
        .await?
        .ok_or_else(|| Error::not_found("Record"))?;
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
            crate::engines::privacy::counts(&detector, &texts)
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
