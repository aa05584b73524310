#!/usr/bin/env bash
# Pyroscope's ingest limits on kiln serve, with the defaults and with the flags: a profile
# just under each limit is stored, just over gets its status and a message naming the
# flag, and nothing of it is stored. Size: 4 MiB uncompressed (413), also when the
# profile is sent gzipped; samples: 16,000 (400); the ingestion window (422), off unless
# asked for; 0 lifts a limit.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl >/dev/null || skip "curl is not installed"

# make_folded FILE BYTES STACKS: a folded profile of exactly BYTES bytes with STACKS
# distinct stacks (the first stack's frame padded to make up the size)
make_folded() {
	python3 - "$@" <<'PY'
import sys
path, size, stacks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lines = ["main;f%d 1\n" % i for i in range(stacks)]
rest = size - sum(map(len, lines))
n = rest // len("main;f1 1\n")
lines += ["main;f1 1\n"] * n
rest -= n * len("main;f1 1\n")
lines[0] = "main;f0%s 1\n" % ("x" * rest)
body = "".join(lines)
assert len(body) == size, (len(body), size)
open(path, "w").write(body)
PY
}

# push NAME FILE [CURL ARGS...]: POSTs a folded profile to /ingest; prints the status
push() {
	local name=$1 file=$2
	shift 2
	curl -s -o "$T/reply" -w '%{http_code}' -X POST --data-binary @"$file" "$@" \
		"${URL}ingest?name=$name&from=${FROM:-now-10}&until=${UNTIL:-now}"
}

stored() {
	curl -sf "${URL}api/apps" | grep -q "\"name\":\"$1\""
}

expect() {	# expect STATUS NAME FILE [CURL ARGS...]: the push's status, and stored or not
	local want=$1 name=$2 got
	shift 2
	got=$(push "$name" "$@")
	[ "$got" = "$want" ] || fail "$name: status $got, not $want: $(cat "$T/reply")"
	if [ "$want" = 200 ]; then
		stored "$name" || fail "$name was not stored"
	else
		stored "$name" && fail "$name was stored though refused ($want)"
		echo "$name: $want $(cat "$T/reply")"
	fi
	return 0
}

MiB4=$((4 << 20))
make_folded "$T/size_ok" $MiB4 10
make_folded "$T/size_over" $((MiB4 + 1)) 10
make_folded "$T/samples_ok" 400000 16000
make_folded "$T/samples_over" 400000 16001
gzip -c "$T/size_over" >"$T/size_over.gz"
gzip -c "$T/size_ok" >"$T/size_ok.gz"

# the defaults
start_server "$T/data"
expect 200 size_ok.cpu "$T/size_ok"
expect 413 size_over.cpu "$T/size_over"
grep -q 'max-profile-size' "$T/reply" || fail "the 413 does not name the flag: $(cat "$T/reply")"
grep -q '"message"' "$T/reply" || fail "the 413 has no message field: $(cat "$T/reply")"
expect 200 gz_ok.cpu "$T/size_ok.gz" -H 'Content-Encoding: gzip'
expect 413 gz_over.cpu "$T/size_over.gz" -H 'Content-Encoding: gzip'
expect 200 samples_ok.cpu "$T/samples_ok"
expect 400 samples_over.cpu "$T/samples_over"
grep -q '16001 samples.*16000.*max-profile-samples' "$T/reply" ||
	fail "the 400 does not say the counts and the flag: $(cat "$T/reply")"
# no window by default: a week-old upload (the agent's spool) is stored
week=$(($(date +%s) - 7 * 86400))
FROM=$week UNTIL=$((week + 10)) expect 200 old.cpu "$T/samples_ok"
# folded text can only be one sample per distinct stack: ticks add up, no limit on them
curl -sf "${URL}pyroscope/render?query=samples_ok.cpu&from=now-1h&until=now&format=collapsed" |
	grep -c '^main;' | grep -qx 16000 || fail "samples_ok does not hold 16000 stacks"
kill "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null

# the flags: smaller limits, a window, and 0 lifting a limit
start_server "$T/data2" --max-profile-size 300000 --max-profile-samples 0 \
	--reject-older-than 3600 --reject-newer-than 600
make_folded "$T/small_ok" 300000 10
make_folded "$T/small_over" 300001 10
make_folded "$T/many" 250000 16001
expect 200 small_ok.cpu "$T/small_ok"
expect 413 small_over.cpu "$T/small_over"
expect 200 many.cpu "$T/many"	# 16,001 samples, no limit
FROM=now-3500 expect 200 recent.cpu "$T/small_ok"
FROM=now-3700 expect 422 early.cpu "$T/small_ok"
grep -q 'ingestion window.*reject-older-than' "$T/reply" || fail "the 422 does not name the window: $(cat "$T/reply")"
now=$(date +%s)
UNTIL=$((now + 500)) expect 200 soon.cpu "$T/small_ok"
UNTIL=$((now + 700)) expect 422 late.cpu "$T/small_ok"
grep -q 'reject-newer-than' "$T/reply" || fail "the 422 does not name the flag: $(cat "$T/reply")"
# a bad flag value is refused
"$KILN" serve --listen 127.0.0.1:0 --data-dir "$T/data3" --max-profile-samples x >/dev/null 2>&1 &&
	fail "serve took --max-profile-samples x"
pass
