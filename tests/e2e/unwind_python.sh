#!/usr/bin/env bash
# Debian's /usr/bin/python3 has no frame pointers: in dwarf and smart mode >= 95% of its
# native samples unwind through _PyEval_EvalFrameDefault down to Py_BytesMain (Debian's
# main is inlined there). Python frames are turned off to see the native stack.
. "$(dirname "$0")/../lib.sh"
need_root
"$KILN" record --help 2>&1 | grep -q -- '--perf-mode' || skip "kiln record has no --perf-mode yet"
[ -x /usr/bin/python3 ] || skip "no /usr/bin/python3"
cat >"$T/busy.py" <<'PY'
import time
def f(n):
    return f(n - 1) if n else sum(i * i for i in range(2000))
end = time.time() + 90
while time.time() < end:
    f(20)
PY
/usr/bin/python3 "$T/busy.py" &
pid=$!
reap "$pid"
sleep 0.5
for mode in dwarf smart; do
	"$KILN" record --perf-mode "$mode" --python-mode disabled -f 199 -d 8 --pids "$pid" \
		--no-flamegraph -o "$T/$mode" >"$T/$mode.log" 2>&1 ||
		fail "kiln record --perf-mode $mode failed: $(tail -n 3 "$T/$mode.log")"
	read -r total complete _ _ < <(awk -v need=_PyEval_EvalFrameDefault,Py_BytesMain \
		-f "$ROOT/tests/workloads/unwind_check.awk" "$T/$mode/last_profile.col")
	echo "$mode: $total samples, $complete through the eval loop to Py_BytesMain"
	[ "$total" -ge 200 ] || fail "$mode: only $total samples"
	awk -v t="$total" -v c="$complete" 'BEGIN { exit !(c >= 0.95 * t) }' ||
		fail "$mode: $complete of $total samples complete (< 95%)"
done
pass
