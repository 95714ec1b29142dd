-- Accounts and teams: workspaces own what users made, members have roles, people sign
-- in with a password (or single sign-on) into sessions, and an audit trail says who did
-- what. Every user gets a personal workspace whose id is his own id, so the objects of a
-- database from before workspaces move into their owner's workspace by a plain UPDATE.
-- `owner_id` stays on every object as its creator.
ALTER TABLE users ADD COLUMN name TEXT NOT NULL DEFAULT '';
-- argon2id in PHC form; NULL until the user sets a password (or for SSO-only users).
ALTER TABLE users ADD COLUMN password_hash TEXT;

CREATE TABLE workspaces (
    id           BLOB PRIMARY KEY NOT NULL,
    name         TEXT NOT NULL,
    -- The user whose personal workspace this is; NULL for a team's workspace.
    personal_of  BLOB UNIQUE REFERENCES users(id) ON DELETE CASCADE,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);

CREATE TABLE workspace_members (
    workspace_id  BLOB NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id       BLOB NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role          TEXT NOT NULL,
    joined_at     TEXT NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_user ON workspace_members(user_id, workspace_id, role);

INSERT INTO workspaces (id, name, personal_of, created_at, updated_at)
    SELECT id, email, id, created_at, created_at FROM users;
INSERT INTO workspace_members (workspace_id, user_id, role, joined_at)
    SELECT id, id, 'owner', created_at FROM users;

-- SQLite cannot add a NOT NULL column without a default; every insert names it.
ALTER TABLE projects ADD COLUMN workspace_id BLOB REFERENCES workspaces(id) ON DELETE CASCADE;
UPDATE projects SET workspace_id = owner_id;
CREATE INDEX projects_workspace ON projects(workspace_id, created_at, id);

ALTER TABLE prompts ADD COLUMN workspace_id BLOB REFERENCES workspaces(id) ON DELETE CASCADE;
UPDATE prompts SET workspace_id = owner_id;
CREATE INDEX prompts_workspace ON prompts(workspace_id);

ALTER TABLE presets ADD COLUMN workspace_id BLOB REFERENCES workspaces(id) ON DELETE CASCADE;
UPDATE presets SET workspace_id = owner_id;
CREATE INDEX presets_workspace ON presets(workspace_id);

ALTER TABLE webhook_endpoints ADD COLUMN workspace_id BLOB REFERENCES workspaces(id) ON DELETE CASCADE;
UPDATE webhook_endpoints SET workspace_id = owner_id;
CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints(workspace_id, created_at);

-- Tokens issued before scopes keep working with `write`.
ALTER TABLE api_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'write';

-- A project list is now every project of every workspace a user belongs to, so a change
-- moves the data version (0002) of each member of the project's workspace, and joining
-- or leaving a workspace moves the member's own.
DROP TRIGGER projects_version_insert;
DROP TRIGGER projects_version_update;
DROP TRIGGER projects_version_delete;
DROP TRIGGER reports_version_insert;
DROP TRIGGER reports_version_update;
DROP TRIGGER reports_version_delete;
DROP TRIGGER records_version_insert;
DROP TRIGGER records_version_update;
DROP TRIGGER records_version_delete;

CREATE TRIGGER projects_version_insert AFTER INSERT ON projects BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id IN (SELECT user_id FROM workspace_members WHERE workspace_id = NEW.workspace_id);
END;
CREATE TRIGGER projects_version_update AFTER UPDATE ON projects BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id IN (SELECT user_id FROM workspace_members WHERE workspace_id IN (OLD.workspace_id, NEW.workspace_id));
END;
CREATE TRIGGER projects_version_delete AFTER DELETE ON projects BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id IN (SELECT user_id FROM workspace_members WHERE workspace_id = OLD.workspace_id);
END;

CREATE TRIGGER reports_version_insert AFTER INSERT ON reports BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id IN (SELECT m.user_id FROM workspace_members m JOIN projects p ON p.workspace_id = m.workspace_id
                 WHERE p.id = NEW.project_id);
END;
CREATE TRIGGER reports_version_update AFTER UPDATE OF is_deleted, project_id ON reports
WHEN OLD.is_deleted IS NOT NEW.is_deleted OR OLD.project_id IS NOT NEW.project_id BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id IN (SELECT m.user_id FROM workspace_members m JOIN projects p ON p.workspace_id = m.workspace_id
                 WHERE p.id IN (OLD.project_id, NEW.project_id));
END;
CREATE TRIGGER reports_version_delete AFTER DELETE ON reports BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id IN (SELECT m.user_id FROM workspace_members m JOIN projects p ON p.workspace_id = m.workspace_id
                 WHERE p.id = OLD.project_id);
END;

CREATE TRIGGER records_version_insert AFTER INSERT ON records BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id IN (SELECT m.user_id FROM workspace_members m JOIN projects p ON p.workspace_id = m.workspace_id
                 WHERE p.id = NEW.project_id);
END;
CREATE TRIGGER records_version_update AFTER UPDATE OF project_id ON records
WHEN OLD.project_id IS NOT NEW.project_id BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id IN (SELECT m.user_id FROM workspace_members m JOIN projects p ON p.workspace_id = m.workspace_id
                 WHERE p.id IN (OLD.project_id, NEW.project_id));
END;
CREATE TRIGGER records_version_delete AFTER DELETE ON records BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id IN (SELECT m.user_id FROM workspace_members m JOIN projects p ON p.workspace_id = m.workspace_id
                 WHERE p.id = OLD.project_id);
END;

CREATE TRIGGER members_version_insert AFTER INSERT ON workspace_members BEGIN
    UPDATE users SET data_version = data_version + 1 WHERE id = NEW.user_id;
END;
CREATE TRIGGER members_version_delete AFTER DELETE ON workspace_members BEGIN
    UPDATE users SET data_version = data_version + 1 WHERE id = OLD.user_id;
END;

-- A signed-in browser. The cookie holds a random value; only its SHA-256 is kept.
-- A session ends when idle too long (`last_seen_at`), at `expires_at`, or when revoked.
CREATE TABLE sessions (
    id            BLOB PRIMARY KEY NOT NULL,
    user_id       BLOB NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    token_hash    BLOB NOT NULL UNIQUE,
    created_at    TEXT NOT NULL,
    last_seen_at  TEXT NOT NULL,
    expires_at    TEXT NOT NULL,
    ip            TEXT,
    user_agent    TEXT,
    method        TEXT NOT NULL,
    revoked_at    TEXT
);
CREATE INDEX sessions_user ON sessions(user_id, created_at);

-- One-time links to set a password: reset requests, the first run, the CLI.
CREATE TABLE password_links (
    token_hash  BLOB PRIMARY KEY NOT NULL,
    user_id     BLOB NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT
);
CREATE INDEX password_links_user ON password_links(user_id);

-- Failed sign-ins per account (`account:<email>`) and per client address (`ip:<addr>`),
-- in the database so that every instance slows and locks alike.
CREATE TABLE sign_in_failures (
    key           TEXT PRIMARY KEY NOT NULL,
    failures      INTEGER NOT NULL,
    first_at      TEXT NOT NULL,
    last_at       TEXT NOT NULL,
    locked_until  TEXT
);

-- An invitation's link is derived from the instance key and `token_nonce` (like an
-- interview link) so it can be shown again to admins without being stored.
CREATE TABLE invitations (
    id           BLOB PRIMARY KEY NOT NULL,
    workspace_id BLOB NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    email        TEXT NOT NULL,
    role         TEXT NOT NULL,
    token_nonce  BLOB NOT NULL,
    token_hash   BLOB NOT NULL UNIQUE,
    invited_by   BLOB REFERENCES users(id) ON DELETE SET NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    accepted_at  TEXT,
    accepted_by  BLOB REFERENCES users(id) ON DELETE SET NULL
);
CREATE INDEX invitations_workspace ON invitations(workspace_id, created_at);

-- Who did what. `workspace_id` is NULL for what concerns a person rather than a
-- workspace (signing in); a workspace's log shows those of its members too.
CREATE TABLE audit_events (
    id            BLOB PRIMARY KEY NOT NULL,
    workspace_id  BLOB REFERENCES workspaces(id) ON DELETE CASCADE,
    at            TEXT NOT NULL,
    actor_id      BLOB REFERENCES users(id) ON DELETE SET NULL,
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
