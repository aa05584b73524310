#!/usr/bin/env python3
"""Checks on the JavaScript frames of a kiln .col file, for tests/e2e/node_*.sh.

  nodecheck.py ratio COL SCRIPT [COMM [MIN [NOLINE]]] [--running]
      the node_ratio.js workload: >= MIN (default 0.95) of the samples of COMM (names
      separated by commas; default: node,MainThread, the main thread's name before and
      from Node 24 on; the only busy thread) carry _[js] frames; alpha / beta share
      70/30 within max(3 points, 3 sigma of the sample count); the frames read
      'main (SCRIPT:L0)_[js];phase (SCRIPT:L1)_[js];dispatch (SCRIPT:L2)_[js];
      alpha (SCRIPT:L3)_[js]' at the marker lines (alpha and beta are inlined into
      phase by TurboFan: their names and lines come from the inlining data), and the
      first _[js] frame follows Builtins_JSEntry when the native stack has it. At most
      1% of the samples may have other frames, at most NOLINE (default 3%) a frame with
      the right name but no line (kiln prints none when it cannot resolve the position:
      about 1% of the samples on Node 20 and 24, inlined frames at some pcs; not a wrong
      line). --running: only the main thread's samples while node runs JavaScript
      (under node::LoadEnvironment) count, not its start-up nor the compiler and GC
      threads, which have the same name.
  nodecheck.py native COL FUNC REGEX MIN
      at least MIN (0..1) of the samples whose stack has the JavaScript function FUNC
      have a native frame matching REGEX after (above) its last _[js] frame.
  nodecheck.py threads COL MAINFUNC WORKERFUNC MIN
      each thread its own stack: at least MIN samples have MAINFUNC (the main thread's)
      and at least MIN have WORKERFUNC (the workers', each in its own isolate) as _[js]
      frames, and no sample has both.
  nodecheck.py faults COL SCRIPT COMMS MIN
      in the samples of COMMS (names separated by commas), no wrong frame: every _[js]
      frame is a function SCRIPT declares (or its top level, "(anonymous)") at a line of
      SCRIPT inside that function (or none: unknown), one of node's own (a node: file)
      or V8's (a v8/ extension: v8/gc with --expose-gc), or a V8 builtin called as a
      function (named, no file); at least MIN samples have
      one of SCRIPT's functions.
  nodecheck.py none COL
      no sample has a _[js] frame.

Lines are '<index>;<container>;<comm>;<frames...> <count>'. Exit 0 when the check holds.
"""
import math
import re
import sys

ENTRY = ("Builtins_JSEntry", "Builtins_JSConstructEntry", "Builtins_JSRunMicrotasksEntry")
JFRAME = re.compile(r"^(.*?)(?: \((.*?)(?::(\d+))?\))?_\[js\]$")


def stacks(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for i, line in enumerate(f):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            frames, _, count = line.rpartition(" ")
            parts = frames.split(";")
            if len(parts) < 3:
                sys.exit(f"malformed line {i + 1}: {line!r}")
            yield parts[2], parts[3:], int(count)


def jframes(frames):
    """[(index, func, file, line)] of the _[js] frames."""
    out = []
    for i, fr in enumerate(frames):
        m = JFRAME.match(fr)
        if m:
            out.append((i, m.group(1), m.group(2), int(m.group(3) or 0)))
    return out


def markers(script):
    lines = {}
    with open(script, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            m = re.search(r"// LINE:(\S+)$", text.rstrip())
            if m:
                lines[m.group(1)] = n
    return lines


def running(frames):
    """Whether a sample is of the main thread (its native stack starts at _start) while
    node runs JavaScript: under node::LoadEnvironment, which runs the script (before it,
    node starts up: V8's platform, the snapshot; the compiler and GC threads start at
    start_thread)."""
    native = [f for f in frames if not JFRAME.match(f)]  # where kiln could not place
    return bool(native) and native[0] == "_start" and any(  # them, _[js] frames come first
        f.startswith("node::LoadEnvironment(") for f in native)


def ratio(path, script, comm, want_js, max_noline=0.03, only_running=False):
    mk = markers(script)
    total = with_js = noline = 0
    got = {"alpha": 0, "beta": 0}
    wrong = []
    for cm, frames, c in stacks(path):
        if cm not in comm.split(","):
            continue
        if only_running and not running(frames):
            continue
        total += c
        js = jframes(frames)
        if not js:
            continue
        with_js += c
        if any(f in ENTRY for f in frames) and frames[js[0][0] - 1] not in ENTRY:
            wrong.append(("not after the entry frame", frames, c))
        names = [j[1] for j in js]
        leaf = names[-1] if names[-1] in got else None
        if leaf is None:
            continue
        got[leaf] += c
        ours = [j for j in js if j[2] == script]
        want = [("main", [mk["main-" + leaf]]), ("phase", [mk["phase"]]),
                ("dispatch", [mk["dispatch-" + leaf]]), (leaf, [mk[leaf]])]
        ok = len(ours) >= 4 and all(j[1] == w[0] and j[3] in w[1]
                                    for j, w in zip(ours[-4:], want))
        # a frame without a line (kiln prints none: unknown), the names all right
        unknown = len(ours) >= 4 and all(j[1] == w[0] and (j[3] in w[1] or j[3] == 0)
                                         for j, w in zip(ours[-4:], want))
        if not ok and unknown:
            noline += c
        elif not ok:
            wrong.append(("wrong frames", [f"{j[1]} ({j[2]}:{j[3]})" for j in js], c))
    if not total:
        sys.exit(f"no samples of {comm}")
    nwrong = sum(w[2] for w in wrong)  # samples, not stacks
    n = got["alpha"] + got["beta"]
    share = 100.0 * got["alpha"] / n if n else 0
    tol = 300 * math.sqrt(0.21 / n) if n else 100
    print(f"samples {total}, with _[js] {100.0 * with_js / total:.1f}%, alpha "
          f"{share:.2f}% of {n} (truth 70, 3 sigma {tol:.2f} points), wrong {nwrong}, "
          f"a line unknown {noline}")
    for why, fr, c in sorted(wrong, key=lambda w: -w[2])[:3]:
        print(f"  {why} ({c} samples): {';'.join(fr)[-400:]}")
    ok = with_js >= want_js * total and abs(share - 70) <= max(3.0, tol)
    ok &= n >= 0.8 * total and nwrong <= 0.01 * total and noline <= max_noline * total
    sys.exit(0 if ok else 1)


def native(path, func, rx, want):
    rx = re.compile(rx)
    total = hit = 0
    for _, frames, c in stacks(path):
        js = jframes(frames)
        if not any(j[1] == func for j in js):
            continue
        total += c
        if any(rx.search(fr) and not JFRAME.match(fr) for fr in frames[js[-1][0] + 1:]):
            hit += c
    if not total:
        sys.exit(f"no samples with {func}")
    print(f"{hit}/{total} = {hit / total:.3f} of {func} samples have a native frame "
          f"matching {rx.pattern!r} above it (want >= {want})")
    sys.exit(0 if hit / total >= want else 1)


def threads(path, mainf, workerf, want):
    m = w = both = 0
    for _, frames, c in stacks(path):
        names = {j[1] for j in jframes(frames)}
        m += c if mainf in names else 0
        w += c if workerf in names else 0
        both += c if mainf in names and workerf in names else 0
    print(f"{mainf}: {m} samples, {workerf}: {w}, both in one stack: {both} (want >= {want}, 0)")
    sys.exit(0 if m >= want and w >= want and both == 0 else 1)


def faults(path, script, comms, want):
    with open(script, encoding="utf-8") as f:
        text = f.read().split("\n")
    # each function's lines: from its declaration to the line before the next top-level
    # one (nested ones are inside their parent's range as well)
    decl = [(i + 1, m.group(2)) for i, t in enumerate(text)
            for m in [re.match(r"^(\s*)function (\w+)\(", t)] if m]
    span = {}
    for k, (line, name) in enumerate(decl):
        end = len(text)
        for line2, _ in decl[k + 1:]:
            if not text[line2 - 1].startswith(" "):
                end = line2 - 1
                break
        span.setdefault(name, []).append((line, end))
    ours = bad = 0
    wrong = []
    for cm, frames, c in stacks(path):
        if cm not in comms.split(","):
            continue
        js = jframes(frames)
        mine = False
        for _, name, file, line in js:
            # node's own scripts, and V8's extensions (--expose-gc's is "v8/gc": its
            # top level runs as each context is made)
            if file and (file.startswith("node:") or file.startswith("v8/")):
                continue
            if not file and name != "(anonymous)" and not line:
                continue  # a V8 builtin called as a function (Array.prototype.push)
            ok = file == script and (
                (name == "(anonymous)" and 0 <= line <= len(text)) or
                any(a <= line <= b or line == 0 for a, b in span.get(name, [])))
            if not ok:
                chain = ";".join(f"{n} ({f}:{ln})" for _, n, f, ln in js)
                leaf = ";".join(frames[-3:])
                wrong.append((f"{name} ({file}:{line}) of {cm}, in {chain}; leaf {leaf}", c))
                bad += c
                break
            mine = True
        ours += c if mine else 0
    print(f"{ours} samples with {script}'s functions (want >= {want}), {bad} with a wrong frame")
    for fr, c in wrong[:5]:
        print(f"  wrong ({c} samples): {fr}")
    sys.exit(0 if ours >= want and not bad else 1)


def main():
    only_running = "--running" in sys.argv
    if only_running:
        sys.argv.remove("--running")
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "ratio":
        ratio(path, sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "node,MainThread",
              float(sys.argv[5]) if len(sys.argv) > 5 else 0.95,
              float(sys.argv[6]) if len(sys.argv) > 6 else 0.03, only_running)
    elif cmd == "faults":
        faults(path, sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif cmd == "native":
        native(path, sys.argv[3], sys.argv[4], float(sys.argv[5]))
    elif cmd == "threads":
        threads(path, sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif cmd == "none":
        n = sum(c for _, frames, c in stacks(path) if jframes(frames))
        print(f"{n} samples with _[js] frames")
        sys.exit(0 if n == 0 else 1)
    else:
        sys.exit(f"unknown check {cmd}")


if __name__ == "__main__":
    main()
