#!/usr/bin/env bash
# The same known answer as java_ratio.sh under the newest JDK above 17 on the machine
# (Temurin 25 on the CI image).
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/java_env.sh"
need_root
java_setup
jdk=$(newer_jdk)
[ -n "$jdk" ] || skip "no JDK newer than 17 in /usr/lib/jvm"
"$jdk/bin/java" -version 2>&1 | head -1
ratio_test "$jdk/bin/java"
pass "$(basename "$jdk")"
