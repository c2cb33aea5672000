-- Each lease on a link's views, with the views it holds and when it lapses unless its
-- holder renews it. `links.views_leased` stays the sum of a link's leases (what a new lease
-- is checked against); a lapsed lease is settled as served views by the janitor, so views
-- a dead process served are counted and the budget is never overspent.
CREATE TABLE view_leases (
    link_id TEXT NOT NULL REFERENCES links (id) ON DELETE CASCADE,
    holder TEXT NOT NULL,
    views BIGINT NOT NULL,
    expires_at TEXT NOT NULL,
    PRIMARY KEY (link_id, holder)
);
CREATE INDEX view_leases_expires_idx ON view_leases (expires_at);

-- Views leased before leases had holders: one lease each, lapsing now, so the first
-- janitor pass settles them.
INSERT INTO view_leases (link_id, holder, views, expires_at)
SELECT id, '00000000-0000-0000-0000-000000000000', views_leased,
       strftime('%Y-%m-%dT%H:%M:%S', 'now') || '.000000Z'
FROM links WHERE views_leased > 0;
