#!/usr/bin/env python3
"""bench/peers/table.py SECONDS < runs.jsonl — bench/peers.sh's tables: per tool and rate
the median of its runs and every run, then kiln/peer ratios at each rate.
table.py --one < line: the one-line summary of a single run."""
import json
import statistics
import sys

WL = ("deep", "python", "ruby", "java", "go")
IN_PROCESS = ("async-profiler",)


def cpu_pct(r):
    cpu = r["cpu_s"] + r.get("jvm_agent_s", 0) + (r.get("bpf_ns") or 0) / 1e9
    return 100 * cpu / r["wall_s"] if r["wall_s"] else 0


def run_pct(r):
    """the steady window's CPU, eBPF included, in % of one core"""
    if not r.get("window_s"):
        return 0
    return 100 * (r["window_cpu_s"] / r["window_s"] + r.get("window_bpf_ns_per_s", 0) / 1e9)


def bpf_pct(r):
    return 100 * (r.get("bpf_ns") or 0) / 1e9 / r["wall_s"] if r["wall_s"] else 0


def figures(r, base_rate, secs):
    f = {"cpu": cpu_pct(r), "run": run_pct(r), "bpf": bpf_pct(r), "rss": r["peak_rss_kb"] / 1024,
         "kbmin": r["bytes"] / 1024 * 60 / secs,
         "slow": 100 * (1 - r["probe_rate"] / base_rate) if base_rate else 0,
         "samples": r["check"].get("all", 0)}
    for w in WL:
        c = r["check"].get(w)
        if c:
            f[w] = (100 * c["right"], 100 * c["complete"], 100 * c["split"], c["samples"])
    return f


def fmt_wl(v):
    return "%3.0f/%3.0f %2.0f" % v[:3] if v and v[3] else "  no samples"


def line(tool, hz, f, secs):
    cpu = "%6.2f" % f["cpu"] + ("*" if tool in IN_PROCESS else " ")
    rss = "%7.1f" % f["rss"] if tool not in IN_PROCESS else "    n/a"
    run = "%6.2f" % f["run"] + ("*" if tool in IN_PROCESS else " ")
    s = "%-15s %3s %7s %7s %5.2f %s %8.0f %6.1f %7d" % (tool, hz, cpu, run, f["bpf"], rss,
                                                       f["kbmin"], f["slow"], f["samples"])
    for w in WL:
        s += "  %-12s" % (fmt_wl(f[w]) if w in f else "      -")
    return s


def med(vals):
    return statistics.median(vals) if vals else 0


def main():
    if sys.argv[1:] == ["--one"]:
        r = json.loads(sys.stdin.readline())
        wl = " ".join("%s %.0f/%.0f/%.0f" % (w, 100 * c["right"], 100 * c["complete"],
                                           100 * c["split"])
                      for w, c in r["check"].items() if w != "all")
        print("cpu %.2f%% run %.2f%% rss %.0f MB bytes %d probe %.1f/s samples %s %s" % (
            cpu_pct(r), run_pct(r), r["peak_rss_kb"] / 1024, r["bytes"], r["probe_rate"],
            r["check"].get("all", 0), wl))
        return
    secs = float(sys.argv[1])
    runs = [json.loads(l) for l in sys.stdin if l.strip()]
    base = med([r["probe_rate"] for r in runs if r["tool"] == "none"])
    head = "%-15s %3s %7s %7s %5s %7s %8s %6s %7s" % ("tool", "Hz", "cpu%", "run%", "bpf%",
                                                      "rss_MB", "KB/min", "slow%", "samples")
    for w in WL:
        head += "  %-12s" % (w + " r/c/split")
    order = []
    for r in runs:
        if (r["tool"], r["hz"]) not in order:
            order.append((r["tool"], r["hz"]))
    tools = []
    for t, _ in order:
        if t not in tools:
            tools.append(t)
    rates = sorted({h for _, h in order})
    medians = {}
    print("medians (probe baseline %.1f units/s with no profiler)" % base)
    print(head)
    for t in tools:
        for h in rates:
            fs = [figures(r, base, secs) for r in runs if r["tool"] == t and r["hz"] == h]
            if not fs:
                continue
            m = {k: med([f[k] for f in fs]) for k in ("cpu", "run", "bpf", "rss", "kbmin", "slow",
                                                       "samples")}
            for w in WL:
                got = [f[w] for f in fs if w in f]
                if got:
                    m[w] = tuple(med([g[i] for g in got]) for i in range(4))
            medians[(t, h)] = m
            if t != "none":
                print(line(t, h, m, secs))
    print("cpu%: the whole run, start-up and write-out included; run%: the steady window "
          "(40-95% of the run time)")
    print("* in the JVM: only jcmd's CPU is counted; its sampling cost shows in the JVM")
    print("r/c/split: % of the workload's samples naming the right function / complete "
          "stacks / measured split (want deep 75, python 70, ruby 70, java 75, go 70)")
    print("\nevery run")
    print(head.replace("tool           ", "tool      (rep)"))
    for r in runs:
        print(line("%s (%d)" % (r["tool"], r["rep"]), r["hz"], figures(r, base, secs), secs))
    print("\nkiln / peer at the same rate (cpu%, run%, rss, KB/min; < 1 is kiln ahead)")
    for t in tools:
        if t in ("kiln", "none"):
            continue
        for h in rates:
            k, p = medians.get(("kiln", h)), medians.get((t, h))
            if not k or not p:
                continue
            def ratio(a, b):
                return "%6.2f" % (a / b) if b else "   inf"
            print("%-15s %3s  cpu %s  run %s  rss %s  bytes %s" % (
                t, h, ratio(k["cpu"], p["cpu"]) if t not in IN_PROCESS else "   n/a",
                ratio(k["run"], p["run"]) if t not in IN_PROCESS else "   n/a",
                ratio(k["rss"], p["rss"]) if t not in IN_PROCESS else "   n/a",
                ratio(k["kbmin"], p["kbmin"])))


if __name__ == "__main__":
    main()
