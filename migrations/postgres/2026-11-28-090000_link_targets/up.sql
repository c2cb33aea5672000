-- A link names what it leads to by kind: a page or an object (an owned link, reached
-- through its owner) or any URL (a link of its own, `/api/link/v1`). Every existing link is
-- a page's. Standalone links also carry a title, can be archived, send visitors elsewhere
-- once expired or spent, choose their redirect status, and remember when they were last
-- followed.
ALTER TABLE links ADD COLUMN target_kind TEXT NOT NULL DEFAULT 'page';
ALTER TABLE links ALTER COLUMN target_kind DROP DEFAULT;
ALTER TABLE links RENAME COLUMN page_id TO target_id;
ALTER TABLE links ALTER COLUMN target_id DROP NOT NULL;
ALTER TABLE links DROP CONSTRAINT links_page_key;
ALTER TABLE links ADD CONSTRAINT links_target_key UNIQUE (target_kind, target_id);
ALTER TABLE links ADD COLUMN target_url TEXT;
ALTER TABLE links ADD COLUMN title TEXT;
ALTER TABLE links ADD COLUMN archived_at TIMESTAMPTZ;
ALTER TABLE links ADD COLUMN expired_url TEXT;
ALTER TABLE links ADD COLUMN redirect_status INTEGER NOT NULL DEFAULT 302;
ALTER TABLE links ADD COLUMN last_viewed_at TIMESTAMPTZ;
ALTER TABLE links ADD CONSTRAINT links_target_check CHECK (
    (target_kind IN ('page', 'object') AND target_id IS NOT NULL AND target_url IS NULL)
    OR (target_kind = 'url' AND target_id IS NULL AND target_url IS NOT NULL)
);
-- A project's standalone links, newest first.
CREATE INDEX links_project_kind_idx ON links (project_id, target_kind, created_at);

-- Views by preview and crawler user agents, counted apart from the views people made.
ALTER TABLE link_views_daily ADD COLUMN bot_views BIGINT NOT NULL DEFAULT 0;

-- Where a link's visitors came from, by UTC day: the referrer's host only (no path, no
-- address, no user agent).
CREATE TABLE link_referrers (
    link_id UUID NOT NULL REFERENCES links (id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    host TEXT NOT NULL,
    views BIGINT NOT NULL,
    PRIMARY KEY (link_id, day, host)
);
