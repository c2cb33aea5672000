-- The database a page names (`database` at publish and patch), by its slug: the slug is what
-- the page's scripts and the data API's address (`/db/{slug}`) name it by. The pages origin
-- answers `/-/db.json` only while a ready database of that slug is the page's owner's and in
-- the page's project, so a slug freed and taken again by anyone else gives nothing; a
-- database made again under the same slug in the same project serves the page again.
-- `docs/decisions/database-service.md` says why it is not a foreign key.
ALTER TABLE pages ADD COLUMN database_slug TEXT;
