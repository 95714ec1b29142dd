-- What the report generator tells about its work: progress over the report's prompts,
-- the attempt, the last error, when it started and finished, and the tokens it used.
ALTER TABLE reports ADD COLUMN gen_progress REAL NOT NULL DEFAULT 0;
ALTER TABLE reports ADD COLUMN gen_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reports ADD COLUMN gen_error TEXT;
ALTER TABLE reports ADD COLUMN gen_started_at TEXT;
ALTER TABLE reports ADD COLUMN gen_finished_at TEXT;
ALTER TABLE reports ADD COLUMN gen_prompt_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reports ADD COLUMN gen_completion_tokens INTEGER NOT NULL DEFAULT 0;
