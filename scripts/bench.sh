#!/usr/bin/env bash
# Prints the performance figures recorded in docs/PERFORMANCE.md (release
# build). Figures only: nothing here passes or fails on time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p laika-host --bin laika-host --example bench --example stream_bench --example transform_bench --example serve_bench --example memory_bench --example ping_bench --example parse_bench --example staged_bench
target="${CARGO_TARGET_DIR:-target}/release"
echo "== host: start, 1 MiB turn, SQLite commit"
"$target/examples/bench" "$target/laika-host" "$@"
echo
echo "== streaming: time to first rendered block"
"$target/examples/stream_bench" "$target/laika-host"
echo
echo "== transforms: 20-source comparison (builtin; stub model at concurrency 1 vs 4)"
"$target/examples/transform_bench"
echo
echo "== serve: /ask on loopback (NLWeb, builtin runtime)"
"$target/examples/serve_bench" "$target/laika-host"
echo
echo "== conversations: context assembly, token → text_delta"
"$target/examples/memory_bench"
echo
echo "== large frames: ping while a 60 MiB frame is parsed and while a 60 MiB turn runs; peak RSS"
"$target/examples/ping_bench" "$target/laika-host"
echo
echo "== bounded parsing: peak memory beyond the frame (counting allocator)"
"$target/examples/parse_bench"
echo
echo "== staged summarize: 400,000-char page, 8,192-token window (scripted runtime)"
"$target/examples/staged_bench"
