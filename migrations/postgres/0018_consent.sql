-- A respondent's consent: the workspace's consent text as it was accepted when joining,
-- its version and when. A room whose workspace asks for none keeps these NULL.
ALTER TABLE interview_rooms ADD COLUMN consent_version BIGINT;
ALTER TABLE interview_rooms ADD COLUMN consent_text TEXT;
ALTER TABLE interview_rooms ADD COLUMN consented_at TIMESTAMPTZ;
