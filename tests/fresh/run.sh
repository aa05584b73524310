#!/usr/bin/env bash
# tests/fresh/run.sh — the README's commands on a machine that has nothing (in .ci/run).
# Debootstraps a minimal Debian bookworm (minbase, plus only make and git) into
# build/fresh/root from the apt sources this machine uses, gives it the machine's apt
# network settings, extra CA certificates and npm/pip settings (so that TLS to the package
# registries works there as here), copies a clean clone of HEAD in, and runs inside it:
# `make` (which installs the Debian packages, then builds), `make unit` and `make e2e`.
# Prints the time of each phase and a closing "fresh: N passed, N failed, N skipped";
# exits non-zero when the build or any test fails. Needs root (debootstrap, chroot, mount).
#   FRESH_E2E=pattern   only the e2e tests whose name contains it (default: all)
#   FRESH_CACHE=1       keep the debootstrapped base in build/fresh/base.tar and reuse it
#   FRESH_JOBS=N        make -jN inside (default: the number of CPUs, at most 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
src=$(pwd)
dir=$src/build/fresh
root=$dir/root
logs=$dir/logs
suite=bookworm
[ "$(id -u)" -eq 0 ] || { echo "fresh: needs root (debootstrap, chroot, mount)" >&2; exit 1; }
command -v debootstrap > /dev/null || { echo "fresh: debootstrap is not installed (scripts/deps/fresh.txt)" >&2; exit 1; }

# Mount points under $root, deepest first: nothing may be removed while one is mounted.
mounted_under() {
	awk -v r="$(realpath -m "$root")" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}
# Stops what still runs inside the chroot (servers a failed test left), then unmounts.
cleanup() {
	local p pids=()
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$(realpath -m "$root")" ] && pids+=("${p#/proc/}")
	done
	[ ${#pids[@]} -eq 0 ] || { kill -KILL "${pids[@]}" 2>/dev/null; sleep 1; }
	local m
	for m in $(mounted_under); do
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	if [ -n "$(mounted_under)" ]; then
		echo "fresh: still mounted under $root:" $(mounted_under) >&2
		return 1
	fi
}
trap 'cleanup' EXIT
trap 'exit 130' INT TERM

# The mirror that serves $suite main, from the one-line and the deb822 source lists.
mirror() {
	cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk -v s="$suite" '$1 == "deb" { sub(/\[[^]]*\] */, ""); if ($3 == s && / main( |$)/) print $2 }'
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v s="$suite" 'BEGIN { RS = "" } {
			t = u = su = c = ""; on = "yes"; n = split($0, L, "\n")
			for (i = 1; i <= n; i++) {
				if (L[i] ~ /^#/) continue
				k = L[i]; sub(/:.*/, "", k); v = L[i]; sub(/^[^:]*: */, "", v)
				if (k == "Types") t = v; if (k == "URIs") u = v; if (k == "Suites") su = v
				if (k == "Components") c = v; if (k == "Enabled") on = v
			}
			if (on != "no" && (" " t " ") ~ / deb / && (" " su " ") ~ (" " s " ") && (" " c " ") ~ / main /) {
				split(u, U, " "); print U[1]
			}
		}' "$f"
	done
}
url=$(mirror | head -n 1)
[ -n "$url" ] || { echo "fresh: no apt source for $suite main in /etc/apt/sources.list*" >&2; exit 1; }
# apt's proxies, for debootstrap's downloads; the environment's, for everything inside
proxy_env=()
for v in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
	[ -n "${!v:-}" ] && proxy_env+=("$v=${!v}")
done
for scheme in http https; do
	p=$(apt-config dump 2>/dev/null | sed -n "s/^Acquire::$scheme::Proxy \"\(.*\)\";$/\1/Ip" | head -n 1)
	[ -n "$p" ] && [ "$p" != DIRECT ] && [ -z "$(printenv ${scheme}_proxy)" ] && export "${scheme}_proxy=$p"
done

stamp() { date +%s; }
phase_names=() phase_secs=()
phase() { phase_names+=("$1"); phase_secs+=("$2"); printf 'fresh: %-11s %4ds\n' "$1" "$2"; }
failed=0

if [ -n "$(mounted_under)" ]; then
	echo "fresh: $root has mounts left from an earlier run; unmounting them"
	cleanup
fi
rm -rf --one-file-system "$root" "$logs"
mkdir -p "$root" "$logs"

t0=$(stamp)
if [ "${FRESH_CACHE:-0}" = 1 ] && [ -f "$dir/base.tar" ]; then
	echo "fresh: $suite base from $dir/base.tar (FRESH_CACHE=1)"
	tar -C "$root" -xf "$dir/base.tar"
else
	echo "fresh: debootstrap $suite (minbase, make and git) from the host's apt source"
	keyring=()
	[ -f /usr/share/keyrings/debian-archive-keyring.gpg ] &&
		keyring=(--keyring=/usr/share/keyrings/debian-archive-keyring.gpg)
	debootstrap --variant=minbase --include=make,git "${keyring[@]}" "$suite" "$root" "$url" \
		> "$logs/debootstrap.log" 2>&1 ||
		{ tail -n 30 "$logs/debootstrap.log"; echo "fresh: debootstrap failed"; exit 1; }
	[ "${FRESH_CACHE:-0}" = 1 ] && tar -C "$root" -cf "$dir/base.tar" .
fi
phase debootstrap $(( $(stamp) - t0 ))

# The machine's apt sources and network settings (Acquire::, e.g. proxies), keyrings they
# name, extra CA certificates, npm and pip settings, name resolution.
rm -f "$root/etc/apt/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
	/etc/apt/trusted.gpg.d/* /etc/apt/keyrings/* \
	$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's/^Signed-By: *\(\/.*\)/\1/p') \
	$(grep -ls 'Acquire::' /etc/apt/apt.conf /etc/apt/apt.conf.d/*) \
	/usr/local/share/ca-certificates/* /etc/ssl/certs/ca-certificates.crt \
	/etc/npmrc /usr/etc/npmrc /root/.npmrc /etc/pip.conf /root/.config/pip/pip.conf /root/.pip/pip.conf \
	/etc/resolv.conf /etc/hosts; do
	[ -f "$f" ] || continue
	mkdir -p "$root$(dirname "$f")"
	cp -L "$f" "$root$f"
done

# a clean clone of what is committed at HEAD
head=$(git rev-parse HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	echo "fresh: testing HEAD ${head:0:12}; uncommitted changes are not part of it"
git init -q "$root/root/kiln"
git -C "$root/root/kiln" fetch -q "$src" HEAD
git -C "$root/root/kiln" checkout -q --detach FETCH_HEAD

mount -t proc proc "$root/proc"
for m in sys dev; do
	mount --rbind "/$m" "$root/$m"
	mount --make-rslave "$root/$m"
done

jobs=${FRESH_JOBS:-$(nproc)}
[ "$jobs" -gt 2 ] && [ -z "${FRESH_JOBS:-}" ] && jobs=2
# Runs a command in the chroot's checkout with the environment of a fresh login (plus CI
# and proxies), no stdin; output to $logs/NAME.log. The stamp of the first compiler line
# (make's "  CC", "  PROTOC"...) goes to $logs/NAME.first.
inside() {
	local name=$1
	shift
	env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LANG=C.UTF-8 TERM=dumb CI="${CI:-}" "${proxy_env[@]}" \
		chroot "$root" /bin/bash -c 'cd /root/kiln && exec "$@"' - "$@" < /dev/null 2>&1 |
		while IFS= read -r line; do
			printf '%s\n' "$line" >> "$logs/$name.log"
			[[ "$line" =~ ^\ \ [A-Z-]+\ \  ]] && [ ! -e "$logs/$name.first" ] && stamp > "$logs/$name.first"
			case $line in ok\ *|skip\ *|RERUN*|FAIL*|FAILED:*|unit:*|e2e:*|installing:*) printf '  %s\n' "$line" ;; esac
		done
	return "${PIPESTATUS[0]}"
}

t0=$(stamp)
if inside make make -j"$jobs"; then rc=0; else rc=$?; fi
t1=$(stamp)
first=$(cat "$logs/make.first" 2>/dev/null || echo "$t1")
phase install $(( first - t0 ))
phase build $(( t1 - first ))
if [ "$rc" -ne 0 ]; then
	tail -n 40 "$logs/make.log"
	echo "fresh: make failed (rc=$rc); log in $logs/make.log"
	echo "fresh: 0 passed, 1 failed, 0 skipped"
	exit 1
fi

t0=$(stamp)
inside unit make -j"$jobs" unit || failed=1
phase unit $(( $(stamp) - t0 ))
t0=$(stamp)
inside e2e make e2e E2E="${FRESH_E2E:-}" || failed=1
phase e2e $(( $(stamp) - t0 ))
# what failed, with cmocka's and run-e2e.sh's own lines on it
grep -E '^\[  (FAILED|ERROR) |^\[   LINE|^FAILED:' "$logs/unit.log" | head -n 60 || true
awk '/^FAIL / { p = 1; print; next } p && /^    \|/ { print; next } { p = 0 }' "$logs/e2e.log" | head -n 120

read -r up uf < <(sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$logs/unit.log")
read -r ep ef es < <(sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped/\1 \2 \3/p' "$logs/e2e.log")
up=${up:-0} uf=${uf:-1} ep=${ep:-0} ef=${ef:-1} es=${es:-0}
total=0
for s in "${phase_secs[@]}"; do total=$((total + s)); done
echo "fresh: phases $(for i in "${!phase_names[@]}"; do printf '%s %ss, ' "${phase_names[i]}" "${phase_secs[i]}"; done)total ${total}s"
echo "fresh: $((up + ep)) passed, $((uf + ef)) failed, $es skipped"
[ "$failed" -eq 0 ] && [ $((uf + ef)) -eq 0 ]
