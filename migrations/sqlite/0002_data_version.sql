-- A per-user counter that moves whenever anything a project list shows changes: a
-- project row, the number of a project's records, or of its reports that are not
-- deleted. The auth query reads it, so a cached project list can be checked for
-- freshness without another query. Triggers keep it, so no write path can forget.
ALTER TABLE users ADD COLUMN data_version INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER projects_version_insert AFTER INSERT ON projects BEGIN
    UPDATE users SET data_version = data_version + 1 WHERE id = NEW.owner_id;
END;
CREATE TRIGGER projects_version_update AFTER UPDATE ON projects BEGIN
    UPDATE users SET data_version = data_version + 1 WHERE id IN (OLD.owner_id, NEW.owner_id);
END;
CREATE TRIGGER projects_version_delete AFTER DELETE ON projects BEGIN
    UPDATE users SET data_version = data_version + 1 WHERE id = OLD.owner_id;
END;

CREATE TRIGGER reports_version_insert AFTER INSERT ON reports BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id = (SELECT owner_id FROM projects WHERE id = NEW.project_id);
END;
CREATE TRIGGER reports_version_update AFTER UPDATE OF is_deleted, project_id ON reports
WHEN OLD.is_deleted IS NOT NEW.is_deleted OR OLD.project_id IS NOT NEW.project_id BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id IN (SELECT owner_id FROM projects WHERE id IN (OLD.project_id, NEW.project_id));
END;
CREATE TRIGGER reports_version_delete AFTER DELETE ON reports BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id = (SELECT owner_id FROM projects WHERE id = OLD.project_id);
END;

CREATE TRIGGER records_version_insert AFTER INSERT ON records BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id = (SELECT owner_id FROM projects WHERE id = NEW.project_id);
END;
CREATE TRIGGER records_version_update AFTER UPDATE OF project_id ON records
WHEN OLD.project_id IS NOT NEW.project_id BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id IN (SELECT owner_id FROM projects WHERE id IN (OLD.project_id, NEW.project_id));
END;
CREATE TRIGGER records_version_delete AFTER DELETE ON records BEGIN
    UPDATE users SET data_version = data_version + 1
    WHERE id = (SELECT owner_id FROM projects WHERE id = OLD.project_id);
END;
