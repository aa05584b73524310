#!/usr/bin/env bash
# A native program that loads libruby with dlopen() in the middle of its life (as a plugin
# host does), while kiln runs: its first samples are native only, and once libruby is
# mapped the agent follows the interpreter, so the Ruby methods it runs appear with
# _[rb] frames under the native caller, though the process is not called ruby; each
# activation of the interpreter loop in the native stack holds its own Ruby frames.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
lib=
for l in /usr/lib/x86_64-linux-gnu/libruby-3.[0-4].so.3.[0-4]*; do
	[ -r "$l" ] && { lib=$l; break; }
done
[ -n "$lib" ] || skip "no shared libruby 3.x on this machine"
build_c embed_ruby -ldl
cp "$WB/embed_ruby" "$T/embedrb"
# native for 2 s, then Ruby (ruby_ratio.rb) for 5 s, all inside one 6 s session
"$T/embedrb" "$lib" 2 "$W/ruby_ratio.rb" 5 > /dev/null &
reap $!
record -d 6 -f 199 --no-flamegraph --pids $! >/dev/null
n=$(colcheck count "$COL" embedrb)
[ "$n" -ge 200 ] || fail "only $n samples of the embedding process"
colcheck frac "$COL" embedrb '^native_work$' 0.1 || fail "the native phase is missing"
colcheck frac "$COL" embedrb '^alpha \(.*ruby_ratio\.rb:[0-9]+\)_\[rb\]$' 0.3 ||
	fail "no Ruby frames after the dlopen: $(grep embedrb "$COL" | sort -t' ' -k2 -nr | head -3)"
# each rb_vm_exec activation is followed by the frames it runs: the eval's, then (under
# load's native frames) the file's
grep embedrb "$COL" | grep -Eq ';main;.*rb_vm_exec;<main> \(eval:1\)_\[rb\];load \(cfunc\)_\[rb\];.*;rb_vm_exec;<top \(required\)> \(' ||
	fail "the Ruby frames are not interleaved at the native rb_vm_exec frames"
pass "$n samples with $lib"
