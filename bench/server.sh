#!/usr/bin/env bash
# bench/server.sh [DIR [HOSTS [HOURS [ROWS]]]]: builds kiln, compiles bench/server.c
# against build/libkiln.a and prints the store's ingest, query and disk figures next to
# SPEC §5's targets. Without DIR the data goes to a temporary directory, removed after.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s all
cc -std=c11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer -Isrc $(make -s print-PKG_CFLAGS) -include src/util/banned.h \
	-o build/bench-server bench/server.c build/libkiln.a $(make -s print-LDLIBS)
if [ $# -ge 1 ]; then
	exec nice build/bench-server "$@"
fi
dir=$(mktemp -d /tmp/kiln-bench-server.XXXXXX)
trap 'rm -rf "$dir"' EXIT
nice build/bench-server "$dir"
