-- A recording sent to an asynchronous speech-to-text provider: the provider's job
-- ("assemblyai:<transcript id>"), found again when the provider calls back, and when
-- it was sent (a transcription that never finishes is given up after a day).
ALTER TABLE records ADD COLUMN stt_job TEXT;
ALTER TABLE records ADD COLUMN stt_submitted_at TEXT;
CREATE UNIQUE INDEX records_stt_job ON records(stt_job);
