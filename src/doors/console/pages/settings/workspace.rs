//! The workspace's settings: its name, its members and their roles, and invitations.
//! Everyone sees the members; admins and owners change them (the rules of
//! `accounts::teams`: only an owner makes or unmakes an owner, the last owner stays).

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use uuid::Uuid;

use super::{Done, Message, on_the_form, when};
use crate::app::accounts::teams;
use crate::domain::paging::PageRequest;
use crate::domain::workspace::{Invitation, Member, Need, Role};
use crate::doors::console::pages::{Button, ConfirmDelete, SettingsNav, Shell, render};
use crate::doors::console::session::{Change, Visitor};
use crate::doors::console::{PageResult, page};
use crate::error::Error;
use crate::services::Services;

const DONE: &[(&str, &str)] = &[
    ("renamed", "The workspace has its new name."),
    (
        "role",
        "The role is changed. It applies to the member's next page or request.",
    ),
    ("removed", "The member is removed; their access ended at once."),
    ("withdrawn", "The invitation is withdrawn; its link no longer works."),
];

const ROLES: [Role; 4] = [Role::Owner, Role::Admin, Role::Researcher, Role::Viewer];

/// A member's row: whether the visitor may change him, and to which roles.
struct MemberRow {
    member: Member,
    joined: String,
    is_me: bool,
    manageable: bool,
}

struct InvitationRow {
    invitation: Invitation,
    expires: String,
}

#[derive(Template)]
#[template(path = "settings_workspace.html")]
struct WorkspacePage {
    shell: Shell,
    nav: SettingsNav,
    csrf: String,
    name: String,
    personal: bool,
    my_role: &'static str,
    is_admin: bool,
    members: Vec<MemberRow>,
    /// The roles the visitor may give.
    roles: Vec<&'static str>,
    invitations: Vec<InvitationRow>,
    /// The invitation just made, whose link is shown first.
    invited: Option<Invitation>,
    message: Message,
    email: String,
    role: String,
}

#[derive(Deserialize, Default)]
struct ShowQuery {
    done: Option<String>,
    invited: Option<Uuid>,
}

async fn render_page(
    services: &Services,
    visitor: &Visitor,
    status: StatusCode,
    message: Message,
    invited: Option<Uuid>,
    form: Option<&InviteForm>,
) -> PageResult {
    let workspace_id = visitor.current.id;
    let everything = PageRequest::everything();
    let is_admin = visitor.current.role.allows(Need::Manage);
    let my_role = visitor.current.role;
    let members = teams::members(&services.store, &visitor.caller, workspace_id, &everything)
        .await?
        .items
        .into_iter()
        .map(|member| MemberRow {
            joined: when(&member.joined_at),
            is_me: member.user_id == visitor.caller.user.id,
            manageable: my_role.may_assign(member.role),
            member,
        })
        .collect();
    let (invitations, invited) = if is_admin {
        let now = crate::domain::now();
        let all = teams::invitations(services, &visitor.caller, workspace_id, &everything)
            .await?
            .items;
        let invited = invited.and_then(|id| all.iter().find(|i| i.id == id && i.accepted_at.is_none()).cloned());
        let open = all
            .into_iter()
            .filter(|i| i.accepted_at.is_none() && i.expires_at > now)
            .map(|invitation| InvitationRow {
                expires: when(&invitation.expires_at),
                invitation,
            })
            .collect();
        (open, invited)
    } else {
        (Vec::new(), None)
    };
    let html = WorkspacePage {
        shell: Shell::of(visitor),
        nav: SettingsNav::new(visitor, "workspace"),
        csrf: visitor.csrf.clone(),
        name: visitor.current.name.clone(),
        personal: workspace_id == visitor.caller.user.id,
        my_role: my_role.as_str(),
        is_admin,
        members,
        roles: ROLES
            .iter()
            .filter(|role| my_role.may_assign(**role))
            .map(|role| role.as_str())
            .collect(),
        invitations,
        invited,
        message,
        email: form.map(|f| f.email.clone()).unwrap_or_default(),
        role: form.map_or_else(|| "researcher".to_owned(), |f| f.role.clone()),
    };
    Ok(page(status, render(&html)))
}

async fn show(State(services): State<Services>, visitor: Visitor, Query(query): Query<ShowQuery>) -> PageResult {
    let done = Done { done: query.done };
    render_page(
        &services,
        &visitor,
        StatusCode::OK,
        Message::done(&done, DONE),
        query.invited,
        None,
    )
    .await
}

/// A change that went wrong in a way the visitor can fix is shown on the page, with
/// what he typed; anything else is a page of its own.
async fn refused(services: &Services, visitor: &Visitor, error: Error, form: Option<&InviteForm>) -> PageResult {
    if on_the_form(&error) {
        render_page(
            services,
            visitor,
            crate::doors::status(&error),
            Message::error(&error),
            None,
            form,
        )
        .await
    } else {
        Err(error.into())
    }
}

#[derive(Deserialize)]
struct NameForm {
    name: String,
}

async fn rename(State(services): State<Services>, Change(visitor, form): Change<NameForm>) -> PageResult {
    let workspace_id = visitor.current.id;
    match teams::rename(&services.store, &visitor.caller, workspace_id, &form.name).await {
        Ok(_) => Ok(Redirect::to("/settings/workspace?done=renamed").into_response()),
        Err(error) => refused(&services, &visitor, error, None).await,
    }
}

#[derive(Deserialize)]
struct InviteForm {
    email: String,
    role: String,
}

async fn invite(State(services): State<Services>, Change(visitor, form): Change<InviteForm>) -> PageResult {
    let Some(role) = Role::parse(&form.role) else {
        let error = Error::conflict("Choose one of the roles offered");
        return refused(&services, &visitor, error, Some(&form)).await;
    };
    let invited = teams::invite(
        &services,
        services.mailer.as_deref(),
        &visitor.caller,
        visitor.current.id,
        &form.email,
        role,
    )
    .await;
    match invited {
        Ok(invitation) => Ok(Redirect::to(&format!("/settings/workspace?invited={}", invitation.id)).into_response()),
        Err(error) => refused(&services, &visitor, error, Some(&form)).await,
    }
}

#[derive(Deserialize)]
struct RoleForm {
    role: String,
}

async fn change_role(
    State(services): State<Services>,
    Path(user_id): Path<Uuid>,
    Change(visitor, form): Change<RoleForm>,
) -> PageResult {
    let role = Role::parse(&form.role).ok_or_else(|| Error::conflict("Choose one of the roles offered"))?;
    let changed = teams::change_role(&services.store, &visitor.caller, visitor.current.id, user_id, role).await;
    match changed {
        Ok(_) => Ok(Redirect::to("/settings/workspace?done=role").into_response()),
        Err(error) => refused(&services, &visitor, error, None).await,
    }
}

async fn confirm_remove(State(services): State<Services>, visitor: Visitor, Path(user_id): Path<Uuid>) -> PageResult {
    let member = teams::member_to_remove(&services.store, &visitor.caller, visitor.current.id, user_id).await?;
    Ok(ConfirmDelete::ask(
        &visitor,
        format!("Remove {} from {}?", member.email, visitor.current.name),
        "Remove them",
        format!(
            "{} loses access to everything in this workspace at once, on every device and API token. \
             What they made stays. They can join again only with a new invitation.",
            member.email
        ),
        format!("/settings/workspace/members/{user_id}/remove"),
        "/settings/workspace".to_owned(),
    ))
}

async fn remove(
    State(services): State<Services>,
    Path(user_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult {
    let removed = teams::remove(&services.store, &visitor.caller, visitor.current.id, user_id).await;
    match removed {
        Ok(()) if user_id == visitor.caller.user.id => Ok(Redirect::to("/").into_response()),
        Ok(()) => Ok(Redirect::to("/settings/workspace?done=removed").into_response()),
        Err(error) => refused(&services, &visitor, error, None).await,
    }
}

async fn confirm_withdraw(
    State(services): State<Services>,
    visitor: Visitor,
    Path(invitation_id): Path<Uuid>,
) -> PageResult {
    let everything = PageRequest::everything();
    let invitation = teams::invitations(&services, &visitor.caller, visitor.current.id, &everything)
        .await?
        .items
        .into_iter()
        .find(|i| i.id == invitation_id && i.accepted_at.is_none())
        .ok_or_else(|| Error::not_found("Invitation"))?;
    Ok(ConfirmDelete::ask(
        &visitor,
        format!("Withdraw the invitation of {}?", invitation.email),
        "Withdraw it",
        "Its link stops working at once; to let them in later, invite them again.".to_owned(),
        format!("/settings/workspace/invitations/{invitation_id}/withdraw"),
        "/settings/workspace".to_owned(),
    ))
}

async fn withdraw(
    State(services): State<Services>,
    Path(invitation_id): Path<Uuid>,
    Change(visitor, _): Change<Button>,
) -> PageResult<Response> {
    teams::withdraw(&services.store, &visitor.caller, visitor.current.id, invitation_id).await?;
    Ok(Redirect::to("/settings/workspace?done=withdrawn").into_response())
}

pub fn routes() -> Router<Services> {
    Router::new()
        .route("/settings/workspace", get(show))
        .route("/settings/workspace/name", post(rename))
        .route("/settings/workspace/invitations", post(invite))
        .route(
            "/settings/workspace/invitations/{invitation_id}/withdraw",
            get(confirm_withdraw).post(withdraw),
        )
        .route("/settings/workspace/members/{user_id}/role", post(change_role))
        .route(
            "/settings/workspace/members/{user_id}/remove",
            get(confirm_remove).post(remove),
        )
}
