#!/usr/bin/env bash
# Issue 19, finding 3: idle and half-open connections from one client no longer lock
# everyone out. An attacker at 127.0.0.1 opens 1,100 connections, each sending half a
# request and then nothing (libmicrohttpd's default limit was about 1,020, with a 120 s
# idle timeout and no per-client limit: a health check and an authorized upload both
# timed out). During the attack a client at 127.0.0.2 passes the health check, uploads
# and reads its upload back; then the server closes the attacker's idle connections.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../server_lib.sh"
command -v curl > /dev/null || skip "curl is not installed"
command -v python3 > /dev/null || skip "python3 is not installed"
curl -s -m 5 --interface 127.0.0.2 -o /dev/null http://127.0.0.1:1/ 2>&1; [ $? = 45 ] &&
	skip "cannot bind 127.0.0.2 for the second client"

start_server "$T/data" --token secret --read-token "$READ_TOKEN"
port=${URL#http://127.0.0.1:}
port=${port%/}
python3 - "$port" "$T" <<'PY' &
import os, resource, socket, sys, time
port, tmp = int(sys.argv[1]), sys.argv[2]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
socks = []
for i in range(1100):
    s = socket.socket()
    s.settimeout(5)
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"POST /ingest HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n")
    except OSError:
        s.close()
        continue
    socks.append(s)
open(os.path.join(tmp, "attack.opened"), "w").write("%d\n" % len(socks))
# Wait (at most 120 s) for the server to close every one of them.
for s in socks:
    s.setblocking(True)
    s.settimeout(120)
deadline = time.time() + 120
open_ = len(socks)
for s in socks:
    try:
        s.settimeout(max(0.1, deadline - time.time()))
        while s.recv(4096):
            pass
        open_ -= 1
    except socket.timeout:
        pass
    except OSError:	# reset by the server: closed as well
        open_ -= 1
open(os.path.join(tmp, "attack.left"), "w").write("%d\n" % open_)
PY
attacker=$!
reap "$attacker"
for _ in $(seq 600); do [ -s "$T/attack.opened" ] && break; sleep 0.1; done
[ -s "$T/attack.opened" ] || fail "the attacker did not open its connections"

c2() { curl -s -m 20 --interface 127.0.0.2 "$@"; }
c2 -f "${URL}healthz" | grep -q ok || fail "health check of a second client failed during the attack"
printf 'main;work 9\n' | c2 -f -X POST --data-binary @- \
	"${URL}ingest?name=conn.cpu&from=now-10s&until=now&key=secret" > /dev/null ||
	fail "upload of a second client failed during the attack"
c2 -f -H "$READ_AUTH" "${URL}pyroscope/render?query=conn.cpu%7B%7D&from=now-1h&until=now" | grep -q '"numTicks":9' ||
	fail "render of a second client failed during the attack"
wait "$attacker"
left=$(cat "$T/attack.left" 2>/dev/null)
[ "$left" = 0 ] || fail "$left idle attacker connections still open after 120 s"
pass "second client served during $(cat "$T/attack.opened") attacker connections; all closed by the server"
