#!/usr/bin/env bash
# Issue 19, finding 4: label sets are bounded and listing them is linear. The attack: one
# Connect push of a series with 100,000 labels (the push was quadratic, 25 s; every later
# /api/labels N^2 under the store lock), then 2,000 series of 30 distinct label names
# each (60,000 names: the most the limits let through) while /api/labels and
# /pyroscope/labels are listed in a loop; and pprof samples with 100,000 labels, and with
# 5,000 distinct label sets (their series were found pairwise). Each over-limit push or ingest gets 400 with a
# message (labels per series, name and value length, series per push); the normal
# client's uploads during the listing all succeed, and the listings are complete.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl > /dev/null || skip "curl is not installed"
command -v python3 > /dev/null || skip "python3 is not installed"

start_server "$T/data"
export PYTHONPATH="$ROOT/tests/tools"	# protowire, which pb.py builds on
cat > "$T/pb.py" <<'PY'
# Protocol buffers by hand (push.proto's and profile.proto's field numbers): enough for
# a PushRequest and a one-sample pprof.
from protowire import field, varint, vfield
def pprof():
    st = ["", "cpu", "nanoseconds", "main", "work"]
    p = field(1, vfield(1, 1) + vfield(2, 2))                       # sample_type cpu/ns
    p += field(2, field(1, varint(2) + varint(1)) + field(2, varint(1000)))  # sample: locs 2,1; value
    p += field(4, vfield(1, 1) + field(4, vfield(1, 1)))            # location 1 -> function 1
    p += field(4, vfield(1, 2) + field(4, vfield(1, 2)))            # location 2 -> function 2
    p += field(5, vfield(1, 1) + vfield(2, 3))                      # function 1 "main"
    p += field(5, vfield(1, 2) + vfield(2, 4))                      # function 2 "work"
    for s in st:
        p += field(6, s)
    return p
def pprof_labels(nsamples, nlabels):
    """nsamples samples, each with nlabels labels l<j>=v<sample>: string indexes past 5"""
    st = ["", "cpu", "nanoseconds", "main", "work"]
    keys = ["l%d" % j for j in range(nlabels)]
    vals = ["v%d" % i for i in range(nsamples)]
    p = field(1, vfield(1, 1) + vfield(2, 2))
    for i in range(nsamples):
        lab = b"".join(field(3, vfield(1, 5 + j) + vfield(2, 5 + nlabels + i)) for j in range(nlabels))
        p += field(2, field(1, varint(2) + varint(1)) + field(2, varint(1)) + lab)
    p += field(4, vfield(1, 1) + field(4, vfield(1, 1)))
    p += field(4, vfield(1, 2) + field(4, vfield(1, 2)))
    p += field(5, vfield(1, 1) + vfield(2, 3))
    p += field(5, vfield(1, 2) + vfield(2, 4))
    for x in st + keys + vals:
        p += field(6, x)
    return p
def push(series, profile=None):
    """series: list of label lists [(name, value), ...]"""
    body = b""
    for labels in series:
        s = b"".join(field(1, field(1, k) + field(2, v)) for k, v in labels)
        s += field(2, field(1, profile or pprof()) + field(2, "id"))
        body += field(1, s)
    return body
PY
post_push() {	# FILE: prints the status; the reply is in $T/push.reply
	curl -s -m 120 -o "$T/push.reply" -w '%{http_code}' -X POST -H 'Content-Type: application/proto' \
		--data-binary @"$1" "${URL}push.v1.PusherService/Push"
}
python3 - "$T" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from pb import push
t = sys.argv[1]
base = [("service_name", "lab"), ("__name__", "process_cpu")]
open(t + "/huge.pb", "wb").write(push([base + [("l%06d" % i, "v") for i in range(100000)]]))
open(t + "/31.pb", "wb").write(push([base + [("l%02d" % i, "v") for i in range(31)]]))
open(t + "/30.pb", "wb").write(push([base + [("l%02d" % i, "v") for i in range(30)]]))
open(t + "/series.pb", "wb").write(push([base + [("host", "h%d" % i)] for i in range(1001)]))
from pb import pprof_labels
open(t + "/samplelabels.pb", "wb").write(push([[("service_name", "lab4")]], pprof_labels(1, 100000)))
open(t + "/samplesets.pb", "wb").write(push([[("service_name", "lab5")]], pprof_labels(5000, 1)))
PY
code=$(post_push "$T/huge.pb")
[ "$code" = 400 ] && grep -q 'more than 30 label names' "$T/push.reply" ||
	fail "a series of 100,000 labels: $code $(head -c 200 "$T/push.reply")"
code=$(post_push "$T/31.pb")
[ "$code" = 400 ] || fail "a series of 31 labels: $code $(head -c 200 "$T/push.reply")"
code=$(post_push "$T/series.pb")
[ "$code" = 400 ] && grep -q 'push has 1001 series' "$T/push.reply" ||
	fail "a push of 1,001 series: $code $(head -c 200 "$T/push.reply")"
code=$(post_push "$T/30.pb")
[ "$code" = 200 ] || fail "a series of 30 labels was refused: $code $(head -c 200 "$T/push.reply")"

# the labels of a pprof's samples make series too: 100,000 on one sample is refused, 5,000
# samples of distinct label sets are 5,000 series (found equal by hashing, not pairwise)
code=$(post_push "$T/samplelabels.pb")
[ "$code" = 400 ] && grep -q 'more than the limit of 30 label names' "$T/push.reply" ||
	fail "a sample of 100,000 labels: $code $(head -c 200 "$T/push.reply")"
code=$(post_push "$T/samplesets.pb")
[ "$code" = 200 ] || fail "5,000 sample label sets: $code $(head -c 200 "$T/push.reply")"
curl -s "${URL}api/apps" > "$T/apps.json"
n=$(curl -s "${URL}pyroscope/label-values?label=l0&query=lab5.cpu%7B%7D&profile_type=process_cpu:cpu:nanoseconds:cpu:nanoseconds" |
	python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
[ "$n" = 5000 ] || fail "5,000 sample label sets listed $n values: $(head -c 300 "$T/apps.json")"

# /ingest: the same limits through a selector
ingest_code() {
	printf 'main;work 1\n' | curl -s -m 60 -o "$T/ingest.reply" -w '%{http_code}' -X POST \
		--data-binary @- "${URL}ingest?name=$1&from=now-10s&until=now"
}
sel=$(python3 -c 'print("lab2.cpu%7B" + "%2C".join("k%02d%%3Dv" % i for i in range(31)) + "%7D")')
[ "$(ingest_code "$sel")" = 400 ] && grep -q 'more than the limit of 30' "$T/ingest.reply" ||
	fail "/ingest of 31 labels: $(cat "$T/ingest.reply")"
long=$(printf 'v%.0s' $(seq 2049))
[ "$(ingest_code "lab2.cpu%7Bk%3D$long%7D")" = 400 ] && grep -q 'longer than 2048' "$T/ingest.reply" ||
	fail "/ingest of a 2,049-byte value: $(cat "$T/ingest.reply")"
[ "$(ingest_code "lab2.cpu%7Bk%3D${long:0:2048}%7D")" = 200 ] ||
	fail "/ingest of a 2,048-byte value: $(cat "$T/ingest.reply")"

# 2,000 series of 30 distinct names each, through keep-alive connections
python3 - "${URL#http://}" <<'PY' || fail "storing 2,000 series of 30 labels failed"
import http.client, sys
host, port = sys.argv[1].rstrip("/").split(":")
c = http.client.HTTPConnection(host, int(port), timeout=60)
for s in range(2000):
    sel = "lab3.cpu%7B" + "%2C".join("n%d_%d%%3Dv" % (s, i) for i in range(30)) + "%7D"
    c.request("POST", "/ingest?name=%s&from=now-10s&until=now" % sel, body=b"main;work 1\n")
    r = c.getresponse()
    r.read()
    if r.status != 200:
        sys.exit("series %d: %d" % (s, r.status))
PY
# listing in a loop, while a normal client uploads
(
	while :; do
		curl -s -m 120 -o "$T/list.json" "${URL}api/labels?query=lab3.cpu%7B%7D"
		curl -s -m 120 -o /dev/null "${URL}pyroscope/labels?query=lab3.cpu%7B%7D"
	done
) &
lister=$!
reap "$lister"
sleep 1
for i in $(seq 20); do
	t=$(printf 'main;work 1\n' | curl -s -m 30 -o /dev/null -w '%{http_code} %{time_total}' -X POST \
		--data-binary @- "${URL}ingest?name=lab3.cpu%7Bn0_0%3Dv%7D&from=now-10s&until=now")
	[ "${t% *}" = 200 ] || fail "upload $i during the listing: $t"
	times+=" ${t#* }"
done
kill "$lister"
curl -s -m 120 "${URL}api/labels?query=lab3.cpu%7B%7D" > "$T/list.json"
names=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$T/list.json")
[ "$names" = 60000 ] || fail "/api/labels listed $names names, not 60000"
pass "limits refused with 400; 20 uploads served during listings of $names names (s:$times)"
