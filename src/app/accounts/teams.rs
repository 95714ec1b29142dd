//! Workspaces and their members: making, running and deleting a workspace, inviting
//! people, and accepting an invitation. Each change is an audit entry.

use rand::RngCore;
use uuid::Uuid;

use super::access;
use super::audit::{self, Actor, Entry};
use super::password;
use super::sign_in::{self, Session};
use crate::app::Caller;
use crate::config::Signup;
use crate::domain::paging::{Page, PageRequest};
use crate::domain::user::{User, hash_token, normalize_email};
use crate::domain::workspace::{Invitation, Member, Membership, Need, Role, Workspace};
use crate::error::{Error, Result};
use crate::providers::mail::{Letter, Mailer};
use crate::secret::SecretKey;
use crate::services::Services;
use crate::store::{Accepted, CreatedKey, InvitationRow, MemberChange, NewInvitation, Store, Target};

/// The token of an invitation's link: derived from the instance key and the invitation's
/// nonce, so it is never stored and can be shown again.
pub fn invitation_token(secret: &SecretKey, nonce: &[u8]) -> String {
    format!("insi_{}", secret.derive("invitation", &[nonce], 32))
}

pub fn invitation_url(public_url: &str, token: &str) -> String {
    format!("{}/invite/{token}", public_url.trim_end_matches('/'))
}

pub fn invitation_view(services: &Services, row: &InvitationRow) -> Invitation {
    let token = invitation_token(&services.secret, &row.token_nonce);
    Invitation {
        id: row.id,
        email: row.email.clone(),
        role: row.role(),
        url: invitation_url(&services.settings.server.public_url, &token),
        expires_at: row.expires_at,
        created_at: row.created_at,
        accepted_at: row.accepted_at,
    }
}

/// The workspaces the user belongs to, with his role in each; his personal one first.
pub async fn workspaces(store: &Store, caller: &Caller) -> Result<Vec<Workspace>> {
    let user_id = caller.id();
    Ok(store.workspaces_of(user_id).await?)
}

/// The user's memberships (the workspaces a door lets him switch between); his personal
/// workspace first.
pub async fn memberships(store: &Store, caller: &Caller) -> Result<Vec<Membership>> {
    let user_id = caller.id();
    Ok(store.memberships(user_id).await?)
}

/// One of the user's workspaces; 404 for one he does not belong to.
pub async fn workspace(store: &Store, caller: &Caller, workspace_id: Uuid) -> Result<Workspace> {
    let user_id = caller.id();
    let workspace = store.workspace(user_id, workspace_id).await?;
    workspace.ok_or_else(|| Error::not_found("Workspace"))
}

/// A workspace's name as given: trimmed, not blank, at most 200 characters.
fn workspace_name(name: &str) -> Result<&str> {
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err(Error::validation(vec![crate::error::ValidationIssue::blank(
            "name", name,
        )]));
    }
    crate::error::check_lengths(&[("name", trimmed, 200)])?;
    Ok(trimmed)
}

/// Makes a team workspace; its maker is its owner.
pub async fn create(store: &Store, caller: &Caller, name: &str) -> Result<Workspace> {
    caller.may_change()?;
    let by = caller.id();
    let actor = &caller.actor();
    let workspace = store.create_workspace(by, workspace_name(name)?).await?;
    audit::record(
        store,
        Entry {
            workspace_id: Some(workspace.id),
            actor: actor.clone(),
            action: "workspace.created",
            target: Some(("workspace", workspace.id.to_string())),
            detail: serde_json::json!({ "name": workspace.name }),
        },
    )
    .await?;
    Ok(workspace)
}

/// Deletes a team workspace with everything in it, its recordings' files included
/// (owners only); a personal workspace cannot be deleted (409).
pub async fn delete(services: &Services, caller: &Caller, workspace_id: Uuid) -> Result<()> {
    let by = caller.id();
    let actor = &caller.actor();
    let store = &services.store;
    let role = caller
        .require(store, Target::Workspace(workspace_id), Need::Manage)
        .await?;
    if role != Role::Owner {
        return Err(Error::forbidden("Only an owner may delete a workspace"));
    }
    let media = store.workspace_media_paths(workspace_id).await?;
    if !store.delete_workspace(workspace_id).await? {
        return Err(Error::conflict("A personal workspace cannot be deleted"));
    }
    for path in media {
        services.files.delete(&path).await;
    }
    // The workspace's own log went with it; the deletion is kept in the owner's personal log.
    audit::record(
        store,
        Entry {
            workspace_id: Some(by),
            actor: actor.clone(),
            action: "workspace.deleted",
            target: Some(("workspace", workspace_id.to_string())),
            detail: serde_json::Value::Null,
        },
    )
    .await
}

/// Renames a workspace (owners and admins); the name is trimmed and may not be blank. The
/// answer is the workspace as it is now.
pub async fn rename(store: &Store, caller: &Caller, workspace_id: Uuid, name: &str) -> Result<Workspace> {
    let actor = &caller.actor();
    caller
        .require(store, Target::Workspace(workspace_id), Need::Manage)
        .await?;
    let trimmed = workspace_name(name)?;
    store.rename_workspace(workspace_id, trimmed).await?;
    audit::record(
        store,
        Entry {
            workspace_id: Some(workspace_id),
            actor: actor.clone(),
            action: "workspace.renamed",
            target: Some(("workspace", workspace_id.to_string())),
            detail: serde_json::json!({ "name": trimmed }),
        },
    )
    .await?;
    workspace(store, caller, workspace_id).await
}

/// A page of the workspace's members, in the order they joined (every member sees them).
pub async fn members(
    store: &Store,
    caller: &Caller,
    workspace_id: Uuid,
    page: &PageRequest<CreatedKey>,
) -> Result<Page<Member, CreatedKey>> {
    caller
        .require(store, Target::Workspace(workspace_id), Need::Read)
        .await?;
    Ok(store.members(workspace_id, page).await?)
}

/// A page of the workspace's invitations, newest first, with their links (owners and
/// admins).
pub async fn invitations(
    services: &Services,
    caller: &Caller,
    workspace_id: Uuid,
    page: &PageRequest<CreatedKey>,
) -> Result<Page<Invitation, CreatedKey>> {
    caller
        .require(&services.store, Target::Workspace(workspace_id), Need::Manage)
        .await?;
    let rows = services.store.invitations(workspace_id, page).await?;
    Ok(rows.map(|row| invitation_view(services, &row)))
}

/// Withdraws an open invitation; its link stops working.
pub async fn withdraw(store: &Store, caller: &Caller, workspace_id: Uuid, invitation_id: Uuid) -> Result<()> {
    let actor = &caller.actor();
    caller
        .require(store, Target::Workspace(workspace_id), Need::Manage)
        .await?;
    if !store.delete_invitation(workspace_id, invitation_id).await? {
        return Err(Error::not_found("Invitation"));
    }
    audit::record(
        store,
        Entry {
            workspace_id: Some(workspace_id),
            actor: actor.clone(),
            action: "invitation.revoked",
            target: Some(("invitation", invitation_id.to_string())),
            detail: serde_json::Value::Null,
        },
    )
    .await
}

/// Invites an address into a workspace with a role; mails the link when mail is set up.
/// The answer always carries the link, so an admin can pass it on himself.
pub async fn invite(
    services: &Services,
    mailer: Option<&Mailer>,
    caller: &Caller,
    workspace_id: Uuid,
    email: &str,
    role: Role,
) -> Result<Invitation> {
    let inviter = &caller.user;
    let my_role = caller
        .require(&services.store, Target::Workspace(workspace_id), Need::Manage)
        .await?;
    if !my_role.may_assign(role) {
        return Err(Error::forbidden("Only an owner may invite an owner"));
    }
    let email = normalize_email(email).ok_or_else(|| Error::conflict("That is not an email address"))?;
    let mut nonce = vec![0u8; 16];
    rand::rng().fill_bytes(&mut nonce);
    let token = invitation_token(&services.secret, &nonce);
    let days = services.settings.accounts.invitation_days as i64;
    let row = services
        .store
        .create_invitation(NewInvitation {
            workspace_id,
            email: &email,
            role,
            nonce: &nonce,
            token_hash: &hash_token(&token),
            invited_by: inviter.id,
            expires_at: crate::domain::now() + chrono::Duration::days(days),
        })
        .await?;
    let invitation = invitation_view(services, &row);
    audit::record(
        &services.store,
        Entry {
            workspace_id: Some(workspace_id),
            actor: caller.actor(),
            action: "invitation.created",
            target: Some(("invitation", row.id.to_string())),
            detail: serde_json::json!({ "email": email, "role": role.as_str() }),
        },
    )
    .await?;
    if let Some(mailer) = mailer {
        let workspace = services.store.workspace(inviter.id, workspace_id).await?;
        let name = workspace.map(|w| w.name).unwrap_or_default();
        let letter = Letter::invitation(
            &email,
            &name,
            &inviter.email,
            role.as_str(),
            &invitation.url,
            invitation.expires_at,
        );
        // The link is in the answer either way: a mail server that is down does not undo the invitation.
        if let Err(error) = mailer.send_letter(letter).await {
            tracing::warn!(error = %format!("{error:#}"), invitation = %row.id, "the invitation email was not sent");
        }
    }
    Ok(invitation)
}

/// An open invitation as its link's page shows it, before it is accepted.
pub struct InvitationPreview {
    pub workspace_name: String,
    pub role: Role,
    pub email: String,
    pub expires_at: chrono::DateTime<chrono::Utc>,
}

/// The open invitation a link's token names: 404 when unknown, used or withdrawn, 410
/// when expired. The token is the credential, so anyone holding the link may see it.
pub async fn invitation(store: &Store, token: &str) -> Result<InvitationPreview> {
    let invitation = store
        .invitation_by_hash(&hash_token(token))
        .await?
        .ok_or_else(|| Error::NotFound("This invitation is unknown, used or withdrawn: ask for a new one".into()))?;
    if invitation.expires_at <= crate::domain::now() {
        return Err(Error::Gone("This invitation has expired: ask for a new one".into()));
    }
    Ok(InvitationPreview {
        workspace_name: store.workspace_name(invitation.workspace_id).await?.unwrap_or_default(),
        role: invitation.role(),
        email: invitation.email,
        expires_at: invitation.expires_at,
    })
}

/// Who accepts an invitation: someone signed in, or a new person who sets a password.
pub enum Accepter<'a> {
    SignedIn(User),
    New { password: &'a str, name: Option<&'a str> },
}

/// Accepts an invitation. A new person gets an account (with the invitation's address) and
/// a session; an existing account must be signed in, and as the address the invitation
/// was sent to (compared without case): the link is a way in for that person, not for
/// whoever holds it. A member already in the workspace keeps the higher of his role and
/// the invited one. The link works once; the answer is the role the person holds now.
pub async fn accept(
    services: &Services,
    token: &str,
    accepter: Accepter<'_>,
    from: sign_in::Device<'_>,
) -> Result<(Uuid, Role, Option<Session>)> {
    let store = &services.store;
    let hash = hash_token(token);
    let invitation = store
        .invitation_by_hash(&hash)
        .await?
        .ok_or_else(|| Error::not_found("Invitation"))?;
    if invitation.expires_at <= crate::domain::now() {
        return Err(Error::Gone("This invitation has expired: ask for a new one".into()));
    }
    let (user, new_session) = match accepter {
        Accepter::SignedIn(user) => {
            if !same_address(&user.email, &invitation.email) {
                return Err(not_the_addressee(&invitation.email, &user.email));
            }
            (user, false)
        }
        Accepter::New {
            password: new_password,
            name,
        } => {
            if services.settings.accounts.signup == Signup::Closed {
                return Err(Error::forbidden(
                    "New accounts are closed on this service: ask an administrator to add you",
                ));
            }
            if store.account_by_email(&invitation.email).await?.is_some() {
                return Err(Error::conflict(
                    "An account with this address exists: sign in, then accept the invitation",
                ));
            }
            password::check_new_password(new_password).map_err(|why| Error::conflict(why.to_owned()))?;
            let phc = password::hash(new_password.to_owned()).await?;
            let user = store
                .add_user_named(&invitation.email, name.unwrap_or_default().trim())
                .await?
                .ok_or_else(|| Error::conflict("An account with this address exists: sign in first"))?;
            store.set_password_hash(user.id, &phc, None).await?;
            (user, true)
        }
    };
    let (workspace_id, role, invited) = match store.accept_invitation(&hash, user.id).await? {
        Accepted::Joined {
            workspace_id,
            role,
            invited,
        } => (workspace_id, role, invited),
        Accepted::Expired => return Err(Error::Gone("This invitation has expired: ask for a new one".into())),
        Accepted::Unknown => return Err(Error::not_found("Invitation")),
    };
    audit::record(
        store,
        Entry {
            workspace_id: Some(workspace_id),
            actor: Actor::user(&user, from.ip),
            action: "invitation.accepted",
            target: Some(("invitation", invitation.id.to_string())),
            detail: serde_json::json!({ "email": user.email, "role": role.as_str(), "invited_role": invited.as_str() }),
        },
    )
    .await?;
    let session = if new_session {
        Some(sign_in::start(services, user, "invitation", from).await?)
    } else {
        None
    };
    Ok((workspace_id, role, session))
}

/// Whether an account's address is the one an invitation was sent to. Addresses are kept
/// lower-cased when they come through the API, but an account made otherwise (the CLI, an
/// identity provider) may spell its address with capitals.
pub fn same_address(account: &str, invited: &str) -> bool {
    account.trim().to_lowercase() == invited.trim().to_lowercase()
}

/// The refusal of an invitation to someone signed in with another address. The link's
/// page shows the invited address already, so naming it here tells the holder nothing new.
pub fn not_the_addressee(invited: &str, signed_in: &str) -> Error {
    Error::forbidden(format!(
        "This invitation was sent to {invited}, and you are signed in as {signed_in}: \
         sign in with the invited address to accept it, or ask for an invitation to yours"
    ))
}

/// Changes a member's role: an admin manages everyone but owners, an owner everyone; the
/// last owner stays one. The answer is the member as he is now.
pub async fn change_role(
    store: &Store,
    caller: &Caller,
    workspace_id: Uuid,
    member: Uuid,
    role: Role,
) -> Result<Member> {
    let actor = &caller.actor();
    let my_role = caller
        .require(store, Target::Workspace(workspace_id), Need::Manage)
        .await?;
    let current = store
        .member(workspace_id, member)
        .await?
        .ok_or_else(|| Error::not_found("Member"))?;
    if !my_role.may_assign(role) || !my_role.may_assign(current.role) {
        return Err(Error::forbidden("Only an owner may make or unmake an owner"));
    }
    match store.set_member_role(workspace_id, member, role).await? {
        MemberChange::Done => {}
        MemberChange::NotAMember => return Err(Error::not_found("Member")),
        MemberChange::LastOwner => return Err(last_owner()),
    }
    audit::record(
        store,
        Entry {
            workspace_id: Some(workspace_id),
            actor: actor.clone(),
            action: "member.role_changed",
            target: Some(("user", member.to_string())),
            detail: serde_json::json!({ "email": current.email, "from": current.role.as_str(), "to": role.as_str() }),
        },
    )
    .await?;
    let changed = store.member(workspace_id, member).await?;
    changed.ok_or_else(|| Error::not_found("Member"))
}

/// The member that [`remove`] would remove, for a door that asks first: the same access
/// rule, so a caller who may not remove him does not learn who he is either.
pub async fn member_to_remove(store: &Store, caller: &Caller, workspace_id: Uuid, member: Uuid) -> Result<Member> {
    let by = caller.id();
    Ok(removable(store, by, workspace_id, member).await?.1)
}

/// The caller's role and the member, once the caller may remove members (or leave).
async fn removable(store: &Store, by: Uuid, workspace_id: Uuid, member: Uuid) -> Result<(Role, Member)> {
    // The caller's access first: looking the member up before it would tell an outsider
    // (or a viewer) who belongs to the workspace by the answer's sentence.
    let need = if by == member { Need::Read } else { Need::Manage };
    let my_role = access::require(store, by, Target::Workspace(workspace_id), need).await?;
    let current = store
        .member(workspace_id, member)
        .await?
        .ok_or_else(|| Error::not_found("Member"))?;
    Ok((my_role, current))
}

/// Removes a member (or lets a member leave). His access to the workspace ends with the
/// next request he makes, whatever session or token he uses.
pub async fn remove(store: &Store, caller: &Caller, workspace_id: Uuid, member: Uuid) -> Result<()> {
    caller.may_change()?;
    let by = caller.id();
    let actor = &caller.actor();
    let (my_role, current) = removable(store, by, workspace_id, member).await?;
    if by != member && !my_role.may_assign(current.role) {
        return Err(Error::forbidden("Only an owner may remove an owner"));
    }
    match store.remove_member(workspace_id, member).await? {
        MemberChange::Done => {}
        MemberChange::NotAMember => return Err(Error::not_found("Member")),
        MemberChange::LastOwner => return Err(last_owner()),
    }
    audit::record(
        store,
        Entry {
            workspace_id: Some(workspace_id),
            actor: actor.clone(),
            action: "member.removed",
            target: Some(("user", member.to_string())),
            detail: serde_json::json!({ "email": current.email, "role": current.role.as_str() }),
        },
    )
    .await
}

fn last_owner() -> Error {
    Error::conflict("A workspace keeps at least one owner: make someone else an owner first")
}
