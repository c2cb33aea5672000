DROP INDEX databases_account_idx;
DROP INDEX objects_account_bytes_idx;
