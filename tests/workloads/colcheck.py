#!/usr/bin/env python3
"""Checks on a kiln .col file for the end-to-end tests.

  colcheck.py header COL                      the '# {json}' header parses; prints its keys
  colcheck.py shares COL COMM NAME=PCT...     each NAME's share of COMM's samples that hold
                                              any NAME is within max(2, 3 sigma) points of PCT
  colcheck.py frac COL COMM REGEX MIN         at least MIN (0..1) of COMM's samples have a
                                              frame matching REGEX
  colcheck.py count COL COMM                  prints the number of COMM's samples

Lines are '<index>;<container>;<comm>;<frames...> <count>'. Exit 0 when the check holds.
"""
import json
import re
import sys

import colstacks


def stacks(path, comm=None):
    """(frames root first, count) of COMM's stack lines, or of every line."""
    for cm, frames, count in colstacks.stacks(path):
        if comm is None or cm == comm:
            yield frames, count


def header(path):
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    if not first.startswith("# "):
        sys.exit("no '# ' header line")
    h = json.loads(first[2:])
    print(" ".join(sorted(h)))
    return h


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "header":
        h = header(path)
        need = ["start_time", "end_time", "hostname", "kernel_release", "cpu_count",
                "frequency", "perf_mode", "agent_version", "samples", "lost",
                "agent_cpu_seconds", "agent_peak_rss_kb", "containers", "run_arguments"]
        missing = [k for k in need if k not in h]
        if missing:
            sys.exit(f"header lacks {missing}")
        return
    comm = sys.argv[3]
    if cmd == "count":
        print(sum(c for _, c in stacks(path, comm)))
        return
    if cmd == "frac":
        rx, want = re.compile(sys.argv[4]), float(sys.argv[5])
        total = hit = 0
        for frames, c in stacks(path, comm):
            total += c
            if any(rx.search(fr) for fr in frames):
                hit += c
        if not total:
            sys.exit(f"no samples of {comm}")
        print(f"{comm}: {hit}/{total} = {hit / total:.3f} of samples match {rx.pattern!r} "
              f"(want >= {want})")
        sys.exit(0 if hit / total >= want else 1)
    if cmd == "shares":
        truth = {}
        for arg in sys.argv[4:]:
            name, pct = arg.split("=")
            truth[name] = float(pct)
        got = dict.fromkeys(truth, 0)
        for frames, c in stacks(path, comm):
            # The leaf-most frame that is one of the names owns the sample.
            for fr in reversed(frames):
                if fr in got:
                    got[fr] += c
                    break
        n = sum(got.values())
        if n == 0:
            sys.exit(f"no samples of {comm} in {list(truth)}")
        ok = True
        for name, pct in truth.items():
            p = pct / 100
            tol = max(2.0, colstacks.tolerance(n, p))
            share = 100 * got[name] / n
            good = abs(share - pct) <= tol
            ok &= good
            print(f"{name}: {share:.2f}% of {n} samples (truth {pct}%, tolerance "
                  f"{tol:.2f} points) {'ok' if good else 'WRONG'}")
        sys.exit(0 if ok else 1)
    sys.exit(f"unknown check {cmd}")


if __name__ == "__main__":
    main()
