-- Accounts and teams: workspaces own what users made, members have roles, people sign
-- in with a password (or single sign-on) into sessions, and an audit trail says who did
-- what. Every user gets a personal workspace whose id is his own id, so the objects of a
-- database from before workspaces move into their owner's workspace by a plain UPDATE.
-- `owner_id` stays on every object as its creator.
ALTER TABLE users ADD COLUMN name TEXT NOT NULL DEFAULT '';
-- argon2id in PHC form; NULL until the user sets a password (or for SSO-only users).
ALTER TABLE users ADD COLUMN password_hash TEXT;

CREATE TABLE workspaces (
    id           UUID PRIMARY KEY NOT NULL,
    name         TEXT NOT NULL,
    -- The user whose personal workspace this is; NULL for a team's workspace.
    personal_of  UUID UNIQUE REFERENCES users(id) ON DELETE CASCADE,
    created_at   TIMESTAMPTZ NOT NULL,
    updated_at   TIMESTAMPTZ NOT NULL
);

CREATE TABLE workspace_members (
    workspace_id  UUID NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id       UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role          TEXT NOT NULL,
    joined_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_user ON workspace_members(user_id, workspace_id, role);

INSERT INTO workspaces (id, name, personal_of, created_at, updated_at)
    SELECT id, email, id, created_at, created_at FROM users;
INSERT INTO workspace_members (workspace_id, user_id, role, joined_at)
    SELECT id, id, 'owner', created_at FROM users;

ALTER TABLE projects ADD COLUMN workspace_id UUID REFERENCES workspaces(id) ON DELETE CASCADE;
UPDATE projects SET workspace_id = owner_id;
ALTER TABLE projects ALTER COLUMN workspace_id SET NOT NULL;
CREATE INDEX projects_workspace ON projects(workspace_id, created_at, id);

ALTER TABLE prompts ADD COLUMN workspace_id UUID REFERENCES workspaces(id) ON DELETE CASCADE;
UPDATE prompts SET workspace_id = owner_id;
CREATE INDEX prompts_workspace ON prompts(workspace_id);

ALTER TABLE presets ADD COLUMN workspace_id UUID REFERENCES workspaces(id) ON DELETE CASCADE;
UPDATE presets SET workspace_id = owner_id;
CREATE INDEX presets_workspace ON presets(workspace_id);

ALTER TABLE webhook_endpoints ADD COLUMN workspace_id UUID REFERENCES workspaces(id) ON DELETE CASCADE;
UPDATE webhook_endpoints SET workspace_id = owner_id;
ALTER TABLE webhook_endpoints ALTER COLUMN workspace_id SET NOT NULL;
CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints(workspace_id, created_at);

-- Tokens issued before scopes keep working with `write`.
ALTER TABLE api_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'write';

-- A project list is now every project of every workspace a user belongs to, so a change
-- moves the data version (0002) of each member of the project's workspace, and joining
-- or leaving a workspace moves the member's own.
CREATE OR REPLACE FUNCTION insight_bump_project_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE users SET data_version = data_version + 1
        WHERE id IN (SELECT user_id FROM workspace_members WHERE workspace_id = OLD.workspace_id);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        UPDATE users SET data_version = data_version + 1
        WHERE id IN (SELECT user_id FROM workspace_members WHERE workspace_id = NEW.workspace_id);
    END IF;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION insight_bump_via_project() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE users SET data_version = data_version + 1
        WHERE id IN (SELECT m.user_id FROM workspace_members m JOIN projects p ON p.workspace_id = m.workspace_id
                     WHERE p.id = OLD.project_id);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        UPDATE users SET data_version = data_version + 1
        WHERE id IN (SELECT m.user_id FROM workspace_members m JOIN projects p ON p.workspace_id = m.workspace_id
                     WHERE p.id = NEW.project_id);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION insight_bump_member() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE users SET data_version = data_version + 1 WHERE id = OLD.user_id;
    ELSE
        UPDATE users SET data_version = data_version + 1 WHERE id = NEW.user_id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER members_version AFTER INSERT OR DELETE ON workspace_members
    FOR EACH ROW EXECUTE FUNCTION insight_bump_member();

-- A signed-in browser. The cookie holds a random value; only its SHA-256 is kept.
-- A session ends when idle too long (`last_seen_at`), at `expires_at`, or when revoked.
CREATE TABLE sessions (
    id            UUID PRIMARY KEY NOT NULL,
    user_id       UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash    BYTEA NOT NULL UNIQUE,
    created_at    TIMESTAMPTZ NOT NULL,
    last_seen_at  TIMESTAMPTZ NOT NULL,
    expires_at    TIMESTAMPTZ NOT NULL,
    ip            TEXT,
    user_agent    TEXT,
    method        TEXT NOT NULL,
    revoked_at    TIMESTAMPTZ
);
CREATE INDEX sessions_user ON sessions(user_id, created_at);

-- One-time links to set a password: reset requests, the first run, the CLI.
CREATE TABLE password_links (
    token_hash  BYTEA PRIMARY KEY NOT NULL,
    user_id     UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  TIMESTAMPTZ NOT NULL,
    expires_at  TIMESTAMPTZ NOT NULL,
    used_at     TIMESTAMPTZ
);
CREATE INDEX password_links_user ON password_links(user_id);

-- Failed sign-ins per account (`account:<email>`) and per client address (`ip:<addr>`),
-- in the database so that every instance slows and locks alike.
CREATE TABLE sign_in_failures (
    key           TEXT PRIMARY KEY NOT NULL,
    failures      INTEGER NOT NULL,
    first_at      TIMESTAMPTZ NOT NULL,
    last_at       TIMESTAMPTZ NOT NULL,
    locked_until  TIMESTAMPTZ
);

-- An invitation's link is derived from the instance key and `token_nonce` (like an
-- interview link) so it can be shown again to admins without being stored.
CREATE TABLE invitations (
    id           UUID PRIMARY KEY NOT NULL,
    workspace_id UUID NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    email        TEXT NOT NULL,
    role         TEXT NOT NULL,
    token_nonce  BYTEA NOT NULL,
    token_hash   BYTEA NOT NULL UNIQUE,
    invited_by   UUID REFERENCES users(id) ON DELETE SET NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL,
    accepted_at  TIMESTAMPTZ,
    accepted_by  UUID REFERENCES users(id) ON DELETE SET NULL
);
CREATE INDEX invitations_workspace ON invitations(workspace_id, created_at);

-- Who did what. `workspace_id` is NULL for what concerns a person rather than a
-- workspace (signing in); a workspace's log shows those of its members too.
CREATE TABLE audit_events (
    id            UUID PRIMARY KEY NOT NULL,
    workspace_id  UUID REFERENCES workspaces(id) ON DELETE CASCADE,
    at            TIMESTAMPTZ NOT NULL,
    actor_id      UUID REFERENCES users(id) ON DELETE SET NULL,
    actor_email   TEXT,
    action        TEXT NOT NULL,
    target_type   TEXT,
    target_id     TEXT,
    ip            TEXT,
    detail        TEXT NOT NULL
);
CREATE INDEX audit_events_workspace ON audit_events(workspace_id, at, id);
CREATE INDEX audit_events_actor ON audit_events(actor_id, at, id);
CREATE INDEX audit_events_at ON audit_events(at);
