#!/usr/bin/env python3
"""Checks on the .NET frames of a kiln .col file, for tests/e2e/dotnet_*.sh and bench/dotnet.sh.

  dncheck.py ratio COL COMM
      the dotnet_ratio.cs workload in process COMM: >= 95% of its managed thread's samples
      (those with _[net] frames, and the native ones of the main thread, rooted at _start)
      carry _[net] frames and read Ratio.Work.Main_[net];...;Run;Phase;Alpha|Beta; Alpha's
      share of Alpha+Beta is 70% within max(3 points, 3 sigma of the sample count).
  dncheck.py names COL COMM
      a runtime started mid-session (its start-up ran before kiln could attach): at least
      100 samples read Main;Run;Phase;Alpha|Beta, and none has Alpha/Beta outside that chain.
  dncheck.py none COL
      no sample has a _[net] frame.
  dncheck.py share COL COMM
      prints the share of COMM's samples that carry a named _[net] frame.

Lines are '<index>;<container>;<comm>;<frames...> <count>'. Exit 0 when the check holds.
"""
import math
import sys

CHAIN = ["Ratio.Work.Main_[net]", "Ratio.Work.Run_[net]", "Ratio.Work.Phase_[net]"]


def stacks(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            frames, _, count = line.rpartition(" ")
            parts = frames.split(";")
            yield parts[2], parts[3:], int(count)


def ratio(path, comm):
    net = native_main = alpha = beta = chain_bad = 0
    for c, frames, n in stacks(path):
        if c != comm:
            continue
        if any(f.endswith("_[net]") for f in frames):
            net += n
            if "Ratio.Work.Alpha_[net]" in frames or "Ratio.Work.Beta_[net]" in frames:
                if frames[:3] != CHAIN:
                    chain_bad += n
                if "Ratio.Work.Alpha_[net]" in frames:
                    alpha += n
                else:
                    beta += n
        elif frames and frames[0] == "_start":
            native_main += n
    total = net + native_main
    print(f"managed thread: {total} samples, {net} with _[net]; alpha {alpha}, beta {beta}, "
          f"outside the call chain {chain_bad}")
    if total < 200:
        sys.exit(f"too few samples of the managed thread ({total})")
    if net < 0.95 * total:
        sys.exit(f"only {net / total:.1%} of the managed thread's samples carry _[net]")
    if chain_bad > 0.05 * (alpha + beta):
        sys.exit("Alpha/Beta frames outside Main;Run;Phase")
    ab = alpha + beta
    if ab < 0.8 * net:
        sys.exit(f"Alpha+Beta hold only {ab} of {net} managed samples")
    share = alpha / ab
    tol = max(0.03, 3 * math.sqrt(0.7 * 0.3 / ab))
    print(f"alpha share {share:.3f} (want 0.700 +- {tol:.3f})")
    if abs(share - 0.7) > tol:
        sys.exit("alpha's share is off")


def names(path, comm):
    good = bad = 0
    for c, frames, n in stacks(path):
        if c == comm and ("Ratio.Work.Alpha_[net]" in frames or "Ratio.Work.Beta_[net]" in frames):
            if frames[:3] == CHAIN:
                good += n
            else:
                bad += n
    print(f"Alpha/Beta samples: {good} in the chain, {bad} outside")
    if good < 100 or bad:
        sys.exit("missing or misplaced .NET frames")


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "names":
        names(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "ratio":
        ratio(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 3 and sys.argv[1] == "none":
        bad = sum(n for _, fr, n in stacks(sys.argv[2]) if any(f.endswith("_[net]") for f in fr))
        if bad:
            sys.exit(f"{bad} samples carry _[net] frames")
    elif len(sys.argv) >= 4 and sys.argv[1] == "share":
        tot = named = 0
        for c, fr, n in stacks(sys.argv[2]):
            if c == sys.argv[3]:
                tot += n
                if any(f.endswith("_[net]") and not f.startswith("[unknown]") for f in fr):
                    named += n
        print(f"{named / tot if tot else 0:.3f}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
