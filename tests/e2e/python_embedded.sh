#!/usr/bin/env bash
# A native program that loads libpython with dlopen() in the middle of its life (as uwsgi
# or a plugin host does), while kiln runs: its first samples are native only, and once
# libpython is mapped the agent follows the interpreter, so the Python functions it runs
# appear with _[p] frames under the native caller.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
lib=
for l in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[0-3]*/lib/libpython3.1[0-3].so.1.0 \
	/usr/lib/x86_64-linux-gnu/libpython3.1[0-3].so.1.0; do
	[ -r "$l" ] && { lib=$l; break; }
done
[ -n "$lib" ] || skip "no shared libpython 3.10+ on this machine"
build_c embed_python -ldl
cp "$WB/embed_python" "$T/embedpy"
# native for 2 s, then Python (python_ratio.py) for 5 s, all inside one 6 s session
"$T/embedpy" "$lib" 2 "$W/python_ratio.py" 5 > /dev/null &
reap $!
record -d 6 -f 199 --no-flamegraph --pids $! >/dev/null
n=$(colcheck count "$COL" embedpy)
[ "$n" -ge 200 ] || fail "only $n samples of the embedding process"
colcheck frac "$COL" embedpy '^native_work$' 0.1 || fail "the native phase is missing"
colcheck frac "$COL" embedpy '^alpha \(.*python_ratio\.py:[0-9]+\)_\[p\]$' 0.3 ||
	fail "no Python frames after the dlopen: $(grep embedpy "$COL" | sort -t' ' -k2 -nr | head -3)"
pass "$n samples with $lib"
