-- Rate limits become rolling: a sliding log of the requests each client was allowed, so
-- no window of the limit's length ever admits more than the limit (fixed windows admitted
-- twice the limit across a boundary). The old fixed-window counts are dropped; the first
-- minutes after the upgrade simply count from zero.
DROP TABLE rate_limits;

CREATE TABLE rate_events (
    id BIGSERIAL PRIMARY KEY,
    bucket TEXT NOT NULL,
    client TEXT NOT NULL,
    at TIMESTAMPTZ NOT NULL
);
CREATE INDEX rate_events_key_idx ON rate_events (bucket, client, at);

-- One row per (bucket, client), written first in every check: the write serialises
-- concurrent checks of one client on both databases (a row lock on PostgreSQL, the write
-- lock on SQLite), so two replicas cannot both take the last slot.
CREATE TABLE rate_keys (
    bucket TEXT NOT NULL,
    client TEXT NOT NULL,
    touched_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (bucket, client)
);

-- The email quota: one row per message an account sent (or is sending) through the email
-- route, never its text. A message the relay refused is deleted again.
CREATE TABLE email_sends (
    mail_id UUID PRIMARY KEY,
    account_id UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX email_sends_account_idx ON email_sends (account_id, created_at);
