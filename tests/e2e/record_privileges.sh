#!/usr/bin/env bash
# Without the privileges to open perf events, kiln record says what it needs and fails.
. "$(dirname "$0")/../lib.sh"
need_root
command -v setpriv >/dev/null || skip "no setpriv"
p=$(cat /proc/sys/kernel/perf_event_paranoid)
[ "$p" -gt 0 ] || skip "kernel.perf_event_paranoid is $p: unprivileged users may profile"
cp "$KILN" "$T/kiln"
chmod 755 "$T" "$T/kiln"
mkdir -m 777 "$T/out"
if setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$T/kiln" record -d 1 -o "$T/out" 2>"$T/err"; then
	fail "kiln record succeeded without privileges"
fi
cat "$T/err"
grep -q 'CAP_PERFMON' "$T/err" && grep -q 'root' "$T/err" &&
	grep -q 'perf_event_paranoid' "$T/err" || fail "the message does not say what is needed"
pass
