DROP TABLE rate_limits;
DROP TABLE device_grants;
