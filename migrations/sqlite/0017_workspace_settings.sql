-- A workspace's trust settings: whether personal data is pseudonymised before a model
-- sees it (on unless turned off), the names it lists as personal, how long recordings
-- and records are kept, the consent text respondents accept (its version counts up with
-- each change), and a monthly budget for AI work. A workspace without a row has the
-- defaults. known_names is a JSON array of strings.
CREATE TABLE workspace_settings (
    workspace_id               BLOB PRIMARY KEY NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    pseudonymise               INTEGER NOT NULL DEFAULT 1,
    known_names                TEXT NOT NULL DEFAULT '[]',
    retention_recordings_days  INTEGER,
    retention_records_days     INTEGER,
    consent_text               TEXT,
    consent_version            INTEGER NOT NULL DEFAULT 0,
    monthly_budget             REAL,
    currency                   TEXT NOT NULL DEFAULT 'USD',
    updated_at                 TEXT NOT NULL
);
