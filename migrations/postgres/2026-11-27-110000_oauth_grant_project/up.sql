-- The project an OAuth grant's tokens act in, picked on the consent page. NULL while
-- pending, and for grants approved before the page had a picker: those act in the client's
-- home project (the project naming the client, else the default project). Deleting the
-- project ends the connections acting in it (their refresh tokens go with the grant).
ALTER TABLE oauth_grants ADD COLUMN project_id UUID REFERENCES projects (id) ON DELETE CASCADE;
-- Deleting a project finds its grants by this index.
CREATE INDEX oauth_grants_project_idx ON oauth_grants (project_id);
