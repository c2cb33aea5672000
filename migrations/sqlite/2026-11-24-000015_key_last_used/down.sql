ALTER TABLE api_keys DROP COLUMN last_used_at;
