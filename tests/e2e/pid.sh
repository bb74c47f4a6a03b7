#!/usr/bin/env bash
# -p and -L keep only the chosen process: two instances of a workload fire different numbers of
# events while stkrec follows one of them; the count must be exactly that one's.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

# pid_case NAME SPEC BIN LEAF FILTER_OPT: instance A fires 3000 events, B 5000; stkrec follows A.
pid_case() {
	local name=$1 spec=$2 bin=$3 leaf=$4 opt=$5 a b ja jb
	wl_bg "$name.a" "$bin" -w -v 3000
	a=$WL_PID ja=$WL_JOB
	wl_bg "$name.b" "$bin" -w -v 5000
	b=$WL_PID jb=$WL_JOB
	rec_bg "$name" -q "$opt" "$a" -o "$tmp/$name.stk" "$spec"
	if ! rec_ready "$name"; then
		not_ok "$name.ready" "a 'Tracing' line within 20 s"
		show "$tmp/$name.err"
		kill -KILL "$a" "$b" 2>/dev/null
		return
	fi
	kill -USR1 "$a" "$b"
	wait "$ja" "$jb"
	sleep 0.3
	rec_signal INT "$REC_PID"
	rec_wait "$REC_PID"
	check_eq "$name.exit" 0 $? "$tmp/$name.err"
	folded "$name" "$tmp/$name.stk"
	check_eq "$name.count" 3000 "$(sum_folded "$tmp/$name.rep" "$(chain "$leaf")")" "$tmp/$name.rep"
	# -P: one entry per process, `    comm [pid]` under each stack: only A's pid.
	report "$name.P" "$tmp/$name.stk" -q -P
	check_true "$name.perpid_a" "a line '    ${bin##*/} [$a]' in stkreport -P" \
		grep -qx "    ${bin##*/} \[$a\]" "$tmp/$name.P.rep" || show "$tmp/$name.P.rep"
	check_true "$name.perpid_not_b" "no line for pid $b in stkreport -P" \
		bash -c "! grep -q '\[$b\]' '$tmp/$name.P.rep'"
}

tp=t:syscalls:sys_enter_getppid
pid_case pid.tracepoint "$tp" "$WL/wl_syscall" wl_getppid -p
pid_case pid.uprobe "$WL/wl_uprobe:wl_target" "$WL/wl_uprobe" wl_target -p
pid_case tid.tracepoint "$tp" "$WL/wl_syscall" wl_getppid -L

# -p with two pids: both counted, nothing else.
wl_bg two.a "$WL/wl_syscall" -w -v 1000
a=$WL_PID ja=$WL_JOB
wl_bg two.b "$WL/wl_syscall" -w -v 2000
b=$WL_PID jb=$WL_JOB
wl_bg two.c "$WL/wl_syscall" -w -v 4000
c=$WL_PID jc=$WL_JOB
rec_bg two -q -p "$a,$b" -o "$tmp/two.stk" "$tp"
if rec_ready two; then
	kill -USR1 "$a" "$b" "$c"
	wait "$ja" "$jb" "$jc"
	sleep 0.3
	rec_signal INT "$REC_PID"
	rec_wait "$REC_PID"
	check_eq pid.list.exit 0 $? "$tmp/two.err"
	folded two "$tmp/two.stk"
	check_eq pid.list.count 3000 "$(sum_folded "$tmp/two.rep" "$(chain wl_getppid)")" "$tmp/two.rep"
else
	not_ok pid.list.ready "a 'Tracing' line within 20 s"
	show "$tmp/two.err"
fi
e2e_done
