-- The dashboard lists an account's connected agents: its live grants, found by account.
CREATE INDEX oauth_grants_account_idx ON oauth_grants (account_id, revoked_at);
