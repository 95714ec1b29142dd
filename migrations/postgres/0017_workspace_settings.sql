-- A workspace's trust settings: whether personal data is pseudonymised before a model
-- sees it (on unless turned off), the names it lists as personal, how long recordings
-- and records are kept, the consent text respondents accept (its version counts up with
-- each change), and a monthly budget for AI work. A workspace without a row has the
-- defaults. known_names is a JSON array of strings.
CREATE TABLE workspace_settings (
    workspace_id               UUID PRIMARY KEY NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    pseudonymise               BOOLEAN NOT NULL DEFAULT TRUE,
    known_names                JSONB NOT NULL DEFAULT '[]',
    retention_recordings_days  BIGINT,
    retention_records_days     BIGINT,
    consent_text               TEXT,
    consent_version            BIGINT NOT NULL DEFAULT 0,
    monthly_budget             DOUBLE PRECISION,
    currency                   TEXT NOT NULL DEFAULT 'USD',
    updated_at                 TIMESTAMPTZ NOT NULL
);
