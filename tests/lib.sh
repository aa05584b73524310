# Sourced by every end-to-end test. Gives $KILN, a scratch dir $T (removed at exit),
# and pass/fail/skip helpers that exit with perf's shell-test codes (0, 1, 2).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KILN=$ROOT/build/kiln
T=$(mktemp -d /tmp/kiln-e2e.XXXXXX)
_cleanup_pids=()
cleanup() {
	for p in "${_cleanup_pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
# Kill this pid when the test exits.
reap() { _cleanup_pids+=("$@"); }
pass() { echo "PASS${1:+: $1}"; exit 0; }
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 2; }
need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root for perf_event_open"; }

# pprof_totals FILE: "type/unit total" per sample type of a pprof file, summed over the
# samples that `go tool pprof -raw` prints (the oracle of the pprof tests)
pprof_totals() {
	go tool pprof -raw "$1" 2>/dev/null | awk '
		/^Samples:/ { s = 1; getline; n = split($0, t, " "); next }
		/^Locations/ { s = 0 }
		s && /^ *-?[0-9]+( +-?[0-9]+)*:/ { sub(/:.*/, ""); for (i = 1; i <= n; i++) v[i] += $i }
		END { for (i = 1; i <= n; i++) printf "%s %d\n", t[i], v[i] }'
}
