DROP INDEX pages_lease_idx;
CREATE INDEX pages_state_idx ON pages (state, created_at);
ALTER TABLE pages DROP COLUMN lease_until;
