-- The TOTP second factor: the secret (base32; it must be readable to check a code) and
-- the last 30-second step accepted, so that each code is accepted once.
ALTER TABLE accounts ADD COLUMN totp_secret TEXT;
ALTER TABLE accounts ADD COLUMN totp_last_step BIGINT;
CREATE INDEX sessions_expires_idx ON sessions (expires_at);
