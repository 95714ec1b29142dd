-- A per-user counter that moves whenever anything a project list shows changes: a
-- project row, the number of a project's records, or of its reports that are not
-- deleted. The auth query reads it, so a cached project list can be checked for
-- freshness without another query. Triggers keep it, so no write path can forget.
ALTER TABLE users ADD COLUMN data_version BIGINT NOT NULL DEFAULT 0;

CREATE FUNCTION insight_bump_project_owner() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE users SET data_version = data_version + 1 WHERE id = OLD.owner_id;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        UPDATE users SET data_version = data_version + 1 WHERE id = NEW.owner_id;
    END IF;
    RETURN NULL;
END $$;

-- For rows that belong to a project (reports, records).
CREATE FUNCTION insight_bump_via_project() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE users SET data_version = data_version + 1
        WHERE id = (SELECT owner_id FROM projects WHERE id = OLD.project_id);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        UPDATE users SET data_version = data_version + 1
        WHERE id = (SELECT owner_id FROM projects WHERE id = NEW.project_id);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER projects_version AFTER INSERT OR UPDATE OR DELETE ON projects
    FOR EACH ROW EXECUTE FUNCTION insight_bump_project_owner();
CREATE TRIGGER reports_version AFTER INSERT OR DELETE ON reports
    FOR EACH ROW EXECUTE FUNCTION insight_bump_via_project();
CREATE TRIGGER reports_version_update AFTER UPDATE OF is_deleted, project_id ON reports
    FOR EACH ROW WHEN (OLD.is_deleted IS DISTINCT FROM NEW.is_deleted OR OLD.project_id IS DISTINCT FROM NEW.project_id)
    EXECUTE FUNCTION insight_bump_via_project();
CREATE TRIGGER records_version AFTER INSERT OR DELETE ON records
    FOR EACH ROW EXECUTE FUNCTION insight_bump_via_project();
CREATE TRIGGER records_version_update AFTER UPDATE OF project_id ON records
    FOR EACH ROW WHEN (OLD.project_id IS DISTINCT FROM NEW.project_id)
    EXECUTE FUNCTION insight_bump_via_project();
