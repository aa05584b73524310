#!/usr/bin/env python3
"""Checks on a kiln .col file recorded with --nodejs-mode perf or attach-maps, whose
JavaScript frames are named from a perf map ("JS:*phase /path/node_ratio.js:33:15"; before V8 11
"LazyCompile:*phase ...").

  nodemapcheck.py phase COL MIN
      of the samples of the node_ratio.js workload's main thread (comm node, or MainThread
      from Node 24 on: run no other node under that name; inside node::LoadEnvironment, which its busy loop never leaves,
      and not in uv_run), at least MIN (0..1) have a perf-map frame
      naming one of its functions in node_ratio.js, and there are 50 at least: its
      outer function phase once TurboFan has inlined alpha and beta into it (a perf map
      cannot name those then), or, while phase still runs in the interpreter (whose
      frames a perf map names Builtin:InterpreterEntryTrampoline; on Node 18, whose
      tiering is slower, a tenth of the samples of a run attached 1 s after the start),
      dispatch, alpha or beta compiled on their own.

  nodemapcheck.py threads COL FUNC... MIN
      each FUNC (the functions of node_workers.js's threads) is named by a perf-map frame
      in MIN samples at least, and no stack names two of them.

Lines are '<index>;<container>;<comm>;<frames...> <count>'. Exit 0 when the check holds.
"""
import sys

# V8's tags of JavaScript code in a perf map: "JS:" since V8 11, "LazyCompile:" and
# "Function:" before (Node 18)
TAGS = ("JS:", "LazyCompile:", "Function:")
FUNCTIONS = ("phase", "dispatch", "alpha", "beta")


def named(frame):
    """The function a perf-map frame names ("JS:*phase /x.js:3:1" -> "phase"; a tier mark
    ~^+* and, from V8 13, ' may precede it), or None."""
    for tag in TAGS:
        if frame.startswith(tag):
            return frame[len(tag):].lstrip("~^+*'").split(" ")[0]
    return None


def threads(path, funcs, want):
    counts = {f: 0 for f in funcs}
    mixed = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            frames, _, count = line.rstrip("\n").rpartition(" ")
            names = {named(p) for p in frames.split(";")} & set(funcs)
            for n in names:
                counts[n] += int(count)
            mixed += int(count) if len(names) > 1 else 0
    print(", ".join(f"{f}: {n} samples" for f, n in counts.items()),
          f"; two in one stack: {mixed} (want >= {want} each, 0)")
    sys.exit(0 if mixed == 0 and all(n >= want for n in counts.values()) else 1)


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "threads":
        threads(sys.argv[2], sys.argv[3:-1], int(sys.argv[-1]))
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
            if (len(parts) < 3 or parts[2] not in ("node", "MainThread") or "node::LoadEnvironment" not in frames
                    or "uv_run" in frames):
                continue
            total += int(count)
            if any(p.startswith(TAGS) and "node_ratio.js:" in p
                   and any(fn + " " in p for fn in FUNCTIONS) for p in parts):
                named += int(count)
            else:
                leaf = ";".join(parts[-4:])
                other[leaf] = other.get(leaf, 0) + int(count)
    print(f"{named} of {total} samples of the ratio workload's main thread name its functions")
    for leaf, n in sorted(other.items(), key=lambda kv: -kv[1])[:4]:
        print(f"  unnamed: {n} ...;{leaf[:300]}")
    sys.exit(0 if total >= 50 and named >= float(sys.argv[3]) * total else 1)


main()
