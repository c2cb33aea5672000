-- Dashboard sessions: only the SHA-256 of the session id is stored.
CREATE TABLE sessions (
    id_hash TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    mfa_satisfied BOOLEAN NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX sessions_account_idx ON sessions (account_id);
