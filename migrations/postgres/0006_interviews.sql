-- AI-led interview rooms and their transcripts, turn by turn.
--
-- A room's access token is never stored: it is derived from the instance's secret key
-- and the room's random `token_nonce`, and found again through `token_hash` (SHA-256).
CREATE TABLE interview_rooms (
    id                         UUID PRIMARY KEY NOT NULL,
    project_id                 UUID NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    record_id                  UUID REFERENCES records(id) ON DELETE SET NULL,
    token_nonce                BYTEA NOT NULL,
    token_hash                 BYTEA NOT NULL UNIQUE,
    room_name                  TEXT NOT NULL,
    respondent_email           TEXT,
    max_duration_minutes       BIGINT NOT NULL,
    status                     TEXT NOT NULL,
    language                   TEXT NOT NULL,
    topics_for_respondent      TEXT,
    research_goals_override    TEXT,
    interview_guide_override   TEXT,
    created_at                 TIMESTAMPTZ NOT NULL,
    started_at                 TIMESTAMPTZ,
    completed_at               TIMESTAMPTZ,
    expires_at                 TIMESTAMPTZ NOT NULL,
    updated_at                 TIMESTAMPTZ NOT NULL
);
CREATE INDEX interview_rooms_project ON interview_rooms(project_id, created_at);
CREATE INDEX interview_rooms_open ON interview_rooms(status, expires_at);

-- One turn of an interview, stored as it happens. `step` is the interviewer's place in
-- the guide (the offline interviewer's state); NULL on the respondent's turns.
-- `message_id` is the respondent client's id of a message, so a message sent again
-- after its answer was lost is recognised and not stored twice.
CREATE TABLE interview_turns (
    room_id          UUID NOT NULL REFERENCES interview_rooms(id) ON DELETE CASCADE,
    position         BIGINT NOT NULL,
    from_respondent  BOOLEAN NOT NULL,
    text             TEXT NOT NULL,
    step             BIGINT,
    message_id       TEXT,
    follow_up        BOOLEAN NOT NULL DEFAULT FALSE,
    at               TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (room_id, position)
);
