//! AI-led interviews: the links, the interviewer's turns, and the end of an interview,
//! when its transcript becomes a record of the project.
//!
//! Every turn is stored as it happens (the respondent's before the interviewer is
//! asked, the interviewer's once written, by a task that does not depend on the
//! respondent's connection), so a dropped connection loses nothing: rejoining with the
//! same address shows the conversation so far and goes on.

pub mod interviewer;
pub mod phrases;
pub mod respondent;
pub mod rooms;
pub mod voice;

use chrono::{DateTime, Duration, Utc};
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;
use uuid::Uuid;

use crate::app::conversation::{Event, Failure};
use crate::domain::interview::{RoomStatus, TurnAnswer, status_at};
use crate::domain::now;
use crate::domain::record::transcribe;
use crate::engines::ai::openai::Piece;
use crate::engines::ingest::ParsedUtterance;
use crate::error::Error;
use crate::secret::SecretKey;
use crate::services::Services;
use crate::store::{NewRecord, NewTurn, PublicRoom, RecordContent, Store, StoredRoom, StoredTurn, TurnRefused};

use interviewer::Brief;

/// How the transcript names the two sides.
pub const INTERVIEWER: &str = "Interviewer";
pub const RESPONDENT: &str = "Respondent";

/// Bytes of a room's link: 192 bits.
const TOKEN_BYTES: usize = 24;
/// Bytes of a session id: 144 bits.
const SESSION_BYTES: usize = 18;
/// Bytes of a room's nonce.
pub const NONCE_BYTES: usize = 16;

/// A room's access token: derived from the instance key and the room's nonce, never
/// stored.
pub fn access_token(key: &SecretKey, room_id: Uuid, nonce: &[u8]) -> String {
    key.derive("interview-room", &[room_id.as_bytes(), nonce], TOKEN_BYTES)
}

/// What the database keeps to find a room by its token.
pub fn token_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// The session of the respondent `email` in a room: the same address gets the same
/// session back, and nobody can make one without the key.
pub fn session_id(key: &SecretKey, room_id: Uuid, email: &str) -> String {
    key.derive(
        "interview-session",
        &[room_id.as_bytes(), email.as_bytes()],
        SESSION_BYTES,
    )
}

/// The respondent's link.
pub fn room_url(public_url: &str, token: &str) -> String {
    format!("{public_url}/interview/{token}")
}

/// When the interview must end: its duration after it started, never after the link
/// expires; before it starts, a whole duration from `at`.
pub fn ends_at(room: &StoredRoom, at: DateTime<Utc>) -> DateTime<Utc> {
    (room.started_at.unwrap_or(at) + Duration::minutes(room.max_duration_minutes)).min(room.expires_at)
}

/// What the interviewer works from at `at`.
pub fn brief(room: &PublicRoom, at: DateTime<Utc>) -> Brief {
    let chosen = |override_: &Option<String>, project: &str| {
        override_
            .as_deref()
            .filter(|text| !text.trim().is_empty())
            .unwrap_or(project)
            .to_owned()
    };
    Brief {
        research_goals: chosen(&room.room.research_goals_override, &room.research_goals),
        guide: chosen(&room.room.interview_guide_override, &room.interview_guide),
        topics: room.room.topics_for_respondent.clone().unwrap_or_default(),
        language: room.room.language.clone(),
        max_duration_minutes: room.room.max_duration_minutes,
        minutes_left: (ends_at(&room.room, at) - at).num_seconds().div_euclid(60),
    }
}

/// The record an interview's transcript becomes: the interviewer's turns and the
/// respondent's, timed from the start, the respondent marked.
pub fn transcript_record(room: &StoredRoom, turns: &[StoredTurn]) -> NewRecord {
    let started = room
        .started_at
        .or_else(|| turns.first().map(|turn| turn.at))
        .unwrap_or_else(now);
    let parsed = turns
        .iter()
        .filter(|turn| !turn.text.trim().is_empty())
        .map(|turn| ParsedUtterance {
            speaker: Some(if turn.from_respondent { RESPONDENT } else { INTERVIEWER }.to_owned()),
            start_ms: u64::try_from((turn.at - started).num_milliseconds()).ok(),
            end_ms: None,
            text: turn.text.trim().to_owned(),
        })
        .collect();
    let mut transcribed = transcribe(parsed);
    for utterance in &mut transcribed.utterances {
        utterance.is_respondent = utterance.speaker == RESPONDENT;
    }
    NewRecord {
        name: room.room_name.clone(),
        language: Some(room.language.clone()),
        source_format: "interview".into(),
        source_name: None,
        content: RecordContent::Transcript(transcribed),
    }
}

/// Ends an active interview: adds the interviewer's last words (when given) and turns
/// the transcript into a record. `None` when the room was no longer active.
pub async fn close(store: &Store, room: &StoredRoom, last_words: Option<&str>) -> anyhow::Result<Option<Uuid>> {
    if let Some(text) = last_words {
        let turn = NewTurn {
            from_respondent: false,
            text: text.to_owned(),
            step: None,
            follow_up: false,
            message_id: None,
            at: now(),
        };
        match store.add_turn(room.id, &turn, None).await {
            Ok(_) | Err(TurnRefused::NotActive | TurnRefused::Clash) => {}
            Err(TurnRefused::Failed(error)) => return Err(error),
        }
    }
    store.complete_room(room, |turns| transcript_record(room, turns)).await
}

/// Closes the interviews whose time is up (the respondent went away, or never came
/// back) and marks links nobody used before their expiry. Safe on any number of
/// instances: a room completes once.
pub async fn close_overdue(store: &Store) -> anyhow::Result<usize> {
    let at = now();
    store.expire_rooms(at).await?;
    let mut closed = 0;
    for room in store.active_rooms().await? {
        if ends_at(&room.room, at) <= at {
            let last_words = phrases::phrases(&room.room.language).time_up;
            if close(store, &room.room, Some(last_words)).await?.is_some() {
                closed += 1;
            }
        }
    }
    if closed > 0 {
        tracing::info!(closed, "closed interviews whose time was up");
    }
    Ok(closed)
}

/// The room's status now: a pending room whose link ran out is expired.
pub fn room_status(room: &StoredRoom, at: DateTime<Utc>) -> RoomStatus {
    status_at(
        RoomStatus::parse(&room.status).unwrap_or(RoomStatus::Cancelled),
        room.expires_at,
        at,
    )
}

/// The sentence for a room that can no longer be changed or joined.
pub fn closed(status: RoomStatus) -> Error {
    match status {
        RoomStatus::Expired => Error::Gone("This interview link has expired.".into()),
        RoomStatus::Cancelled => Error::conflict("This interview was cancelled."),
        RoomStatus::Completed => Error::conflict("This interview is complete."),
        RoomStatus::Active => Error::conflict("This interview has started; a started room cannot be changed."),
        RoomStatus::Pending => Error::conflict("This interview has not started."),
    }
}

/// Asks the interviewer for its next turn in a task of its own, which stores the turn
/// (and closes the interview when it was the last)
/// whether or not anyone still listens. `turns` is the conversation as the question was
/// read; a turn that arrives meanwhile makes this one void (409), and the newer request
/// answers.
pub fn spawn_turn(
    services: &Services,
    room: PublicRoom,
    turns: Vec<StoredTurn>,
) -> mpsc::UnboundedReceiver<Event<TurnAnswer>> {
    let (events, receiver) = mpsc::unbounded_channel();
    let services = services.clone();
    tokio::spawn(async move {
        let event = interviewer_turn(&services, &room, &turns, &events).await;
        let _ = events.send(event);
    });
    receiver
}

async fn interviewer_turn(
    services: &Services,
    room: &PublicRoom,
    turns: &[StoredTurn],
    events: &mpsc::UnboundedSender<Event<TurnAnswer>>,
) -> Event<TurnAnswer> {
    let at = now();
    let mut on_piece = |piece: Piece<'_>| {
        let _ = events.send(match piece {
            Piece::Text(text) => Event::Delta(text.to_owned()),
            Piece::Restart => Event::Reset,
        });
    };
    // The respondent's words reach the model as the workspace says; when its settings
    // cannot be read, as the defaults say (pseudonymised).
    let store = &services.store;
    let material = crate::app::gate::Material {
        texts: turns.iter().map(|t| t.text.as_str()).collect(),
        ..Default::default()
    };
    let engine = match crate::app::gate::engine_for_project(
        services,
        room.room.project_id,
        crate::domain::usage::UsageKind::Interview,
        &material,
    )
    .await
    {
        Ok(engine) => engine,
        Err(error) => {
            tracing::warn!(error = %format!("{error:#}"), "reading the workspace's settings failed; pseudonymising");
            let settings = crate::domain::workspace::Settings::default();
            let cloak = crate::app::gate::cloak(&settings, &material);
            services.engine.for_work(cloak, None)
        }
    };
    // Past the workspace's budget the model is not called again: the offline interviewer
    // closes the interview in its own words, and the transcript is kept as always.
    let over_budget = match crate::app::gate::project_budget_spent(services, room.room.project_id).await {
        Ok(spent) => spent.is_some(),
        Err(error) => {
            tracing::warn!(error = %format!("{error:#}"), "reading the workspace's budget failed; asking the interviewer");
            false
        }
    };
    let next = if over_budget {
        let next = interviewer::offline_closing(&brief(room, at), turns);
        on_piece(Piece::Text(&next.text));
        Ok(next)
    } else {
        interviewer::next(&engine, &brief(room, at), turns, &mut on_piece).await
    };
    let next = match next {
        Ok(next) => next,
        Err(error) => {
            tracing::warn!(room = %room.room.id, %error, "the interviewer could not answer");
            return Event::Error(Failure::Unavailable(
                "The interviewer could not answer just now. Your answer is saved; send it again in a moment.".into(),
            ));
        }
    };
    let turn = NewTurn {
        from_respondent: false,
        text: next.text.clone(),
        step: Some(next.step),
        follow_up: next.follow_up,
        message_id: None,
        at: now(),
    };
    let expected = turns.last().map_or(1, |turn| turn.position + 1);
    match store.add_turn(room.room.id, &turn, Some(expected)).await {
        Ok(_) => {}
        Err(TurnRefused::NotActive) => {
            return Event::Error(Failure::Closed("This interview has ended.".into()));
        }
        Err(TurnRefused::Clash) => {
            return Event::Error(Failure::Closed(
                "Another answer of yours came in meanwhile; the interviewer answers that one.".into(),
            ));
        }
        Err(TurnRefused::Failed(error)) => return stored_nothing(&error),
    }
    if next.done
        && let Err(error) = close(store, &room.room, None).await
    {
        // The turn is stored and the room still active: the watch closes it when its
        // time is up, and leaving closes it now.
        return stored_nothing(&error);
    }
    Event::Done(TurnAnswer {
        message: next.text,
        done: next.done,
        ends_at: ends_at(&room.room, at),
    })
}

fn stored_nothing(error: &anyhow::Error) -> Event<TurnAnswer> {
    tracing::error!(error = %format!("{error:#}"), "storing an interview turn failed");
    Event::Error(Failure::Unavailable(
        "The interview could not be saved just now; send your answer again in a moment.".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room() -> StoredRoom {
        let at = now();
        StoredRoom {
            id: Uuid::new_v4(),
            project_id: Uuid::new_v4(),
            record_id: None,
            token_nonce: vec![1; NONCE_BYTES],
            room_name: "Trip planning 1".into(),
            respondent_email: Some("ana@example.com".into()),
            max_duration_minutes: 30,
            status: "active".into(),
            language: "en".into(),
            topics_for_respondent: None,
            research_goals_override: None,
            interview_guide_override: None,
            created_at: at,
            started_at: Some(at),
            completed_at: None,
            expires_at: at + Duration::days(7),
        }
    }

    #[test]
    fn links_are_long_url_safe_unique_and_found_by_their_hash() {
        let key = SecretKey::from_bytes(b"an instance key of some length..");
        let room = room();
        let token = access_token(&key, room.id, &room.token_nonce);
        assert_eq!(token.len(), 32);
        assert!(token.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert_eq!(token, access_token(&key, room.id, &room.token_nonce));
        assert_ne!(token, access_token(&key, room.id, &[2; NONCE_BYTES]));
        assert_eq!(token_hash(&token), token_hash(&token));
        assert_ne!(token_hash(&token), token.as_bytes());
        assert_ne!(
            session_id(&key, room.id, "ana@example.com"),
            session_id(&key, room.id, "bo@example.com")
        );
        assert_eq!(
            room_url("https://x.test", &token),
            format!("https://x.test/interview/{token}")
        );
    }

    #[test]
    fn an_interview_ends_at_its_duration_or_the_links_expiry() {
        let mut room = room();
        let started = room.started_at.unwrap();
        assert_eq!(ends_at(&room, started), started + Duration::minutes(30));
        room.expires_at = started + Duration::minutes(10);
        assert_eq!(ends_at(&room, started), room.expires_at);
    }

    #[test]
    fn the_transcript_becomes_a_record_with_the_respondent_marked_and_timed() {
        let room = room();
        let started = room.started_at.unwrap();
        let turn = |position, from_respondent, text: &str, seconds| StoredTurn {
            position,
            from_respondent,
            text: text.into(),
            step: None,
            follow_up: false,
            message_id: None,
            at: started + Duration::seconds(seconds),
        };
        let record = transcript_record(
            &room,
            &[
                turn(1, false, "What do you do?", 0),
                turn(2, true, "I plan trips for my family.", 65),
                turn(3, false, "Thank you!", 90),
            ],
        );
        assert_eq!(record.name, "Trip planning 1");
        assert_eq!(record.source_format, "interview");
        let RecordContent::Transcript(transcribed) = record.content else {
            panic!("an interview is a transcript");
        };
        let flags: Vec<(&str, bool, Option<i64>)> = transcribed
            .utterances
            .iter()
            .map(|u| (u.speaker.as_str(), u.is_respondent, u.start_ms))
            .collect();
        assert_eq!(
            flags,
            [
                (INTERVIEWER, false, Some(0)),
                (RESPONDENT, true, Some(65_000)),
                (INTERVIEWER, false, Some(90_000))
            ]
        );
        assert_eq!(transcribed.word_count, 12);
    }
}
