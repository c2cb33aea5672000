-- Accounts, projects, API keys and grants. Times are RFC 3339 UTC text with microseconds (sorts as time), ids hyphenated uuid text.
CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL CONSTRAINT accounts_email_key UNIQUE,
    handle TEXT NOT NULL CONSTRAINT accounts_handle_key UNIQUE,
    password_hash TEXT,
    activated_at TEXT,
    is_platform_admin BOOLEAN NOT NULL DEFAULT 0,
    -- No foreign key: accounts and projects reference each other; the store keeps this
    -- pointing at one of the account's projects inside its transactions.
    default_project_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    tag TEXT NOT NULL,
    color TEXT NOT NULL,
    slug TEXT NOT NULL CONSTRAINT projects_slug_key UNIQUE,
    oauth_client_id TEXT CONSTRAINT projects_oauth_client_id_key UNIQUE,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX projects_account_idx ON projects (account_id, created_at);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    tier TEXT NOT NULL,
    apps TEXT NOT NULL,
    project_id TEXT REFERENCES projects (id) ON DELETE SET NULL,
    key_prefix TEXT NOT NULL,
    key_hash TEXT NOT NULL CONSTRAINT api_keys_key_hash_key UNIQUE,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id, created_at);
CREATE INDEX api_keys_project_idx ON api_keys (project_id);

CREATE TABLE project_grants (
    key_id TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    level TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (key_id, project_id)
);
CREATE INDEX project_grants_project_idx ON project_grants (project_id);
