DROP INDEX projects_account_client_key;
ALTER TABLE projects DROP CONSTRAINT projects_oauth_client_fkey;
UPDATE projects SET oauth_client_id = NULL;
ALTER TABLE projects ADD CONSTRAINT projects_oauth_client_id_key UNIQUE (oauth_client_id);
DROP TABLE oauth_clients;
