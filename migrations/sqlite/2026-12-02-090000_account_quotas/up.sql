-- Quotas per account. An account's object bytes are the sum of its ready objects' sizes,
-- read at every upload: this index answers it from the index alone. Its databases are
-- counted at every creation and listed (provisioning and ready) for their sizes: the
-- second index finds them without reading the table.
CREATE INDEX objects_account_bytes_idx ON objects (account_id, state, size_bytes);
CREATE INDEX databases_account_idx ON databases (account_id, status);
