#!/usr/bin/env bash
# Browser end-to-end tests: headless Debian Chromium + the built extension +
# the real laika-host (debug build), and the Firefox build in Debian
# firefox-esr over WebDriver BiDi. Installs chromium and firefox-esr (apt) and
# the extension's npm dependencies if missing.
#   scripts/e2e.sh            summarize, a citation marking its sentence in a
#                             long text block, tool calls, the agent loop, prompt-injection
#                             exfiltration, approval expiry and Stop, host not
#                             installed or silent, XSS rendering check, the chat
#                             screen (keys, answer actions, runtime badge, bad
#                             server), history (search, continue, export, undo),
#                             a clarifying question answered by a click on a choice,
#                             a summary's suggested follow-up question asked by a click,
#                             selection and other tabs as context, same-origin
#                             frames read and cross-origin ones named; Settings (a
#                             llama-server stub found, tested, used); Firefox runs a
#                             summarize turn through the real host;
#                             collections (capture, cited answer over a collection,
#                             transform, export; named, renamed, a source
#                             removed, deleted with undo, key points from a
#                             button, at 360 px; a transform stopped with
#                             Stop, nothing saved); a PDF tab read whole by the host
#                             and cited by page; a video's WebVTT captions read and
#                             cited by time; a turn always ends (host crash, Stop),
#                             the newest answer followed above the composer, quotes
#                             of several pages named, settings kept per runtime
#                             (also in Firefox); a saved prompt run from the `/`
#                             menu and by its shortcut command; MCP tool servers in
#                             Settings and an MCP call approved; every first-hour screen (chat, approval,
#                             error, offline card, "Laika stopped", Settings,
#                             History, Collections) at 360/420/800 px, light
#                             and dark, with axe-core on each; "Forget what you
#                             assumed" clears the agent state through the host's patch;
#                             a long page's estimate card (Cancel, Read it all, Stop);
#                             a model answering prose: Retry and Use offline;
#                             fields from a page's JSON-LD; the offline card's
#                             found Ollama stub used with one click; a plan's
#                             checklist (a step unchecked, one reworded,
#                             approved; statuses from the host; Cancel runs nothing;
#                             in Firefox too, a parallel stage's reads running together)
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

# Debian packages the tests drive, installed when missing.
apt_install() {
  echo "installing Debian $1…"
  if [ "$(id -u)" -eq 0 ]; then apt-get update -qq && apt-get install -y -qq "$1"
  else sudo apt-get update -qq && sudo apt-get install -y -qq "$1"; fi
}
[ -x /usr/bin/chromium ] || apt_install chromium
[ -x /usr/bin/firefox-esr ] || apt_install firefox-esr

(cd extension && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run build)

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}"
cargo build -p laika-host
export LAIKA_HOST_BIN="$CARGO_TARGET_DIR/debug/laika-host"
export LAIKA_CORPORA="${LAIKA_CORPORA:-$(cd "$repo/.." && pwd)/shared/corpora}"

status=0
for t in summarize sentence tools agent plan clarify followups exfiltration stop confirm bad-output not-installed xss chat forget settings history context frames collections collections-manage collections-stop pdf video recovery scroll pages extract offline-card prompts mcp screens firefox firefox-firsthour firefox-plan; do
  echo "== e2e: $t"
  node "tests/e2e/$t.mjs" || status=1
done
[ "$status" -eq 0 ] && echo "e2e: all passed (screenshots in tests/e2e/artifacts/)"
exit "$status"
