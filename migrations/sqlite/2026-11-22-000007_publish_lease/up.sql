-- A pending page is held by its publish for as long as the publish renews this lease; once
-- it lapses the publish is dead and its slug may be reclaimed. NULL on ready pages. Pending
-- rows from before the lease existed count as lapsed.
ALTER TABLE pages ADD COLUMN lease_until TEXT;
UPDATE pages SET lease_until = created_at WHERE state = 'pending';
DROP INDEX pages_state_idx;
CREATE INDEX pages_lease_idx ON pages (state, lease_until);
