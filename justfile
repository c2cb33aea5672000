# Shortcuts; every recipe is a plain cargo command you can run without `just`.

# Run the service (SQLite in ./data, bundles in ./data/bundles).
run:
    cargo run -p quire-server

# Every test; PostgreSQL too when QUIRE_TEST_POSTGRES_URL is set.
test:
    cargo test --workspace

# What CI runs.
ci:
    bash .ci/run

lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings

# Create the two migration folders for a new migration: `just migration add_pages`.
migration name:
    #!/usr/bin/env bash
    set -euo pipefail
    dir="$(date -u +%Y-%m-%d-%H%M%S)_{{name}}"
    for b in postgres sqlite; do mkdir -p "migrations/$b/$dir"; touch "migrations/$b/$dir/up.sql" "migrations/$b/$dir/down.sql"; done
    echo "created migrations/{postgres,sqlite}/$dir"
