# unwind_check.awk -v need=F1,F2 [-v only=F] [-v a=LEAF_A -v b=LEAF_B] FILE.col
# Reads a kiln .col profile and prints "total complete leaf_a leaf_b":
#   total     samples in the file (with only: those whose stack holds frame F)
#   complete  samples whose stack holds every frame named in need (exact names)
#   leaf_a/b  samples whose innermost user frame is a / b (kernel "_[k]" frames skipped)
# Stack lines are "<app index>;<container>;<process>;<frame>;...;<leaf> <count>".
BEGIN { nneed = split(need, want, ",") }
/^#/ { next }
{
	count = $NF
	stack = substr($0, 1, length($0) - length($NF) - 1)
	n = split(stack, f, ";")
	if (only != "") {
		for (i = 4; i <= n && f[i] != only; i++)
			;
		if (i > n)
			next
	}
	total += count
	ok = 0
	for (w = 1; w <= nneed; w++)
		for (i = 4; i <= n; i++)
			if (f[i] == want[w]) { ok++; break }
	if (ok == nneed)
		complete += count
	leaf = n
	while (leaf > 4 && f[leaf] ~ /_\[k\]$/)
		leaf--
	if (a != "" && f[leaf] == a) la += count
	if (b != "" && f[leaf] == b) lb += count
}
END { printf "%d %d %d %d\n", total, complete, la, lb }
