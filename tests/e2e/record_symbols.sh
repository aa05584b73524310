#!/usr/bin/env bash
# Stripped binaries named from what distributions ship beside them: MiniDebugInfo (Fedora's
# .gnu_debugdata) and a separate debug file found by .gnu_debuglink; C++ names demangled.
. "$(dirname "$0")/../lib.sh"
. "$ROOT/tests/workloads/lib.sh"
command -v g++ >/dev/null || skip "no C++ compiler (Debian package g++)"
cxx="g++ -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls"
# built once (build/workloads), stripped copies made here
if [ ! -x "$WB/cxxspin" ] || [ "$W/cxxspin.cc" -nt "$WB/cxxspin" ]; then
	$cxx -o "$WB/cxxspin" "$W/cxxspin.cc" &&
		$cxx -Wl,--build-id=none -o "$WB/cxxspin-nobid" "$W/cxxspin.cc" ||
		fail "failed to build cxxspin"
fi
cp "$WB/cxxspin" "$T/cxxspin-mini" && cp "$WB/cxxspin-nobid" "$T/cxxspin-dl" || fail "cp failed"
cd "$T" || fail "no scratch dir"
# MiniDebugInfo as Fedora builds it: the function symbols .dynsym lacks, xz-compressed.
nm -D cxxspin-mini --format=posix --defined-only | awk '{print $1}' | sort >dynsyms
nm cxxspin-mini --format=posix --defined-only | awk '$2 ~ /[Tt]/ {print $1}' | sort >funcsyms
comm -13 dynsyms funcsyms >keep
objcopy --only-keep-debug cxxspin-mini mini.debug &&
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols=keep mini.debug mini.small && xz -f mini.small &&
	strip --strip-all cxxspin-mini &&
	objcopy --add-section .gnu_debugdata=mini.small.xz cxxspin-mini || fail "objcopy failed"
# A debuglink (and no build-id, so that only the link can find the file).
objcopy --only-keep-debug cxxspin-dl cxxspin-dl.debug && strip --strip-all cxxspin-dl &&
	objcopy --add-gnu-debuglink=cxxspin-dl.debug cxxspin-dl || fail "objcopy failed"
for b in cxxspin-mini cxxspin-dl; do
	nm "$b" 2>&1 | grep -q 'no symbols' || fail "$b still has a symbol table"
done
./cxxspin-mini 30 & mini=$!
reap $mini
./cxxspin-dl 30 & dl=$!
reap $dl
cd "$ROOT" || fail "no root"
record -d 3 -f 199 --perf-mode fp --no-flamegraph --pids "$mini,$dl"
for comm in cxxspin-mini cxxspin-dl; do
	colcheck frac "$COL" "$comm" '^shapes::Circle::area\(int\) const$' 0.2 ||
		fail "$comm: the C++ method is not named and demangled"
	colcheck frac "$COL" "$comm" '^spin_static\(int\)$' 0.2 || fail "$comm: the static function is not named"
	colcheck frac "$COL" "$comm" '^main$' 0.8 || fail "$comm: main missing under the leaves"
done
pass
