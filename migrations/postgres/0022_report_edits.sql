-- A person's edit of a report's content is a version of its own, beside its generations:
-- what made it (`generation` or `edit`) and who (a person's edit; none for a generation,
-- or once that account is gone).
ALTER TABLE report_versions ADD COLUMN kind TEXT NOT NULL DEFAULT 'generation';
ALTER TABLE report_versions ADD COLUMN author_id UUID REFERENCES users(id) ON DELETE SET NULL;
-- A report whose text is not its newest version's was changed by hand before edits were
-- kept (who is not known): that text becomes a version, so no regeneration loses it. A
-- report without any version has had its text since before versions were kept, most
-- likely as a generation wrote it, and is kept as one.
INSERT INTO report_versions (report_id, version, content, provenance, generated_at, kind, author_id)
SELECT r.id,
       COALESCE((SELECT MAX(v.version) FROM report_versions v WHERE v.report_id = r.id), 0) + 1,
       r.content, NULL, r.updated_at,
       CASE WHEN EXISTS (SELECT 1 FROM report_versions v WHERE v.report_id = r.id) THEN 'edit' ELSE 'generation' END,
       NULL
FROM reports r
WHERE r.content IS NOT NULL AND r.content <> ''
  AND NOT EXISTS (
      SELECT 1 FROM report_versions v WHERE v.report_id = r.id AND v.content = r.content
         AND v.version = (SELECT MAX(w.version) FROM report_versions w WHERE w.report_id = r.id));
