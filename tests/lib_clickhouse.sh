# Real clickhouse-server processes for the ClickHouse backend's tests and bench, sourced
# after tests/lib.sh (which gives $T and reap). Each server lives in its own directory
# under $T, listens on loopback only, and is stopped when the test exits.
#
#   ch_start NAME [CLUSTER_PEERS...]  starts server NAME; sets CH_HTTP_<NAME> (its HTTP
#                                     port). With peers ("127.0.0.1:TCP_PORT" each, the
#                                     server itself included), remote_servers gets a
#                                     cluster "kiln" of one shard per peer.
#                                     With CH_TLS=1 it serves HTTPS too, on the port in
#                                     $T/ch-NAME/https_port, certificate $T/ch-NAME/cert.pem.
#                                     With CH_ZSTD=1 its parts are compressed with zstd.
#   ch_query NAME SQL                 runs SQL over NAME's HTTP port, prints the answer
#   ch_stop NAME / ch_restart NAME    stops (SIGKILL with KILL=1) / starts it again
#   ch_free_port                      prints a free loopback TCP port
#   ch_pause NAME / ch_resume NAME    stops / continues server NAME's process (SIGSTOP):
#                                     it holds every request until resumed

# ch_need: skips the test when ClickHouse is not installed.
ch_need() {
	command -v clickhouse-server > /dev/null || skip "clickhouse-server is not installed"
	command -v curl > /dev/null || skip "curl is not installed"
}

ch_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ch_config NAME HTTP TCP [PEERS...]: writes $T/ch-NAME/config.xml and users.xml.
ch_config() {
	local name=$1 http=$2 tcp=$3 dir=$T/ch-$1
	shift 3
	mkdir -p "$dir/data" "$dir/tmp" "$dir/log"
	{
		echo "<yandex>"
		echo "  <logger><level>warning</level><log>$dir/log/server.log</log>"
		echo "    <errorlog>$dir/log/error.log</errorlog><console>0</console></logger>"
		echo "  <listen_host>127.0.0.1</listen_host>"
		echo "  <http_port>$http</http_port><tcp_port>$tcp</tcp_port>"
		echo "  <interserver_http_port>$(ch_free_port)</interserver_http_port>"
		echo "  <path>$dir/data/</path><tmp_path>$dir/tmp/</tmp_path>"
		echo "  <users_config>$dir/users.xml</users_config>"
		echo "  <default_profile>default</default_profile>"
		echo "  <default_database>default</default_database>"
		echo "  <mark_cache_size>268435456</mark_cache_size>"
		echo "  <max_concurrent_queries>100</max_concurrent_queries>"
		echo "  <timezone>UTC</timezone>"
		if [ -n "${CH_ZSTD:-}" ]; then	# parts compressed with zstd instead of lz4
			echo "  <compression><case><min_part_size>0</min_part_size>"
			echo "    <min_part_size_ratio>0</min_part_size_ratio><method>zstd</method></case></compression>"
		fi
		if [ -n "${CH_TLS:-}" ]; then	# HTTPS too, with a self-signed certificate for 127.0.0.1
			openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
				-addext subjectAltName=IP:127.0.0.1 -keyout "$dir/key.pem" \
				-out "$dir/cert.pem" > /dev/null 2>&1 || fail "openssl cannot make a certificate"
			echo "  <https_port>$(cat "$dir/https_port")</https_port>"
			echo "  <openSSL><server><certificateFile>$dir/cert.pem</certificateFile>"
			echo "    <privateKeyFile>$dir/key.pem</privateKeyFile><verificationMode>none</verificationMode>"
			echo "    <loadDefaultCAFile>false</loadDefaultCAFile></server></openSSL>"
		fi
		if [ $# -gt 0 ]; then
			echo "  <remote_servers><kiln>"
			for peer in "$@"; do
				echo "    <shard><replica><host>${peer%:*}</host><port>${peer##*:}</port></replica></shard>"
			done
			echo "  </kiln></remote_servers>"
		fi
		echo "</yandex>"
	} > "$dir/config.xml"
	cat > "$dir/users.xml" <<-EOF
	<yandex>
	  <profiles><default><max_memory_usage>4000000000</max_memory_usage></default></profiles>
	  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
	    <profile>default</profile><quota>default</quota></default>
	  <kiln><password>kiln-secret</password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
	    <profile>default</profile><quota>default</quota></kiln></users>
	  <quotas><default></default></quotas>
	</yandex>
	EOF
}

# ch_launch NAME: starts the configured server NAME and waits until it answers.
ch_launch() {
	local name=$1 dir=$T/ch-$1 port pid
	port=$(cat "$dir/http_port")
	clickhouse-server --config-file="$dir/config.xml" > "$dir/log/stdout" 2>&1 &
	pid=$!
	echo "$pid" > "$dir/pid"
	reap "$pid"
	for _ in $(seq 300); do
		if curl -sf "http://127.0.0.1:$port/ping" > /dev/null 2>&1; then
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	tail -n 20 "$dir/log/error.log" "$dir/log/stdout" 2>/dev/null
	fail "clickhouse-server $name did not start"
}

# ch_prepare NAME: picks NAME's ports (CH_HTTP_NAME, CH_TCP_NAME) without starting it, so
# that a cluster's configs can name every peer.
ch_prepare() {
	local name=$1 dir=$T/ch-$1
	mkdir -p "$dir"
	ch_free_port > "$dir/http_port"
	ch_free_port > "$dir/tcp_port"
	ch_free_port > "$dir/https_port"
	eval "CH_HTTP_$name=$(cat "$dir/http_port")"
	eval "CH_TCP_$name=$(cat "$dir/tcp_port")"
}

ch_start() {
	local name=$1 dir=$T/ch-$1
	shift
	[ -e "$dir/http_port" ] || ch_prepare "$name"
	ch_config "$name" "$(cat "$dir/http_port")" "$(cat "$dir/tcp_port")" "$@"
	ch_launch "$name"
}

ch_query() {
	local dir=$T/ch-$1
	curl -sS --fail-with-body "http://127.0.0.1:$(cat "$dir/http_port")/" --data-binary "$2" 2>&1 ||
		curl -sS "http://127.0.0.1:$(cat "$dir/http_port")/" --data-binary "$2"
}

ch_stop() {
	local dir=$T/ch-$1 pid
	pid=$(cat "$dir/pid")
	local sig=TERM
	[ -n "${KILL:-}" ] && sig=KILL
	kill "-$sig" "$pid" 2>/dev/null
	for _ in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
}

ch_restart() {
	ch_launch "$1"
}

ch_pause() {
	kill -STOP "$(cat "$T/ch-$1/pid")"
}

ch_resume() {
	kill -CONT "$(cat "$T/ch-$1/pid")"
}

# ch_kiln NAME ARGS...: starts `kiln serve ARGS` on a free loopback port; sets KURL_<NAME>
# (ending in /) and KPID_<NAME>, output in $T/kiln-NAME.{out,err}.
ch_kiln() {
	local name=$1 url pid
	shift
	"$KILN" serve --listen 127.0.0.1:0 "$@" > "$T/kiln-$name.out" 2> "$T/kiln-$name.err" &
	pid=$!
	reap "$pid"
	eval "KPID_$name=$pid"
	for _ in $(seq 150); do
		url=$(grep -o 'http://[^ ]*' "$T/kiln-$name.out" 2>/dev/null)
		if [ -n "$url" ]; then
			eval "KURL_$name=$url"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$T/kiln-$name.err"
	fail "kiln server $name did not start"
}

# ch_cluster A B: starts ClickHouse servers A and B as the two shards of cluster "kiln"
# and sets CH_CLUSTER_URL, the location of a kiln store on it (database $3, default kiln).
ch_cluster() {
	ch_prepare "$1"
	ch_prepare "$2"
	local pa pb
	pa=127.0.0.1:$(cat "$T/ch-$1/tcp_port")
	pb=127.0.0.1:$(cat "$T/ch-$2/tcp_port")
	ch_start "$1" "$pa" "$pb"
	ch_start "$2" "$pa" "$pb"
	CH_CLUSTER_URL="clickhouse://127.0.0.1:$(cat "$T/ch-$1/http_port"),127.0.0.1:$(cat "$T/ch-$2/http_port")/${3:-kiln}?cluster=kiln"
}

# ch_burst URL SERVICE N FROM UNTIL: N agents upload at once, agent i the folded stacks
# "main;b<i> <i>" and "main;shared 1" in its own series (host=b<i>), each its status and
# answer in $T/burst/<i>.{code,body}; returns when every upload has an answer.
ch_burst() {
	local url=$1 service=$2 n=$3 from=$4 until=$5 i pids=()
	mkdir -p "$T/burst"
	for i in $(seq "$n"); do
		printf 'main;b%d %d\nmain;shared 1\n' "$i" "$i" |
			curl -s -m 120 -o "$T/burst/$i.body" -w '%{http_code}' -X POST --data-binary @- \
			"${url}ingest?name=$service%7Bhost%3D%22b$i%22%7D&from=$from&until=$until&spyName=ebpfspy&sampleRate=99" \
			> "$T/burst/$i.code" &
		pids+=($!)
		reap $!
	done
	for i in "${pids[@]}"; do
		wait "$i"
	done
}

# ch_burst_stored URL SERVICE I...: fails unless the render of SERVICE holds, for each
# agent I of ch_burst, its own stack once with its count, and the common stack once per
# agent named (nothing of any other agent).
ch_burst_stored() {
	local url=$1 service=$2 i n
	shift 2
	curl -sf "${url}pyroscope/render?query=$service&from=now-1h&until=now&format=collapsed" > "$T/burst.col" ||
		fail "render failed"
	for i in "$@"; do
		grep -qx "main;b$i $i" "$T/burst.col" || fail "upload $i: $(grep "^main;b$i " "$T/burst.col" | tr '\n' ' ')(want 'main;b$i $i' once)"
	done
	n=$(grep -c '^main;b' "$T/burst.col")
	[ "$n" = $# ] || fail "$n uploads' stacks stored, want $#"
	grep -qx "main;shared $#" "$T/burst.col" ||
		fail "the common stack has '$(grep '^main;shared ' "$T/burst.col")' (want $#: one per upload)"
}

# ch_upload_pyroscope URL NAME FROM UNTIL < FOLDED: a Pyroscope /ingest of folded stacks.
# Prints the HTTP status.
ch_upload_pyroscope() {
	curl -s -o "$T/ingest.reply" -w '%{http_code}' -X POST --data-binary @- \
		"${1}ingest?name=$2&from=$3&until=$4&spyName=ebpfspy&sampleRate=99"
}
