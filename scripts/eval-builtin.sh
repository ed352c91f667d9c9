#!/usr/bin/env bash
# Scores the offline `builtin` runtime on tests/builtin-eval/questions.json
# and, separately, on the held-out questions-unseen.json (pages the first set
# does not use, written before the runtime was run on them) over the public
# article corpus, and on the extraction dev set extraction-dev.json (pages
# neither uses, with fields the page does not answer): answerable accuracy,
# honest abstains, extraction field accuracy, absent fields left null,
# citations verified. Figures only.
#
# usage: scripts/eval-builtin.sh [--verbose]
# Env: LAIKA_CORPORA (default: ../shared/corpora beside the repo).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
corpora="${LAIKA_CORPORA:-$repo/../shared/corpora}"
cd "$repo"
for set in questions questions-unseen extraction-dev; do
  echo "== tests/builtin-eval/$set.json"
  cargo run --release --locked -q -p laika-host --example builtin_eval -- \
    "tests/builtin-eval/$set.json" "$corpora/article-extraction/ground-truth.json" "$@"
done
