-- What the report generator tells about its work: progress over the report's prompts,
-- the attempt, the last error, when it started and finished, and the tokens it used.
ALTER TABLE reports ADD COLUMN gen_progress DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE reports ADD COLUMN gen_attempts BIGINT NOT NULL DEFAULT 0;
ALTER TABLE reports ADD COLUMN gen_error TEXT;
ALTER TABLE reports ADD COLUMN gen_started_at TIMESTAMPTZ;
ALTER TABLE reports ADD COLUMN gen_finished_at TIMESTAMPTZ;
ALTER TABLE reports ADD COLUMN gen_prompt_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE reports ADD COLUMN gen_completion_tokens BIGINT NOT NULL DEFAULT 0;
