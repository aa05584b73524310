#!/usr/bin/env bash
# Runs libFuzzer harnesses one at a time (nice'd), each from its seeds in
# fuzz/corpus/<name>/ (the in-tree corpus: small seeds and every crash input found, kept as
# regression tests) plus the corpus it grew before (build/fuzz/corpus/<name>/).
#   fuzz/run.sh [--smoke] [--only PATTERN] BIN...
# FUZZ_SECONDS (600) per harness; --smoke: every seed once, then 60 s shared by all.
# A crash, leak or timeout is copied into fuzz/corpus/<name>/ as crash-<sha1> and fails
# the run. Prints per harness: execs, coverage (edges), features, corpus size, findings.
set -u
cd "$(dirname "$0")/.."
smoke=0 only=
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) smoke=1; shift ;;
	--only) only=$2; shift 2 ;;
	*) break ;;
	esac
done
bins=()
for b in "$@"; do
	[ -n "$only" ] && [[ $(basename "$b") != *$only* ]] && continue
	bins+=("$b")
done
[ ${#bins[@]} -gt 0 ] || { echo "fuzz: no harness matches" >&2; exit 1; }
secs=${FUZZ_SECONDS:-600}
[ $smoke = 1 ] && secs=$(( 60 / ${#bins[@]} > 2 ? 60 / ${#bins[@]} : 2 ))
failed=0
printf '%-12s %10s %8s %8s %7s %s\n' harness execs cov ft corpus findings
for b in "${bins[@]}"; do
	name=$(basename "$b"); name=${name#fuzz_}
	seeds=fuzz/corpus/$name work=build/fuzz/corpus/$name crashes=build/fuzz/crashes/$name
	mkdir -p "$seeds" "$work" "$crashes"
	log=build/fuzz/$name.log
	dict=(); [ -f "fuzz/$name.dict" ] && dict=(-dict="fuzz/$name.dict")
	# every kept input first: a regression of an old crash fails here
	if ! "$b" -runs=0 -rss_limit_mb=2048 -timeout=10 "${dict[@]}" "$seeds" > "$log.seeds" 2>&1; then
		echo "$name: a seed in $seeds fails:"; tail -n 30 "$log.seeds"; failed=1
		continue
	fi
	nice -n 10 "$b" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$crashes/" "${dict[@]}" "$work" "$seeds" \
		> "$log" 2>&1
	rc=$?
	stats=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
	cov=$(grep -o 'cov: [0-9]*' <<< "$stats" | grep -o '[0-9]*')
	ft=$(grep -o 'ft: [0-9]*' <<< "$stats" | grep -o '[0-9]*')
	corp=$(grep -o 'corp: [0-9]*' <<< "$stats" | grep -o '[0-9]*')
	found=0
	for c in "$crashes"/*; do
		[ -f "$c" ] || continue
		found=$((found + 1))
		cp "$c" "$seeds/crash-$(sha1sum "$c" | cut -c1-16)"
		rm -f "$c"
	done
	printf '%-12s %10s %8s %8s %7s %s\n' "$name" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
		"${corp:-?}" "$([ $found -gt 0 ] || [ $rc -ne 0 ] && echo "$found crash(es), rc $rc: see $log" || echo none)"
	if [ $found -gt 0 ] || [ $rc -ne 0 ]; then
		grep -m1 -A12 -E 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error' "$log"
		failed=1
	fi
done
exit $failed
