#!/usr/bin/env bash
# gen-assets.sh OUT.S FILE... — embeds UI files into the binary with .incbin.
# Each file becomes an entry of kiln_assets[] (see src/ui/assets.h), named by its base name.
set -euo pipefail
out=$1; shift
{
	echo '	.section .rodata'
	i=0
	for f in "$@"; do
		echo "	.balign 16"
		echo "asset_${i}_data:"
		echo "	.incbin \"$(readlink -f "$f")\""
		echo "asset_${i}_end:"
		echo "	.byte 0"
		echo "asset_${i}_name:"
		echo "	.asciz \"$(basename "$f")\""
		i=$((i + 1))
	done
	echo '	.section .data.rel.ro'
	echo '	.balign 8'
	echo '	.globl kiln_assets'
	echo 'kiln_assets:'
	for ((j = 0; j < i; j++)); do
		echo "	.quad asset_${j}_name, asset_${j}_data, asset_${j}_end - asset_${j}_data"
	done
	echo '	.quad 0, 0, 0'
	echo '	.section .note.GNU-stack,"",@progbits'
} > "$out"
