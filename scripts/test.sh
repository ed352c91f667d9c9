#!/usr/bin/env bash
# The whole test suite: the host (format, lints, unit, integration, corpus and
# replay tests), the extension (types, lint, unit tests, Firefox lint) and the
# browser end-to-end tests in headless Chromium, and the real-runtime tests
# against llama-server. Installs what it needs
# (Node.js/npm and Chromium from Debian, npm packages) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# In CI the shared corpora sit beside the clone and must be used, not skipped.
if [ "${CI:-}" = "true" ]; then
  export LAIKA_REQUIRE_CORPORA=1
fi

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v npm >/dev/null; then
  echo "== installing Node.js and npm (Debian)"
  as_root apt-get update -qq && as_root apt-get install -y -qq nodejs npm
fi

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== cargo test"
cargo test --workspace --all-targets --locked

echo "== replay golden (tests/replay/demo.ndjson)"
cargo run --quiet --locked -p laika-host -- replay tests/replay/demo.ndjson \
  --expect tests/replay/demo.expected.ndjson > /dev/null

echo "== extension: install, typecheck, lint, unit tests, build, Firefox lint"
(
  cd extension
  npm ci --no-audit --no-fund --loglevel=error
  npm run --silent typecheck
  npm run --silent lint
  npm test --silent
  npm run --silent build
  npm run --silent lint:firefox
)

echo "== browser end-to-end (headless Chromium)"
bash scripts/e2e.sh

echo "== real runtime: llama-server + Gemma 3 270M (built once, cached in ~/.cache/laika-test/)"
bash scripts/real-runtime.sh
