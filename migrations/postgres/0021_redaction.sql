-- Why a report should be generated again: a record it was written from was redacted for
-- good since. Cleared when it is regenerated.
ALTER TABLE reports ADD COLUMN stale_reason TEXT;
