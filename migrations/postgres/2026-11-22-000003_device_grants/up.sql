-- RFC 8628 device grants, and request counters for rate limits shared by every replica.
CREATE TABLE device_grants (
    id UUID PRIMARY KEY,
    device_code_hash TEXT NOT NULL CONSTRAINT device_grants_device_code_key UNIQUE,
    user_code TEXT NOT NULL CONSTRAINT device_grants_user_code_key UNIQUE,
    client_name TEXT NOT NULL,
    state TEXT NOT NULL,
    account_id UUID REFERENCES accounts (id) ON DELETE CASCADE,
    key_id UUID,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    interval_secs BIGINT NOT NULL,
    last_polled_at TIMESTAMPTZ,
    decided_at TIMESTAMPTZ
);

CREATE TABLE rate_limits (
    bucket TEXT NOT NULL,
    client TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    hits BIGINT NOT NULL,
    PRIMARY KEY (bucket, client, window_start)
);
