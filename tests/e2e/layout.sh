#!/usr/bin/env bash
# Report layouts on real captures: bcc stackcount's stack list (leaf first, count under it), -P,
# -v, -s, -d, -T, --tree; several SPECs in one run, each attributed; -D.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

bin=$WL/wl_uprobe
n=4321
rec lu -q -o "$tmp/lu.stk" "$bin:wl_target" -- "$bin" "$n"
check_eq layout.rec_exit 0 $? "$tmp/lu.err"

# Default: "  wl_target", "  wl_middle", "  wl_outer", "  main", the C library's start frames
# (its static __libc_start_call_main is "[unknown]" where the host has no debug file for libc),
# "  _start", "    4321", "".
folded luf "$tmp/lu.stk"
above_main=$(awk -F';' '/;main;wl_outer;/ { for (i = 2; i <= NF; i++) if ($i == "main") {
	print $(i - 1); exit } }' "$tmp/luf.rep")
check_true layout.above_main "__libc_start_call_main or [unknown] above main, got '$above_main'" \
	grep -qxE '__libc_start_call_main|\[unknown\]' <<<"$above_main"
start_main=$(awk -F';' '/;main;wl_outer;/ { print $3; exit }' "$tmp/luf.rep")
report def "$tmp/lu.stk" -q
check_eq layout.default.exit 0 $? "$tmp/def.rerr"
got=$(awk '/^  wl_target$/ { p = 1 } p { print } p && /^$/ { exit }' "$tmp/def.rep" |
	tr '\n' '|')
check_eq layout.default.stack \
	"  wl_target|  wl_middle|  wl_outer|  main|  $above_main|  $start_main|  _start|    $n||" \
	"$got" "$tmp/def.rep"
# bcc prints one blank line before the stacks.
check_eq layout.default.head "|  wl_target|" "$(head -2 "$tmp/def.rep" | tr '\n' '|')" "$tmp/def.rep"

# -P: `    comm [pid]` between the frames and the count.
report perpid "$tmp/lu.stk" -q -P
check_true layout.perpid "'  main', frames, '    wl_uprobe [PID]', '    $n'" \
	awk -v n="    $n" '/^  main$/ { m = 1 } m && /^    / { l[++k] = $0 }
		END { exit !(l[1] ~ /^    wl_uprobe \[[0-9]+\]$/ && l[2] == n) }' "$tmp/perpid.rep" ||
	show "$tmp/perpid.rep"

# -v: raw address before the symbol (`  %-16x %s`).
report verbose "$tmp/lu.stk" -q -v
check_true layout.verbose "a line '  <hex address, 16 wide> wl_target'" \
	grep -qE '^  [0-9a-f]{12,16} {1,5}wl_target$' "$tmp/verbose.rep" || show "$tmp/verbose.rep"
addr=$(awk '$2 == "wl_target" { print $1; exit }' "$tmp/verbose.rep")
sym=$(nm "$bin" | awk '$3 == "wl_target" { print $1 }')
# PIE: the low 12 bits of the runtime address are those of the symbol (page-aligned mapping).
check_eq layout.verbose.address "${sym: -3}" "${addr: -3}" "$tmp/verbose.rep"

# -s: symbol+offset; the uprobe fires at the first byte of wl_target.
report off "$tmp/lu.stk" -q -s
check_true layout.offset "'  wl_target+0x0' with -s" grep -qx '  wl_target+0x0' "$tmp/off.rep" ||
	show "$tmp/off.rep"
check_true layout.offset_caller "'  wl_middle+0x<hex>' with -s" \
	grep -qE '^  wl_middle\+0x[0-9a-f]+$' "$tmp/off.rep" || show "$tmp/off.rep"

# --tree: the chain from the root down with counts.
report tree "$tmp/lu.stk" -q --tree
check_eq layout.tree.exit 0 $? "$tmp/tree.rerr"
check_true layout.tree.leaf "wl_target with its count $n in --tree" \
	grep -qE "wl_target.*\b$n\b|\b$n\b.*wl_target" "$tmp/tree.rep" || show "$tmp/tree.rep"
check_true layout.tree.order "main before wl_outer before wl_target in --tree" \
	awk '/main/ && !m { m = NR } /wl_outer/ && !o { o = NR } /wl_target/ && !t { t = NR }
		END { exit !(m && o && t && m < o && o < t) }' "$tmp/tree.rep"

# A tracepoint capture has kernel and user stacks: -d puts `    --` between them.
rec lt -q -o "$tmp/lt.stk" t:syscalls:sys_enter_getppid -- "$WL/wl_syscall" 500
check_eq layout.tp_rec_exit 0 $? "$tmp/lt.err"
report delim "$tmp/lt.stk" -q -d
check_true layout.delimited "'    --' right before '  wl_getppid'" \
	grep -B1 -x '  wl_getppid' "$tmp/delim.rep" | grep -qx '    --' || show "$tmp/delim.rep"
report nodelim "$tmp/lt.stk" -q
check_true layout.kernel_first "kernel frames before '  wl_getppid' (leaf first)" \
	grep -B1 -x '  wl_getppid' "$tmp/nodelim.rep" | grep -qvx '  wl_getppid' || show "$tmp/nodelim.rep"
check_true layout.no_delimiter_by_default "no '    --' without -d" \
	bash -c "! grep -qx '    --' '$tmp/nodelim.rep'"

# -T: a HH:MM:SS header, then the stacks.
report ts "$tmp/lt.stk" -q -T
check_true layout.timestamp "a HH:MM:SS line with -T" grep -qE '^[0-9]{2}:[0-9]{2}:[0-9]{2} *$' \
	"$tmp/ts.rep" || show "$tmp/ts.rep"

# Sort order: least to most frequent. Two processes, 200 and 900 events, one capture (-P).
wl_bg so.a "$WL/wl_syscall" -w -v 200
a=$WL_PID ja=$WL_JOB
wl_bg so.b "$WL/wl_syscall" -w -v 900
b=$WL_PID jb=$WL_JOB
rec_bg so -q -p "$a,$b" -o "$tmp/so.stk" t:syscalls:sys_enter_getppid
if rec_ready so; then
	kill -USR1 "$a" "$b"
	wait "$ja" "$jb"
	sleep 0.3
	rec_signal INT "$REC_PID"
	rec_wait "$REC_PID"
	report so "$tmp/so.stk" -q -P
	check_eq layout.sorted "200 900" "$(grep -E '^    [0-9]+$' "$tmp/so.rep" | tr -d ' ' | tr '\n' ' ' |
		sed 's/ $//')" "$tmp/so.rep"
else
	not_ok layout.sorted.ready "a 'Tracing' line within 20 s"
fi

# Several SPECs in one run (tracepoint + uprobe), each count attributed to its own chain.
wl_bg ms.s "$WL/wl_syscall" -w -v 1500
s=$WL_PID js=$WL_JOB
wl_bg ms.u "$bin" -w -v 2500
u=$WL_PID ju=$WL_JOB
rec_bg ms -q -p "$s,$u" -o "$tmp/ms.stk" t:syscalls:sys_enter_getppid "$bin:wl_target"
if rec_ready ms; then
	check_eq multi.tracing_lines 2 "$(grep -c '^Tracing 1 functions for ' "$tmp/ms.err")" "$tmp/ms.err"
	kill -USR1 "$s" "$u"
	wait "$js" "$ju"
	sleep 0.3
	rec_signal INT "$REC_PID"
	rec_wait "$REC_PID"
	check_eq multi.exit 0 $? "$tmp/ms.err"
	folded ms "$tmp/ms.stk"
	check_eq multi.tracepoint 1500 "$(sum_folded "$tmp/ms.rep" "$(chain wl_getppid)")" "$tmp/ms.rep"
	check_eq multi.uprobe 2500 "$(sum_folded "$tmp/ms.rep" "$(chain wl_target)")" "$tmp/ms.rep"
	check_eq multi.total 4000 "$(sum_folded "$tmp/ms.rep")" "$tmp/ms.rep"
	# The summary attributes each probe's events to it: probe 0 is the first SPEC.
	report msum "$tmp/ms.stk" -f
	check_eq multi.summary_probe0 1 "$(grep -c -x \
		'# probe 0: t:syscalls:sys_enter_getppid (tracepoint, 1 attached): 1500 events' \
		"$tmp/msum.rerr")" "$tmp/msum.rerr"
	check_eq multi.summary_probe1 1 "$(grep -c -x \
		"# probe 1: $bin:wl_target (uprobe, 1 attached): 2500 events" "$tmp/msum.rerr")" \
		"$tmp/msum.rerr"
else
	not_ok multi.ready "a 'Tracing' line within 20 s"
	show "$tmp/ms.err"
fi

# -D: the recording stops by itself, cleanly.
start=$(date +%s%N)
rec dur -q -D 2 -o "$tmp/dur.stk" t:syscalls:sys_enter_getppid
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
check_eq duration.exit 0 "$rc" "$tmp/dur.err"
check_true duration.time "stopped after 2 s (1.9-6 s), took ${ms} ms" test "$ms" -ge 1900 -a "$ms" -le 6000
report dur "$tmp/dur.stk" -f
check_eq duration.report_exit 0 $? "$tmp/dur.rerr"
e2e_done
