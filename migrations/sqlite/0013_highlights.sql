-- Highlights: spans of a record's transcript, from (utterance, character offset) to
-- (utterance, character offset), with the exact words quoted. Utterances are replaced
-- when a record is processed again, so the span names them by number, not by key.
-- status: ok | detached | suggested | rejected (a rejected suggestion is kept, unseen,
-- so that it is not proposed again).
CREATE TABLE highlights (
    id              BLOB PRIMARY KEY NOT NULL,
    record_id       BLOB NOT NULL REFERENCES records(id) ON DELETE CASCADE,
    start_utterance INTEGER NOT NULL,
    start_offset    INTEGER NOT NULL,
    end_utterance   INTEGER NOT NULL,
    end_offset      INTEGER NOT NULL,
    quote           TEXT NOT NULL,
    note            TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL,
    created_by      BLOB REFERENCES users(id) ON DELETE SET NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
CREATE INDEX highlights_record ON highlights(record_id, start_utterance, start_offset);
CREATE INDEX highlights_created ON highlights(created_at, id);

CREATE TABLE highlight_tags (
    highlight_id BLOB NOT NULL REFERENCES highlights(id) ON DELETE CASCADE,
    tag_id       BLOB NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    PRIMARY KEY (highlight_id, tag_id)
);
CREATE INDEX highlight_tags_tag ON highlight_tags(tag_id);

-- Insights: a project's findings, each with the highlights it rests on, in order.
CREATE TABLE insights (
    id         BLOB PRIMARY KEY NOT NULL,
    project_id BLOB NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    title      TEXT NOT NULL,
    body       TEXT NOT NULL DEFAULT '',
    created_by BLOB REFERENCES users(id) ON DELETE SET NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX insights_project ON insights(project_id, created_at, id);

CREATE TABLE insight_highlights (
    insight_id   BLOB NOT NULL REFERENCES insights(id) ON DELETE CASCADE,
    highlight_id BLOB NOT NULL REFERENCES highlights(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    PRIMARY KEY (insight_id, highlight_id)
);
CREATE INDEX insight_highlights_highlight ON insight_highlights(highlight_id);

-- A request for suggested highlights on a record: the job `highlights.suggest` has it
-- as its subject. tag_ids is a JSON array (empty: every tag of the workspace).
CREATE TABLE suggestion_requests (
    id           BLOB PRIMARY KEY NOT NULL,
    record_id    BLOB NOT NULL REFERENCES records(id) ON DELETE CASCADE,
    tag_ids      TEXT NOT NULL,
    requested_by BLOB REFERENCES users(id) ON DELETE SET NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX suggestion_requests_record ON suggestion_requests(record_id);
CREATE TRIGGER suggestion_requests_jobs_delete AFTER DELETE ON suggestion_requests BEGIN
    DELETE FROM jobs WHERE subject_id = OLD.id;
END;
