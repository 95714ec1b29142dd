-- A worker claims the oldest due job of its kind. The claim reads this index in order
-- and stops at the first row, however many jobs are queued; with the old index on
-- (status, run_at) it read every due job of every kind and sorted them, on each claim.
DROP INDEX jobs_ready;
CREATE INDEX jobs_due ON jobs(kind, status, run_at, id);

-- A project's report count (`total_reports_count`) is read from this index alone; with
-- only the index on (project_id, created_at, id) each report's row was read to see
-- whether it is deleted.
CREATE INDEX reports_live ON reports(project_id, is_deleted);
