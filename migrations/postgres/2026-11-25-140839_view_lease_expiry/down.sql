DROP TABLE view_leases;
