# Known-answer Python workload: alpha and beta share the CPU 70/30 through the call
# chain <module> -> dispatch -> alpha/beta. Runs for argv[1] seconds (default: forever).
# Works on CPython 2.7 and 3.x. The LINE: markers let tests find the expected lines.
import sys
import time

try:
    range = xrange  # noqa: F821 (2.7)
except NameError:
    pass


def alpha():
    x = 0
    for i in range(70000):
        x = (x + i) & 0xffffff  # LINE:alpha
    return x


def beta():
    x = 0
    for i in range(30000):
        x = (x + i) & 0xffffff  # LINE:beta
    return x


def dispatch(which):
    if which:
        return alpha()  # LINE:dispatch-alpha
    return beta()  # LINE:dispatch-beta


end = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 1e9)
sys.stdout.write("ready\n")
sys.stdout.flush()
while time.time() < end:
    dispatch(True)  # LINE:module-alpha
    dispatch(False)  # LINE:module-beta
