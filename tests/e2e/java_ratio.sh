#!/usr/bin/env bash
# Java frames under JDK 17: the known-answer JavaRatio program (alpha 75% / beta 25% of a
# busy thread, through a call chain) profiled by libkiln-jvm.so attached at run time.
# e2e: sampled
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/java_env.sh"
need_root
java_setup
ratio_test "$JDK17/bin/java"
pass "JDK 17"
