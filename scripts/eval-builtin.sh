#!/usr/bin/env bash
# Scores the offline `builtin` runtime on tests/builtin-eval/questions.json
# over the public article corpus: answerable accuracy, honest abstains,
# extraction field accuracy, citations verified. Figures only.
#
# usage: scripts/eval-builtin.sh [--verbose]
# Env: LAIKA_CORPORA (default: ../shared/corpora beside the repo).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
corpora="${LAIKA_CORPORA:-$repo/../shared/corpora}"
cd "$repo"
cargo run --release --locked -q -p laika-host --example builtin_eval -- \
  tests/builtin-eval/questions.json "$corpora/article-extraction/ground-truth.json" "$@"
