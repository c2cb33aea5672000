-- RFC 8628 device grants, and request counters for rate limits shared by every replica.
CREATE TABLE device_grants (
    id TEXT PRIMARY KEY,
    device_code_hash TEXT NOT NULL CONSTRAINT device_grants_device_code_key UNIQUE,
    user_code TEXT NOT NULL CONSTRAINT device_grants_user_code_key UNIQUE,
    client_name TEXT NOT NULL,
    state TEXT NOT NULL,
    account_id TEXT REFERENCES accounts (id) ON DELETE CASCADE,
    key_id TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    interval_secs BIGINT NOT NULL,
    last_polled_at TEXT,
    decided_at TEXT
);

CREATE TABLE rate_limits (
    bucket TEXT NOT NULL,
    client TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    hits BIGINT NOT NULL,
    PRIMARY KEY (bucket, client, window_start)
);
