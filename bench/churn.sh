#!/bin/bash
# Agent memory under process churn: `kiln record` runs while a loop starts short-lived
# processes, each from a binary it has never seen (a fresh copy at a new path, so the
# symbolizer, the process table and the stack tables all meet new objects), and the
# agent's RSS is sampled. Prints "elapsed_s rss_kb processes" lines, then a summary.
#   bench/churn.sh [SECONDS (300)] [RSS_EVERY_S (30)]
# Needs root (perf events). KILN=path picks the binary (build/kiln).
set -u
cd "$(dirname "$0")/.."
secs=${1:-300}
every=${2:-30}
kiln=${KILN:-build/kiln}
[ "$(id -u)" = 0 ] || { echo "churn: needs root" >&2; exit 2; }
work=$(mktemp -d /tmp/kiln-churn.XXXXXX)
trap 'kill $rec $loop 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

cat > "$work/spin.c" <<'C'
#include <stdlib.h>
#include <time.h>
/* a few distinct functions so every binary has a symbol table worth parsing */
__attribute__((noinline)) static unsigned long leaf(unsigned long x) { return x * 2654435761u + 1; }
__attribute__((noinline)) static unsigned long mid(unsigned long x) { for (int i = 0; i < 1000; i++) x = leaf(x); return x; }
int main(int argc, char **argv)
{
	struct timespec t0, t;
	unsigned long x = (unsigned long)argc;
	long ms = argc > 1 ? atol(argv[1]) : 30;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		x = mid(x);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	return (int)(x & 1);
}
C
cc -O1 -g -o "$work/spin" "$work/spin.c" || exit 1
mkdir -p "$work/out" "$work/bin"
"$kiln" record -c -d 10 --rotating-output --no-flamegraph -q -o "$work/out" &
rec=$!
sleep 3
# The churn: a new binary (new inode, new path, new build) for every process.
(
	i=0
	while :; do
		b="$work/bin/spin_$i"
		cp "$work/spin" "$b" && printf '%08d' "$i" >> "$b"	# a distinct file each time
		"$b" 30 >/dev/null
		rm -f "$b"
		i=$((i + 1))
		echo "$i" > "$work/count"
	done
) &
loop=$!
start=$(date +%s)
while :; do
	now=$(date +%s)
	el=$((now - start))
	rss=$(awk '/^VmRSS/ {print $2}' /proc/$rec/status 2>/dev/null)
	[ -n "$rss" ] || { echo "churn: kiln record exited" >&2; exit 1; }
	echo "$el $rss $(cat "$work/count" 2>/dev/null || echo 0)"
	[ "$el" -ge "$secs" ] && break
	sleep "$every"
done
