-- OAuth for agents. A grant remembers the resource (RFC 8707) its tokens are for: 'api'
-- (audience {base}/api) or 'mcp' ({base}/mcp); grants made before were all for the API.
ALTER TABLE oauth_grants ADD COLUMN resource TEXT NOT NULL DEFAULT 'api';
-- How a client was registered: 'admin' (the platform admin's route) or 'dynamic' (RFC 7591,
-- by the client itself, unverified); a dynamic client unused for 30 days is deleted, so its
-- last use is kept.
ALTER TABLE oauth_clients ADD COLUMN registration TEXT NOT NULL DEFAULT 'admin';
ALTER TABLE oauth_clients ADD COLUMN last_used_at TIMESTAMPTZ;
