#!/usr/bin/env bash
# A program that forks, execs a CPU-bound child and exits, all within 100 ms, run 100
# times: the exec happens on one CPU and the child's samples are taken on another
# (tests/workloads/exec_brief.c). The child's samples must carry the child's name and
# complete stacks (main -> child_run -> child_spin), not the launcher's name or a stack
# unwound against the launcher's image.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || skip "needs 2 CPUs (the exec on one, the child on another)"
build_c exec_brief
cp "$WB/exec_brief" "$T/brieflaunch"
cp "$WB/exec_brief" "$T/briefchild"
export BRIEF_CHILD=$T/briefchild
# The launcher runs on the last CPU and the child on the first: the first CPU's ring is
# the one a reader that copies ring after ring reads first.
"$KILN" record -o "$T/out" -d 30 -f 199 --no-flamegraph >"$T/record.log" 2>&1 &
kiln=$!
reap $kiln
sleep 2
start=$(date +%s%N)
for _ in $(seq 100); do
	"$T/brieflaunch" $((ncpu - 1)) 0 || fail "the launcher failed"
done
per_run=$(( ($(date +%s%N) - start) / 100000000 ))
kill -INT $kiln
wait $kiln || fail "kiln record failed: $(cat "$T/record.log")"
# child: samples named briefchild; complete: holding main and child_run (or kernel-only:
# the exec and the exit); spin: holding child_spin too; launcher: samples named
# brieflaunch (its own start, fork and exit), of which wrong hold the child's functions
# or an address no mapping of the launcher holds (the child's code unwound against the
# launcher's image; but inside execve the user stack is the previous image's); other: samples of pid-N entries (read from /proc when the process
# was gone: its exec was applied after its samples)
read -r child complete spin launcher wrong other < <(awk '
	/^#/ { next }
	{
		c = $NF; st = substr($0, 1, length($0) - length($NF) - 1); n = split(st, f, ";")
		user = 0; m = 0; r = 0; s = 0; u = 0; x = 0
		for (i = 4; i <= n; i++) {
			if (f[i] !~ /_\[k\]$/) user++
			if (f[i] ~ /^\(unknown\+/) u = 1
			if (f[i] ~ /^__x64_sys_execve(at)?_\[k\]$/) x = 1
			if (f[i] == "main") m = 1
			if (f[i] == "child_run") r = 1
			if (f[i] == "child_spin") s = 1
		}
		if (f[3] == "briefchild") {
			child += c
			if ((m && r) || !user) complete += c
			if (m && r && s) spin += c
		} else if (f[3] == "brieflaunch") { launcher += c; if (r || s || (u && !x)) wrong += c }
		else if (f[3] ~ /^pid-[0-9]+$/) other += c
	}
	END { printf "%d %d %d %d %d %d\n", child, complete, spin, launcher, wrong, other }' "$COL")
echo "one run: ${per_run} ms; child: $child samples, $complete complete, $spin in child_spin;" \
	"launcher: $launcher ($wrong the child's); pid-N: $other"
[ "$per_run" -lt 1000 ] || skip "the host is too busy: a run took ${per_run} ms"
[ "$child" -ge 150 ] || fail "only $child samples of the child"
awk -v c="$complete" -v t="$child" 'BEGIN { exit !(c >= 0.95 * t) }' ||
	fail "$complete of $child child samples hold main;child_run"
awk -v s="$spin" -v t="$child" 'BEGIN { exit !(s >= 0.8 * t) }' ||
	fail "$spin of $child child samples hold main;child_run;child_spin"
awk -v w="$wrong" -v o="$other" -v t="$child" 'BEGIN { exit !(w + o <= 0.03 * t) }' ||
	fail "$wrong of the child's samples named brieflaunch and $other pid-N beside $child"
pass "$complete of $child child samples complete"
