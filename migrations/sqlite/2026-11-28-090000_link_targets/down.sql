DROP TABLE link_referrers;
ALTER TABLE link_views_daily DROP COLUMN bot_views;
DELETE FROM links WHERE target_kind <> 'page';
-- The rebuild of `up.sql`, backwards, keeping what points at the links aside the same way.
CREATE TEMP TABLE keep_link_codes AS SELECT * FROM link_codes;
CREATE TEMP TABLE keep_link_allow AS SELECT * FROM link_allow;
CREATE TEMP TABLE keep_link_views_daily AS SELECT link_id, day, views FROM link_views_daily;
CREATE TEMP TABLE keep_view_leases AS SELECT * FROM view_leases;
CREATE TABLE links_old (
    id TEXT PRIMARY KEY,
    page_id TEXT NOT NULL CONSTRAINT links_page_key UNIQUE,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    project_id TEXT NOT NULL REFERENCES projects (id),
    public_id TEXT NOT NULL,
    alias TEXT,
    access TEXT NOT NULL,
    password_hash TEXT,
    expires_at TEXT,
    max_views BIGINT,
    view_count BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    views_leased BIGINT NOT NULL DEFAULT 0
);
INSERT INTO links_old (id, page_id, account_id, project_id, public_id, alias, access,
                       password_hash, expires_at, max_views, view_count, created_at,
                       updated_at, views_leased)
SELECT id, target_id, account_id, project_id, public_id, alias, access, password_hash,
       expires_at, max_views, view_count, created_at, updated_at, views_leased
FROM links;
DROP TABLE links;
ALTER TABLE links_old RENAME TO links;
INSERT INTO link_codes SELECT * FROM keep_link_codes;
INSERT INTO link_allow SELECT * FROM keep_link_allow;
INSERT INTO link_views_daily (link_id, day, views) SELECT * FROM keep_link_views_daily;
INSERT INTO view_leases SELECT * FROM keep_view_leases;
DROP TABLE keep_link_codes;
DROP TABLE keep_link_allow;
DROP TABLE keep_link_views_daily;
DROP TABLE keep_view_leases;
CREATE INDEX links_project_idx ON links (project_id);
