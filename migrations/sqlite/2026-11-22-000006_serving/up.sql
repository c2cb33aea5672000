-- Secrets the service makes for itself at first start and every replica shares: the key
-- that signs visitor cookies and sign-in passes of the pages origin.
CREATE TABLE server_secrets (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
