-- When each key last authenticated a request, to the minute (the dashboard's Keys page).
ALTER TABLE api_keys ADD COLUMN last_used_at TIMESTAMPTZ;
