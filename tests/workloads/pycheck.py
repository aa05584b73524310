#!/usr/bin/env python3
"""Checks on the Python frames of a kiln .col file, for tests/e2e/python_*.sh.

  pycheck.py ratio COL SCRIPT [--merged]
      the python_ratio.py workload: >= 95% of samples carry _[p] frames; alpha/beta
      share 70/30 within max(3 points, 3 sigma of the sample count); the frames
      read '<module> (SCRIPT:L1)_[p];dispatch (SCRIPT:L2)_[p];alpha (SCRIPT:L3)_[p]'
      with the marker lines; with --merged the first _[p] frame follows the
      interpreter's frame (_PyEval_EvalFrameDefault or PyEval_EvalFrameEx).
  pycheck.py native COL FUNC REGEX MIN
      at least MIN (0..1) of the samples whose Python leaf is FUNC have a native frame
      matching REGEX after (above) it.
  pycheck.py threads COL
      python_threads.py: spin_a and spin_b both appear, each under its own thread
      function, and never in one stack.
  pycheck.py none COL
      no sample has a _[p] frame.
  pycheck.py frac COL MIN
      at least MIN of the samples that run the interpreter (or a _[p] frame) carry _[p].

Lines are '<index>;<container>;<comm>;<frames...> <count>'. Exit 0 when the check holds.
"""
import re
import sys

from colstacks import before, markers, runtime_frames, stacks, tolerance

INTERP = ("_PyEval_EvalFrameDefault", "PyEval_EvalFrameEx")
PFRAME = re.compile(r"^(.*) \((.*?)(?::(\d+))?\)_\[p\]$")


def pframes(frames):
    """[(index, func, file, line)] of the _[p] frames."""
    return runtime_frames(frames, PFRAME)


def ratio(path, script, merged):
    mk = markers(script, "#")
    total = with_p = 0
    got = {"alpha": 0, "beta": 0}
    wrong = []
    for _, frames, c in stacks(path):
        total += c
        ps = pframes(frames)
        if not ps:
            continue
        with_p += c
        if merged and ps[0][0] > 0 and before(frames, ps[0][0]) not in INTERP:
            wrong.append(("not after the interpreter frame", frames))
        names = [p[1] for p in ps]
        leaf = next((n for n in reversed(names) if n in got), None)
        if leaf is None:
            continue
        got[leaf] += c
        # <module> -> dispatch -> leaf, in this file, at the marker lines
        want = [("<module>", [mk["module-" + leaf]]), ("dispatch", [mk["dispatch-" + leaf]]),
                (leaf, range(mk[leaf] - 3, mk[leaf] + 2))]
        tail = ps[-3:]
        ok = len(ps) == 3 and all(p[2] == script and p[1] == w[0] and p[3] in w[1]
                                   for p, w in zip(tail, want))
        if not ok:
            wrong.append(("wrong frames", [f"{p[1]} ({p[2]}:{p[3]})" for p in ps]))
    if not total:
        sys.exit("no samples")
    n = got["alpha"] + got["beta"]
    share = 100.0 * got["alpha"] / n if n else 0
    tol = tolerance(n)
    print(f"samples {total}, with _[p] {100.0 * with_p / total:.1f}%, alpha {share:.2f}% of {n} "
          f"(truth 70, 3 sigma {tol:.2f} points), wrong {len(wrong)}")
    for why, fr in wrong[:3]:
        print(f"  {why}: {';'.join(fr)[-400:]}")
    # 3 points, or 3 sigma when too few samples for 3 points to be a 3-sigma bound (a
    # loaded machine runs the workload, and so samples it, less)
    if tol > 3:
        print(f"  only {n} samples: 3 points is not a 3-sigma bound, allowing {tol:.2f}")
    ok = with_p >= 0.95 * total and abs(share - 70) <= max(3.0, tol)
    ok &= len(wrong) <= 0.01 * total
    sys.exit(0 if ok else 1)


def native(path, func, rx, want):
    rx = re.compile(rx)
    total = hit = 0
    for _, frames, c in stacks(path):
        ps = pframes(frames)
        if not ps or ps[-1][1] != func:
            continue
        total += c
        if any(rx.search(fr) and not PFRAME.match(fr) for fr in frames[ps[-1][0] + 1:]):
            hit += c
    if not total:
        sys.exit(f"no samples with {func} as the Python leaf")
    print(f"{hit}/{total} = {hit / total:.3f} of {func} samples have a native frame "
          f"matching {rx.pattern!r} above it (want >= {want})")
    sys.exit(0 if hit / total >= want else 1)


def threads(path):
    seen = {"a": 0, "b": 0}
    for _, frames, c in stacks(path):
        names = [p[1] for p in pframes(frames)]
        if "spin_a" in names and "spin_b" in names:
            sys.exit(f"one stack holds both threads' frames: {';'.join(frames)}")
        for k in seen:
            if "spin_" + k in names:
                if "thread_" + k not in names:
                    sys.exit(f"spin_{k} without thread_{k}: {';'.join(frames)}")
                seen[k] += c
    print(f"spin_a {seen['a']} samples, spin_b {seen['b']}")
    sys.exit(0 if seen["a"] and seen["b"] else 1)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "ratio":
        ratio(path, sys.argv[3], "--merged" in sys.argv[4:])
    elif cmd == "native":
        native(path, sys.argv[3], sys.argv[4], float(sys.argv[5]))
    elif cmd == "threads":
        threads(path)
    elif cmd == "none":
        n = sum(c for _, frames, c in stacks(path) if pframes(frames))
        print(f"{n} samples with _[p] frames")
        sys.exit(0 if n == 0 else 1)
    elif cmd == "frac":
        total = hit = 0
        for _, frames, c in stacks(path):
            if pframes(frames) or any(f in INTERP for f in frames):
                total += c
                hit += c if pframes(frames) else 0
        print(f"{hit}/{total} interpreter samples carry _[p] frames")
        sys.exit(0 if total and hit >= float(sys.argv[3]) * total else 1)
    else:
        sys.exit(f"unknown check {cmd}")


if __name__ == "__main__":
    main()
