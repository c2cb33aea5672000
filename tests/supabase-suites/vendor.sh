#!/usr/bin/env bash
# Refreshes vendor/ from a git copy of supabase-js: the test files `run` needs, at one commit.
#
#   tests/supabase-suites/vendor.sh GIT_DIR [COMMIT]
#
# GIT_DIR is any clone (bare or not) of supabase-js; COMMIT defaults to the one in
# vendor/COMMIT. The files are copied as they are at that commit, but for the host name of
# the links in three comments (the project names no outside host; the path stays); `run`
# adapts them at run time (the base URL and the keys, in its fetch wrapper). The library
# sources come from the npm registry (`packages.txt`), at the release that commit belongs
# to; when moving the commit, move the @supabase/* versions in packages.txt with it.
#
# Why vendored: CI and developers' machines reach package registries only, and the npm
# packages carry src/ but not test/, so the tests cannot be fetched at run time.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
git_dir="${1:?usage: vendor.sh GIT_DIR [COMMIT]}"
commit="${2:-$(cat "$here/vendor/COMMIT")}"
commit="$(git -C "$git_dir" rev-parse --verify "$commit^{commit}")"

pg=packages/core/postgrest-js/test
auth=packages/core/auth-js/test
files=(
  LICENSE
  # postgrest-js: every test file that runs under jest (not the type-level *.test-d.ts, and
  # not v12/, which wants a PostgREST 12 of its own), the types they import, the fixture.
  "$pg/advanced_rpc.test.ts"
  "$pg/basic.test.ts"
  "$pg/embeded_functions_join.test.ts"
  "$pg/fetch-errors.test.ts"
  "$pg/filters.test.ts"
  "$pg/headers-serialization.test.ts"
  "$pg/max-affected.test.ts"
  "$pg/maybe-single.test.ts"
  "$pg/permission-hints.test.ts"
  "$pg/relationships-aggregate-operations.test.ts"
  "$pg/relationships-error-handling.test.ts"
  "$pg/relationships-join-operations.test.ts"
  "$pg/relationships-spread-operations.test.ts"
  "$pg/relationships.test.ts"
  "$pg/resource-embedding.test.ts"
  "$pg/retry.test.ts"
  "$pg/rpc.test.ts"
  "$pg/timeout-and-url-length.test.ts"
  "$pg/transforms.test.ts"
  "$pg/version-and-constants.test.ts"
  "$pg/types.ts"
  "$pg/types.generated.ts"
  "$pg/types.override.ts"
  "$pg/types.generated-with-options-postgrest14.ts"
  "$pg/types.override-with-options-postgrest14.ts"
  "$pg/testSequencer.js"
  "$pg/supabase/migrations/00000000000000_schema.sql"
  "$pg/supabase/seed.sql"
  # The one source file each npm release rewrites (its version), as it is at the commit.
  packages/core/postgrest-js/src/version.ts
  packages/core/auth-js/src/lib/version.ts
  # auth-js: the GoTrueClient tests and the helpers they import.
  "$auth/GoTrueClient.test.ts"
  "$auth/GoTrueClient.signOut.test.ts"
  "$auth/lib/clients.ts"
  "$auth/lib/utils.ts"
  "$auth/webauthn.fixtures.ts"
  "$auth/generate-signing-keys.js"
)

rm -rf "$here/vendor"
mkdir -p "$here/vendor"
for f in "${files[@]}"; do
  dest="$here/vendor/${f#packages/core/}"
  mkdir -p "$(dirname "$dest")"
  git -C "$git_dir" show "$commit:$f" | sed -E 's#https://github\.com/##g' >"$dest"
done
echo "$commit" >"$here/vendor/COMMIT"

# A digest of each library's src/ at the commit, which `run` checks the npm package's src/
# (with the version files above laid over it) against.
tree_digest() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -d' ' -f1; }
for suite in postgrest-js auth-js; do
  tmp="$(mktemp -d)"
  git -C "$git_dir" archive "$commit" "packages/core/$suite/src" | tar -x -C "$tmp"
  tree_digest "$tmp/packages/core/$suite/src" >"$here/vendor/$suite/src.sha256"
  rm -rf "$tmp"
done
echo "vendored ${#files[@]} files of supabase-js at $commit"
