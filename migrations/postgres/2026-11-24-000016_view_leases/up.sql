-- Views of a budgeted link leased to replicas and not yet settled: the count plus the leases
-- never pass the budget, so the replicas serve their blocks from memory without overspending.
ALTER TABLE links ADD COLUMN views_leased BIGINT NOT NULL DEFAULT 0;
