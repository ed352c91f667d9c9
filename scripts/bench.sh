#!/usr/bin/env bash
# Prints the performance figures recorded in docs/PERFORMANCE.md.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p laika-host --bin laika-host --example bench
exec target/release/examples/bench target/release/laika-host "$@"
