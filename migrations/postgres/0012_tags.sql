-- Tags: a workspace's codes for what respondents say, in one level of groups (a tag may
-- sit under a parent that has none). Names are unique per workspace, compared without
-- case (name_key is the lowercased name).
CREATE TABLE tags (
    id           UUID PRIMARY KEY NOT NULL,
    workspace_id UUID NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    name_key     TEXT NOT NULL,
    color        TEXT NOT NULL,
    description  TEXT NOT NULL DEFAULT '',
    parent_id    UUID REFERENCES tags(id) ON DELETE SET NULL,
    created_by   UUID REFERENCES users(id) ON DELETE SET NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    UNIQUE (workspace_id, name_key)
);
CREATE INDEX tags_parent ON tags(parent_id);
