ALTER TABLE oauth_clients DROP COLUMN last_used_at;
ALTER TABLE oauth_clients DROP COLUMN registration;
ALTER TABLE oauth_grants DROP COLUMN resource;
