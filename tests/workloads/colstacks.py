"""What the runtime checkers (pycheck.py, rbcheck.py, phpcheck.py) share: reading a kiln
.col file, the LINE: markers of a workload, and the tolerance of a share.

Lines are '<index>;<container>;<comm>;<frames...> <count>' after a '# {json}' header.
"""
import math
import re
import sys


def stacks(path):
    """(comm, frames root first, count) of each stack line of the .col file at path."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for i, line in enumerate(f):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            frames, _, count = line.rpartition(" ")
            parts = frames.split(";")
            if len(parts) < 3:
                sys.exit(f"malformed line {i + 1}: {line!r}")
            yield parts[2], parts[3:], int(count)


def markers(script, comment):
    """{name: line} of the '<comment> LINE:name' markers ending lines of script."""
    rx = re.compile(re.escape(comment) + r" LINE:(\S+)$")
    lines = {}
    with open(script, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            m = rx.search(text.rstrip())
            if m:
                lines[m.group(1)] = n
    return lines


def runtime_frames(frames, rx):
    """[(index, func, file, line)] of the frames rx (groups: func, file, line) matches."""
    out = []
    for i, fr in enumerate(frames):
        m = rx.match(fr)
        if m:
            out.append((i, m.group(1), m.group(2), int(m.group(3) or 0)))
    return out


def before(frames, i):
    """The frame before frames[i], past the "[truncated]" a stopped runtime read leaves."""
    i -= 1
    if i > 0 and frames[i] == "[truncated]":
        i -= 1
    return frames[i] if i >= 0 else None


def tolerance(n, p=0.7):
    """Three standard deviations, in points, of a share p measured on n samples."""
    return 300 * math.sqrt(p * (1 - p) / n) if n else 100
