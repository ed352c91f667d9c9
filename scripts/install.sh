#!/usr/bin/env bash
# Builds and installs Laika on this machine (Debian with Rust):
#   1. the release host -> ~/.local/bin/laika-host (or $LAIKA_INSTALL_DIR),
#   2. the browser extension (extension/dist/…), when the checkout has it,
#   3. the native-messaging manifests for the browsers found (laika-host install).
# Safe to run again: every step replaces its previous result.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"

step() { printf '\n== %s\n' "$*"; }
die() {
  printf 'install.sh: error: %s\n' "$*" >&2
  exit 1
}

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo > /dev/null; then
    sudo "$@"
  else
    die "'$*' needs root and sudo is not installed; run it as root, then run this script again"
  fi
}

step "Building the host (cargo build --release --locked -p laika-host)"
command -v cargo > /dev/null ||
  die "cargo not found: install Rust (https://rustup.rs, or 'apt-get install cargo'), then run this script again"
cargo build --release --locked -p laika-host ||
  die "the host did not build (see cargo's messages above)"
built="${CARGO_TARGET_DIR:-$repo/target}/release/laika-host"
[ -x "$built" ] || die "the build finished but $built is missing"

step "Installing the host"
dest="${LAIKA_INSTALL_DIR:-$HOME/.local/bin}"
mkdir -p "$dest" || die "cannot create $dest (set LAIKA_INSTALL_DIR to a folder you can write)"
# Copy then rename, so a browser never launches a half-written binary.
install -m 0755 "$built" "$dest/.laika-host.new" || die "cannot write to $dest"
mv -f "$dest/.laika-host.new" "$dest/laika-host"
host="$dest/laika-host"
echo "Installed $host ($("$host" --version))."
case ":$PATH:" in
  *":$dest:"*) ;;
  *) echo "Note: $dest is not on your PATH; add it to run laika-host from a shell." ;;
esac

if [ -f extension/package.json ]; then
  step "Building the extension (npm ci && npm run build in extension/)"
  if ! command -v npm > /dev/null; then
    echo "npm not found: installing Debian's nodejs and npm."
    command -v apt-get > /dev/null ||
      die "npm is missing and this is not a Debian-like system: install Node.js and npm, then run this script again"
    as_root apt-get update || die "apt-get update failed (no network?)"
    as_root apt-get install -y nodejs npm || die "could not install nodejs and npm with apt-get"
  fi
  [ -f extension/package-lock.json ] ||
    die "extension/package-lock.json is missing: npm ci needs it (run 'npm install' in extension/ once to create it)"
  (cd extension && npm ci) ||
    die "npm ci failed in extension/ (it needs the npm registry or a filled npm cache; see npm's messages above)"
  (cd extension && npm run build) || die "the extension did not build (see the messages above)"
else
  step "Extension"
  echo "extension/package.json is not in this checkout: skipping the extension build."
fi

step "Registering the host with your browsers (laika-host install)"
"$host" install || die "laika-host install failed (see above)"

step "Next steps"
if [ ! -d extension/dist ]; then
  echo "(The extension is not built yet: extension/dist/ appears once extension/package.json is in this checkout and this script runs again.)"
fi
cat << EOF
Load the extension:
  Chrome, Chromium, Edge, Brave, Vivaldi: open chrome://extensions, turn on
    Developer mode, click "Load unpacked" and choose
    $repo/extension/dist/chromium
  Firefox: open about:debugging#/runtime/this-firefox, click
    "Load Temporary Add-on…" and choose
    $repo/extension/dist/firefox/manifest.json

Then check everything (manifests, a real ping to the host, the runtime):
  $host doctor
EOF
