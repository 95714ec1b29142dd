-- Themes proposed for a project's untagged highlights ("group untagged highlights into
-- themes"): each a tag to make (name and description) and the highlights to file under
-- it, waiting for a person to accept it (the tag is made, or found by name, and the
-- highlights tagged) or reject it (kept as `rejected`, so the name is not proposed again).
-- highlight_ids is a JSON array. The job `highlights.themes` has the project as its subject.
CREATE TABLE theme_proposals (
    id            BLOB PRIMARY KEY NOT NULL,
    project_id    BLOB NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    name_key      TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    highlight_ids TEXT NOT NULL,
    status        TEXT NOT NULL,
    created_at    TEXT NOT NULL
);
CREATE INDEX theme_proposals_project ON theme_proposals(project_id, status, created_at);
