-- A link names what it leads to by kind: a page or an object (an owned link, reached
-- through its owner) or any URL (a link of its own, `/api/link/v1`). Every existing link is
-- a page's. Standalone links also carry a title, can be archived, send visitors elsewhere
-- once expired or spent, choose their redirect status, and remember when they were last
-- followed.
--
-- SQLite cannot drop `page_id`'s NOT NULL and UNIQUE in place, so the table is rebuilt.
-- Migrations run inside a transaction with `foreign_keys` on (diesel turns it on, and the
-- pragma cannot change inside a transaction), where dropping a parent table first deletes
-- its rows and so cascades to the codes, allow entries, daily counts and leases. Those rows
-- are kept aside and put back once the new table holds the links; all in one transaction.
CREATE TEMP TABLE keep_link_codes AS SELECT * FROM link_codes;
CREATE TEMP TABLE keep_link_allow AS SELECT * FROM link_allow;
CREATE TEMP TABLE keep_link_views_daily AS SELECT * FROM link_views_daily;
CREATE TEMP TABLE keep_view_leases AS SELECT * FROM view_leases;
CREATE TABLE links_new (
    id TEXT PRIMARY KEY,
    target_kind TEXT NOT NULL,
    target_id TEXT,
    target_url TEXT,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    project_id TEXT NOT NULL REFERENCES projects (id),
    public_id TEXT NOT NULL,
    alias TEXT,
    title TEXT,
    access TEXT NOT NULL,
    password_hash TEXT,
    expires_at TEXT,
    max_views BIGINT,
    view_count BIGINT NOT NULL DEFAULT 0,
    views_leased BIGINT NOT NULL DEFAULT 0,
    archived_at TEXT,
    expired_url TEXT,
    redirect_status INTEGER NOT NULL DEFAULT 302,
    last_viewed_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT links_target_key UNIQUE (target_kind, target_id),
    CONSTRAINT links_target_check CHECK (
        (target_kind IN ('page', 'object') AND target_id IS NOT NULL AND target_url IS NULL)
        OR (target_kind = 'url' AND target_id IS NULL AND target_url IS NOT NULL)
    )
);
INSERT INTO links_new (id, target_kind, target_id, account_id, project_id, public_id, alias,
                       access, password_hash, expires_at, max_views, view_count, views_leased,
                       created_at, updated_at)
SELECT id, 'page', page_id, account_id, project_id, public_id, alias, access, password_hash,
       expires_at, max_views, view_count, views_leased, created_at, updated_at
FROM links;
DROP TABLE links;
ALTER TABLE links_new RENAME TO links;
INSERT INTO link_codes SELECT * FROM keep_link_codes;
INSERT INTO link_allow SELECT * FROM keep_link_allow;
INSERT INTO link_views_daily SELECT * FROM keep_link_views_daily;
INSERT INTO view_leases SELECT * FROM keep_view_leases;
DROP TABLE keep_link_codes;
DROP TABLE keep_link_allow;
DROP TABLE keep_link_views_daily;
DROP TABLE keep_view_leases;
CREATE INDEX links_project_idx ON links (project_id);
-- A project's standalone links, newest first.
CREATE INDEX links_project_kind_idx ON links (project_id, target_kind, created_at);

-- Views by preview and crawler user agents, counted apart from the views people made.
ALTER TABLE link_views_daily ADD COLUMN bot_views BIGINT NOT NULL DEFAULT 0;

-- Where a link's visitors came from, by UTC day: the referrer's host only (no path, no
-- address, no user agent).
CREATE TABLE link_referrers (
    link_id TEXT NOT NULL REFERENCES links (id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    host TEXT NOT NULL,
    views BIGINT NOT NULL,
    PRIMARY KEY (link_id, day, host)
);
