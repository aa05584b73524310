#!/usr/bin/env python3
"""Checks on a kiln .col file recorded with --nodejs-mode perf or attach-maps, whose
JavaScript frames are named from a perf map ("JS:*phase /path/node_ratio.js:33:15"; before V8 11
"LazyCompile:*phase ...").

  nodemapcheck.py phase COL MIN
      of the samples of the node_ratio.js workload's main thread (comm node: run no other
      node under that name; inside node::LoadEnvironment, which its busy loop never leaves,
      and not in uv_run), at least MIN (0..1) have a perf-map frame
      naming its outer function phase in node_ratio.js, and there are 50 at least.
      (alpha and beta are inlined into phase: a perf map cannot name them.)

Lines are '<index>;<container>;<comm>;<frames...> <count>'. Exit 0 when the check holds.
"""
import sys

# V8's tags of JavaScript code in a perf map: "JS:" since V8 11, "LazyCompile:" and
# "Function:" before (Node 18)
TAGS = ("JS:", "LazyCompile:", "Function:")


def main():
    if len(sys.argv) != 4 or sys.argv[1] != "phase":
        sys.exit(__doc__)
    total = named = 0
    other = {}
    with open(sys.argv[2], encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            frames, _, count = line.rstrip("\n").rpartition(" ")
            parts = frames.split(";")
            if (len(parts) < 3 or parts[2] != "node" or "node::LoadEnvironment" not in frames
                    or "uv_run" in frames):
                continue
            total += int(count)
            if any(p.startswith(TAGS) and "phase " in p and "node_ratio.js:" in p for p in parts):
                named += int(count)
            else:
                leaf = ";".join(parts[-4:])
                other[leaf] = other.get(leaf, 0) + int(count)
    print(f"{named} of {total} samples of the ratio workload's main thread name phase")
    for leaf, n in sorted(other.items(), key=lambda kv: -kv[1])[:4]:
        print(f"  without phase: {n} ...;{leaf[:300]}")
    sys.exit(0 if total >= 50 and named >= float(sys.argv[3]) * total else 1)


main()
