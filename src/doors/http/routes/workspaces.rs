//! Workspaces (tag `workspaces`): making and running them, their members and roles,
//! invitations, and the audit log.

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::app::Caller;
use crate::app::accounts::audit::{self, AuditFilter};
use crate::app::accounts::teams::{self, Accepter};
use crate::domain::workspace::{AuditEvent, Invitation, Member, Role, Workspace};
use crate::doors::http::AppState;
use crate::doors::http::extract::{
    Client, Credentials, Ids, IdsAndJson, PathText, ValidJson, has_session_cookie, read_json_body_up_to,
};
use crate::doors::http::paging::{PageQuery, Paging, paged};
use crate::doors::http::validation::parse_body;
use crate::error::{Error, Result};

#[derive(Deserialize, ToSchema)]
pub struct WorkspaceWrite {
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
}

#[derive(Deserialize, ToSchema)]
pub struct RoleChange {
    pub role: Role,
}

#[derive(Deserialize, ToSchema)]
pub struct InvitationCreate {
    #[schema(min_length = 3, max_length = 254)]
    pub email: String,
    pub role: Role,
}

/// Accepting an invitation: a signed-in person sends nothing; a new person sends the
/// password of his new account (and his name).
#[derive(Deserialize, ToSchema, Default)]
pub struct InvitationAccept {
    #[schema(min_length = 1, max_length = 1024)]
    pub password: Option<String>,
    #[schema(max_length = 200)]
    pub name: Option<String>,
}

/// What accepting an invitation came to. A new account is signed in (its cookie is set
/// and `csrf_token` given).
#[derive(Serialize, ToSchema)]
pub struct InvitationAccepted {
    pub workspace_id: Uuid,
    /// The role the caller holds in the workspace now: the invited one, or his own when it
    /// was higher already.
    pub role: Role,
    pub csrf_token: Option<String>,
}

/// The workspaces the caller belongs to, with his role in each; his personal one first.
#[utoipa::path(get, path = "/workspaces", tag = "workspaces", security(("bearer" = [])),
    responses((status = 200, description = "The workspaces", body = Vec<Workspace>)))]
async fn list_workspaces(caller: Caller, State(app): State<AppState>) -> Result<Json<Vec<Workspace>>> {
    Ok(Json(teams::workspaces(&app.store, &caller).await?))
}

/// Makes a team workspace; its maker is its owner.
#[utoipa::path(post, path = "/workspaces", tag = "workspaces", security(("bearer" = [])),
    request_body = WorkspaceWrite,
    responses((status = 201, description = "The workspace", body = Workspace)))]
async fn create_workspace(
    caller: Caller,
    State(app): State<AppState>,
    ValidJson(body): ValidJson<WorkspaceWrite>,
) -> Result<(StatusCode, Json<Workspace>)> {
    let workspace = teams::create(&app.store, &caller, &body.name).await?;
    Ok((StatusCode::CREATED, Json(workspace)))
}

#[utoipa::path(get, path = "/workspaces/{workspace_id}", tag = "workspaces", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace")),
    responses((status = 200, description = "The workspace", body = Workspace)))]
async fn get_workspace(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<Json<Workspace>> {
    Ok(Json(teams::workspace(&app.store, &caller, ids[0]).await?))
}

/// Renames a workspace (owners and admins).
#[utoipa::path(patch, path = "/workspaces/{workspace_id}", tag = "workspaces", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace")),
    request_body = WorkspaceWrite,
    responses((status = 200, description = "The workspace", body = Workspace)))]
async fn update_workspace(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, WorkspaceWrite>,
) -> Result<Json<Workspace>> {
    Ok(Json(teams::rename(&app.store, &caller, ids[0], &body.name).await?))
}

/// Deletes a team workspace with everything in it (owners only). A personal workspace
/// cannot be deleted (409).
#[utoipa::path(delete, path = "/workspaces/{workspace_id}", tag = "workspaces", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace")),
    responses((status = 204, description = "Deleted"),
        (status = 409, description = "A personal workspace", body = crate::error::ErrorBody)))]
async fn delete_workspace(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<1>) -> Result<StatusCode> {
    teams::delete(&app, &caller, ids[0]).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The workspace's members, in the order they joined.
#[utoipa::path(get, path = "/workspaces/{workspace_id}/members", tag = "workspaces", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace"), PageQuery),
    responses((status = 200, description = "A page of the members", body = Vec<Member>)))]
async fn list_members(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    paging: Paging,
    uri: Uri,
) -> Result<Response> {
    let page = paging.request()?;
    Ok(paged(&uri, teams::members(&app.store, &caller, ids[0], &page).await?))
}

/// Changes a member's role (owners and admins; only an owner makes or unmakes an owner).
#[utoipa::path(patch, path = "/workspaces/{workspace_id}/members/{user_id}", tag = "workspaces",
    security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace"), ("user_id" = Uuid, Path, description = "The member")),
    request_body = RoleChange,
    responses((status = 200, description = "The member", body = Member),
        (status = 409, description = "The workspace would be left without an owner", body = crate::error::ErrorBody)))]
async fn update_member(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<2, RoleChange>,
) -> Result<Json<Member>> {
    let [workspace_id, member] = ids;
    let member = teams::change_role(&app.store, &caller, workspace_id, member, body.role).await?;
    Ok(Json(member))
}

/// Removes a member, or lets the caller leave; his access ends at once.
#[utoipa::path(delete, path = "/workspaces/{workspace_id}/members/{user_id}", tag = "workspaces",
    security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace"), ("user_id" = Uuid, Path, description = "The member")),
    responses((status = 204, description = "Removed"),
        (status = 409, description = "The last owner", body = crate::error::ErrorBody)))]
async fn remove_member(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<2>) -> Result<StatusCode> {
    let [workspace_id, member] = ids;
    teams::remove(&app.store, &caller, workspace_id, member).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The workspace's invitations, newest first, with their links (owners and admins).
#[utoipa::path(get, path = "/workspaces/{workspace_id}/invitations", tag = "workspaces", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace"), PageQuery),
    responses((status = 200, description = "A page of the invitations", body = Vec<Invitation>)))]
async fn list_invitations(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    paging: Paging,
    uri: Uri,
) -> Result<Response> {
    let page = paging.request()?;
    Ok(paged(&uri, teams::invitations(&app, &caller, ids[0], &page).await?))
}

/// Invites an address with a role. The link works once and expires
/// (`INSIGHT_INVITATION_DAYS`); it is emailed when mail is set up, and always answered here.
#[utoipa::path(post, path = "/workspaces/{workspace_id}/invitations", tag = "workspaces", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace")),
    request_body = InvitationCreate,
    responses((status = 201, description = "The invitation, with its link", body = Invitation), crate::doors::http::openapi::Conflicts))]
async fn create_invitation(
    caller: Caller,
    State(app): State<AppState>,
    IdsAndJson(ids, body): IdsAndJson<1, InvitationCreate>,
) -> Result<(StatusCode, Json<Invitation>)> {
    let invitation = teams::invite(&app, app.mailer.as_deref(), &caller, ids[0], &body.email, body.role).await?;
    Ok((StatusCode::CREATED, Json(invitation)))
}

/// Withdraws an open invitation; its link stops working.
#[utoipa::path(delete, path = "/workspaces/{workspace_id}/invitations/{invitation_id}", tag = "workspaces",
    security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace"), ("invitation_id" = Uuid, Path, description = "The invitation")),
    responses((status = 204, description = "Withdrawn")))]
async fn delete_invitation(caller: Caller, State(app): State<AppState>, Ids(ids): Ids<2>) -> Result<StatusCode> {
    let [workspace_id, invitation_id] = ids;
    teams::withdraw(&app.store, &caller, workspace_id, invitation_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Accepts an invitation: signed in as the invited address (compared without case; any
/// other account gets 403 and the invitation stays open for its addressee), or as a new
/// person with `{password}` (the account gets the invited address and is signed in). A
/// member of the workspace already keeps the higher of his role and the invited one
/// (never lowered); `role` is the one he holds afterwards.
#[utoipa::path(post, path = "/invitations/{token}/accept", tag = "workspaces",
    params(("token" = String, Path, description = "The invitation link's token")),
    request_body(content = InvitationAccept, description = "Only for a new account"),
    responses(
        (status = 200, description = "Joined", body = InvitationAccepted),
        (status = 401, description = "An existing account must sign in first", body = crate::error::ErrorBody),
        (status = 403, description = "Signed in as another address than the invited one, or new accounts are closed on this service (INSIGHT_SIGNUP=closed)", body = crate::error::ErrorBody),
        (status = 404, description = "Unknown, used or withdrawn", body = crate::error::ErrorBody),
        (status = 410, description = "Expired", body = crate::error::ErrorBody),
        crate::doors::http::openapi::Conflicts,
    ))]
async fn accept_invitation(
    State(app): State<AppState>,
    client: Client,
    PathText(token): PathText,
    request: axum::extract::Request,
) -> Result<Response> {
    let (mut parts, body) = request.into_parts();
    let signed_in = parts.headers.contains_key(axum::http::header::AUTHORIZATION)
        || has_session_cookie(&parts, &app.settings.server.public_url);
    let caller = if signed_in {
        Some(<Credentials as axum::extract::FromRequestParts<AppState>>::from_request_parts(&mut parts, &app).await?)
    } else {
        None
    };
    let request = axum::extract::Request::from_parts(parts, body);
    let bytes = read_json_body_up_to(request, 16 * 1024)
        .await
        .ok()
        .filter(|b| !b.is_empty());
    let body: InvitationAccept = match bytes {
        Some(bytes) => parse_body(&bytes)?,
        None => InvitationAccept::default(),
    };
    let accepter = match (caller, body.password.as_deref()) {
        (Some(caller), _) => Accepter::SignedIn(caller.holder.user),
        (None, Some(password)) => Accepter::New {
            password,
            name: body.name.as_deref(),
        },
        (None, None) => {
            return Err(Error::Unauthenticated(
                "Sign in to accept this invitation, or send {\"password\"} to make a new account".into(),
            ));
        }
    };
    let (workspace_id, role, session) = teams::accept(&app, &token, accepter, client.from()).await?;
    match session {
        Some(session) => {
            let csrf_token = Some(crate::app::accounts::sign_in::csrf_token(&app.secret, &session.value));
            let cookie = crate::app::accounts::sign_in::cookie(
                &app.settings.server.public_url,
                &session.value,
                app.settings.accounts.session_lifetime(),
            );
            let mut response = Json(InvitationAccepted {
                workspace_id,
                role,
                csrf_token,
            })
            .into_response();
            response.headers_mut().insert(
                axum::http::header::SET_COOKIE,
                axum::http::HeaderValue::from_str(&cookie).map_err(anyhow::Error::from)?,
            );
            Ok(response)
        }
        None => Ok(Json(InvitationAccepted {
            workspace_id,
            role,
            csrf_token: None,
        })
        .into_response()),
    }
}

/// The workspace's audit log, newest first (owners and admins): what happened in it, and
/// its members' sign-ins. Filter by `actor` (an email address) and `action` (a name, or a
/// prefix ending in `.` such as `session.`).
#[utoipa::path(get, path = "/workspaces/{workspace_id}/audit", tag = "workspaces", security(("bearer" = [])),
    params(("workspace_id" = Uuid, Path, description = "The workspace"),
        ("actor" = Option<String>, Query, description = "Only what this address did"),
        ("action" = Option<String>, Query, description = "Only this action, or actions under this prefix (`session.`)"),
        PageQuery),
    responses((status = 200, description = "A page of the log", body = Vec<AuditEvent>)))]
async fn audit_log(
    caller: Caller,
    State(app): State<AppState>,
    Ids(ids): Ids<1>,
    paging: Paging,
    uri: Uri,
) -> Result<Response> {
    let page = paging.request()?;
    let query = |name: &str| {
        uri.query().and_then(|query| {
            url::form_urlencoded::parse(query.as_bytes())
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        })
    };
    let filter = AuditFilter {
        actor_email: query("actor").map(|email| email.to_lowercase()),
        action: query("action"),
    };
    Ok(paged(
        &uri,
        audit::log(&app.store, &caller, ids[0], &filter, &page).await?,
    ))
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_workspaces, create_workspace))
        .routes(routes!(get_workspace, update_workspace, delete_workspace))
        .routes(routes!(list_members))
        .routes(routes!(update_member, remove_member))
        .routes(routes!(list_invitations, create_invitation))
        .routes(routes!(delete_invitation))
        .routes(routes!(accept_invitation))
        .routes(routes!(audit_log))
}
