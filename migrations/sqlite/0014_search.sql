-- The search index's outbox: every change to what search finds (records and their
-- utterances, highlights and their tags, reports, insights) leaves a row, written by
-- triggers so that no door can forget it. Each instance's index applies the rows after
-- the last it applied (kept with the index) by reading the item again from its table:
-- the database stays the source of truth and the index only a copy.
CREATE TABLE search_outbox (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    kind    TEXT NOT NULL,
    item_id BLOB NOT NULL
);
CREATE TRIGGER search_records_insert AFTER INSERT ON records BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('record', NEW.id);
END;
CREATE TRIGGER search_records_update AFTER UPDATE ON records BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('record', NEW.id);
END;
CREATE TRIGGER search_records_delete AFTER DELETE ON records BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('record', OLD.id);
END;
CREATE TRIGGER search_highlights_insert AFTER INSERT ON highlights BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('highlight', NEW.id);
END;
CREATE TRIGGER search_highlights_update AFTER UPDATE ON highlights BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('highlight', NEW.id);
END;
CREATE TRIGGER search_highlights_delete AFTER DELETE ON highlights BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('highlight', OLD.id);
END;
CREATE TRIGGER search_reports_insert AFTER INSERT ON reports BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('report', NEW.id);
END;
CREATE TRIGGER search_reports_update AFTER UPDATE ON reports BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('report', NEW.id);
END;
CREATE TRIGGER search_reports_delete AFTER DELETE ON reports BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('report', OLD.id);
END;
CREATE TRIGGER search_insights_insert AFTER INSERT ON insights BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('insight', NEW.id);
END;
CREATE TRIGGER search_insights_update AFTER UPDATE ON insights BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('insight', NEW.id);
END;
CREATE TRIGGER search_insights_delete AFTER DELETE ON insights BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('insight', OLD.id);
END;
CREATE TRIGGER search_highlight_tags_insert AFTER INSERT ON highlight_tags BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('highlight', NEW.highlight_id);
END;
CREATE TRIGGER search_highlight_tags_delete AFTER DELETE ON highlight_tags BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('highlight', OLD.highlight_id);
END;
CREATE TRIGGER search_insight_highlights_insert AFTER INSERT ON insight_highlights BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('insight', NEW.insight_id);
END;
CREATE TRIGGER search_insight_highlights_delete AFTER DELETE ON insight_highlights BEGIN
    INSERT INTO search_outbox (kind, item_id) VALUES ('insight', OLD.insight_id);
END;
