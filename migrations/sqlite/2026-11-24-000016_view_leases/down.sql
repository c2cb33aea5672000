ALTER TABLE links DROP COLUMN views_leased;
