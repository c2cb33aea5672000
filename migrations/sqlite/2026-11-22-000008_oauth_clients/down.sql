DROP INDEX projects_account_client_key;
ALTER TABLE projects DROP COLUMN oauth_client_id;
ALTER TABLE projects RENAME COLUMN retired_oauth_client_id TO oauth_client_id;
DROP TABLE oauth_clients;
