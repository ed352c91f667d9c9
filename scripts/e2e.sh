#!/usr/bin/env bash
# Browser end-to-end tests: headless Debian Chromium + the built extension +
# the real laika-host (debug build). Installs chromium (apt) and the
# extension's npm dependencies if missing.
#   scripts/e2e.sh            summarize, tool calls, the agent loop, prompt-injection
#                             exfiltration, approval expiry and Stop, host not
#                             installed, XSS rendering check, collections (capture,
#                             cited answer over a collection, transform, export)
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

if [ ! -x /usr/bin/chromium ]; then
  echo "installing Debian chromium…"
  if [ "$(id -u)" -eq 0 ]; then apt-get update -qq && apt-get install -y -qq chromium
  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium; fi
fi

(cd extension && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run build)

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
cargo build -p laika-host
export LAIKA_HOST_BIN="$CARGO_TARGET_DIR/debug/laika-host"
export LAIKA_CORPORA="${LAIKA_CORPORA:-$(cd "$repo/.." && pwd)/shared/corpora}"

status=0
for t in summarize tools agent exfiltration stop not-installed xss collections; do
  echo "== e2e: $t"
  node "tests/e2e/$t.mjs" || status=1
done
[ "$status" -eq 0 ] && echo "e2e: all passed (screenshots in tests/e2e/artifacts/)"
exit "$status"
