-- The second factor's secret is sealed (AES-256-GCM under the server's key file) from
-- now on; secrets enrolled before are sealed by the server at start-up.
-- An enrollment in progress keeps its secret on the server, with the session that began it.
ALTER TABLE sessions ADD COLUMN pending_totp_secret TEXT;

-- One-time recovery codes of the second factor: the SHA-256 of each, and when it was used.
CREATE TABLE recovery_codes (
    code_hash TEXT PRIMARY KEY,
    account_id UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    used_at TIMESTAMPTZ
);
CREATE INDEX recovery_codes_account_idx ON recovery_codes (account_id);
