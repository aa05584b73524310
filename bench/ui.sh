#!/usr/bin/env bash
# bench/ui.sh — the web UI's draw and zoom times on 100,000 unique stacks (bench/ui.js),
# in Debian's chromium driven by playwright-core. Needs `make` first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$root/build/kiln" ] || { echo "bench/ui: build kiln first (make)" >&2; exit 1; }
"$root/tests/browser/install.sh"
exec node "$root/bench/ui.js"
