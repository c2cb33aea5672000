-- What of PostgREST's behaviour its operator leaves off by default a database's owner has
-- turned on for its data API (PostgREST's db-schemas, db-max-rows, db-aggregates-enabled,
-- db-plan-enabled and db-tx-end = commit-allow-override), each column defaulting to
-- PostgREST's default, so every existing database keeps the data API it had. The schemas
-- are names as PostgreSQL writes them unquoted (no comma can occur), comma-separated, the
-- default schema first; the domain checks them before they are written.
ALTER TABLE databases ADD COLUMN data_api_schemas TEXT NOT NULL DEFAULT 'public';
ALTER TABLE databases ADD COLUMN data_api_max_rows BIGINT;
ALTER TABLE databases ADD COLUMN data_api_aggregates BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE databases ADD COLUMN data_api_explain BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE databases ADD COLUMN data_api_tx_rollback BOOLEAN NOT NULL DEFAULT FALSE;
