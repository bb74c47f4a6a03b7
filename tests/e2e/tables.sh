#!/usr/bin/env bash
# CFI tables beyond one row array, and over --unwind-memory (docs/bpf.md 7). stkrec creates the
# walker's row arrays ("chunks", 1 MiB) as tables need them; a table larger than a chunk gets
# an array of its own. gcc's cc1 has no frame pointers and a 3.7 MiB table (478,579 rows on
# Debian 12), with ten libraries beside it: a compile needs two arrays or more, and 99 Hz
# samples of it still reach main through cc1's own frames. With --unwind-memory 2 cc1's table
# fits nowhere: a warning, the stats line counts it, and its stacks are counted as cut there.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

cc1=$(gcc -print-prog-name=cc1 2>/dev/null)
if [ ! -x "$cc1" ]; then
	skip tables.sh "gcc's cc1 not found (gcc -print-prog-name=cc1: '$cc1'): no big table"
	exit 0
fi
# 120 functions: about 1.5 s of cc1 at -O2
for ((i = 0; i < 120; i++)); do
	echo "int f$i(int *a, int n) { int s = 0; for (int i = 0; i < n; i++)" \
		"s += a[i] * $i + (a[(i + $i) % n] >> 3); if (s > $i) s -= f$((i ? i - 1 : 0))(a, n - 1);" \
		"return s; }"
done >"$tmp/big.c"
compile=("$cc1" -quiet -O2 "$tmp/big.c" -o /dev/null)

# `stkrec: unwind tables: O objects, R rows, X of Y MiB in N arrays (...)...`: "R N"
rows_arrays() {
	sed -nE 's/^stkrec: unwind tables: [0-9]+ objects, ([0-9]+) rows, .* in ([0-9]+) arrays? .*/\1 \2/p' \
		"$tmp/$1.err"
}

# -- COMMAND: cc1 and nothing else, whatever else the host compiles meanwhile.
rec big -q -F 499 -o "$tmp/big.stk" -- "${compile[@]}"
check_eq tables.big.exit 0 $? "$tmp/big.err"
read -r rows arrays < <(rows_arrays big)
check_true tables.big.arrays "cc1's tables in 2 arrays or more, over 131072 rows (one array),\
 got ${arrays:-none} arrays, ${rows:-no} rows" test "${arrays:-0}" -ge 2 -a "${rows:-0}" -gt 131072 ||
	show "$tmp/big.err"
folded big "$tmp/big.stk" -P
check_share tables.big "$tmp/big.rep" '^cc1;' '^cc1;_start;[^ ]*;main;toplev::main' 200 90 \
	"reach main through cc1's frames" "$tmp/big.stk"

rec limit -q -F 499 --unwind-memory 2 -o "$tmp/limit.stk" -- "${compile[@]}"
check_eq tables.limit.exit 0 $? "$tmp/limit.err"
check_true tables.limit.warning "a warning that --unwind-memory is full" \
	grep -q '^stkrec: warning: --unwind-memory is full' "$tmp/limit.err" || show "$tmp/limit.err"
check_true tables.limit.stats "the stats line to count objects over --unwind-memory" \
	grep -qE '^stkrec: unwind tables: .*; [1-9][0-9]* objects over --unwind-memory$' \
	"$tmp/limit.err" || show "$tmp/limit.err"
report limit "$tmp/limit.stk" -f -P	# not -q: the loss lines of the summary are the point
all=$(sum_folded "$tmp/limit.rep" '^cc1;')
cut=$(lost_count "$tmp/limit.rerr" 'user stacks cut: unwind table over --unwind-memory')
check_true tables.limit.counted "at least half of $all cc1 samples counted as cut by the table\
 limit, got $cut" test $((cut * 2)) -ge "$all" -a "$all" -ge 200 ||
	show "$tmp/limit.rerr"
e2e_done
