#!/usr/bin/env bash
# Container names: processes in a Docker container's cgroup (/docker/<64 hex id> on cgroup
# v1, docker-<id>.scope on v2) are labelled with the name in Docker's config.v2.json, both
# one running before the session (the /proc scan) and one that joins the cgroup between
# fork and exec during it, as runc starts a container's first process. Others stay
# unlabelled. Docker's daemon does not run here: the cgroup and the process are real, the
# config file is written as dockerd writes it.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
build_c ratio
id=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
name=kiln-test-$$
cg=
for dir in /sys/fs/cgroup/pids/docker/$id /sys/fs/cgroup/system.slice/docker-$id.scope \
	/sys/fs/cgroup/unified/docker/$id; do
	mkdir -p "$dir" 2>/dev/null && [ -w "$dir/cgroup.procs" ] && { cg=$dir; break; }
	rmdir "$dir" 2>/dev/null
done
[ -n "$cg" ] || skip "no writable cgroup hierarchy for a container"
conf=/var/lib/docker/containers/$id
mkdir -p "$conf" || skip "cannot write $conf"
printf '{"ID":"%s","Name":"/%s","State":{"Running":true}}\n' "$id" "$name" >"$conf/config.v2.json"
cleanup_container() {
	cleanup
	rm -rf "$conf"
	rmdir /var/lib/docker/containers /var/lib/docker 2>/dev/null
	for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill "$p" 2>/dev/null; done
	sleep 0.2
	rmdir "$cg" 2>/dev/null
	[ "${cg%/*}" = "${cg%/docker/*}/docker" ] && rmdir "${cg%/*}" 2>/dev/null
}
trap cleanup_container EXIT

cp "$WB/ratio" "$T/early"
cp "$WB/ratio" "$T/late"
cp "$WB/ratio" "$T/host"
sh -c "echo \$\$ >'$cg/cgroup.procs' && exec '$T/early' 1 8" &
reap $!
"$T/host" 1 8 &
reap $!
sleep 0.5
"$KILN" record -o "$T/out" -d 6 -f 99 --no-flamegraph >"$T/record.log" 2>&1 &
kiln=$!
reap $kiln
sleep 2
sh -c "echo \$\$ >'$cg/cgroup.procs' && exec '$T/late' 1" &
reap $!	# runs until the test ends: the session sees it for 4 s
wait $kiln || fail "kiln record failed: $(cat "$T/record.log")"

python3 - "$COL" "$name" <<'PY' || fail "container labels are wrong"
import json, sys
col, name = sys.argv[1], sys.argv[2]
by = {}
with open(col) as f:
    header = json.loads(f.readline()[2:])
    for line in f:
        frames, _, n = line.rstrip("\n").rpartition(" ")
        parts = frames.split(";")
        by.setdefault(parts[2], {}).setdefault(parts[1], 0)
        by[parts[2]][parts[1]] += int(n)
print({k: v for k, v in by.items() if k in ("early", "late", "host")})
ok = True
for comm, want in (("early", name), ("late", name), ("host", "")):
    got = by.get(comm, {})
    if sum(got.values()) < 5 or set(got) != {want}:
        print(f"{comm}: want every sample in container {want!r}, got {got}")
        ok = False
if name not in header.get("containers", []):
    print(f"header containers {header.get('containers')} lack {name}")
    ok = False
sys.exit(0 if ok else 1)
PY
pass "early, late in '$name'; host unlabelled"
