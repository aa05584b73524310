#!/usr/bin/env python3
"""Checks on the Ruby frames of a kiln .col file, for tests/e2e/ruby_*.sh and bench/ruby.sh.

  rbcheck.py ratio COL SCRIPT [--merged]
      the ruby_ratio.rb workload: >= 95% of the ruby process's samples carry _[rb] frames;
      alpha/beta share 70/30 within max(3 points, 3 sigma of the sample count); the
      frames read '<main> (SCRIPT:L1)_[rb];dispatch (SCRIPT:L2)_[rb];alpha (SCRIPT:L3)_[rb]'
      with the marker lines; with --merged the first _[rb] frame follows rb_vm_exec.
  rbcheck.py native COL FUNC REGEX MIN
      at least MIN (0..1) of the samples whose Ruby frames end in FUNC (or FUNC then C
      function frames) have a native frame matching REGEX after (above) them.
  rbcheck.py threads COL
      ruby_threads.rb: spin_a and spin_b both appear, each under its own thread
      method, and never in one stack.
  rbcheck.py none COL
      no sample has a _[rb] frame.
  rbcheck.py frac COL MIN
      at least MIN of the samples that run the interpreter (or a _[rb] frame) carry _[rb].

Lines are '<index>;<container>;<comm>;<frames...> <count>'. Exit 0 when the check holds.
"""
import re
import sys

from colstacks import before, markers, runtime_frames, stacks, tolerance

INTERP = ("rb_vm_exec",)
RFRAME = re.compile(r"^(.*) \((.*?)(?::(\d+))?\)_\[rb\]$")


def rframes(frames):
    """[(index, func, file, line)] of the _[rb] frames."""
    return runtime_frames(frames, RFRAME)


def ratio(path, script, merged):
    mk = markers(script, "#")
    total = with_r = 0
    got = {"alpha": 0, "beta": 0}
    wrong = []
    for comm, frames, c in stacks(path):
        if not comm.startswith("ruby"):
            continue
        total += c
        rs = rframes(frames)
        if not rs:
            continue
        with_r += c
        if merged and (rs[0][0] == 0 or before(frames, rs[0][0]) not in INTERP):
            wrong.append(("not after rb_vm_exec", frames))
        names = [r[1] for r in rs]
        leaf = next((n for n in reversed(names) if n in got), None)
        if leaf is None:
            continue
        got[leaf] += c
        want = [("<main>", [mk["main-" + leaf]]), ("dispatch", [mk["dispatch-" + leaf]]),
                (leaf, range(mk[leaf] - 3, mk[leaf] + 2))]
        ok = len(rs) == 3 and all(r[2] == script and r[1] == w[0] and r[3] in w[1]
                                   for r, w in zip(rs, want))
        if not ok:
            wrong.append(("wrong frames", [f"{r[1]} ({r[2]}:{r[3]})" for r in rs]))
    if not total:
        sys.exit("no samples of a ruby process")
    n = got["alpha"] + got["beta"]
    share = 100.0 * got["alpha"] / n if n else 0
    tol = tolerance(n)
    print(f"samples {total}, with _[rb] {100.0 * with_r / total:.1f}%, alpha {share:.2f}% of {n} "
          f"(truth 70, 3 sigma {tol:.2f} points), wrong {len(wrong)}")
    for why, fr in wrong[:3]:
        print(f"  {why}: {';'.join(fr)[-400:]}")
    if tol > 3:
        print(f"  only {n} samples: 3 points is not a 3-sigma bound, allowing {tol:.2f}")
    ok = with_r >= 0.95 * total and abs(share - 70) <= max(3.0, tol)
    ok &= len(wrong) <= 0.01 * total
    sys.exit(0 if ok else 1)


def native(path, func, rx, want):
    rx = re.compile(rx)
    total = hit = 0
    for _, frames, c in stacks(path):
        rs = rframes(frames)
        iseq = [r for r in rs if r[2] != "cfunc"]
        if not iseq or iseq[-1][1] != func:
            continue
        total += c
        if any(rx.search(fr) and not RFRAME.match(fr) for fr in frames[rs[-1][0] + 1:]):
            hit += c
    if not total:
        sys.exit(f"no samples with {func} as the Ruby leaf")
    print(f"{hit}/{total} = {hit / total:.3f} of {func} samples have a native frame "
          f"matching {rx.pattern!r} above it (want >= {want})")
    sys.exit(0 if hit / total >= want else 1)


def threads(path):
    seen = {"a": 0, "b": 0}
    for _, frames, c in stacks(path):
        names = [r[1] for r in rframes(frames)]
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
        n = sum(c for _, frames, c in stacks(path) if rframes(frames))
        print(f"{n} samples with _[rb] frames")
        sys.exit(0 if n == 0 else 1)
    elif cmd == "frac":
        total = hit = 0
        for _, frames, c in stacks(path):
            if rframes(frames) or any(f in INTERP for f in frames):
                total += c
                hit += c if rframes(frames) else 0
        print(f"{hit}/{total} interpreter samples carry _[rb] frames")
        sys.exit(0 if total and hit >= float(sys.argv[3]) * total else 1)
    else:
        sys.exit(f"unknown check {cmd}")


if __name__ == "__main__":
    main()
