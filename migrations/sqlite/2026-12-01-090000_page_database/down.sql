ALTER TABLE pages DROP COLUMN database_slug;
