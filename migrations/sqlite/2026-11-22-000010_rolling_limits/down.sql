DROP TABLE email_sends;
DROP TABLE rate_keys;
DROP TABLE rate_events;
CREATE TABLE rate_limits (
    bucket TEXT NOT NULL,
    client TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    hits BIGINT NOT NULL,
    PRIMARY KEY (bucket, client, window_start)
);
