#!/usr/bin/env bash
# Score the extension's main-content extractor (extension/src/content/primary.ts)
# on a folder of <id>.html.gz pages in headless Chromium (page JavaScript off,
# no network).
#
# usage: scripts/eval-extraction.sh [PAGES_DIR] [OUT_JSON]
#   PAGES_DIR  default: $LAIKA_CORPORA/article-extraction/html
#              ($LAIKA_CORPORA defaults to ../shared/corpora beside the repo)
#   OUT_JSON   default: tests/extraction/out/predictions.json
# Env: EXTRACT_BASELINE=1 also scores plain Readability.js on the same pages.
#
# Installs Debian's chromium and the harness's npm deps when missing. When a
# ground-truth.json sits next to PAGES_DIR, prints the 4-gram shingle F1 on
# all pages, then the held-out F1: the extractor's option set
# (extension/src/content/primary/options.ts) chosen on 4 of 5 folds of sites
# and scored on the fifth (tests/extraction/heldout.py). EXTRACT_HELDOUT=0
# skips the held-out run.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
corpora="${LAIKA_CORPORA:-$repo/../shared/corpora}"
pages="$(cd "${1:-$corpora/article-extraction/html}" && pwd)"
out="${2:-$repo/tests/extraction/out/predictions.json}"
harness="$repo/tests/extraction"

if [ ! -x /usr/bin/chromium ]; then
  echo "== installing chromium (Debian)"
  apt-get update -qq && apt-get install -y -qq chromium >/dev/null
fi
if [ ! -d "$harness/node_modules/playwright-core" ]; then
  echo "== installing harness npm deps"
  (cd "$harness" && npm ci --no-audit --no-fund --silent)
fi

echo "== typecheck + unit checks"
(cd "$harness" && ./node_modules/.bin/tsc -p tsconfig.json && node --test unit/ 2>&1 | grep -E '^# (pass|fail)|^not ok')

echo "== corpus run"
start=$(date +%s)
node "$harness/run.mjs" "$pages" "$out"
preds=("$out")
if [ "${EXTRACT_BASELINE:-}" = "1" ]; then
  base="$(dirname "$out")/readability.json"
  node "$harness/run.mjs" --baseline "$pages" "$base"
  preds+=("$base")
fi
echo "wall time: $(( $(date +%s) - start ))s"

truth="$(dirname "$pages")/ground-truth.json"
scorer="$corpora/../tools/eval_extraction.py"
if [ -f "$truth" ]; then
  if [ -f "$scorer" ]; then
    python3 "$scorer" "$truth" "${preds[@]}"
    if [ "${EXTRACT_HELDOUT:-1}" != "0" ]; then
      echo "== held-out (option set chosen on other sites)"
      grid="$(dirname "$out")/grid"
      rm -rf "$grid"
      node "$harness/heldout.mjs" "$pages" "$grid"
      python3 "$harness/heldout.py" "$scorer" "$truth" "$grid" share0.3-link0.5-marked
    fi
  else
    echo "ground truth found but no scorer at $scorer; skipped scoring"
  fi
fi
