# The benchmark's Python work: alpha/beta 70/30 through <module> -> dispatch (as
# tests/workloads/python_ratio.py), a fixed number of rounds (argv[1]). Prints "ready",
# waits 1.5 s (for the profiler to attach), runs, and prints its wall and CPU seconds.
import sys
import time

try:
    range = xrange  # noqa: F821 (2.7)
except NameError:
    pass


def alpha():
    x = 0
    for i in range(7000):
        x += i * i
    return x


def beta():
    x = 0
    for i in range(3000):
        x += i * i
    return x


def dispatch(which):
    if which:
        return alpha()
    return beta()


rounds = int(sys.argv[1])
sys.stdout.write("ready\n")
sys.stdout.flush()
time.sleep(1.5)
wall, cpu = time.time(), time.process_time() if hasattr(time, "process_time") else time.clock()
for _ in range(rounds):
    dispatch(True)
    dispatch(False)
cpu = (time.process_time() if hasattr(time, "process_time") else time.clock()) - cpu
sys.stdout.write("%.4f %.4f\n" % (time.time() - wall, cpu))
