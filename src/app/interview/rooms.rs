//! The researcher's side of interviews: rooms made in a project, each with its own link,
//! changed while nobody has joined, cancelled.

use crate::app::Caller;
use crate::domain::workspace::Need;
use crate::store::Target;
use chrono::{DateTime, Utc};
use rand::RngCore;
use uuid::Uuid;

use super::{NONCE_BYTES, closed, room_status};
use crate::app::interview;
use crate::domain::interview::{Room, RoomCreate, RoomStatus, RoomUpdate};
use crate::domain::now;
use crate::domain::paging::{Page, PageRequest};
use crate::error::{Error, Result, UnknownReferences, ValidationIssue};
use crate::services::Services;
use crate::store::{CreatedKey, NewRoom, Store, StoredRoom};

/// The room as its owner sees it, link included.
pub fn owner_view(services: &Services, room: &StoredRoom, at: DateTime<Utc>) -> Room {
    let token = interview::access_token(&services.secret, room.id, &room.token_nonce);
    let url = interview::room_url(&services.settings.server.public_url, &token);
    room.to_room(token, url, at)
}

/// The user's room.
pub async fn owned_room(store: &Store, caller: &Caller, room_id: Uuid) -> Result<StoredRoom> {
    let owner_id = caller.id();
    store
        .get_room(owner_id, room_id)
        .await?
        .ok_or_else(|| Error::not_found("Room"))
}

/// The user's room of the project, if his role on it allows changing it (unseen, or of
/// another project, is a 404; seen but not allowed a 403).
pub async fn writable_room(store: &Store, caller: &Caller, project_id: Uuid, room_id: Uuid) -> Result<StoredRoom> {
    caller.require(store, Target::Room(room_id), Need::Write).await?;
    let room = owned_room(store, caller, room_id).await?;
    if room.project_id != project_id {
        return Err(Error::not_found("Interview room"));
    }
    Ok(room)
}

/// A page of the user's rooms, of one project (which he must be able to read) or all,
/// newest first, as their owner sees them.
pub async fn list(
    services: &Services,
    caller: &Caller,
    project_id: Option<Uuid>,
    page: &PageRequest<CreatedKey>,
) -> Result<Page<Room, CreatedKey>> {
    let user_id = caller.id();
    if let Some(project_id) = project_id {
        caller
            .require(&services.store, Target::Project(project_id), Need::Read)
            .await?;
    }
    let at = now();
    let rooms = services.store.list_rooms(user_id, project_id, page).await?;
    Ok(rooms.map(|room| owner_view(services, &room, at)))
}

/// Makes `count` rooms (default one) in the project, each with its own link, within the
/// user's rooms per day.
pub async fn create(services: &Services, caller: &Caller, body: RoomCreate) -> Result<Vec<Room>> {
    caller.may_change()?;
    let owner_id = caller.id();
    caller
        .require_named(
            &services.store,
            Target::Project(body.project_id),
            Need::Write,
            "project_id",
        )
        .await?;
    if let Some(name) = body.room_name.as_deref().filter(|name| name.trim().is_empty()) {
        return Err(Error::validation(vec![ValidationIssue::blank("room_name", name)]));
    }
    let project = services
        .store
        .get_project(owner_id, body.project_id)
        .await?
        .ok_or_else(|| UnknownReferences::one("project", body.project_id, "project_id"))?;
    let count = body.count.unwrap_or(1);
    crate::app::quota::check_rooms_today(&services.store, &services.settings.quotas, owner_id, count)
        .await?
        .map_err(Error::from)?;
    let base_name = body
        .room_name
        .as_deref()
        .map(str::trim)
        .unwrap_or(&project.name)
        .to_owned();
    let at = now();
    let rooms: Vec<NewRoom> = (1..=count)
        .map(|number| {
            let id = Uuid::new_v4();
            let (token_nonce, token_hash) = new_link(services, id);
            NewRoom {
                id,
                token_hash,
                token_nonce,
                room_name: if count > 1 {
                    format!("{base_name} {number}")
                } else {
                    base_name.clone()
                },
                max_duration_minutes: body.max_duration_minutes.unwrap_or(30),
                language: body
                    .language
                    .clone()
                    .unwrap_or_else(|| crate::domain::interview::DEFAULT_LANGUAGE.into()),
                topics_for_respondent: body.topics_for_respondent.clone(),
                research_goals_override: body.research_goals_override.clone(),
                interview_guide_override: body.interview_guide_override.clone(),
                created_at: at + chrono::Duration::microseconds(number - 1),
                expires_at: at
                    + chrono::Duration::microseconds(number - 1)
                    + chrono::Duration::days(body.expires_in_days.unwrap_or(7)),
            }
        })
        .collect();
    services.store.create_rooms(project.id, &rooms).await?;
    Ok(rooms
        .iter()
        .map(|room| owner_view(services, &room.stored(project.id), at))
        .collect())
}

/// A new link for the room `id`: the nonce it is derived from, and the hash it is found by.
pub fn new_link(services: &Services, id: Uuid) -> (Vec<u8>, Vec<u8>) {
    let mut nonce = vec![0u8; NONCE_BYTES];
    rand::rng().fill_bytes(&mut nonce);
    let token = interview::access_token(&services.secret, id, &nonce);
    (nonce, interview::token_hash(&token))
}

/// Changes a room nobody has joined yet.
pub async fn update(services: &Services, caller: &Caller, room_id: Uuid, changes: &RoomUpdate) -> Result<Room> {
    caller
        .require(&services.store, Target::Room(room_id), Need::Write)
        .await?;
    if let Some(name) = changes.room_name.as_value().filter(|name| name.trim().is_empty()) {
        return Err(Error::validation(vec![ValidationIssue::blank("room_name", name)]));
    }
    let room = owned_room(&services.store, caller, room_id).await?;
    let status = room_status(&room, now());
    if status != RoomStatus::Pending || !services.store.update_room(room.id, changes).await? {
        let room = owned_room(&services.store, caller, room.id).await?;
        return Err(closed(room_status(&room, now())));
    }
    let room = owned_room(&services.store, caller, room.id).await?;
    Ok(owner_view(services, &room, now()))
}

/// Cancels a room: its link answers with that status, and an interview in progress stops
/// and keeps no record.
pub async fn cancel(services: &Services, caller: &Caller, room_id: Uuid) -> Result<Room> {
    caller
        .require(&services.store, Target::Room(room_id), Need::Write)
        .await?;
    let room = owned_room(&services.store, caller, room_id).await?;
    if !services.store.cancel_room(room.id).await? {
        let room = owned_room(&services.store, caller, room.id).await?;
        return Err(closed(room_status(&room, now())));
    }
    let room = owned_room(&services.store, caller, room.id).await?;
    Ok(owner_view(services, &room, now()))
}
