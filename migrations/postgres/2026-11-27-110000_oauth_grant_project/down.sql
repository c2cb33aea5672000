DROP INDEX oauth_grants_project_idx;
ALTER TABLE oauth_grants DROP COLUMN project_id;
