DROP INDEX oauth_grants_account_idx;
