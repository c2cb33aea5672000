DROP INDEX sessions_expires_idx;
ALTER TABLE accounts DROP COLUMN totp_last_step;
ALTER TABLE accounts DROP COLUMN totp_secret;
