//! Who asks a use case: the person, what his credential allows, and how the audit log
//! names him. Each door finds the caller once (the API from its bearer token or session,
//! the console from the visitor's session, MCP from its token) and hands it to the use
//! cases, which check his role and his credential's scope themselves.

use std::net::IpAddr;

use uuid::Uuid;

use crate::app::accounts::access::{self, Target};
use crate::app::accounts::audit::Actor;
use crate::domain::user::{TokenScope, User};
use crate::domain::workspace::{Need, Role};
use crate::error::{Error, Result};
use crate::store::Store;

#[derive(Debug, Clone)]
pub struct Caller {
    pub user: User,
    /// What the credential allows: a session or a `write` token changes, a `read` token
    /// only reads.
    pub scope: TokenScope,
    /// The address the request came from, for the audit log.
    pub ip: Option<IpAddr>,
}

impl Caller {
    pub fn new(user: User, scope: TokenScope, ip: Option<IpAddr>) -> Self {
        Self { user, scope, ip }
    }

    pub fn id(&self) -> Uuid {
        self.user.id
    }

    /// The caller as the audit log names him.
    pub fn actor(&self) -> Actor {
        Actor::user(&self.user, self.ip)
    }

    /// Refuses a change to a caller whose credential may only read.
    pub fn may_change(&self) -> Result<()> {
        match self.scope {
            TokenScope::Write => Ok(()),
            TokenScope::Read => Err(read_only()),
        }
    }

    /// The caller's role on `target` if it allows `need` (unseen 404, not allowed 403),
    /// and for anything beyond reading a credential that may change.
    pub async fn require(&self, store: &Store, target: Target, need: Need) -> Result<Role> {
        if need != Need::Read {
            self.may_change()?;
        }
        access::require(store, self.user.id, target, need).await
    }

    /// As [`Caller::require`], with a target the caller named in `field` of his request:
    /// one he cannot see is an unknown reference there (422) rather than a 404.
    pub async fn require_named(&self, store: &Store, target: Target, need: Need, field: &str) -> Result<Role> {
        if need != Need::Read {
            self.may_change()?;
        }
        access::require_named(store, self.user.id, target, need, field).await
    }

    /// The workspace a new thing goes into: the one named in `workspace_id`, or the
    /// caller's personal workspace, once his role there allows `need`.
    pub async fn workspace(&self, store: &Store, named: Option<Uuid>, need: Need) -> Result<Uuid> {
        if need != Need::Read {
            self.may_change()?;
        }
        access::target_workspace(store, self.user.id, named, need).await
    }
}

/// The refusal of a `read` token's change, in the words every door answers it with.
pub fn read_only() -> Error {
    Error::forbidden("This token may only read (scope read); use a token with scope write")
}
