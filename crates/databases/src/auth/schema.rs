//! The tenant's `auth` schema, as SQL both adapters run (`quire-pgcluster` when it makes a
//! database, `quire-data-runtime` when an instance starts).

/// The `auth` schema: users (with their sign-up's confirmation link, and the one-time
/// link and code of their latest recovery or sign-in mail, as hashes), sessions, refresh
/// tokens, settings, and the functions RLS policies call, run by the database's owner (who owns it) in one transaction. Made when
/// a database is created, and again whenever a data API instance starts: every statement
/// tolerates what exists, and the advisory lock keeps two replicas starting at once from
/// racing on the catalog, so a database older than the schema gets it too.
pub const AUTH_SCHEMA_SQL: &str = "
SELECT pg_advisory_xact_lock(hashtext('quire auth schema'));
CREATE SCHEMA IF NOT EXISTS auth;
CREATE TABLE IF NOT EXISTS auth.users (
  id uuid PRIMARY KEY,
  email text NOT NULL,
  encrypted_password text NOT NULL,
  email_confirmed_at timestamptz,
  raw_user_meta_data jsonb NOT NULL DEFAULT '{}',
  raw_app_meta_data jsonb NOT NULL DEFAULT '{\"provider\": \"email\", \"providers\": [\"email\"]}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_sign_in_at timestamptz
);
ALTER TABLE auth.users ADD COLUMN IF NOT EXISTS confirmation_token_hash text,
  ADD COLUMN IF NOT EXISTS confirmation_sent_at timestamptz,
  ADD COLUMN IF NOT EXISTS confirmation_tries integer NOT NULL DEFAULT 0;
ALTER TABLE auth.users ADD COLUMN IF NOT EXISTS recovery_token_hash text,
  ADD COLUMN IF NOT EXISTS recovery_code_hash text,
  ADD COLUMN IF NOT EXISTS recovery_sent_at timestamptz,
  ADD COLUMN IF NOT EXISTS recovery_tries integer NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX IF NOT EXISTS users_email_key ON auth.users (lower(email));
CREATE UNIQUE INDEX IF NOT EXISTS users_recovery_key ON auth.users (recovery_token_hash);
CREATE UNIQUE INDEX IF NOT EXISTS users_confirmation_key ON auth.users (confirmation_token_hash);
CREATE TABLE IF NOT EXISTS auth.sessions (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES auth.users ON DELETE CASCADE,
  created_at timestamptz NOT NULL,
  refreshed_at timestamptz
);
CREATE INDEX IF NOT EXISTS sessions_user ON auth.sessions (user_id);
CREATE TABLE IF NOT EXISTS auth.refresh_tokens (
  token_hash text PRIMARY KEY,
  session_id uuid NOT NULL REFERENCES auth.sessions ON DELETE CASCADE,
  parent_hash text,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS refresh_tokens_session ON auth.refresh_tokens (session_id);
CREATE INDEX IF NOT EXISTS refresh_tokens_parent ON auth.refresh_tokens (parent_hash);
CREATE TABLE IF NOT EXISTS auth.settings (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  disable_signup boolean NOT NULL DEFAULT false,
  confirm_email boolean NOT NULL DEFAULT false
);
ALTER TABLE auth.settings ADD COLUMN IF NOT EXISTS site_url text,
  ADD COLUMN IF NOT EXISTS uri_allow_list text[] NOT NULL DEFAULT '{}';
INSERT INTO auth.settings DEFAULT VALUES ON CONFLICT DO NOTHING;
CREATE OR REPLACE FUNCTION auth.jwt() RETURNS jsonb LANGUAGE sql STABLE
  AS $$ SELECT coalesce(nullif(current_setting('request.jwt.claims', true), ''), '{}')::jsonb $$;
CREATE OR REPLACE FUNCTION auth.uid() RETURNS uuid LANGUAGE sql STABLE
  AS $$ SELECT nullif(auth.jwt() ->> 'sub', '')::uuid $$;
CREATE OR REPLACE FUNCTION auth.role() RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT auth.jwt() ->> 'role' $$;
CREATE OR REPLACE FUNCTION auth.email() RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT auth.jwt() ->> 'email' $$;
GRANT USAGE ON SCHEMA auth TO anon, authenticated, service_role;
GRANT EXECUTE ON FUNCTION auth.jwt(), auth.uid(), auth.role(), auth.email()
  TO anon, authenticated, service_role;
";
