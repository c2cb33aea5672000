DROP TABLE link_allow;
DROP TABLE link_codes;
DROP TABLE links;
DROP TABLE page_files;
DROP TABLE pages;
