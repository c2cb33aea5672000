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
    created_at TIMESTAMPTZ NOT NULL,
    deleted_at TIMESTAMPTZ
);
CREATE INDEX oauth_clients_live_idx ON oauth_clients (deleted_at, created_at);

-- A project's oauth_client_id now names a registered client, and a client has at most one
-- home project per account (many accounts authorize the same client). No client existed
-- before, so the ids stored so far named nothing.
UPDATE projects SET oauth_client_id = NULL;
ALTER TABLE projects DROP CONSTRAINT projects_oauth_client_id_key;
ALTER TABLE projects ADD CONSTRAINT projects_oauth_client_fkey
    FOREIGN KEY (oauth_client_id) REFERENCES oauth_clients (id);
CREATE UNIQUE INDEX projects_account_client_key ON projects (account_id, oauth_client_id);
