-- Users, tokens, projects, records (a stub the records issue grows), prompts, presets,
-- reports and the durable job queue. Ids are UUIDs (16-byte BLOBs here), times RFC 3339 text.
CREATE TABLE users (
    id          BLOB PRIMARY KEY NOT NULL,
    email       TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);

CREATE TABLE api_tokens (
    id          BLOB PRIMARY KEY NOT NULL,
    user_id     BLOB NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    token_hash  BLOB NOT NULL UNIQUE,
    created_at  TEXT NOT NULL,
    expires_at  TEXT,
    revoked_at  TEXT
);
CREATE INDEX api_tokens_user ON api_tokens(user_id);

CREATE TABLE projects (
    id               BLOB PRIMARY KEY NOT NULL,
    owner_id         BLOB NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    description      TEXT NOT NULL,
    status           TEXT NOT NULL,
    research_goals   TEXT NOT NULL,
    interview_guide  TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX projects_owner ON projects(owner_id, created_at, id);

CREATE TABLE records (
    id          BLOB PRIMARY KEY NOT NULL,
    project_id  BLOB NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    status      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX records_project ON records(project_id);

CREATE TABLE prompts (
    id          BLOB PRIMARY KEY NOT NULL,
    owner_id    BLOB REFERENCES users(id) ON DELETE CASCADE,
    title       TEXT NOT NULL,
    text        TEXT NOT NULL,
    category    TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX prompts_owner ON prompts(owner_id);

CREATE TABLE presets (
    id          BLOB PRIMARY KEY NOT NULL,
    owner_id    BLOB REFERENCES users(id) ON DELETE CASCADE,
    title       TEXT NOT NULL,
    icon        TEXT NOT NULL,
    category    TEXT NOT NULL,
    prompt_ids  TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX presets_owner ON presets(owner_id);

CREATE TABLE reports (
    id               BLOB PRIMARY KEY NOT NULL,
    project_id       BLOB NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    title            TEXT NOT NULL,
    category         TEXT,
    context          TEXT,
    context_expand   TEXT,
    status           TEXT NOT NULL,
    content          TEXT,
    is_public        INTEGER NOT NULL,
    is_archived      INTEGER NOT NULL,
    is_deleted       INTEGER NOT NULL,
    preset_id        BLOB,
    report_language  TEXT,
    reasoning_mode   TEXT,
    prompts_ids      TEXT NOT NULL,
    records_ids      TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);
CREATE INDEX reports_project ON reports(project_id, created_at, id);

CREATE TABLE jobs (
    id            BLOB PRIMARY KEY NOT NULL,
    kind          TEXT NOT NULL,
    subject_id    BLOB NOT NULL,
    status        TEXT NOT NULL,
    attempts      INTEGER NOT NULL,
    run_at        TEXT NOT NULL,
    locked_until  TEXT,
    last_error    TEXT,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX jobs_ready ON jobs(status, run_at);
CREATE INDEX jobs_subject ON jobs(subject_id);
