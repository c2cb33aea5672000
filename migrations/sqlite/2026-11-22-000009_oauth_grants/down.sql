DROP TABLE oauth_signing_keys;
DROP TABLE oauth_refresh_tokens;
DROP TABLE oauth_grants;
