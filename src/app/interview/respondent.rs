//! The respondent's side of an interview, authorised only by the room's link: what the
//! room is, joining it, each answer and the interviewer's next turn, and leaving.

use chrono::{DateTime, Utc};
use tokio::sync::mpsc;

use super::phrases::phrases;
use super::{closed, room_status};
use crate::app::conversation::Event;
use crate::domain::interview::{
    JoinAnswer, LeaveAnswer, MessageRequest, RoomInfo, RoomStatus, TranscriptTurn, TurnAnswer, VoiceAccess,
};
use crate::domain::now;
use crate::domain::user::normalize_email;
use crate::error::{Error, Result, ValidationIssue};
use crate::services::Services;
use crate::store::{NewTurn, PublicRoom, Store, StoredTurn, TurnRefused};

/// A respondent's answer taken: the interviewer's turn is known already (the answer was
/// sent before, or the time is up), or it is being written.
pub enum Turn {
    Answered(TurnAnswer),
    Answering(mpsc::UnboundedReceiver<Event<TurnAnswer>>),
}

/// The room behind a link; 404 for a link that is not one.
pub async fn room_by_token(store: &Store, token: &str) -> Result<PublicRoom> {
    store
        .room_by_token_hash(&super::token_hash(token))
        .await?
        .ok_or_else(|| Error::NotFound("No interview has this link; check that it was copied whole.".into()))
}

/// The 422 for starting without accepting the consent text.
fn not_consented(given: Option<bool>) -> Error {
    let (kind, sentence) = match given {
        None => (
            "missing",
            "Field required: accept the consent text to join (consent: true)",
        ),
        Some(_) => (
            "value_error",
            "Value error, accept the consent text to join (consent: true)",
        ),
    };
    Error::validation(vec![ValidationIssue::new(
        vec![serde_json::json!("body"), serde_json::json!("consent")],
        kind,
        sentence,
    )])
}

/// What a respondent may know of the room before joining.
pub fn room_info(room: &PublicRoom, at: DateTime<Utc>) -> RoomInfo {
    RoomInfo {
        room_name: room.room.room_name.clone(),
        max_duration_minutes: room.room.max_duration_minutes,
        status: room_status(&room.room, at),
        project_name: room.project_name.clone(),
        expires_at: room.room.expires_at,
        language: room.room.language.clone(),
        topics_for_respondent: room.room.topics_for_respondent.clone().unwrap_or_default(),
        consent_text: room.consent_text.clone(),
        consent_version: room.consent_text.as_ref().and(room.consent_version),
    }
}

/// Whether a message is one sent before: `(stored, its answer)`. With the client's
/// `message_id`, the turn with that id and the interviewer's answer after it, if any.
/// Without one, only a message the same as the last turn, which no answer followed (the
/// interviewer failed): a respondent may say the same thing twice, but not before the
/// interviewer answered the first time.
fn already_sent(turns: &[StoredTurn], message_id: &Option<String>, text: &str) -> (bool, Option<String>) {
    match message_id {
        Some(id) => match turns
            .iter()
            .rposition(|turn| turn.from_respondent && turn.message_id.as_ref() == Some(id))
        {
            Some(index) => {
                let answer = turns.get(index + 1).filter(|turn| !turn.from_respondent);
                (true, answer.map(|turn| turn.text.clone()))
            }
            None => (false, None),
        },
        None => (
            turns
                .last()
                .is_some_and(|last| last.from_respondent && last.text == text),
            None,
        ),
    }
}

/// The room of a respondent's session, checked: active, and the session its
/// respondent's.
async fn session_room(services: &Services, token: &str, session_id: &str) -> Result<PublicRoom> {
    let room = room_by_token(&services.store, token).await?;
    let owns = room.room.respondent_email.as_deref().is_some_and(|email| {
        super::token_hash(&super::session_id(&services.secret, room.room.id, email)) == super::token_hash(session_id)
    });
    // The session is named in the body, so an unknown one is a 409, as every unknown
    // reference in a body is; the room of the path exists.
    if !owns {
        return Err(Error::conflict(
            "No such session in this interview; join again with your email address.",
        ));
    }
    Ok(room)
}

/// Why a new interview cannot start, in words for the respondent, who is told nothing
/// of the workspace's affairs.
const NOT_AVAILABLE: &str = "This interview is not available just now; please try again later.";

/// Whether a room not started yet waits: its workspace spent its budget for AI work, so
/// no new interview starts (one under way closes at its next turn) until the budget is
/// raised or the month turns.
pub async fn not_available(services: &Services, room: &PublicRoom) -> Result<bool> {
    Ok(crate::app::gate::project_budget_spent(services, room.room.project_id)
        .await?
        .is_some())
}

/// Joins the room behind `token` as the respondent `email`: starts a pending interview
/// (the interviewer opens it), or rejoins the same respondent's active one where it was.
pub async fn join(services: &Services, token: &str, email: &str, consent: Option<bool>) -> Result<JoinAnswer> {
    let email = normalize_email(email).ok_or_else(|| {
        Error::validation(vec![
            ValidationIssue::value_error(
                vec![serde_json::json!("body"), serde_json::json!("email")],
                "not a valid email address",
            )
            .with_input(serde_json::json!(email)),
        ])
    })?;
    let mut room = room_by_token(&services.store, token).await?;
    // A workspace with a consent text lets no one start who has not accepted it (one
    // rejoining an interview under way accepted it when starting).
    let accepted = match (&room.consent_text, consent) {
        (None, _) => Ok(None),
        (Some(text), Some(true)) => Ok(Some((room.consent_version.unwrap_or(1), text.as_str()))),
        (Some(_), given) => Err(not_consented(given)),
    };
    let at = now();
    match room_status(&room.room, at) {
        RoomStatus::Pending => {
            let accepted = accepted?;
            if not_available(services, &room).await? {
                return Err(Error::conflict(NOT_AVAILABLE));
            }
            if !services.store.start_room(room.room.id, &email, accepted, at).await? {
                // Someone joined (or it expired) a moment ago: judge it as it is now.
                room = room_by_token(&services.store, token).await?;
            } else {
                room.room.status = RoomStatus::Active.as_str().into();
                room.room.respondent_email = Some(email.clone());
                room.room.started_at = Some(at);
            }
        }
        RoomStatus::Active => {}
        other => return Err(closed(other)),
    }
    let status = room_status(&room.room, now());
    if status != RoomStatus::Active {
        return Err(closed(status));
    }
    if room.room.respondent_email.as_deref() != Some(email.as_str()) {
        return Err(Error::conflict(
            "Someone else is taking this interview; each link is for one respondent.",
        ));
    }
    if super::ends_at(&room.room, now()) <= now() {
        let last_words = phrases(&room.room.language).time_up;
        super::close(&services.store, &room.room, Some(last_words)).await?;
        return Err(Error::conflict("This interview's time is up; it is complete."));
    }
    let mut turns = services.store.turns(room.room.id).await?;
    if turns.is_empty() {
        let mut events = super::spawn_turn(services, room.clone(), Vec::new());
        while let Some(event) = events.recv().await {
            match event {
                crate::app::conversation::Event::Error(crate::app::conversation::Failure::Closed(_))
                | crate::app::conversation::Event::Done(_) => {
                    break;
                }
                crate::app::conversation::Event::Error(failure) => {
                    return Err(Error::Unavailable(failure.detail().to_owned()));
                }
                _ => {}
            }
        }
        turns = services.store.turns(room.room.id).await?;
    }
    let message = turns
        .iter()
        .rev()
        .find(|turn| !turn.from_respondent)
        .map(|turn| turn.text.clone())
        .unwrap_or_default();
    let ends_at = super::ends_at(&room.room, now());
    let livekit = services.livekit.as_ref().map(|livekit| VoiceAccess {
        url: livekit.url.clone(),
        token: livekit.access_token(room.room.id, "Respondent", now(), ends_at),
        room: crate::providers::livekit::room_name(room.room.id),
        identity: crate::providers::livekit::respondent_identity(room.room.id),
        expires_at: ends_at,
    });
    Ok(JoinAnswer {
        livekit,
        session_id: super::session_id(&services.secret, room.room.id, &email),
        room_name: room.room.room_name.clone(),
        max_duration_minutes: room.room.max_duration_minutes,
        message,
        ends_at,
        language: room.room.language.clone(),
        transcript: turns
            .into_iter()
            .map(|turn| TranscriptTurn {
                from_respondent: turn.from_respondent,
                text: turn.text,
                at: turn.at,
            })
            .collect(),
    })
}

/// Takes the respondent's answer (once, however often it is sent) and asks the
/// interviewer for the next turn; the interview closes when its time is up.
pub async fn take_turn(services: &Services, token: &str, body: MessageRequest) -> Result<Turn> {
    let text = body.text.trim();
    if text.is_empty() {
        return Err(Error::validation(vec![ValidationIssue::blank("text", &body.text)]));
    }
    let room = session_room(services, token, &body.session_id).await?;
    let at = now();
    let status = room_status(&room.room, at);
    if status != RoomStatus::Active {
        return Err(closed(status));
    }
    let mut turns = services.store.turns(room.room.id).await?;
    let (stored, answer) = already_sent(&turns, &body.message_id, text);
    if let Some(reply) = answer {
        let done = services.store.get_room_status(room.room.id).await?.as_deref() == Some("completed");
        return Ok(Turn::Answered(TurnAnswer {
            message: reply,
            done,
            ends_at: super::ends_at(&room.room, at),
        }));
    }
    if !stored {
        let turn = NewTurn {
            from_respondent: true,
            text: text.to_owned(),
            step: None,
            follow_up: false,
            message_id: body.message_id.clone(),
            at,
        };
        let position = match services.store.add_turn(room.room.id, &turn, None).await {
            Ok(position) => position,
            Err(TurnRefused::NotActive) => return Err(Error::conflict("This interview has ended.")),
            Err(TurnRefused::Clash) => {
                return Err(Error::conflict(
                    "Another answer came in at the same moment; send this one again.",
                ));
            }
            Err(TurnRefused::Failed(error)) => return Err(error.into()),
        };
        if turns.last().map_or(0, |last| last.position) + 1 == position {
            turns.push(StoredTurn {
                position,
                from_respondent: true,
                text: turn.text,
                step: None,
                follow_up: false,
                message_id: turn.message_id,
                at: turn.at,
            });
        } else {
            // A turn came in between the read and this one: read them all again.
            turns = services.store.turns(room.room.id).await?;
        }
    }
    if super::ends_at(&room.room, at) <= at {
        let last_words = phrases(&room.room.language).time_up;
        super::close(&services.store, &room.room, Some(last_words)).await?;
        return Ok(Turn::Answered(TurnAnswer {
            message: last_words.to_owned(),
            done: true,
            ends_at: super::ends_at(&room.room, at),
        }));
    }
    Ok(Turn::Answering(super::spawn_turn(services, room, turns)))
}

/// Ends the respondent's interview: its transcript becomes a record of the project.
/// Leaving again answers the same.
pub async fn leave(services: &Services, token: &str, session_id: &str) -> Result<LeaveAnswer> {
    let room = session_room(services, token, session_id).await?;
    let goodbye = phrases(&room.room.language).goodbye;
    match room_status(&room.room, now()) {
        RoomStatus::Active => {
            super::close(&services.store, &room.room, Some(goodbye)).await?;
        }
        RoomStatus::Completed => {}
        other => return Err(closed(other)),
    }
    let status = services
        .store
        .get_room_status(room.room.id)
        .await?
        .and_then(|status| RoomStatus::parse(&status))
        .unwrap_or(RoomStatus::Completed);
    if status != RoomStatus::Completed {
        return Err(closed(status));
    }
    Ok(LeaveAnswer {
        status,
        message: goodbye.to_owned(),
    })
}
