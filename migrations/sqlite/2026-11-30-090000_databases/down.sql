DROP TABLE databases;
