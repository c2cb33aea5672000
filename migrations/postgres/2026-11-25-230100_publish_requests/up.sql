-- Publishes remembered by the request id their caller (an account's key or OAuth client)
-- gave, so a retried publish is answered with the first page (the MCP `publish_page`
-- tool's `request_id`). Forgotten by the janitor after a day; gone with their page.
CREATE TABLE publish_requests (
    caller TEXT NOT NULL,
    request_id TEXT NOT NULL,
    page_id UUID NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (caller, request_id)
);
CREATE INDEX publish_requests_created_idx ON publish_requests (created_at);
CREATE INDEX publish_requests_page_idx ON publish_requests (page_id);
