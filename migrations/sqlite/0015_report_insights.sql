-- The insights a report includes, in the order they were added: the report shows them
-- (with their evidence) in a section of their own, rendered again when one is added or
-- removed and when the report is generated.
CREATE TABLE report_insights (
    report_id  BLOB NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
    insight_id BLOB NOT NULL REFERENCES insights(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    PRIMARY KEY (report_id, insight_id)
);
CREATE INDEX report_insights_insight ON report_insights(insight_id);
