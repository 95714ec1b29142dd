-- A worker claims the oldest due job of its kind. The claim reads this index in order
-- and stops at the first row, however many jobs are queued; with the old index on
-- (status, run_at) it read every due job of every kind and sorted them, on each claim.
DROP INDEX jobs_ready;
CREATE INDEX jobs_due ON jobs(kind, status, run_at, id);
