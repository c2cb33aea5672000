-- Views per link and UTC day (YYYY-MM-DD), written with the running tally: a budgeted
-- view in the same transaction as its claim, the others with each flush of the counts
-- kept in memory. The dashboard draws the last 30 days.
CREATE TABLE link_views_daily (
    link_id UUID NOT NULL REFERENCES links (id) ON DELETE CASCADE,
    day TEXT NOT NULL,
    views BIGINT NOT NULL,
    PRIMARY KEY (link_id, day)
);
