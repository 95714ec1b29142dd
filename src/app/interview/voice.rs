//! Voice interviews over LiveKit: what the interviewer agent reads (its instructions for
//! a room) and reports (the transcript, which becomes the record as a typed interview's
//! does), and what LiveKit's events change.

use serde_json::Value;
use uuid::Uuid;

use crate::app::interview::{self, interviewer, phrases};
use crate::domain::interview::{AgentConfig, EventOutcome, RoomStatus, SessionReport, SessionReported, TurnRole};
use crate::domain::now;
use crate::error::{Error, Result, UnknownReferences};
use crate::providers::livekit;
use crate::store::{NewTurn, PublicRoom, Store, TurnRefused};

async fn agent_room(store: &Store, room_id: Uuid) -> Result<PublicRoom> {
    store
        .room_for_agent(room_id)
        .await?
        .ok_or_else(|| Error::not_found("Room"))
}

/// The room a session report names in its body: unknown is a 409.
async fn reported_room(store: &Store, room_id: Uuid) -> Result<PublicRoom> {
    store
        .room_for_agent(room_id)
        .await?
        .ok_or_else(|| UnknownReferences::one("room", room_id, "room_id"))
}

/// The interviewer agent's instructions for the room.
pub async fn agent_config(store: &Store, room_id: Uuid) -> Result<AgentConfig> {
    let room = agent_room(store, room_id).await?;
    let at = now();
    let brief = interview::brief(&room, at);
    let greeting = interviewer::offline_next(&brief, &[]).text;
    Ok(AgentConfig {
        room_id: room.room.id,
        livekit_room: livekit::room_name(room.room.id),
        respondent_identity: livekit::respondent_identity(room.room.id),
        status: interview::room_status(&room.room, at),
        language_name: phrases::language_name(&brief.language),
        instructions: interviewer::system_prompt(&brief),
        greeting,
        research_goals: brief.research_goals.clone(),
        interview_guide: brief.guide.clone(),
        topics_for_respondent: brief.topics.clone(),
        language: brief.language,
        max_duration_minutes: room.room.max_duration_minutes,
        ends_at: interview::ends_at(&room.room, at),
    })
}

/// Takes the agent's transcript of a voice interview: the room (started by the report
/// if the respondent never used the join form) is completed and its transcript becomes
/// the room's record.
pub async fn report_session(store: &Store, report: SessionReport) -> Result<SessionReported> {
    let room = reported_room(store, report.room_id).await?;
    let at = now();
    // A voice respondent may never have used the join form: the report starts the room.
    if room.room.status == RoomStatus::Pending.as_str() {
        store.start_room_by_voice(room.room.id, at).await?;
    }
    let room = reported_room(store, report.room_id).await?;
    if room.room.status != RoomStatus::Active.as_str() {
        let status = interview::room_status(&room.room, at);
        return Err(Error::conflict(format!(
            "This interview is {}; its transcript cannot be reported.",
            status.as_str()
        )));
    }
    let turns = report
        .transcript
        .iter()
        .filter(|turn| !turn.text.trim().is_empty())
        .enumerate();
    for (index, turn) in turns {
        let new = NewTurn {
            from_respondent: turn.role == TurnRole::Respondent,
            text: turn.text.trim().to_owned(),
            step: None,
            follow_up: false,
            message_id: None,
            at: turn
                .at
                .unwrap_or_else(|| at + chrono::Duration::milliseconds(index as i64)),
        };
        match store.add_turn(room.room.id, &new, None).await {
            Ok(_) | Err(TurnRefused::Clash) => {}
            Err(TurnRefused::NotActive) => return Err(Error::conflict("This interview ended meanwhile.")),
            Err(TurnRefused::Failed(error)) => return Err(error.into()),
        }
    }
    let record_id = interview::close(store, &room.room, None).await?;
    Ok(SessionReported {
        room_id: room.room.id,
        status: if record_id.is_some() {
            RoomStatus::Completed
        } else {
            RoomStatus::parse(&store.get_room_status(room.room.id).await?.unwrap_or_default())
                .unwrap_or(RoomStatus::Completed)
        },
        record_id: match record_id {
            Some(id) => Some(id),
            None => agent_room(store, room.room.id).await?.room.record_id,
        },
    })
}

/// Applies a LiveKit event whose signature was checked, once however often it comes.
pub async fn livekit_event(store: &Store, body: &[u8]) -> Result<EventOutcome> {
    let Ok(event) = serde_json::from_slice::<Value>(body) else {
        return Ok(EventOutcome::Ignored);
    };
    let kind = event["event"].as_str().unwrap_or_default().to_owned();
    let Some(room_id) = event["room"]["name"].as_str().and_then(livekit::room_id) else {
        return Ok(EventOutcome::Ignored);
    };
    let id = event["id"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("{kind}:{room_id}:{}", event["createdAt"]));
    if !store.note_livekit_event(&id, &kind, now()).await? {
        return Ok(EventOutcome::Duplicate);
    }
    match apply(store, &kind, room_id, &event).await {
        Ok(applied) => Ok(if applied {
            EventOutcome::Applied
        } else {
            EventOutcome::Ignored
        }),
        Err(error) => {
            // LiveKit sends it again; let that one apply.
            let _ = store.forget_livekit_event(&id).await;
            Err(error)
        }
    }
}

/// What an event changes: the respondent joining starts a room nobody started; the
/// room finishing ends an interview whose transcript is in (the agent's report usually
/// ends it first; otherwise the watch does when its time is up).
async fn apply(store: &Store, kind: &str, room_id: Uuid, event: &Value) -> Result<bool> {
    let respondent = event["participant"]["identity"].as_str() == Some(livekit::respondent_identity(room_id).as_str());
    match kind {
        "participant_joined" if respondent => Ok(store.start_room_by_voice(room_id, now()).await?),
        "room_finished" => {
            let Some(room) = store.room_for_agent(room_id).await? else {
                return Ok(false);
            };
            if room.room.status != RoomStatus::Active.as_str() || store.turns(room_id).await?.is_empty() {
                return Ok(false);
            }
            let closed = interview::close(store, &room.room, None).await?.is_some();
            Ok(closed)
        }
        _ => Ok(false),
    }
}
