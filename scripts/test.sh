#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit + integration + corpus tests,
# and the replay golden. Run from anywhere; installs nothing but Rust crates.
set -euo pipefail
cd "$(dirname "$0")/.."

# In CI the shared corpora sit beside the clone and must be used, not skipped.
if [ "${CI:-}" = "true" ]; then
  export LAIKA_REQUIRE_CORPORA=1
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --all-targets --locked -- -D warnings

echo "== cargo test"
cargo test --all-targets --locked

echo "== replay golden (tests/replay/demo.ndjson)"
cargo run --quiet --locked -p laika-host -- replay tests/replay/demo.ndjson \
  --expect tests/replay/demo.expected.ndjson > /dev/null
