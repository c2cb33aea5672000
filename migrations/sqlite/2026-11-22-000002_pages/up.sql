-- Pages with their file manifests, and short links with their codes and allow lists.
CREATE TABLE pages (
    id TEXT PRIMARY KEY,
    public_id TEXT NOT NULL CONSTRAINT pages_public_id_key UNIQUE,
    account_id TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    project_id TEXT NOT NULL REFERENCES projects (id),
    slug TEXT NOT NULL,
    title TEXT NOT NULL,
    entrypoint TEXT NOT NULL,
    status TEXT NOT NULL,
    -- 'pending' until every step of the publish has succeeded; pending pages are invisible.
    state TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    file_count BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    archived_at TEXT,
    CONSTRAINT pages_account_slug_key UNIQUE (account_id, slug)
);
CREATE INDEX pages_project_idx ON pages (project_id, status, created_at);
CREATE INDEX pages_state_idx ON pages (state, created_at);

CREATE TABLE page_files (
    page_id TEXT NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    path TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    content_type TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    PRIMARY KEY (page_id, path)
);

-- No foreign key to pages: the link service is its own component (it could be remote).
CREATE TABLE links (
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
    updated_at TEXT NOT NULL
);
CREATE INDEX links_project_idx ON links (project_id);

-- Public ids and aliases share one namespace: /s/{code}.
CREATE TABLE link_codes (
    code TEXT PRIMARY KEY,
    link_id TEXT NOT NULL REFERENCES links (id) ON DELETE CASCADE
);
CREATE INDEX link_codes_link_idx ON link_codes (link_id);

CREATE TABLE link_allow (
    id TEXT PRIMARY KEY,
    link_id TEXT NOT NULL REFERENCES links (id) ON DELETE CASCADE,
    account_id TEXT,
    email TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX link_allow_link_idx ON link_allow (link_id);
CREATE INDEX link_allow_account_idx ON link_allow (account_id);
CREATE INDEX link_allow_email_idx ON link_allow (email);
