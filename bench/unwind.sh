#!/usr/bin/env bash
# bench/unwind.sh [SECONDS] — kiln's native unwinder against `perf record --call-graph dwarf`
# + `perf script` on the same running workloads at 99 Hz:
#   unwind_deep  the -O2 -fomit-frame-pointer C workload (main -> rec x30 -> leaves)
#   python3      Debian's /usr/bin/python3 running a busy script (entry: Py_BytesMain)
# For each: percent of samples whose stack reaches main, profiler CPU per 1,000 samples,
# peak memory, bytes written, for
#   kiln record --perf-mode smart (and dwarf) --pids PID: the whole agent, symbolization
#     and output included;
#   bench/unwind_bench: kiln's unwinder alone on the same kind of samples, cold (tables
#     compiled) and warm;
#   perf record --call-graph dwarf + perf script.
#   goleaf       a Go workload (tests/workloads/goleaf: main.churn, a frameless leaf,
#                called by main.alpha and main.beta 7:3): percent of the samples in
#                main.churn whose caller is alpha or beta, for kiln record (smart and
#                dwarf: pcsp), `perf record -g` (frame pointers) and `perf record
#                --call-graph dwarf`, with CPU per 1,000 samples and peak memory. Built
#                with symbols so that perf can name it (kiln needs none).
# Needs root (perf_event_open on another process) and linux-perf. Prints figures only.
#   bench/unwind.sh [SECONDS] [all|c|python|go]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECS=${1:-20}
ROWS=${2:-all}
FREQ=99
STACK=8192
T=$(mktemp -d /tmp/kiln-bench-unwind.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$T"' EXIT

make -s build/kiln build/libkiln.a
cc -O2 -g -std=c11 -D_GNU_SOURCE -Isrc -include src/util/banned.h -o "$T/unwind_bench" \
	bench/unwind_bench.c build/libkiln.a $(pkg-config --libs libdw libelf libxxhash zlib) -lm
cc -O2 -fomit-frame-pointer -o "$T/unwind_deep" tests/workloads/unwind_deep.c
cat > "$T/busy.py" <<'EOF'
import time
def f(n):
    return f(n - 1) if n else sum(i * i for i in range(2000))
end = time.time() + 600
while time.time() < end:
    f(20)
EOF

# perf: record, then script (where perf unwinds); CPU and peak RSS from GNU time.
perf_side() {	# pid symbol
	/usr/bin/time -f "%U %S %M" -o "$T/rec.time" \
		perf record -q --call-graph dwarf,$STACK -F $FREQ -p "$1" -o "$T/perf.data" -- sleep "$SECS" \
		>/dev/null 2>&1
	/usr/bin/time -f "%U %S %M" -o "$T/script.time" \
		perf script -i "$T/perf.data" -F comm,tid,ip,sym >"$T/script.txt" 2>/dev/null
	awk -v sym="$2" -v bytes="$(stat -c %s "$T/perf.data")" \
	    -v rec="$(cat "$T/rec.time")" -v scr="$(cat "$T/script.time")" '
		/^[^ \t]/ { n++; if (inmain) good++; inmain = 0; next }
		$2 == sym { inmain = 1 }
		END {
			if (inmain) good++
			split(rec, r, " "); split(scr, s, " ")
			cpu = (r[1] + r[2] + s[1] + s[2]) * 1000
			printf "  perf:  %5d samples  reach main %6.2f%%  cpu %7.1f ms/1000 samples (record %.0f ms, script %.0f ms)  peak rss %d KB  written %d bytes\n",
				n, 100 * good / (n ? n : 1), cpu * 1000 / (n ? n : 1), (r[1] + r[2]) * 1000,
				(s[1] + s[2]) * 1000, (r[3] > s[3] ? r[3] : s[3]), bytes
		}' "$T/script.txt"
}

kiln_side() {	# pid symbol
	"$T/unwind_bench" "$1" "$SECS" $FREQ $STACK "$2" >"$T/kiln.txt"
	awk '{ v[$1] = $2 } END {
		n = v["samples"]
		for (m = 0; m < 2; m++) {
			mode = m ? "dwarf" : "smart"
			cpu = v["record_cpu_ms"] + v[mode "_cold_cpu_ms"]
			printf "  unwinder alone, %s: %5d samples  reach main %6.2f%%  cpu %7.1f ms/1000 samples (ring %.0f ms, unwind cold %.0f ms incl. table builds, warm %.2f us/sample)  unwinder memory %d KB  bench peak rss %d KB  written 0 bytes\n",
				mode, n, v[mode "_reach_main_pct"], cpu * 1000 / n, v["record_cpu_ms"],
				v[mode "_cold_cpu_ms"], v[mode "_warm_us_per_sample"],
				v[mode "_memory_bytes"] / 1024, v["peak_rss_kb"]
		}
	}' "$T/kiln.txt"
}

# kiln record: CPU and peak RSS from GNU time, samples and completeness from the .col.
record_side() {	# pid symbol mode
	rm -rf "$T/kiln"
	/usr/bin/time -f "%U %S %M" -o "$T/kiln.time" "$ROOT/build/kiln" record -q --perf-mode "$3" \
		--python-mode disabled -f $FREQ -d "$SECS" --pids "$1" --perf-dwarf-stack-size $STACK \
		-o "$T/kiln" >/dev/null 2>&1
	read -r total complete _ _ < <(awk -v need="$2" -f tests/workloads/unwind_check.awk \
		"$T/kiln/last_profile.col")
	awk -v n="$total" -v c="$complete" -v t="$(cat "$T/kiln.time")" -v mode="$3" \
	    -v bytes="$(du -sb "$T/kiln" | cut -f1)" 'BEGIN {
		split(t, r, " "); cpu = (r[1] + r[2]) * 1000
		printf "  kiln record %s: %5d samples  reach main %6.2f%%  cpu %7.1f ms/1000 samples (%.0f ms in all)  peak rss %d KB  written %d bytes (.col + .html)\n",
			mode, n, 100 * c / (n ? n : 1), cpu * 1000 / (n ? n : 1), cpu, r[3], bytes }'
}

run() {	# name symbol cmd...
	local name=$1 sym=$2
	shift 2
	"$@" >/dev/null 2>&1 &
	local pid=$!
	pids+=("$pid")
	sleep 0.5
	echo "$name (pid $pid, $SECS s at $FREQ Hz, $STACK-byte stack copies):"
	record_side "$pid" "$sym" smart
	record_side "$pid" "$sym" dwarf
	kiln_side "$pid" "$sym"
	perf_side "$pid" "$sym"
	kill "$pid" 2>/dev/null || true
}

# Go: the share of main.churn's samples whose caller is right, per profiler.
go_kiln() {	# pid mode
	rm -rf "$T/kiln"
	/usr/bin/time -f "%U %S %M" -o "$T/kiln.time" "$ROOT/build/kiln" record -q --perf-mode "$2" \
		-f $FREQ -d "$SECS" --pids "$1" --perf-dwarf-stack-size $STACK -o "$T/kiln" \
		>/dev/null 2>&1
	awk -v t="$(cat "$T/kiln.time")" -v mode="$2" '
		/^#/ { next }
		{
			count = $NF
			n = split(substr($0, 1, length($0) - length($NF) - 1), f, ";")
			while (n > 4 && f[n] ~ /_\[k\]$/)
				n--
			all += count
			if (f[n] != "main.churn")
				next
			leaf += count
			if (f[n - 1] == "main.alpha" || f[n - 1] == "main.beta")
				right += count
		}
		END {
			split(t, r, " "); cpu = (r[1] + r[2]) * 1000
			printf "  kiln record %s: %5d samples, %5d in main.churn, right caller %6.2f%%  cpu %7.1f ms/1000 samples  peak rss %d KB\n",
				mode, all, leaf, 100 * right / (leaf ? leaf : 1), cpu * 1000 / (all ? all : 1), r[3]
		}' "$T/kiln/last_profile.col"
}

go_perf() {	# pid label perf-record-args...
	local pid=$1 label=$2
	shift 2
	/usr/bin/time -f "%U %S %M" -o "$T/rec.time" \
		perf record -q "$@" -F $FREQ -p "$pid" -o "$T/perf.data" -- sleep "$SECS" >/dev/null 2>&1
	/usr/bin/time -f "%U %S %M" -o "$T/script.time" \
		perf script -i "$T/perf.data" -F comm,tid,ip,sym >"$T/script.txt" 2>/dev/null
	awk -v rec="$(cat "$T/rec.time")" -v scr="$(cat "$T/script.time")" -v label="$label" '
		function done() {
			if (depth) {
				all++
				if (first == "main.churn") {
					leaf++
					if (second == "main.alpha" || second == "main.beta")
						right++
				}
			}
			depth = 0
		}
		/^[^ \t]/ { done(); next }
		NF >= 2 {
			depth++
			if (depth == 1) first = $2
			if (depth == 2) second = $2
		}
		END {
			done()
			split(rec, r, " "); split(scr, s, " ")
			cpu = (r[1] + r[2] + s[1] + s[2]) * 1000
			printf "  perf %s: %5d samples, %5d in main.churn, right caller %6.2f%%  cpu %7.1f ms/1000 samples (record + script)  peak rss %d KB\n",
				label, all, leaf, 100 * right / (leaf ? leaf : 1), cpu * 1000 / (all ? all : 1),
				(r[3] > s[3] ? r[3] : s[3])
		}' "$T/script.txt"
}

go_row() {
	command -v go >/dev/null || { echo "goleaf: no go toolchain, left out"; return; }
	(cd tests/workloads/goleaf && GOCACHE=$ROOT/build/gocache GOFLAGS=-mod=mod \
		go build -o "$T/goleaf" .)
	"$T/goleaf" 600 >/dev/null 2>&1 &
	local pid=$!
	pids+=("$pid")
	sleep 0.5
	echo "goleaf, $(go version "$T/goleaf" | sed 's/.*: //') (pid $pid, $SECS s at $FREQ Hz):"
	go_kiln "$pid" smart
	go_kiln "$pid" dwarf
	go_perf "$pid" "record -g (frame pointers)" -g
	go_perf "$pid" "record --call-graph dwarf,$STACK" --call-graph dwarf,$STACK
	kill "$pid" 2>/dev/null || true
}

case $ROWS in all|c) run "unwind_deep -O2 -fomit-frame-pointer" main "$T/unwind_deep" 600 ;; esac
case $ROWS in all|python) run "python3 busy script" Py_BytesMain /usr/bin/python3 "$T/busy.py" ;; esac
case $ROWS in all|go) go_row ;; esac
