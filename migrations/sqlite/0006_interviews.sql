-- AI-led interview rooms and their transcripts, turn by turn.
--
-- A room's access token is never stored: it is derived from the instance's secret key
-- and the room's random `token_nonce`, and found again through `token_hash` (SHA-256).
CREATE TABLE interview_rooms (
    id                         BLOB PRIMARY KEY NOT NULL,
    project_id                 BLOB NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    record_id                  BLOB REFERENCES records(id) ON DELETE SET NULL,
    token_nonce                BLOB NOT NULL,
    token_hash                 BLOB NOT NULL UNIQUE,
    room_name                  TEXT NOT NULL,
    respondent_email           TEXT,
    max_duration_minutes       INTEGER NOT NULL,
    status                     TEXT NOT NULL,
    language                   TEXT NOT NULL,
    topics_for_respondent      TEXT,
    research_goals_override    TEXT,
    interview_guide_override   TEXT,
    created_at                 TEXT NOT NULL,
    started_at                 TEXT,
    completed_at               TEXT,
    expires_at                 TEXT NOT NULL,
    updated_at                 TEXT NOT NULL
);
CREATE INDEX interview_rooms_project ON interview_rooms(project_id, created_at);
CREATE INDEX interview_rooms_open ON interview_rooms(status, expires_at);

-- One turn of an interview, stored as it happens. `step` is the interviewer's place in
-- the guide (the offline interviewer's state); NULL on the respondent's turns.
-- `message_id` is the respondent client's id of a message, so a message sent again
-- after its answer was lost is recognised and not stored twice.
CREATE TABLE interview_turns (
    room_id          BLOB NOT NULL REFERENCES interview_rooms(id) ON DELETE CASCADE,
    position         INTEGER NOT NULL,
    from_respondent  INTEGER NOT NULL,
    text             TEXT NOT NULL,
    step             INTEGER,
    message_id       TEXT,
    follow_up        INTEGER NOT NULL DEFAULT 0,
    at               TEXT NOT NULL,
    PRIMARY KEY (room_id, position)
);
