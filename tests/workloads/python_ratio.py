# Known-answer Python workload: alpha and beta share the CPU 70/30 through the call
# chain <module> -> dispatch -> alpha/beta. Runs for argv[1] seconds (default: forever).
# Works on CPython 2.7 and 3.x. The LINE: markers let tests find the expected lines.
# Each round's length is dithered (x1 to x2, the same factor for both) so that it cannot
# beat against the sampling timer's fixed period (see deep.c).
import sys
import time

try:
    range = xrange  # noqa: F821 (2.7)
except NameError:
    pass


def alpha(scale):
    x = 0
    for i in range(70 * scale):
        x = (x + i) & 0xffffff  # LINE:alpha
    return x


def beta(scale):
    x = 0
    for i in range(30 * scale):
        x = (x + i) & 0xffffff  # LINE:beta
    return x


def dispatch(which, scale):
    if which:
        return alpha(scale)  # LINE:dispatch-alpha
    return beta(scale)  # LINE:dispatch-beta


end = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 1e9)
sys.stdout.write("ready\n")
sys.stdout.flush()
seed = 88172645463325252
while time.time() < end:
    seed = (seed * 6364136223846793005 + 1442695040888963407) & 0xffffffffffffffff
    scale = 1000 + (seed >> 33) % 1000
    dispatch(True, scale)  # LINE:module-alpha
    dispatch(False, scale)  # LINE:module-beta
