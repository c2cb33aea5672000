-- Activation by invitation: the operator's list of phone numbers (E.164), each of which
-- may activate one account. The unique index makes "one number per account" hold under
-- racing activations; several unbound numbers (NULL) are allowed.
CREATE TABLE invitations (
    number TEXT PRIMARY KEY,
    added_at TIMESTAMPTZ NOT NULL,
    bound_account_id UUID REFERENCES accounts (id) ON DELETE SET NULL,
    bound_at TIMESTAMPTZ
);
CREATE UNIQUE INDEX invitations_bound_account_idx ON invitations (bound_account_id);

-- Spent captcha solutions (the SHA-256 of their challenge's nonce), kept until their
-- challenge expires, so each solution is accepted once on any replica.
CREATE TABLE captcha_uses (
    nonce_hash TEXT PRIMARY KEY,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX captcha_uses_expires_idx ON captcha_uses (expires_at);
