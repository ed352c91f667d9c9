#!/usr/bin/env bash
# Scores the offline `builtin` runtime on tests/builtin-eval/questions.json
# and, separately, on the other sets over the public article corpus:
# questions-unseen.json (pages the first set does not use, written before the
# runtime was run on them), extraction-dev.json (extraction cases on pages
# neither uses, with fields the page does not answer; tuned on after its
# first run), questions-blind.json and questions-blind2.json (each written
# blind by someone who did not work on the runtime, on pages no other set
# uses; each set's `about` says how), and offline-dev.json / offline-heldout.json
# (the pages none of those used, split by id: 0-7 dev, 8-f held out, the
# held-out one scored on its totals only), and offline-fresh.json (new
# questions on questions-blind2's pages, written before a round's tuning; totals only). Answerable accuracy, honest abstains,
# extraction field accuracy (and fields not on the page coming back null),
# citations verified. Figures only.
#
# usage: scripts/eval-builtin.sh [--verbose]  (blind2 always prints totals only)
# Env: LAIKA_CORPORA (default: ../shared/corpora beside the repo).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
corpora="${LAIKA_CORPORA:-$repo/../shared/corpora}"
cd "$repo"
for set in questions questions-unseen extraction-dev questions-blind questions-blind2 offline-dev offline-heldout offline-fresh; do
  echo "== tests/builtin-eval/$set.json"
  # The untouched blind set is scored on its totals only.
  args=("$@")
  case "$set" in questions-blind2 | offline-heldout | offline-fresh) args=(--totals) ;; esac
  cargo run --release --locked -q -p laika-host --example builtin_eval -- \
    "tests/builtin-eval/$set.json" "$corpora/article-extraction/ground-truth.json" "${args[@]}"
done
