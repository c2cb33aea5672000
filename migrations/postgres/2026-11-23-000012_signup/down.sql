DROP TABLE account_tokens;
ALTER TABLE accounts DROP COLUMN email_verified_at;
