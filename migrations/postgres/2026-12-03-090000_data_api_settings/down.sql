ALTER TABLE databases DROP COLUMN data_api_tx_rollback;
ALTER TABLE databases DROP COLUMN data_api_explain;
ALTER TABLE databases DROP COLUMN data_api_aggregates;
ALTER TABLE databases DROP COLUMN data_api_max_rows;
ALTER TABLE databases DROP COLUMN data_api_schemas;
