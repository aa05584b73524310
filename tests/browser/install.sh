#!/usr/bin/env bash
# install.sh — installs playwright-core (package-lock.json) into tests/browser/node_modules
# with npm ci, unless the locked version is there already. The browser is Debian's
# chromium (scripts/deps/ui.txt): `npx playwright install` downloads are not used.
set -euo pipefail
cd "$(dirname "$0")"
# Debian's nodejs ships npm as a package of its own; other builds of nodejs include it.
if ! command -v npm > /dev/null; then
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends npm
fi
want=$(node -p 'require("./package-lock.json").packages["node_modules/playwright-core"].version')
have=$(node -p 'try { require("./node_modules/playwright-core/package.json").version } catch (e) { "" }')
[ "$want" = "$have" ] && exit 0
npm ci --no-audit --no-fund --loglevel=error
