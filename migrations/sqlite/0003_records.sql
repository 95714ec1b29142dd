-- Records grow what the records issue needs: their statistics, the reason of an error,
-- where an upload waits for transcription, and their utterances.
ALTER TABLE records ADD COLUMN language TEXT;
ALTER TABLE records ADD COLUMN duration_seconds REAL;
ALTER TABLE records ADD COLUMN word_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE records ADD COLUMN source_format TEXT NOT NULL DEFAULT 'text';
ALTER TABLE records ADD COLUMN source_name TEXT;
-- An audio or video file waiting for speech-to-text, relative to the data folder.
ALTER TABLE records ADD COLUMN media_path TEXT;
ALTER TABLE records ADD COLUMN media_type TEXT;
ALTER TABLE records ADD COLUMN error TEXT;
-- Who spoke, kept with the record so lists need no pass over the utterances.
ALTER TABLE records ADD COLUMN participants_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE records ADD COLUMN respondents_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE records ADD COLUMN respondent_names TEXT NOT NULL DEFAULT '[]';
CREATE INDEX records_project_created ON records(project_id, created_at, id);

-- One turn of speech. Ids count from 1 within their record, in source order.
CREATE TABLE utterances (
    record_id      BLOB NOT NULL REFERENCES records(id) ON DELETE CASCADE,
    id             INTEGER NOT NULL,
    speaker        TEXT NOT NULL,
    is_respondent  INTEGER NOT NULL,
    start_ms       INTEGER,
    end_ms         INTEGER,
    text           TEXT NOT NULL,
    PRIMARY KEY (record_id, id)
);

-- Jobs about a record go when it goes.
CREATE TRIGGER records_jobs_delete AFTER DELETE ON records BEGIN
    DELETE FROM jobs WHERE subject_id = OLD.id;
END;
