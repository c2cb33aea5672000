-- The OAuth client registry. A deleted client stays as a tombstone (deleted_at), so its id
-- is never reused and its tokens can be told apart from a stranger's.
CREATE TABLE oauth_clients (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    client_type TEXT NOT NULL,
    -- The registered URIs as written, one per line (a URI holds no whitespace).
    redirect_uris TEXT NOT NULL,
    -- SHA-256 (hex) of a confidential client's secret.
    secret_hash TEXT,
    created_at TEXT NOT NULL,
    deleted_at TEXT
);
CREATE INDEX oauth_clients_live_idx ON oauth_clients (deleted_at, created_at);

-- A project's oauth_client_id now names a registered client, and a client has at most one
-- home project per account (many accounts authorize the same client). SQLite cannot drop
-- the old column's service-wide UNIQUE, so that column is retired (always NULL) and a new
-- one takes its name. No client existed before, so the ids stored so far named nothing.
ALTER TABLE projects RENAME COLUMN oauth_client_id TO retired_oauth_client_id;
UPDATE projects SET retired_oauth_client_id = NULL;
ALTER TABLE projects ADD COLUMN oauth_client_id TEXT REFERENCES oauth_clients (id);
CREATE UNIQUE INDEX projects_account_client_key ON projects (account_id, oauth_client_id);
