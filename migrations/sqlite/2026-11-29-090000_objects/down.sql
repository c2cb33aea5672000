DROP TABLE objects;
