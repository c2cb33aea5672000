#!/usr/bin/env bash
# Puts supabase-js's browser build (the UMD `supabase.js` of @supabase/supabase-js, from the
# npm registry) in the example's site folder, at the version this example is tested with,
# and checks it byte for byte. The file is not committed; run this once before publishing:
#
#     examples/todo/fetch-supabase-js.sh
#
# Needs npm, tar and sha256sum. `SUPABASE_JS_OUT=path` writes it elsewhere.
set -euo pipefail

VERSION=2.119.1
SHA256=d60f104b9cc23ca022ea6f7574e256aeea84823fe97806c241524b6355031800

here="$(cd "$(dirname "$0")" && pwd)"
out="${SUPABASE_JS_OUT:-$here/site/supabase.js}"

if [ -f "$out" ] && echo "$SHA256  $out" | sha256sum --check --status; then
  echo "$out: supabase-js $VERSION, checksum verified"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "@supabase/supabase-js@$VERSION" >/dev/null)
tar -xzf "$work"/supabase-supabase-js-"$VERSION".tgz -C "$work" package/dist/umd/supabase.js
if ! echo "$SHA256  $work/package/dist/umd/supabase.js" | sha256sum --check --status; then
  echo "supabase-js $VERSION: dist/umd/supabase.js does not match the pinned SHA-256 $SHA256" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
cp "$work/package/dist/umd/supabase.js" "$out"
echo "$out: supabase-js $VERSION, checksum verified"
