#!/usr/bin/env bash
# The known-answer Python workload (alpha/beta 70/30 through <module> -> dispatch) under
# every CPython on the machine (Debian's python3 and each pyenv build): >= 95% of its
# samples carry _[p] frames merged after the interpreter's frame, alpha's share is
# within 3 points of 70% (and of 3 sigma), and files and lines are right. Says which of the
# versions kiln reads (src/runtimes/python_layout.c) it ran and which it could not find.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
"$KILN" record --help 2>&1 | grep -q -- --python-mode || skip "kiln record has no --python-mode"
pythons=()
[ -x /usr/bin/python3 ] && pythons+=(/usr/bin/python3)
for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/python; do
	[ -x "$p" ] && pythons+=("$p")
done
[ ${#pythons[@]} -gt 0 ] || skip "no CPython installed"
failed=() ran=()
for py in "${pythons[@]}"; do
	"$py" "$W/python_ratio.py" 8 >/dev/null & pid=$!
	reap $pid
	sleep 0.5
	rm -rf "$T/out"
	record -d 4 -f 997 --no-flamegraph --pids "$pid" >/dev/null
	kill $pid 2>/dev/null
	echo "== $py ($("$py" -V 2>&1))"
	ran+=("$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')")
	python3 "$W/pycheck.py" ratio "$COL" "$W/python_ratio.py" --merged || failed+=("$py")
done
absent=()
for v in 2.7 3.6 3.7 3.8 3.9 3.10 3.11 3.12; do
	[[ " ${ran[*]} " == *" $v "* ]] || absent+=("$v")
done
echo "ran CPython ${ran[*]}; not found: ${absent[*]:-none}"
[ ${#failed[@]} -eq 0 ] || fail "wrong Python stacks under: ${failed[*]}"
pass "${#pythons[@]} CPython builds: ${ran[*]} (not found: ${absent[*]:-none})"
