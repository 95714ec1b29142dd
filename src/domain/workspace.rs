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
