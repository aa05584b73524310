#!/usr/bin/env bash
# Stripped binaries named through debuginfod: Debian's debuginfod server on loopback
# serves the split debug file of a stripped copy of the ratio workload. kiln, given
# DEBUGINFOD_URLS, names alpha/beta/gamma_ and keeps the file in its cache by build-id;
# with --no-debuginfod it does not (the control). With the server stopped the cached file
# still names them, and a session with a fresh cache and the server stopped, or with a
# server that accepts and never answers, still ends (within the time limit of `timeout`,
# far above the session's length plus one fetch's bound).
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
command -v debuginfod >/dev/null || skip "no debuginfod server (Debian package debuginfod)"
command -v objcopy >/dev/null || skip "no objcopy (binutils)"
"$KILN" record --help 2>&1 | grep -q -- '--no-debuginfod' || fail "kiln record has no --no-debuginfod"
build_c ratio
mkdir -p "$T/srv" || fail "mkdir failed"
cp "$WB/ratio" "$T/dbgtarget" || fail "cp failed"
objcopy --only-keep-debug "$T/dbgtarget" "$T/srv/dbgtarget.debug" &&
	strip --strip-all "$T/dbgtarget" || fail "objcopy/strip failed"
nm "$T/dbgtarget" 2>&1 | grep -q 'no symbols' || fail "dbgtarget still has a symbol table"
bid=$(readelf -n "$T/dbgtarget" | awk '/Build ID:/ { print $3 }')
[ -n "$bid" ] || fail "dbgtarget has no build-id"
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
debuginfod -F -p "$port" -d "$T/db.sqlite" -t 0 -g 0 "$T/srv" >"$T/debuginfod.log" 2>&1 &
srv=$!
reap $srv
url=http://127.0.0.1:$port
for _ in $(seq 60); do	# until the scan has indexed the file
	curl -sf "$url/buildid/$bid/debuginfo" -o "$T/probe" && break
	sleep 0.5
done
cmp -s "$T/probe" "$T/srv/dbgtarget.debug" || fail "debuginfod does not serve $bid: $(tail -n 3 "$T/debuginfod.log")"
"$T/dbgtarget" 1 60 &
pid=$!
reap $pid

# rec NAME ARGS...: kiln record of dbgtarget into $T/NAME (4 s sessions)
rec() {
	local name=$1
	shift
	timeout 40 "$KILN" record -o "$T/$name" -d 4 -f 199 --perf-mode fp --no-flamegraph \
		--pids "$pid" "$@" >"$T/$name.log" 2>&1
	local rc=$?
	[ $rc -eq 124 ] && fail "the session '$name' did not end: $(tail -n 3 "$T/$name.log")"
	[ $rc -eq 0 ] || fail "kiln record ($name) failed: $(tail -n 3 "$T/$name.log")"
}
named() { colcheck frac "$T/$1/last_profile.col" dbgtarget '^(alpha|beta|gamma_)$' "$2"; }
unnamed() { ! colcheck frac "$T/$1/last_profile.col" dbgtarget '^(alpha|beta|gamma_)$' 0.05; }

rec off --no-debuginfod --debuginfod-cache "$T/cache"
unnamed off || fail "named without debuginfod: the control is broken"
[ ! -e "$T/cache/$bid" ] || fail "--no-debuginfod fetched anyway"
DEBUGINFOD_URLS=$url rec on --debuginfod-cache "$T/cache"
named on 0.9 || fail "not named through debuginfod: $(grep -v '^#' "$T/on/last_profile.col" | head -n 3)"
[ -s "$T/cache/$bid/debuginfo" ] || fail "the debug file is not in the cache by build-id"
cmp -s "$T/cache/$bid/debuginfo" "$T/srv/dbgtarget.debug" || fail "the cached file differs"

kill $srv
wait $srv 2>/dev/null
DEBUGINFOD_URLS=$url rec cached --debuginfod-cache "$T/cache"
named cached 0.9 || fail "not named from the cache with the server stopped"
DEBUGINFOD_URLS=$url rec stopped --debuginfod-cache "$T/cache2"
unnamed stopped || fail "named with a fresh cache and the server stopped"

# a server that accepts connections and never answers
hport=$(free_port)
python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
held = []
while True:
    c, _ = s.accept()
    held.append(c)
' "$hport" &
hang=$!
reap $hang
sleep 0.5
start=$(date +%s)
DEBUGINFOD_URLS=http://127.0.0.1:$hport rec hanging --debuginfod-cache "$T/cache3"
secs=$(($(date +%s) - start))
unnamed hanging || fail "named by a server that never answers"
pass "named through debuginfod, cached; sessions with the server stopped and hanging ended (${secs}s for a 4 s session with a hanging server)"
