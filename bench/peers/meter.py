#!/usr/bin/env python3
"""bench/peers/meter.py — runs one profiler and measures what it costs the machine.

  meter.py [--signal INT|TERM] [--bpf] [--window A B] OUT.json STOP_AFTER_S -- CMD...
(options anywhere before --)

Starts CMD, polls its process tree (/proc/PID/stat of every descendant) five times a
second, sends its process group the signal after STOP_AFTER_S seconds (if still running; KILL 20 s
later), and writes OUT.json:
  cpu_s        user + system seconds of CMD and every process under it, all threads
               (wait4's rusage of CMD, which counts the children it reaped; a peer's
               processes all end before it does)
  peak_rss_kb  the largest of: the sum of the tree's resident memory at a poll, the root's VmHWM
  bpf_ns       with --bpf: run_time_ns of the eBPF programs held by the tree (bpftool,
               kernel.bpf_stats_enabled=1; a bpftool that lists no pids: the programs
               loaded since the start), read just before the signal
  window_cpu_s, window_s  with --window: the tree's CPU (live processes, /proc) between
               A and B seconds after the start: the steady cost, without start-up and the
               final write-out (window_bpf_ns_per_s: the eBPF programs' rate there)
  wall_s, rc
"""
import json
import os
import signal
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE") // 1024


def stat(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2:].split()
    # fields from 3 on: state ppid ... utime(14) stime(15) ... rss(24)
    return int(rest[1]), (int(rest[11]) + int(rest[12])) / TICK, int(rest[21]) * PAGE


def tree(root):
    procs = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = stat(int(d))
            if st:
                procs[int(d)] = st
    kids, out, todo = {}, {}, [root]
    for pid, st in procs.items():
        kids.setdefault(st[0], []).append(pid)
    while todo:
        pid = todo.pop()
        if pid in procs:
            out[pid] = procs[pid]
            todo += kids.get(pid, [])
    return out


def hwm(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def progs():
    try:
        return json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True,
                                         text=True, timeout=20).stdout or "[]")
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def bpf_ns(pids, before):
    """the programs the tree holds (bpftool's pids), or, where bpftool cannot tell, the
    programs loaded since the start"""
    got = progs()
    if got is None:
        return None, 0
    ns = n = 0
    for p in got:
        if "pids" in p and any(h.get("pid") in pids for h in p["pids"]) or \
           "pids" not in p and p.get("id") not in before:
            ns += p.get("run_time_ns", 0)
            n += 1
    return ns, n


def main():
    args = sys.argv[1:]
    sig, use_bpf, win = signal.SIGINT, False, None
    wcpu, bpf_win = [None, None], []
    pos = []
    i = 0
    while args[i] != "--":
        if args[i] == "--signal":
            sig = getattr(signal, "SIG" + args[i + 1])
            i += 1
        elif args[i] == "--bpf":
            use_bpf = True
        elif args[i] == "--window":
            win = [float(args[i + 1]), float(args[i + 2])]
            i += 2
        else:
            pos.append(args[i])
        i += 1
    out, stop_after = pos[0], float(pos[1])
    cmd = args[i + 1:]
    before = {p.get("id") for p in (progs() or [])} if use_bpf else set()
    t0 = time.monotonic()
    child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True)
    last, peak, root_hwm, bpf, nprogs, signalled = {}, 0, 0, None, 0, False
    next_bpf = t0 + 1
    while True:
        # wait4 on the root alone: its rusage counts its threads and reaped children,
        # never the bpftool runs of this script
        pid, status, ru = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        now = time.monotonic()
        t = tree(child.pid)
        for p, st in t.items():
            last[p] = st[1]
        peak = max(peak, sum(st[2] for st in t.values()))
        for k in (0, 1):
            if win and wcpu[k] is None and now - t0 >= win[k]:
                wcpu[k] = (now, sum(st[1] for st in t.values()))
        root_hwm = max(root_hwm, hwm(child.pid))
        if use_bpf and (now >= next_bpf or now - t0 >= stop_after) and not signalled:
            got, n = bpf_ns(set(t), before)
            if got is not None and n:
                bpf, nprogs = got, n
                if win and win[0] <= now - t0 <= win[1]:
                    bpf_win.append((now, got))
            next_bpf = now + 1
        if now - t0 >= stop_after and not signalled:
            os.killpg(child.pid, sig)
            signalled = True
        if signalled and now - t0 >= stop_after + 20:
            os.killpg(child.pid, signal.SIGKILL)
        time.sleep(0.2)
    cpu = ru.ru_utime + ru.ru_stime
    status = os.waitstatus_to_exitcode(status)
    res = {"cpu_s": round(cpu, 3), "peak_rss_kb": max(peak, root_hwm),
           "bpf_ns": bpf, "bpf_progs": nprogs, "wall_s": round(time.monotonic() - t0, 3),
           "rc": status}
    if wcpu[0] and wcpu[1]:
        res["window_cpu_s"] = round(wcpu[1][1] - wcpu[0][1], 3)
        res["window_s"] = round(wcpu[1][0] - wcpu[0][0], 3)
    if len(bpf_win) > 1:
        res["window_bpf_ns_per_s"] = (bpf_win[-1][1] - bpf_win[0][1]) / (
            bpf_win[-1][0] - bpf_win[0][0])
    with open(out, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main()
