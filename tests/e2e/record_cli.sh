#!/usr/bin/env bash
# kiln record's options: --help lists gProfiler's names, bad values are refused with a
# message naming the option, upload needs its token and service name.
. "$(dirname "$0")/../lib.sh"
"$KILN" record --help >"$T/help" || fail "--help failed"
for o in --profiling-frequency --profiling-duration --output-dir --rotating-output \
	--no-flamegraph --continuous --pids --perf-mode --perf-dwarf-stack-size --python-mode \
	--java-mode --no-java --nodejs-mode --upload-results --server-host --token --service-name; do
	grep -q -- "$o" "$T/help" || fail "--help does not list $o"
done
bad() {	# bad EXPECTED-MESSAGE ARGS...
	local want=$1
	shift
	if "$KILN" record "$@" 2>"$T/err"; then fail "accepted: $*"; fi
	grep -q -- "$want" "$T/err" || fail "unclear error for $*: $(cat "$T/err")"
}
bad "invalid value '0' for option '-f'" -f 0
bad "invalid value 'x' for option '--profiling-duration'" --profiling-duration x
bad "invalid value 'lbr' for option '--perf-mode'" --perf-mode lbr
bad "invalid value '1,x' for option '--pids'" --pids 1,x
bad "invalid value '100' for option '--perf-dwarf-stack-size'" --perf-dwarf-stack-size 100
bad "invalid value '70000' for option '--perf-dwarf-stack-size'" --perf-dwarf-stack-size 70000
bad "needs --token and --service-name" -u --token t
bad "unexpected argument 'extra'" -d 1 extra
pass
