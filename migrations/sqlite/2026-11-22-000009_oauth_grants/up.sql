-- Authorizations of OAuth clients, from the consent page's request to the tokens. One row
-- per authorization: pending (request_hash, session_hash, request_expires_at), approved
-- (code_hash, code_expires_at), redeemed (redeemed_at); revoking it (revoked_at) revokes
-- every refresh token of its family. Secrets are stored as SHA-256 (hex).
CREATE TABLE oauth_grants (
    id TEXT PRIMARY KEY,
    client_id TEXT NOT NULL REFERENCES oauth_clients (id),
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    scope TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    state TEXT,
    code_challenge TEXT NOT NULL,
    request_hash TEXT CONSTRAINT oauth_grants_request_key UNIQUE,
    session_hash TEXT,
    request_expires_at TEXT,
    code_hash TEXT CONSTRAINT oauth_grants_code_key UNIQUE,
    code_expires_at TEXT,
    redeemed_at TEXT,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE INDEX oauth_grants_client_idx ON oauth_grants (client_id);

CREATE TABLE oauth_refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    rotated_at TEXT
);
CREATE INDEX oauth_refresh_tokens_grant_idx ON oauth_refresh_tokens (grant_id);

-- The Ed25519 keys that sign access tokens, shared by every replica. private_key is the
-- PKCS#8 document, base64; whoever reads this table can sign tokens, like whoever reads
-- server_secrets can sign the pages origin's passes.
CREATE TABLE oauth_signing_keys (
    kid TEXT PRIMARY KEY,
    private_key TEXT NOT NULL,
    public_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    activates_at TEXT NOT NULL
);
