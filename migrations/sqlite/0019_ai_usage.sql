-- AI work as it was charged: one row per model call of a workspace's work (a report's
-- sections, a chat answer, a persona...), with its tokens and its cost at the prices of
-- the moment. The monthly budget and the usage report sum these.
CREATE TABLE ai_usage (
    id                 BLOB PRIMARY KEY NOT NULL,
    workspace_id       BLOB NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id         BLOB,
    kind               TEXT NOT NULL,
    model              TEXT NOT NULL,
    prompt_tokens      INTEGER NOT NULL,
    completion_tokens  INTEGER NOT NULL,
    cost               REAL NOT NULL,
    duration_ms        INTEGER NOT NULL,
    at                 TEXT NOT NULL
);
CREATE INDEX ai_usage_workspace ON ai_usage(workspace_id, at);
