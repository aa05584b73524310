#!/usr/bin/env bash
# install.sh — installs playwright-core (package-lock.json) into tests/browser/node_modules
# with npm ci, unless the locked version is there already. The browser is Debian's
# chromium and npm comes from scripts/deps/ui.txt: `npx playwright install` downloads are
# not used. The locked playwright-core runs on Debian's nodejs 18 as on newer builds.
set -euo pipefail
cd "$(dirname "$0")"
command -v npm > /dev/null || { echo "install.sh: npm is not installed (scripts/deps/ui.txt)" >&2; exit 1; }
want=$(node -p 'require("./package-lock.json").packages["node_modules/playwright-core"].version')
have=$(node -p 'try { require("./node_modules/playwright-core/package.json").version } catch (e) { "" }')
[ "$want" = "$have" ] && exit 0
npm ci --no-audit --no-fund --loglevel=error
