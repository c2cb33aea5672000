-- Objects: one file each, published like a page (an owner-origin URL, a short link whose
-- policy it carries, a view budget). Slugs share the owner's namespace with pages, which the
-- store checks in the writing transaction. An object's link has the object's id.
CREATE TABLE objects (
    id UUID PRIMARY KEY,
    public_id TEXT NOT NULL CONSTRAINT objects_public_id_key UNIQUE,
    account_id UUID NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    project_id UUID NOT NULL REFERENCES projects (id),
    slug TEXT NOT NULL,
    title TEXT NOT NULL,
    filename TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    -- The name of the stored bytes under the object's prefix: a new one per upload, so a
    -- replacement never overwrites what visitors are reading.
    blob TEXT NOT NULL,
    status TEXT NOT NULL,
    -- 'pending' until the bytes and the link are stored; pending objects are invisible.
    state TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    archived_at TIMESTAMPTZ,
    lease_until TIMESTAMPTZ,
    CONSTRAINT objects_account_slug_key UNIQUE (account_id, slug)
);
CREATE INDEX objects_project_idx ON objects (project_id, status, created_at);
CREATE INDEX objects_state_idx ON objects (state, lease_until);
