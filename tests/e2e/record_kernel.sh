#!/usr/bin/env bash
# A workload that lives in the kernel: its stacks carry named kernel frames ending in _[k].
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
build_c kernel
"$WB/kernel" 30 & reap $!
sleep 0.3
record -d 3 -f 199 --perf-mode fp --no-flamegraph
colcheck frac "$COL" kernel '_\[k\]$' 0.8 || fail "too few kernel frames"
colcheck frac "$COL" kernel '^[A-Za-z_][A-Za-z0-9_.]*_\[k\]$' 0.8 || fail "kernel frames are not named"
colcheck frac "$COL" kernel '^(__x64_sys|ksys)_(read|write)_\[k\]$' 0.5 || fail "no read/write syscall frames"
pass
