DROP TABLE link_referrers;
ALTER TABLE link_views_daily DROP COLUMN bot_views;
DELETE FROM links WHERE target_kind <> 'page';
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
CREATE INDEX links_project_idx ON links (project_id);
