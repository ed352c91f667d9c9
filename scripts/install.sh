#!/usr/bin/env bash
# Builds the release host and installs it as ~/.local/bin/laika-host.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p laika-host
dest="${LAIKA_INSTALL_DIR:-$HOME/.local/bin}"
mkdir -p "$dest"
install -m 0755 target/release/laika-host "$dest/laika-host"
echo "Installed $dest/laika-host ($("$dest/laika-host" --version))."
case ":$PATH:" in
  *":$dest:"*) ;;
  *) echo "Add $dest to your PATH to run laika-host from a shell." ;;
esac
