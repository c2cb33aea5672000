DROP TABLE project_grants;
DROP TABLE api_keys;
DROP TABLE projects;
DROP TABLE accounts;
