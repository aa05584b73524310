#!/usr/bin/env python3
"""Checks on the PHP frames of a kiln .col file, for tests/e2e/php_*.sh.

  phpcheck.py ratio COL SCRIPT
      the php_ratio.php workload: >= 95% of the php process's samples carry _[php]
      frames; Work::alpha / beta share 70/30 within max(3 points, 3 sigma of the sample
      count); the frames read '<main> (SCRIPT:L1)_[php];dispatch (SCRIPT:L2)_[php];
      Work::alpha (SCRIPT:L3)_[php]' at the marker lines (the leaf's: its loop, which is
      the current opline's line, not the function's first line), and
      the first _[php] frame follows the executor's native frame (execute_ex) when the
      native stack has one.
  phpcheck.py native COL FUNC REGEX MIN
      at least MIN (0..1) of the samples whose PHP leaf is FUNC (an internal function,
      e.g. gzcompress) have a native frame matching REGEX after (above) it.
  phpcheck.py callback COL FUNC VIA MIN
      of the samples whose PHP leaf is FUNC (a callback), at least MIN have VIA (the
      internal function that called it) as the PHP frame before it, with the second
      execute_ex activation between the two: frames merged per activation.
  phpcheck.py frac COL COMM MIN FUNC
      at least MIN of process COMM's samples that run the executor (execute_ex) carry
      _[php] frames, and some of them show the PHP function FUNC.
  phpcheck.py none COL
      no sample has a _[php] frame.

Lines are '<index>;<container>;<comm>;<frames...> <count>'. Exit 0 when the check holds.
"""
import re
import sys

from colstacks import before, markers, runtime_frames, stacks, tolerance

INTERP = ("execute_ex",)
PFRAME = re.compile(r"^(.*?)(?: \((.*?)(?::(\d+))?\))?_\[php\]$")


def pframes(frames):
    """[(index, func, file, line)] of the _[php] frames."""
    return runtime_frames(frames, PFRAME)


def ratio(path, script):
    mk = markers(script, "//")
    total = with_p = 0
    got = {"Work::alpha": 0, "beta": 0}
    wrong = []
    for comm, frames, c in stacks(path):
        if not comm.startswith("php"):
            continue
        total += c
        ps = pframes(frames)
        if not ps:
            continue
        with_p += c
        if any(f in INTERP for f in frames) and before(frames, ps[0][0]) not in INTERP:
            wrong.append(("not after the executor frame", frames))
        names = [p[1] for p in ps]
        leaf = next((n for n in reversed(names) if n in got), None)
        if leaf is None:
            continue
        got[leaf] += c
        short = leaf.split("::")[-1]
        want = [("<main>", [mk["main-" + short]]), ("dispatch", [mk["dispatch-" + short]]),
                (leaf, range(mk[short] - 1, mk[short] + 1))]  # the loop, not line_start
        ok = len(ps) == 3 and all(p[2] == script and p[1] == w[0] and p[3] in w[1]
                                  for p, w in zip(ps, want))
        if not ok:
            wrong.append(("wrong frames", [f"{p[1]} ({p[2]}:{p[3]})" for p in ps]))
    if not total:
        sys.exit("no samples of php")
    n = got["Work::alpha"] + got["beta"]
    share = 100.0 * got["Work::alpha"] / n if n else 0
    tol = tolerance(n)
    print(f"samples {total}, with _[php] {100.0 * with_p / total:.1f}%, Work::alpha "
          f"{share:.2f}% of {n} (truth 70, 3 sigma {tol:.2f} points), wrong {len(wrong)}")
    for why, fr in wrong[:3]:
        print(f"  {why}: {';'.join(fr)[-400:]}")
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
        sys.exit(f"no samples with {func} as the PHP leaf")
    print(f"{hit}/{total} = {hit / total:.3f} of {func} samples have a native frame "
          f"matching {rx.pattern!r} above it (want >= {want})")
    sys.exit(0 if hit / total >= want else 1)


def callback(path, func, via, want):
    total = hit = 0
    bad = []
    for _, frames, c in stacks(path):
        ps = pframes(frames)
        if not ps or ps[-1][1] != func:
            continue
        total += c
        between = frames[ps[-2][0] + 1:ps[-1][0]] if len(ps) >= 2 else []
        if ps[-2][1] == via and any(f in INTERP for f in between):
            hit += c
        else:
            bad.append(";".join(frames)[-300:])
    print(f"{hit}/{total} samples of {func} under {via} with execute_ex between them "
          f"(want >= {want})")
    for b in bad[:3]:
        print(f"  {b}")
    sys.exit(0 if total and hit >= want * total else 1)


def frac(path, comm, want, func):
    total = hit = named = 0
    for cm, frames, c in stacks(path):
        if not cm.startswith(comm):
            continue
        ps = pframes(frames)
        if ps or any(f in INTERP for f in frames):
            total += c
            hit += c if ps else 0
            named += c if any(p[1] == func for p in ps) else 0
    print(f"{comm}: {hit}/{total} executor samples carry _[php] frames, {named} show {func}")
    sys.exit(0 if total and named and hit >= want * total else 1)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "ratio":
        ratio(path, sys.argv[3])
    elif cmd == "native":
        native(path, sys.argv[3], sys.argv[4], float(sys.argv[5]))
    elif cmd == "callback":
        callback(path, sys.argv[3], sys.argv[4], float(sys.argv[5]))
    elif cmd == "frac":
        frac(path, sys.argv[3], float(sys.argv[4]), sys.argv[5])
    elif cmd == "none":
        n = sum(c for _, frames, c in stacks(path) if pframes(frames))
        print(f"{n} samples with _[php] frames")
        sys.exit(0 if n == 0 else 1)
    else:
        sys.exit(f"unknown check {cmd}")


if __name__ == "__main__":
    main()
