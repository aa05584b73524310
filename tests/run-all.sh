#!/usr/bin/env bash
# run-all.sh UNIT_BIN... — the whole suite: unit tests, then end-to-end tests.
# The last line is the total, "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/.."
./tests/run-unit.sh "$@" | tee build/unit.out
./tests/run-e2e.sh | tee build/e2e.out
read -r up uf < <(sed -n 's/^unit: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' build/unit.out)
read -r ep ef es < <(sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped/\1 \2 \3/p' build/e2e.out)
up=${up:-0} uf=${uf:-1} ep=${ep:-0} ef=${ef:-1} es=${es:-0}
echo "total: $((up + ep)) passed, $((uf + ef)) failed, $es skipped"
[ $((uf + ef)) -eq 0 ]
