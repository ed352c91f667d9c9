#!/usr/bin/env bash
# Runs host/laika-host/tests/real_runtime.rs against a real llama.cpp `llama-server`
# serving Gemma 3 270M (built/fetched once by scripts/llama-server.sh), then
# stops the server: nothing is left running, whatever happens.
#
#   bash scripts/real-runtime.sh            # the real-runtime tests
#   bash scripts/real-runtime.sh --matrix   # also rewrite docs/compatibility.md
#                                           # (release build; LAIKA_MATRIX_RUNS, default 10)
#   bash scripts/real-runtime.sh --matrix-only   # the matrix without the tests
#
# The matrix also asks the bare model (the page and the question only) and,
# with LAIKA_BEFORE_HOST_BIN set to an older laika-host build, that build
# too, turn for turn on the same inputs, each turn with the server's prompt
# cache emptied first; every answer is written to LAIKA_MATRIX_ANSWERS
# (default: a temporary file, named in the log).
#
# Env: LAIKA_LLAMA_THREADS (default 1, see below), LAIKA_CORPORA (for the article rows),
# LAIKA_MATRIX_BARE=0 (leave the bare model out: it does not change with the host),
# CARGO_TARGET_DIR as usual.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
matrix=0
tests=1
for arg in "$@"; do
  case "$arg" in
    --matrix) matrix=1 ;;
    --matrix-only) matrix=1; tests=0 ;;
    *) echo "usage: $0 [--matrix | --matrix-only]" >&2; exit 2 ;;
  esac
done

log() { echo "real-runtime.sh: $*" >&2; }

while IFS='=' read -r key value; do
  case "$key" in
    LLAMA_SERVER) LLAMA_SERVER="$value" ;;
    LAIKA_TEST_MODEL) LAIKA_TEST_MODEL="$value" ;;
  esac
done < <(bash "$root/scripts/llama-server.sh")
[ -x "${LLAMA_SERVER:-}" ] && [ -s "${LAIKA_TEST_MODEL:-}" ] || { log "llama-server.sh gave no server/model"; exit 1; }

port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
server_log="$(mktemp -t llama-server.XXXXXX.log)"
# --slot-save-path lets the matrix empty the slot's prompt cache before a
# turn (/slots/0?action=erase); --metrics gives it the prompt token counts.
slot_dir="$(mktemp -d -t llama-slots.XXXXXX)"
# Greedy sampling (--temp 0) and one slot (-np 1) make answers repeatable
# and let consecutive requests reuse the cached prompt prefix (system prompt).
# One thread: on a 2-core machine shared with builds, two llama.cpp threads
# wait on each other whenever one is preempted (measured: 40-300 ms/token
# with 2 threads vs a steady ~35 ms/token with 1, load average 3-4).
"$LLAMA_SERVER" -m "$LAIKA_TEST_MODEL" --host 127.0.0.1 --port "$port" \
  -c 8192 -np 1 --threads "${LAIKA_LLAMA_THREADS:-1}" --temp 0 --seed 1 --no-webui \
  --metrics --slot-save-path "$slot_dir" \
  >"$server_log" 2>&1 &
server_pid=$!
stop_server() {
  if kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$slot_dir"
}
trap stop_server EXIT
trap 'exit 130' INT TERM

base="http://127.0.0.1:$port"
for _ in $(seq 1 240); do
  if curl -sf "$base/health" >/dev/null 2>&1; then break; fi
  kill -0 "$server_pid" 2>/dev/null || { log "llama-server died:"; tail -20 "$server_log" >&2; exit 1; }
  sleep 0.5
done
curl -sf "$base/health" >/dev/null || { log "llama-server not healthy after 120 s"; tail -20 "$server_log" >&2; exit 1; }
log "llama-server ready at $base (pid $server_pid, log $server_log); load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"

export LAIKA_REAL_BASE_URL="$base/v1"
export LAIKA_REAL_MODEL_LABEL="Gemma 3 270M (base) Q4_K_M GGUF via llama-server"
cd "$root"
# One test at a time: a single server slot, and timings must not overlap.
if [ "$tests" = 1 ]; then
  cargo test -p laika-host --test real_runtime -- --test-threads=1 --nocapture
fi

if [ "$matrix" = 1 ]; then
  cargo build -p laika-host --release --bins
  bin="${CARGO_TARGET_DIR:-$root/target}/release/laika-compat-matrix"
  corpora="${LAIKA_CORPORA:-$root/../shared/corpora}"
  answers="${LAIKA_MATRIX_ANSWERS:-$(mktemp -t laika-matrix-answers.XXXXXX.ndjson)}"
  before=()
  if [ -n "${LAIKA_BEFORE_HOST_BIN:-}" ]; then before=(--before-host-bin "$LAIKA_BEFORE_HOST_BIN"); fi
  bare=(--bare)
  if [ "${LAIKA_MATRIX_BARE:-1}" = 0 ]; then bare=(); fi
  log "matrix answers: $answers"
  # N distinct inputs per task (the fixture, then six corpus articles, then
  # the articles again with other questions): with greedy decoding, N runs
  # of one input would be one answer N times.
  "$bin" --base-url "$LAIKA_REAL_BASE_URL" --profile llama.cpp \
    --model-label "$LAIKA_REAL_MODEL_LABEL" --runs "${LAIKA_MATRIX_RUNS:-10}" \
    --tasks "${LAIKA_MATRIX_TASKS:-summarize,answer,extract}" --max-tokens 512 \
    --interceptor-runs "${LAIKA_MATRIX_INTERCEPTOR_RUNS:-2}" \
    --articles 6 "${bare[@]}" --cold "${before[@]}" --answers "$answers" \
    --corpora "$corpora" --out "$root/docs/compatibility.md"
  log "wrote docs/compatibility.md"
fi
