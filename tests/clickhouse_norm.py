#!/usr/bin/env python3
"""clickhouse_norm.py FILE: a server answer in a form that two backends must give alike.

Flamebearer JSON (render, render-diff) and Connect's FlameGraph: name indices become names (the order of the names
array is the order frames were first met, which is the backend's own); the levels keep
their order, which the server fixes (siblings by name). Collapsed text: lines sorted.
Other JSON: keys sorted; "lastSeen" dropped, printed apart as LASTSEEN lines (the
ClickHouse backend keeps it to within CH_SERIES_SLACK, see store/clickhouse.h)."""
import json, sys

raw = open(sys.argv[1], "rb").read()
try:
    d = json.loads(raw)
except ValueError:
    for line in sorted(raw.decode(errors="replace").splitlines()):
        print(line)
    sys.exit(0)

def walk(x, out):
    if isinstance(x, dict):
        if "lastSeen" in x:
            out.append("LASTSEEN %s %s" % (x.get("name"), x["lastSeen"]))
        return {k: walk(v, out) for k, v in x.items() if k != "lastSeen"}
    if isinstance(x, list):
        return [walk(v, out) for v in x]
    return x

extra = []
if isinstance(d, dict) and "flamebearer" in d:
    fb = d["flamebearer"]
    group = 7 if d.get("metadata", {}).get("format") == "double" else 4
    names = fb.pop("names")
    fb["levels"] = [[(names[v] if (i % group) == group - 1 else v) for i, v in enumerate(l)]
                    for l in fb["levels"]]
if isinstance(d, dict) and isinstance(d.get("flamegraph"), dict):	# Connect's FlameGraph
    fg = d["flamegraph"]
    names = fg.pop("names", [])
    for l in fg.get("levels", []):
        l["values"] = [(names[int(v)] if i % 4 == 3 else v) for i, v in enumerate(l.get("values", []))]
d = walk(d, extra)
print(json.dumps(d, sort_keys=True, indent=1))
for e in extra:
    print(e)
