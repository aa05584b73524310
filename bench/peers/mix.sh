# bench/peers/mix.sh — the busy host of bench/peers.sh and bench/selfcost.sh, sourced.
# Needs ROOT (the tree), T (a scratch dir), PEERS (bench/peers), JDK (JDK 17's bin) set;
# builds the workloads into $T/w, then start_mix SECONDS / stop_mix; pids in $T/pids, one
# line in $T/compiles per compile done.
W=$T/w
mkdir -p "$W"
cc -O2 -fomit-frame-pointer -o "$W/pw_deep" tests/workloads/unwind_deep.c
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -o "$W/probe" "$PEERS/probe.c"
(cd tests/workloads/goleaf && GOFLAGS=-buildvcs=false go build -o "$W/pw_go" .) || exit 1
"$JDK/javac" -d "$W" tests/workloads/JavaRatio.java || exit 1
# each workload runs under a name of its own: kiln's .col names processes, not pids
ln -s "$(readlink -f /usr/bin/python3)" "$W/pw_python"
ln -s "$(readlink -f "$(command -v ruby)")" "$W/pw_ruby"
ln -s "$JDK/java" "$W/pw_java"
ln -s "$(readlink -f "$(command -v node)")" "$W/pw_node"

start() {	# name cmd...: in a session of its own, killed as a group
	local name=$1
	shift
	setsid "$@" >/dev/null 2>&1 &
	MIX+=("$!")
	[ "$name" = - ] || echo "$name $!" >>"$T/pids"
}

start_mix() {	# seconds
	local s=$(($1 + 60))
	: >"$T/pids"
	MIX=()
	start deep "$W/pw_deep" "$s"
	start python "$W/pw_python" tests/workloads/python_ratio.py "$s"
	start ruby "$W/pw_ruby" tests/workloads/ruby_ratio.rb "$s"
	start java "$W/pw_java" -cp "$W" JavaRatio "$s"
	start go "$W/pw_go" "$s"
	start node "$W/pw_node" "$PEERS/node_work.js" "$s"
	: >"$T/compiles"
	start - bash -c "end=\$((SECONDS + $s)); while [ \$SECONDS -lt \$end ]; do
		g++ -O2 -c $ROOT/tests/workloads/exec_compile.cc -o $T/cc.o; echo >>$T/compiles; done"
	# the JVM's busy thread runs and has been compiled a little
	local jvm i
	jvm=$(awk '$1 == "java" {print $2}' "$T/pids")
	for i in $(seq 100); do
		grep -qx 'kiln-busy-worke' /proc/"$jvm"/task/*/comm 2>/dev/null && break
		sleep 0.1
	done
	sleep 2
}

stop_mix() {
	local p
	for p in "${MIX[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
	for p in "${MIX[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
	for p in "${MIX[@]}"; do wait "$p" 2>/dev/null; done
	MIX=()
}
