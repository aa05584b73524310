#!/usr/bin/env python3
"""bench/peers/check.py — correctness of one profiler's output on the known-answer
workloads of bench/peers.sh, and its sample count.

  check.py FORMAT OUTPUT PIDS [ONLY|-] [DIR:DIR...]

FORMAT is the peer's output: kiln (.col), perf (`perf script -F comm,pid,ip,sym`), otel
(bench/peers/sink lines; native frames named here with addr2line), pyspy (--format raw),
rbspy (collapsed), async (collapsed). PIDS has one "workload pid" line per workload; a
peer that attaches to one process (ONLY = that workload) has all its samples given to it.
DIRs: where otel's mapping names (base names) are looked for.
kiln's .col names processes, not pids: each workload runs under a name of its own
(pw_<workload>). Prints one JSON object: for each known-answer workload, samples, the share
naming the right function (right), the share of complete stacks (complete) and the measured
split against the known one (split, want); and all, the samples of the whole machine.

Known answers (tests/workloads/):
  deep    unwind_deep.c, -O2 without frame pointers: leaf_three/leaf_one 75/25 under
          main -> run -> rec x30; complete = main and 30 rec frames
  python  python_ratio.py: alpha/beta 70/30 under <module> -> dispatch
  ruby    ruby_ratio.rb: alpha/beta 70/30 under <main> -> dispatch
  java    JavaRatio.java: Chain.alpha/Chain.beta 75/25 under Work.run -> Chain.outer
  go      goleaf: main.churn, a frameless leaf, called by main.alpha/main.beta 7:3 (right =
          churn's caller named; the split counts churn's samples only); complete = main.main
"""
import collections
import json
import os
import re
import subprocess
import sys

WANT = {"deep": 0.75, "python": 0.70, "ruby": 0.70, "java": 0.75, "go": 0.70}


def base(frame):
    """a frame's function name, without the decorations each tool adds"""
    f = re.sub(r"_\[[a-z0-9]+\]$", "", frame.strip())
    f = re.sub(r" - \S+:\d+$", "", f)      # rbspy: func - file.rb:line
    f = re.sub(r" \(.*\)$", "", f)          # func (file:line)
    f = re.sub(r"\(.*$", "", f) if not f.startswith("(") else f  # Java signatures
    f = f.replace("$", ".").replace("::", ".").replace("/", ".")
    return f.rsplit(" ", 1)[-1]


def judge(name, stacks):
    """stacks: Counter of tuples of base names, root first"""
    n = sum(stacks.values())
    right = complete = a = b = 0
    den = n                       # go: right counts among main.churn's samples only
    for st, c in stacks.items():
        leaf = [f for f in st if not f.endswith("_[k]")]
        if name == "deep":
            hit = next((f for f in reversed(st) if f in ("leaf_three", "leaf_one")), None)
            ok = "main" in st and sum(f == "rec" for f in st) >= 30
            a += c if hit == "leaf_three" else 0
            b += c if hit == "leaf_one" else 0
        elif name in ("python", "ruby"):
            hit = next((f for f in reversed(st) if f in ("alpha", "beta")), None)
            top = "<module>" if name == "python" else "<main>"
            ok = top in st and "dispatch" in st and hit is not None
            a += c if hit == "alpha" else 0
            b += c if hit == "beta" else 0
        elif name == "java":
            hit = next((f for f in reversed(st) if f.endswith("Chain.alpha") or
                        f.endswith("Chain.beta")), None)
            ok = any(f.endswith("Work.run") for f in st) and hit is not None
            a += c if hit and hit.endswith("alpha") else 0
            b += c if hit and hit.endswith("beta") else 0
        elif name == "go":
            hit = None
            den -= c if "main.churn" not in st else 0
            if "main.churn" in st:
                i = st.index("main.churn")
                caller = st[i - 1] if i else ""
                hit = caller if caller in ("main.alpha", "main.beta") else "wrong"
                a += c if hit == "main.alpha" else 0
                b += c if hit == "main.beta" else 0
            ok = "main.main" in st
            if hit == "wrong":
                hit = None
        else:
            continue
        right += c if hit else 0
        complete += c if ok else 0
    return {"samples": n, "right": right / den if den else 0,
            "complete": complete / n if n else 0,
            "split": a / (a + b) if a + b else 0, "want": WANT.get(name)}


def read_kiln(path, procs):
    with open(path) as f:
        f.readline()
        for line in f:
            frames, _, c = line.rstrip("\n").rpartition(" ")
            parts = frames.split(";")
            proc = parts[2] if len(parts) > 2 else ""
            proc = re.sub(r" \[.*$", "", proc)
            yield procs.get(proc), parts[3:], int(c)


def read_perf(path, pids):
    wl, st = None, []
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if st or wl is not None:
                    yield wl, st[::-1], 1
                wl, st = None, []
            elif line[0] not in " \t":
                m = re.match(r"^.*?\s(\d+)\s*$", line.rstrip("\n"))
                wl, st = pids.get(int(m.group(1))) if m else None, []
            else:
                w = line.split(None, 2)
                sym = w[1] if len(w) > 1 else "[unknown]"
                sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
                st.append(sym)
    if st:
        yield wl, st[::-1], 1


def find_binary(name, dirs):
    """the profiler names a mapping by its file's base name: find that file"""
    if os.path.isabs(name):
        return name
    for d in dirs:
        if os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


def read_otel(path, pids, dirs):
    rows = []
    need = collections.defaultdict(set)
    with open(path, errors="replace") as f:
        for line in f:
            pid, frames, c = line.rstrip("\n").split("\t")
            st = frames.split(";") if frames else []
            rows.append((pids.get(int(pid)), st, int(c)))
            if pids.get(int(pid)) is not None:
                for i, fr in enumerate(st):
                    m = re.match(r"0x([0-9a-f]+)@(.+)$", fr)
                    if m:   # a caller's address is a return address: name the call
                        need[m.group(2)].add(int(m.group(1), 16) - (i < len(st) - 1))
    names = {}
    for file, addrs in need.items():   # the backend's job: name native frames
        addrs = sorted(addrs)
        path = find_binary(file, dirs)
        if not path:
            continue
        out = subprocess.run(["addr2line", "-f", "-e", path] + ["0x%x" % a for a in addrs],
                             capture_output=True, text=True).stdout.split("\n")
        for i, a in enumerate(addrs):
            if 2 * i < len(out) and out[2 * i] not in ("??", ""):
                names[(file, a)] = out[2 * i]
    for wl, st, c in rows:
        named = []
        for i, fr in enumerate(st):
            m = re.match(r"0x([0-9a-f]+)@(.+)$", fr)
            if m:
                a = int(m.group(1), 16) - (i < len(st) - 1)
                fr = names.get((m.group(2), a), fr)
            named.append(fr)
        yield wl, named, c


def read_collapsed(path, only):
    with open(path, errors="replace") as f:
        for line in f:
            frames, _, c = line.rstrip("\n").rpartition(" ")
            if frames and c.isdigit():
                yield only, frames.split(";"), int(c)


def main():
    fmt, path, pidfile = sys.argv[1:4]
    only = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] != "-" else None
    dirs = sys.argv[5].split(":") if len(sys.argv) > 5 else []
    pids, procs = {}, {}
    with open(pidfile) as f:
        for line in f:
            name, pid = line.split()
            pids[int(pid)] = name
            procs["pw_" + name] = name
    if not os.path.exists(path):
        print(json.dumps({"all": 0}))
        return
    if fmt == "kiln":
        rows = read_kiln(path, procs)
    elif fmt == "perf":
        rows = read_perf(path, pids)
    elif fmt == "otel":
        rows = read_otel(path, pids, dirs)
    else:
        rows = read_collapsed(path, only)
    per = collections.defaultdict(collections.Counter)
    total = 0
    for wl, st, c in rows:
        total += c
        if wl:
            per[wl][tuple(base(f) if not f.endswith("_[k]") else f for f in st)] += c
    res = {"all": total}
    for name in WANT:
        if only is None or only == name:
            res[name] = judge(name, per.get(name, collections.Counter()))
    print(json.dumps(res))


if __name__ == "__main__":
    main()
