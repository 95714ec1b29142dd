-- Chat about one record and the research assistant's threads, personas, and records
-- that can be shown publicly.
ALTER TABLE records ADD COLUMN is_public INTEGER NOT NULL DEFAULT 0;

-- A conversation: about one record (`record`) or a project (`agent`). Ids are integers.
-- A research assistant thread outlives the project it was about (it keeps its history).
CREATE TABLE chat_threads (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    owner_id    BLOB NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    record_id   BLOB REFERENCES records(id) ON DELETE CASCADE,
    project_id  BLOB REFERENCES projects(id) ON DELETE SET NULL,
    title       TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX chat_threads_record ON chat_threads(record_id, updated_at);
CREATE INDEX chat_threads_owner ON chat_threads(owner_id, kind, updated_at);

-- One message of a thread, in order; citations as JSON.
CREATE TABLE chat_messages (
    id            BLOB PRIMARY KEY NOT NULL,
    thread_id     INTEGER NOT NULL REFERENCES chat_threads(id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,
    message_type  TEXT NOT NULL,
    content       TEXT NOT NULL,
    citations     TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    UNIQUE (thread_id, position)
);

-- The persona of a record, written from the record as it was at `record_version`
-- (its `updated_at`); a persona whose version differs from the record's is stale.
CREATE TABLE personas (
    record_id       BLOB PRIMARY KEY NOT NULL REFERENCES records(id) ON DELETE CASCADE,
    record_version  TEXT NOT NULL,
    persona         TEXT NOT NULL,
    markdown        TEXT NOT NULL,
    generated_at    TEXT NOT NULL
);

-- At most one persona job waits or runs per record, also when two instances queue one
-- at the same moment.
CREATE UNIQUE INDEX jobs_one_persona ON jobs(subject_id) WHERE kind = 'persona.write' AND status IN ('queued', 'running');
