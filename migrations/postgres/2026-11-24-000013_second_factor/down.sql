DROP TABLE recovery_codes;
ALTER TABLE sessions DROP COLUMN pending_totp_secret;
