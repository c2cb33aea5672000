-- Databases: a PostgreSQL database of its own per record, on the operator's cluster. The
-- slug names the data API's path (`/db/{slug}`), so it is unique on the whole instance and
-- held in every state: a slug is free again only once its record is gone. The cluster's
-- names come from the id. The role passwords and the data API's JWT secret are sealed under
-- the server's key.
CREATE TABLE databases (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    project_id TEXT NOT NULL REFERENCES projects (id),
    slug TEXT NOT NULL CONSTRAINT databases_slug_key UNIQUE,
    name TEXT NOT NULL,
    status TEXT NOT NULL CONSTRAINT databases_status_check
        CHECK (status IN ('provisioning', 'ready', 'deleting')),
    -- While provisioning: when the creating request is presumed dead.
    lease_until TEXT,
    -- An ephemeral database's end.
    expires_at TEXT,
    owner_secret TEXT NOT NULL,
    authenticator_secret TEXT NOT NULL,
    -- NULL until the data API is first enabled; kept when it is turned off.
    jwt_secret TEXT,
    data_api_enabled BOOLEAN NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
-- A project's ready databases, by creation time either way (its list, its resources).
CREATE INDEX databases_project_idx ON databases (project_id, status, created_at);
-- The janitor: lapsed leases and unfinished deletes, then ephemeral databases' ends.
CREATE INDEX databases_state_idx ON databases (status, lease_until);
CREATE INDEX databases_expiry_idx ON databases (expires_at) WHERE expires_at IS NOT NULL;
