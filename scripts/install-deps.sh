#!/usr/bin/env bash
# Installs every Debian package kiln's build, tests and benchmarks need.
# Idempotent: installs only what is missing, and runs apt-get update at most once.
# Package lists live in scripts/deps/*.txt, one package per line (# comments allowed),
# one file per area, so that each part of kiln names what it needs.
# A package counts as present when an installed package provides it: a nodejs build that
# includes npm provides (and conflicts with) Debian's npm, which must not replace it.
# A line "a|b" is met by any of them present (provided); when none is, the last is
# installed: nodejs's own headers (nodejs-dev, provided by a nodejs build that ships them)
# or Debian's libnode-dev, which such a build conflicts with.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t wanted < <(cat "$here"/deps/*.txt | sed 's/#.*//' | tr -s ' \t' '\n' | sed '/^$/d' | sort -u)
have=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Provides}\n' 2>/dev/null |
	awk '$1 == "ii" { $1 = ""; gsub(/\([^)]*\)|,/, " "); for (i = 1; i <= NF; i++) { sub(/:.*/, "", $i); print $i } }' | sort -u)
missing=()
for p in "${wanted[@]}"; do
	IFS='|' read -ra alts <<< "$p"
	met=0
	for a in "${alts[@]}"; do
		grep -qxF "$a" <<< "$have" && met=1
	done
	[ "$met" -eq 1 ] || missing+=("${alts[-1]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo > /dev/null || { echo "install-deps: not root and no sudo; run as root" >&2; exit 1; }
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
