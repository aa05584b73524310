#!/usr/bin/env bash
# Grafana's Pyroscope datasource against kiln: the Connect querier API driven by the
# generated Connect client of Pyroscope's own Go module (github.com/grafana/pyroscope/api,
# fetched from the Go module proxy at test time), in binary protobuf and in JSON. What was
# pushed (a gProfiler .col upload, collapsed stacks to /ingest with labels, a real Go heap
# profile with four sample types) comes back per profile type with the same totals from
# SelectMergeStacktraces, SelectMergeProfile and SelectSeries, grouped by labels too; the
# types, label names and values are listed; bad requests get Connect errors.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
command -v go >/dev/null || skip "go is not installed"
CQ=$(go_tool connectq 25) || { echo "$CQ"; exit 2; }
GO=$(go_at_least 25)
export GOTOOLCHAIN=local GOFLAGS=-mod=mod HOME=${HOME:-/root}

# the heap profile, and its totals as `go tool pprof` gives them
GOPROXY=off "$GO" build -o "$T/goheap" "$ROOT/tests/workloads/goheap.go" 2>"$T/heap.err" ||
	fail "cannot build the Go workload: $(cat "$T/heap.err")"
"$T/goheap" "$T/heap.pprof" "$T/cpu.pprof" || fail "Go workload failed"
pprof_totals "$T/heap.pprof" | sed 's|/[^ ]* | |' >"$T/heap.totals"

start_server "$T/data"
now=$(date -u +%s)
curl -sf -X POST --data-binary @"$T/heap.pprof" \
	"${URL}ingest?name=goapp%7Bpod%3Dweb-0%7D&format=pprof&from=$((now - 10))&until=$now" ||
	fail "pushing the heap profile failed"
printf 'main;handle;parse 6\nmain;handle;render 4\n' | curl -sf -X POST --data-binary @- \
	"${URL}ingest?name=web.cpu%7Benv%3Dprod%7D&from=$((now - 20))&until=$((now - 10))" >/dev/null ||
	fail "pushing web/prod failed"
printf 'main;handle;parse 5\n' | curl -sf -X POST --data-binary @- \
	"${URL}ingest?name=web.cpu%7Benv%3Ddev%7D&from=$((now - 20))&until=$((now - 10))" >/dev/null ||
	fail "pushing web/dev failed"
printf '# {"hostname":"h1"}\n0;ctr;proc1;main;work 7\n0;;proc2;main;idle 2\n' >"$T/a.col"
code=$(gprofiler_upload checkout e2e-token "$T/a.col" "$(date -u -d @$((now - 30)) +%FT%T)" \
	"$(date -u -d @$((now - 20)) +%FT%T)")
[ "$code" = 200 ] || fail "gProfiler upload got $code"

CPU=process_cpu:samples:count:cpu:nanoseconds
for enc in "" -json; do
	echo "--- encoding ${enc:-proto}"
	"$CQ" $enc "$URL" types >"$T/types" || fail "ProfileTypes failed"
	cat "$T/types"
	grep -q "^$CPU process_cpu samples count cpu nanoseconds$" "$T/types" || fail "no CPU type"
	for t in alloc_objects alloc_space inuse_objects inuse_space; do
		grep -q "^memory:$t:" "$T/types" || fail "no memory:$t type"
	done
	[ "$("$CQ" $enc "$URL" values service_name '{}')" = "checkout goapp web" ] ||
		fail "service names: $("$CQ" $enc "$URL" values service_name '{}')"
	[ "$("$CQ" $enc "$URL" values env '{service_name="web"}')" = "dev prod" ] ||
		fail "env values of web: $("$CQ" $enc "$URL" values env '{service_name="web"}')"
	"$CQ" $enc "$URL" names '{service_name="checkout"}' | grep -qw process ||
		fail "checkout has no process label"
	"$CQ" $enc "$URL" series | grep -q "__profile_type__=memory:inuse_space:bytes:space:bytes,service_name=goapp" ||
		fail "Series has no goapp inuse_space: $("$CQ" $enc "$URL" series)"

	for t in alloc_objects alloc_space inuse_objects inuse_space; do
		want=$(awk -v t="$t" '$1 == t { print $2 }' "$T/heap.totals")
		unit=$(case $t in *space) echo bytes ;; *) echo count ;; esac)
		out=$("$CQ" $enc "$URL" totals "memory:$t:$unit:space:bytes" '{service_name="goapp",pod="web-0"}') ||
			fail "totals of $t failed"
		[ "$out" = "$(printf 'flamegraph %s pprof %s\nseries {} %s' "$want" "$want" "$want")" ] ||
			fail "$t: go tool pprof says $want, Connect says: $out"
	done
	out=$("$CQ" $enc "$URL" totals $CPU '{service_name="web"}' env) || fail "web totals failed"
	[ "$out" = "$(printf 'flamegraph 15 pprof 15\nseries {env=prod} 10\nseries {env=dev} 5')" ] ||
		fail "web by env: $out"
	out=$("$CQ" $enc "$URL" totals $CPU '{service_name="web",env!="dev"}') || fail "web/prod failed"
	[ "$out" = "$(printf 'flamegraph 10 pprof 10\nseries {} 10')" ] || fail "web without dev: $out"
	out=$("$CQ" $enc "$URL" totals $CPU '{service_name=~"check.*"}' process) || fail "checkout failed"
	[ "$out" = "$(printf 'flamegraph 9 pprof 9\nseries {process=proc1} 7\nseries {process=proc2} 2')" ] ||
		fail "checkout by process: $out"
	out=$("$CQ" $enc "$URL" totals $CPU '{}' service_name) || fail "all CPU failed"
	[ "$out" = "$(printf 'flamegraph 24 pprof 24\nseries {service_name=web} 15\nseries {service_name=checkout} 9')" ] ||
		fail "all CPU by service: $out"
	# nothing matches: empty answers, not errors
	out=$("$CQ" $enc "$URL" totals $CPU '{service_name="nope"}') || fail "an empty selection failed"
	[ "$out" = "flamegraph 0 pprof 0" ] || fail "an empty selection gave: $out"
	# bad requests: Connect errors with a message
	"$CQ" $enc "$URL" totals $CPU 'web{' 2>"$T/err" && fail "a bad selector was accepted"
	grep -q "invalid_argument" "$T/err" || fail "bad selector: $(cat "$T/err")"
	"$CQ" $enc "$URL" totals cpu '{}' 2>"$T/err" && fail "a bad profile type was accepted"
	grep -q "invalid_argument.*profile_typeID" "$T/err" || fail "bad type: $(cat "$T/err")"
done

# the wire without a client: a body that is not the message, an unknown content type
code=$(printf '\xff\xff' | curl -s -o "$T/reply" -w '%{http_code}' -X POST -H 'Content-Type: application/proto' \
	--data-binary @- "${URL}querier.v1.QuerierService/SelectMergeStacktraces")
[ "$code" = 400 ] && grep -q '"code":"invalid_argument"' "$T/reply" || fail "garbage proto got $code: $(cat "$T/reply")"
code=$(curl -s -o "$T/reply" -w '%{http_code}' -X POST -H 'Content-Type: text/plain' -d x \
	"${URL}querier.v1.QuerierService/ProfileTypes")
[ "$code" = 415 ] || fail "text/plain got $code"
code=$(curl -s -o "$T/reply" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d '{"start":"-5"}' "${URL}querier.v1.QuerierService/ProfileTypes")
[ "$code" = 400 ] || fail "a negative start got $code"

# the render routes take the same selectors (Grafana's, without an application name)
render_sum() {
	curl -sf -G "${URL}pyroscope/render" --data-urlencode "query=$1" --data-urlencode from=now-1h \
		--data-urlencode until=now --data-urlencode format=collapsed | awk '{ s += $NF } END { print s + 0 }'
}
[ "$(render_sum '{service_name="web",env="prod"}')" = 10 ] || fail "render of web/prod: $(render_sum '{service_name="web",env="prod"}')"
want=$(awk '$1 == "alloc_space" { print $2 }' "$T/heap.totals")
got=$(render_sum '{service_name="goapp",__profile_type__="memory:alloc_space:bytes:space:bytes"}')
[ "$got" = "$want" ] || fail "render of goapp alloc_space: $got, want $want"
code=$(curl -s -o "$T/reply" -w '%{http_code}' -G "${URL}pyroscope/render" --data-urlencode 'query={service_name=~".*"}')
[ "$code" = 400 ] && grep -q "matches [0-9]* services" "$T/reply" || fail "an ambiguous render got $code: $(cat "$T/reply")"
pass
