-- The search index's outbox: every change to what search finds (records and their
-- utterances, highlights and their tags, reports, insights) leaves a row, written by
-- triggers so that no door can forget it. Each instance's index applies the rows after
-- the last it applied (kept with the index) by reading the item again from its table:
-- the database stays the source of truth and the index only a copy.
CREATE TABLE search_outbox (
    seq     BIGSERIAL PRIMARY KEY,
    kind    TEXT NOT NULL,
    item_id UUID NOT NULL
);
CREATE FUNCTION search_outbox_records() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO search_outbox (kind, item_id) VALUES ('record', OLD.id);
        RETURN OLD;
    END IF;
    INSERT INTO search_outbox (kind, item_id) VALUES ('record', NEW.id);
    RETURN NEW;
END;
$$;
CREATE TRIGGER search_outbox_records AFTER INSERT OR UPDATE OR DELETE ON records
    FOR EACH ROW EXECUTE FUNCTION search_outbox_records();
CREATE FUNCTION search_outbox_highlights() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO search_outbox (kind, item_id) VALUES ('highlight', OLD.id);
        RETURN OLD;
    END IF;
    INSERT INTO search_outbox (kind, item_id) VALUES ('highlight', NEW.id);
    RETURN NEW;
END;
$$;
CREATE TRIGGER search_outbox_highlights AFTER INSERT OR UPDATE OR DELETE ON highlights
    FOR EACH ROW EXECUTE FUNCTION search_outbox_highlights();
CREATE FUNCTION search_outbox_reports() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO search_outbox (kind, item_id) VALUES ('report', OLD.id);
        RETURN OLD;
    END IF;
    INSERT INTO search_outbox (kind, item_id) VALUES ('report', NEW.id);
    RETURN NEW;
END;
$$;
CREATE TRIGGER search_outbox_reports AFTER INSERT OR UPDATE OR DELETE ON reports
    FOR EACH ROW EXECUTE FUNCTION search_outbox_reports();
CREATE FUNCTION search_outbox_insights() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO search_outbox (kind, item_id) VALUES ('insight', OLD.id);
        RETURN OLD;
    END IF;
    INSERT INTO search_outbox (kind, item_id) VALUES ('insight', NEW.id);
    RETURN NEW;
END;
$$;
CREATE TRIGGER search_outbox_insights AFTER INSERT OR UPDATE OR DELETE ON insights
    FOR EACH ROW EXECUTE FUNCTION search_outbox_insights();
CREATE FUNCTION search_outbox_highlight_tags() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO search_outbox (kind, item_id) VALUES ('highlight', OLD.highlight_id);
        RETURN OLD;
    END IF;
    INSERT INTO search_outbox (kind, item_id) VALUES ('highlight', NEW.highlight_id);
    RETURN NEW;
END;
$$;
CREATE TRIGGER search_outbox_highlight_tags AFTER INSERT OR DELETE ON highlight_tags
    FOR EACH ROW EXECUTE FUNCTION search_outbox_highlight_tags();
CREATE FUNCTION search_outbox_insight_highlights() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO search_outbox (kind, item_id) VALUES ('insight', OLD.insight_id);
        RETURN OLD;
    END IF;
    INSERT INTO search_outbox (kind, item_id) VALUES ('insight', NEW.insight_id);
    RETURN NEW;
END;
$$;
CREATE TRIGGER search_outbox_insight_highlights AFTER INSERT OR DELETE ON insight_highlights
    FOR EACH ROW EXECUTE FUNCTION search_outbox_insight_highlights();
