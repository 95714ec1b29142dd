-- AI work as it was charged: one row per model call of a workspace's work (a report's
-- sections, a chat answer, a persona...), with its tokens and its cost at the prices of
-- the moment. The monthly budget and the usage report sum these.
CREATE TABLE ai_usage (
    id                 UUID PRIMARY KEY NOT NULL,
    workspace_id       UUID NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    project_id         UUID,
    kind               TEXT NOT NULL,
    model              TEXT NOT NULL,
    prompt_tokens      BIGINT NOT NULL,
    completion_tokens  BIGINT NOT NULL,
    cost               DOUBLE PRECISION NOT NULL,
    duration_ms        BIGINT NOT NULL,
    at                 TIMESTAMPTZ NOT NULL
);
CREATE INDEX ai_usage_workspace ON ai_usage(workspace_id, at);
