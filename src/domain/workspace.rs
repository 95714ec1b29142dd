//! Workspaces, their members and roles, and what each role may do.
//!
//! A workspace owns projects (and through them records, reports and rooms), prompts,
//! presets and webhook endpoints. Every user has a personal workspace, whose id is his
//! own id; teams make more and invite members.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

super::string_enum! {
    /// `owner` and `admin` run the workspace (members, settings); `researcher` creates and
    /// edits everything in it; `viewer` reads everything and writes nothing.
    Role { Owner = "owner", Admin = "admin", Researcher = "researcher", Viewer = "viewer" }
}

/// What a request asks of the caller's role in a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Seeing it: any member.
    Read,
    /// Creating, changing or deleting research material: researchers and above.
    Write,
    /// Members, invitations, the audit log, the workspace itself: admins and owners.
    Manage,
}

impl Role {
    pub fn allows(self, need: Need) -> bool {
        match need {
            Need::Read => true,
            Need::Write => self != Role::Viewer,
            Need::Manage => matches!(self, Role::Owner | Role::Admin),
        }
    }

    /// Whether someone with this role may give `other` to a member (or take it away): an
    /// admin manages researchers and viewers and other admins, only an owner makes or
    /// unmakes owners.
    pub fn may_assign(self, other: Role) -> bool {
        match self {
            Role::Owner => true,
            Role::Admin => other != Role::Owner,
            _ => false,
        }
    }
}

/// A workspace as `GET /workspaces` lists it, with the caller's role.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Workspace {
    pub id: Uuid,
    pub name: String,
    /// Whether this is someone's personal workspace (made with the account; it cannot be
    /// deleted).
    pub personal: bool,
    /// The caller's role in it.
    pub role: Role,
    pub created_at: DateTime<Utc>,
}

/// A workspace as `GET /me` lists it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Membership {
    pub id: Uuid,
    pub name: String,
    pub role: Role,
}

/// A member of a workspace.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Member {
    pub user_id: Uuid,
    pub email: String,
    pub name: String,
    pub role: Role,
    pub joined_at: DateTime<Utc>,
}

/// An invitation to join a workspace. Its `url` is the link to send; it works once.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Invitation {
    pub id: Uuid,
    pub email: String,
    pub role: Role,
    /// `INSIGHT_PUBLIC_URL/invite/{token}`.
    pub url: String,
    pub expires_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    /// When it was accepted; `null` while it is open.
    pub accepted_at: Option<DateTime<Utc>>,
}

/// One entry of a workspace's audit log.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AuditEvent {
    pub id: Uuid,
    pub at: DateTime<Utc>,
    /// Who did it; `null` when nobody was signed in (a failed sign-in for an unknown address
    /// keeps the address tried here).
    pub actor_email: Option<String>,
    /// A dotted name such as `session.signed_in` or `member.role_changed`.
    pub action: String,
    pub target_type: Option<String>,
    pub target_id: Option<String>,
    /// The client's address as the server saw it (see `INSIGHT_TRUSTED_PROXIES`).
    pub ip: Option<String>,
    /// What else is worth knowing (the new role, the token's name...).
    #[schema(value_type = Object)]
    pub detail: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_allow_what_the_contract_says() {
        use Need::*;
        let table = [
            (Role::Owner, [true, true, true]),
            (Role::Admin, [true, true, true]),
            (Role::Researcher, [true, true, false]),
            (Role::Viewer, [true, false, false]),
        ];
        for (role, expected) in table {
            let got = [role.allows(Read), role.allows(Write), role.allows(Manage)];
            assert_eq!(got, expected, "{role:?}");
        }
        assert!(Role::Owner.may_assign(Role::Owner));
        assert!(!Role::Admin.may_assign(Role::Owner));
        assert!(Role::Admin.may_assign(Role::Admin));
        assert!(!Role::Researcher.may_assign(Role::Viewer));
    }
}

/// A workspace's trust settings (`GET|PATCH /workspaces/{id}/settings`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Settings {
    /// Whether personal data is replaced by placeholders before any model sees it.
    pub pseudonymise: bool,
    /// Names the workspace counts as personal besides the speakers and those found in the
    /// text (a client's staff, a product's users).
    pub known_names: Vec<String>,
    /// Recordings older than this are deleted (their transcripts stay); none: kept.
    pub retention_recordings_days: Option<i64>,
    /// Records older than this are deleted; none: kept.
    pub retention_records_days: Option<i64>,
    /// What respondents accept before an interview; none: no consent is asked.
    pub consent_text: Option<String>,
    /// Counts up with each change of the consent text (0: never set).
    pub consent_version: i64,
    /// AI work per calendar month (UTC) at most, in `currency`; none: no limit.
    pub monthly_budget: Option<f64>,
    /// ISO 4217 code of the prices and the budget.
    pub currency: String,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            pseudonymise: true,
            known_names: Vec::new(),
            retention_recordings_days: None,
            retention_records_days: None,
            consent_text: None,
            consent_version: 0,
            monthly_budget: None,
            currency: "USD".to_owned(),
        }
    }
}

/// A change to the settings: a field left out stays; `null` clears a nullable one.
#[derive(Debug, Clone, Default, serde::Deserialize, ToSchema)]
pub struct SettingsUpdate {
    #[serde(default)]
    #[schema(value_type = Option<bool>, required = false)]
    pub pseudonymise: super::patch::Patch<bool>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, required = false, max_items = 500)]
    pub known_names: super::patch::Patch<Vec<String>>,
    #[serde(default)]
    #[schema(value_type = Option<i64>, required = false, nullable = true, minimum = 1, maximum = 36500)]
    pub retention_recordings_days: super::patch::Patch<i64>,
    #[serde(default)]
    #[schema(value_type = Option<i64>, required = false, nullable = true, minimum = 1, maximum = 36500)]
    pub retention_records_days: super::patch::Patch<i64>,
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, nullable = true, max_length = 20000)]
    pub consent_text: super::patch::Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<f64>, required = false, nullable = true, minimum = 0, maximum = 1000000000)]
    pub monthly_budget: super::patch::Patch<f64>,
    #[serde(default)]
    #[schema(value_type = Option<String>, required = false, pattern = "^[A-Z]{3}$")]
    pub currency: super::patch::Patch<String>,
}
