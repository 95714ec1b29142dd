-- An import is written into a holding workspace nobody is a member of, invisible to every
-- list, search, export and MCP call, and moved into its workspace in one transaction at the
-- end. importing_since marks such a workspace (and is renewed as the import goes on), so
-- that what a killed import left is found and removed at the next start or sweep.
ALTER TABLE workspaces ADD COLUMN importing_since TEXT;
CREATE INDEX workspaces_importing ON workspaces(importing_since) WHERE importing_since IS NOT NULL;
