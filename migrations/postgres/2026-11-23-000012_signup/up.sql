-- Sign-up: an account proves it holds its address before it signs in. Accounts made
-- before this were made by operators, who vouched for their addresses.
ALTER TABLE accounts ADD COLUMN email_verified_at TIMESTAMPTZ;
UPDATE accounts SET email_verified_at = created_at;

-- One-time links (setup, email verification, password reset): the SHA-256 of the secret
-- in the link, what it is for, and when it expires or was used. Setup links belong to no
-- account.
CREATE TABLE account_tokens (
    hash TEXT PRIMARY KEY,
    account_id UUID REFERENCES accounts (id) ON DELETE CASCADE,
    purpose TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at TIMESTAMPTZ
);
CREATE INDEX account_tokens_account_idx ON account_tokens (account_id, purpose);
CREATE INDEX account_tokens_expires_idx ON account_tokens (expires_at);
