-- Where AI output came from: the engine, model, instructions, records and cost of a
-- report's generation, a chat answer, a persona and a suggested highlight; and each generation's report kept
-- as a version, so that a regenerated report can be compared with the one before.
ALTER TABLE reports ADD COLUMN gen_provenance TEXT;
ALTER TABLE chat_messages ADD COLUMN provenance TEXT;
ALTER TABLE personas ADD COLUMN provenance TEXT;
ALTER TABLE highlights ADD COLUMN provenance TEXT;
CREATE TABLE report_versions (
    report_id     BLOB NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
    version       INTEGER NOT NULL,
    content       TEXT NOT NULL,
    provenance    TEXT,
    generated_at  TEXT NOT NULL,
    PRIMARY KEY (report_id, version)
);
