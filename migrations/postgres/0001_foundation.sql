-- Users, tokens, projects, records (a stub the records issue grows), prompts, presets,
-- reports and the durable job queue. Ids are UUIDs (native UUID here), times TIMESTAMPTZ.
CREATE TABLE users (
    id          UUID PRIMARY KEY NOT NULL,
    email       TEXT NOT NULL UNIQUE,
    created_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE api_tokens (
    id          UUID PRIMARY KEY NOT NULL,
    user_id     UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    token_hash  BYTEA NOT NULL UNIQUE,
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ,
    revoked_at  TIMESTAMPTZ
);
CREATE INDEX api_tokens_user ON api_tokens(user_id);

CREATE TABLE projects (
    id               UUID PRIMARY KEY NOT NULL,
    owner_id         UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name             TEXT NOT NULL,
    description      TEXT NOT NULL,
    status           TEXT NOT NULL,
    research_goals   TEXT NOT NULL,
    interview_guide  TEXT NOT NULL,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX projects_owner ON projects(owner_id, created_at, id);

CREATE TABLE records (
    id          UUID PRIMARY KEY NOT NULL,
    project_id  UUID NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    status      TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX records_project ON records(project_id);

CREATE TABLE prompts (
    id          UUID PRIMARY KEY NOT NULL,
    owner_id    UUID REFERENCES users(id) ON DELETE CASCADE,
    title       TEXT NOT NULL,
    text        TEXT NOT NULL,
    category    TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX prompts_owner ON prompts(owner_id);

CREATE TABLE presets (
    id          UUID PRIMARY KEY NOT NULL,
    owner_id    UUID REFERENCES users(id) ON DELETE CASCADE,
    title       TEXT NOT NULL,
    icon        TEXT NOT NULL,
    category    TEXT NOT NULL,
    prompt_ids  JSONB NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX presets_owner ON presets(owner_id);

CREATE TABLE reports (
    id               UUID PRIMARY KEY NOT NULL,
    project_id       UUID NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    title            TEXT NOT NULL,
    category         TEXT,
    context          TEXT,
    context_expand   TEXT,
    status           TEXT NOT NULL,
    content          TEXT,
    is_public        BOOLEAN NOT NULL,
    is_archived      BOOLEAN NOT NULL,
    is_deleted       BOOLEAN NOT NULL,
    preset_id        UUID,
    report_language  TEXT,
    reasoning_mode   TEXT,
    prompts_ids      JSONB NOT NULL,
    records_ids      JSONB NOT NULL,
    created_at       TIMESTAMPTZ NOT NULL,
    updated_at       TIMESTAMPTZ NOT NULL
);
CREATE INDEX reports_project ON reports(project_id, created_at, id);

CREATE TABLE jobs (
    id            UUID PRIMARY KEY NOT NULL,
    kind          TEXT NOT NULL,
    subject_id    UUID NOT NULL,
    status        TEXT NOT NULL,
    attempts      INTEGER NOT NULL,
    run_at        TIMESTAMPTZ NOT NULL,
    locked_until  TIMESTAMPTZ,
    last_error    TEXT,
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);
CREATE INDEX jobs_ready ON jobs(status, run_at);
CREATE INDEX jobs_subject ON jobs(subject_id);
