#!/usr/bin/env bash
# The OpenTelemetry eBPF profiler (go.opentelemetry.io/ebpf-profiler, built from the Go
# module proxy by bench/peers/install.sh into build/peers) sending OTLP profiles over gRPC
# straight to kiln serve --otlp-grpc-listen, system-wide, while the known-answer C
# workload tests/workloads/ratio.c runs: its leaves alpha, beta and gamma_ hold 50/30/20
# of its samples in kiln's render (within max(2, 3 sigma) points), and the profiler's
# attributes became labels: its one resource attribute, container.id (the workload runs
# in a real cgroup named as Docker's v2 scopes are, docker-<64 hex>.scope, which the
# profiler reads the id from), as container; and the sample attributes
# process.executable.name as process, thread.name as thread, an opted-in environment
# variable as process.environment_variable.KILN_E2E_ENV.
# The profiler sends native frames unsymbolized ("(ratio+0x1274)"): the test names them
# with nm, as the profiler's own backend would. Skipped (exit 2) only when the profiler
# cannot load its BPF programs.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
. "$ROOT/tests/workloads/lib.sh"	# need_root, build_c
command -v go >/dev/null || fail "go is not installed (scripts/deps/server.txt)"
command -v nm >/dev/null || fail "nm is not installed"

# the profiler's module needs Go 1.24 (bookworm's is 1.19): a newer toolchain first on PATH
gobin=$(go_at_least 24 2>"$T/go.err") || skip "no Go 1.24+ to build the eBPF profiler: $(cat "$T/go.err")"
PATH=$(dirname "$gobin"):$PATH
line=$("$ROOT/bench/peers/install.sh" otel)
case $line in "peer otel ok "*) ;; *) fail "cannot build the eBPF profiler: $line" ;; esac
PROFILER=${line#peer otel ok }

# the profiler attaches to sched tracepoints through tracefs
MOUNTED=
if ! grep -qw tracefs /proc/mounts; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		skip "tracefs is not mounted and cannot be (the profiler needs its tracepoints)"
	MOUNTED=1
	trap 'cleanup; umount /sys/kernel/tracing 2>/dev/null' EXIT
fi

start_server "$T/data" --otlp-grpc-listen 127.0.0.1:0
GP=$(sed -n 's/^kiln: OTLP over gRPC on .*, port \([0-9]*\)$/\1/p' "$T/serve.out")
[ -n "$GP" ] || fail "no gRPC port in: $(cat "$T/serve.out")"

build_c ratio
# the workload's container: a cgroup v2 scope as Docker names them
CID=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
CG=
for d in /sys/fs/cgroup/unified /sys/fs/cgroup /sys/fs/cgroup/system.slice; do
	[ -f "$d/cgroup.procs" ] || continue
	mkdir "$d/docker-$CID.scope" 2>/dev/null && [ -w "$d/docker-$CID.scope/cgroup.procs" ] &&
		{ CG=$d/docker-$CID.scope; break; }
done
[ -n "$CG" ] || fail "no writable cgroup v2 hierarchy to run the workload in a container's cgroup"
trap 'cleanup; rmdir "$CG" 2>/dev/null; [ -n "${MOUNTED:-}" ] && umount /sys/kernel/tracing 2>/dev/null' EXIT
KILN_E2E_ENV=marked sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" 2 300' sh "$CG" "$WB/ratio" &
reap $!
"$PROFILER" -collection-agent "127.0.0.1:$GP" -disable-tls -samples-per-second 97 \
	-reporter-interval 2s -env-vars KILN_E2E_ENV >"$T/otel.log" 2>&1 &
OTEL=$!
reap $OTEL

SEL='unknown_service.cpu{process="ratio"}'
render() {
	curl -sf -G "${URL}pyroscope/render" --data-urlencode "query=$1" \
		--data-urlencode from=now-1h --data-urlencode until=now \
		--data-urlencode format=collapsed | grep -v '^#'
}
# until the workload has 1,500 samples (about 10 s of it), or 3 minutes
n=0
for _ in $(seq 90); do
	sleep 2
	if ! kill -0 $OTEL 2>/dev/null; then
		grep -q "eBPF tracer loaded" "$T/otel.log" ||
			skip "the eBPF profiler cannot load its BPF programs: $(tail -1 "$T/otel.log")"
		fail "the eBPF profiler stopped: $(tail -3 "$T/otel.log")"
	fi
	n=$(render "$SEL" | awk '{s += $NF} END {print s + 0}')
	[ "$n" -ge 1500 ] && break
done
grep -q "Request failed" "$T/otel.log" &&
	fail "kiln refused an export: $(grep "Request failed" "$T/otel.log" | tail -1)"
[ "$n" -ge 1500 ] || fail "only $n samples of ratio reached kiln in 3 minutes"
kill $OTEL

# name ratio's frames with its symbol table: "(ratio+0xADDR)" -> the function holding ADDR
nm -n "$WB/ratio" | awk '$2 ~ /^[tT]$/ {print $1, $3}' >"$T/syms"
render "$SEL" >"$T/ratio.collapsed"
python3 - "$T/syms" "$T/ratio.collapsed" >"$T/ratio.col" <<'PY' || fail "cannot name the frames"
import bisect, re, sys
syms = [(int(a, 16), name) for a, name in (l.split() for l in open(sys.argv[1]))]
addrs = [a for a, _ in syms]
print('# {}')
for line in open(sys.argv[2]):
    frames, _, count = line.rstrip("\n").rpartition(" ")
    out = []
    for f in frames.split(";"):
        m = re.fullmatch(r"\(ratio\+0x([0-9a-f]+)\)", f)
        if m:
            i = bisect.bisect_right(addrs, int(m.group(1), 16)) - 1
            f = syms[i][1] if i >= 0 else f
        out.append(f)
    print("0;;ratio;" + ";".join(out), count)
PY
colcheck shares "$T/ratio.col" ratio alpha=50 beta=30 gamma_=20 ||
	fail "the shares are off: $(grep -cE 'alpha|beta|gamma_' "$T/ratio.col") stacks"
colcheck frac "$T/ratio.col" ratio '^dispatch$' 0.9 || fail "the stacks lost dispatch"

labels=$(curl -sf -G "${URL}api/labels" --data-urlencode "query=$SEL")
echo "$labels" | grep -q "\"container\":\[\"$CID\"\]" ||
	fail "the container.id resource attribute is not the container label: $labels"
echo "$labels" | grep -q '"thread":\[[^]]*"ratio"' || fail "no thread label ratio: $labels"
echo "$labels" | grep -q '"process.environment_variable.KILN_E2E_ENV":\["marked"\]' ||
	fail "the opted-in environment variable is not a label: $labels"
pass "$n samples of ratio over gRPC"
