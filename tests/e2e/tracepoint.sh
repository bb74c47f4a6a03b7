#!/usr/bin/env bash
# Tracepoint t:syscalls:sys_enter_getppid on wl_syscall: exact counts (one interval and several),
# the symbolized user chain and kernel frames under it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

tp=t:syscalls:sys_enter_getppid
kre='(do_syscall_64|entry_SYSCALL_64|syscall_trace_enter|x64_sys_call)'

# One run, one interval.
n=20000
rec tp -q -o "$tmp/tp.stk" "$tp" -- "$WL/wl_syscall" "$n"
check_eq tp.exit 0 $? "$tmp/tp.err"
check_eq tp.rec_events "$n" "$(rec_events tp)" "$tmp/tp.err"
folded tp "$tmp/tp.stk"
check_eq tp.report_exit 0 $? "$tmp/tp.rerr"
check_eq tp.count "$n" "$(sum_folded "$tmp/tp.rep")" "$tmp/tp.rep"
# stackcount's -f: the comm field is empty without -P, the comm (no pid) with it
check_eq tp.no_comm "$n" "$(sum_folded "$tmp/tp.rep" '^;')" "$tmp/tp.rep"
folded tp_p "$tmp/tp.stk" -P
check_eq tp.comm "$n" "$(sum_folded "$tmp/tp_p.rep" '^wl_syscall;')" "$tmp/tp_p.rep"
check_eq tp.user_chain "$n" "$(sum_folded "$tmp/tp.rep" "$(chain wl_getppid)")" "$tmp/tp.rep"
# Folded: user frames, then kernel frames from the syscall entry down to the tracepoint.
check_eq tp.kernel_frames "$n" \
	"$(sum_folded "$tmp/tp.rep" ";wl_getppid;(.*;)?$kre;")" "$tmp/tp.rep"
check_eq tp.mode 600 "$(stat -c %a "$tmp/tp.stk" 2>/dev/null)"

# -K and -U at report time keep the count and drop the other side.
folded tp_k "$tmp/tp.stk" -K
check_eq tp.report_K.count "$n" "$(sum_folded "$tmp/tp_k.rep")" "$tmp/tp_k.rep"
check_eq tp.report_K.no_user 0 "$(sum_folded "$tmp/tp_k.rep" 'wl_getppid|main')" "$tmp/tp_k.rep"
folded tp_u "$tmp/tp.stk" -U
check_eq tp.report_U.count "$n" "$(sum_folded "$tmp/tp_u.rep")" "$tmp/tp_u.rep"
check_eq tp.report_U.no_kernel 0 "$(sum_folded "$tmp/tp_u.rep" "$kre")" "$tmp/tp_u.rep"

# -K at record time: kernel stacks only.
rec tpk -q -K -o "$tmp/tpk.stk" "$tp" -- "$WL/wl_syscall" "$n"
check_eq tp.rec_K.exit 0 $? "$tmp/tpk.err"
folded tpk "$tmp/tpk.stk"
check_eq tp.rec_K.count "$n" "$(sum_folded "$tmp/tpk.rep" "$kre")" "$tmp/tpk.rep"
check_eq tp.rec_K.no_user 0 "$(sum_folded "$tmp/tpk.rep" 'wl_getppid|main')" "$tmp/tpk.rep"

# -- COMMAND that execs: the new program keeps the pid and stays recorded (ptrace must not
# turn the second exec's SIGTRAP into a fatal signal).
rec tpx -q -o "$tmp/tpx.stk" "$tp" -- sh -c "exec '$WL/wl_syscall' -v 777"
check_eq tp.cmd_exec.exit 0 $? "$tmp/tpx.err"
check_true tp.cmd_exec.ran "the exec'd workload ran (printed its pid)" grep -q '^pid ' "$tmp/tpx.out"
folded tpx "$tmp/tpx.stk" -P	# the comm of the exec'd program leads with -P
check_eq tp.cmd_exec.count 777 "$(sum_folded "$tmp/tpx.rep" "^wl_syscall;.*$(chain wl_getppid)")" \
	"$tmp/tpx.rep"

# A stack map of one entry: stacks are lost, events are not; the summary says how many. -p on a
# waiting workload, so that BPF stores the stacks itself (a deferred event's user stack never
# goes through the map).
wl_bg tpl "$WL/wl_syscall" -w -v 500
rec_bg tpl -q --stack-storage-size 1 -p "$WL_PID" -o "$tmp/tpl.stk" "$tp"
rec_ready tpl && wl_release
rec_signal INT "$REC_PID"
rec_wait "$REC_PID"
check_eq tp.losses.exit 0 $? "$tmp/tpl.err"
report tpl "$tmp/tpl.stk" -f
check_eq tp.losses.count 500 "$(sum_folded "$tmp/tpl.rep")" "$tmp/tpl.rep"
check_true tp.losses.summary "a '# lost: N ... stack...' line in the summary" \
	grep -qE '^# lost: [1-9][0-9]* .*stack' "$tmp/tpl.rerr" || show "$tmp/tpl.rerr"

# -i 1 over 4 batches 0.8 s apart: the run spans at least 3 intervals, and the folded output
# (which sums the intervals) still counts every event once.
n=40000
rec tpi -q -i 1 -o "$tmp/tpi.stk" "$tp" -- "$WL/wl_syscall" -b 4 -d 800 "$n"
check_eq tp.interval.exit 0 $? "$tmp/tpi.err"
intervals=$(rec_intervals tpi)
check_true tp.interval.intervals "at least 3 intervals written, got '${intervals}'" \
	test "${intervals:-0}" -ge 3
folded tpi "$tmp/tpi.stk"
check_eq tp.interval.count "$n" "$(sum_folded "$tmp/tpi.rep" "$(chain wl_getppid)")" "$tmp/tpi.rep"
# -T: one section per interval, headed HH:MM:SS; the sections add up to N.
report tpit "$tmp/tpi.stk" -q -f -T
check_eq tp.interval.T.count "$n" "$(sum_folded "$tmp/tpit.rep" "$(chain wl_getppid)")" \
	"$tmp/tpit.rep"
sections=$(grep -cE '^[0-9]{2}:[0-9]{2}:[0-9]{2} *$' "$tmp/tpit.rep")
check_true tp.interval.T.sections "at least 3 HH:MM:SS headers in stkreport -f -T, got $sections" \
	test "$sections" -ge 3
nonempty=$(awk '/^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] *$/ { if (c) n++; c = 0; next }
	$NF ~ /^[0-9]+$/ && /wl_getppid/ { c += $NF } END { if (c) n++; print n + 0 }' "$tmp/tpit.rep")
check_true tp.interval.T.spread "events in at least 3 sections, got $nonempty" \
	test "$nonempty" -ge 3

# Wildcards in both parts: every kernel has sys_enter_getpid and sys_enter_getppid, and no other
# syscalls:sys_enter_get*pid; the workload's getppid events are all counted, once.
n=3000
rec tpw -o "$tmp/tpw.stk" 't:sysc*:sys_enter_get*pid' -- "$WL/wl_syscall" "$n"
check_eq tp.wildcard.exit 0 $? "$tmp/tpw.err"
check_eq tp.wildcard.attached 1 \
	"$(grep -c -x 'Tracing 2 functions for "t:sysc\*:sys_enter_get\*pid"... Hit Ctrl-C to end.' \
		"$tmp/tpw.err")" "$tmp/tpw.err"
folded tpw "$tmp/tpw.stk"
check_eq tp.wildcard.count "$n" "$(sum_folded "$tmp/tpw.rep" "$(chain wl_getppid)")" "$tmp/tpw.rep"

# -l lists what a SPEC attaches to, each line a SPEC of its own (bpftrace -l); one pasted back
# attaches to that one target.
"$STKREC" -l 't:sched:sched_process_ex*' >"$tmp/list.out" 2>"$tmp/list.err"
check_eq tp.list.exit 0 $? "$tmp/list.err"
check_eq tp.list.tracepoints "t:sched:sched_process_exec t:sched:sched_process_exit" \
	"$(tr '\n' ' ' <"$tmp/list.out" | sed 's/ $//')"
"$STKREC" -l "$WL/wl_syscall:wl_*" >"$tmp/listu.out" 2>"$tmp/listu.err"
check_eq tp.list.uprobes "p:$WL/wl_syscall:wl_getppid p:$WL/wl_syscall:wl_middle p:$WL/wl_syscall:wl_outer" \
	"$(grep -E ':wl_(getppid|middle|outer)$' "$tmp/listu.out" | sort | tr '\n' ' ' | sed 's/ $//')" \
	"$tmp/listu.out"
rec tpl -q -o "$tmp/tpl.stk" "$(grep ':wl_getppid$' "$tmp/listu.out")" -- "$WL/wl_syscall" 100
check_eq tp.list.pasted "Tracing 1 functions for \"p:$WL/wl_syscall:wl_getppid\"... Hit Ctrl-C to end." \
	"$(head -1 "$tmp/tpl.err")"
"$STKREC" -l 't:nosuchcategory:*' >"$tmp/listn.out" 2>"$tmp/listn.err"
check_true tp.list.no_match "a non-zero exit and one line for a pattern matching nothing" \
	test $? -ne 0 -a "$(grep -c '' "$tmp/listn.err")" = 1

# bcc stackcount's -c CPU (with a SPEC -c is the CPU, not profile's sample period), and -C: the
# workload pinned to the last CPU fires all its events there and none elsewhere.
last=$(($(nproc) - 1))
n=2000
for opt in "-c $last" "-C $last" "-c 0"; do
	name=tpc${opt// /}
	want=$n
	[ "$opt" = "-c 0" ] && [ "$last" != 0 ] && want=0
	# shellcheck disable=SC2086
	rec "$name" -q $opt -o "$tmp/$name.stk" t:syscalls:sys_enter_getppid -- \
		taskset -c "$last" "$WL/wl_syscall" "$n"
	check_eq "tp.cpu${opt// /}.exit" 0 $? "$tmp/$name.err"
	folded "$name" "$tmp/$name.stk"
	check_eq "tp.cpu${opt// /}.count" "$want" "$(sum_folded "$tmp/$name.rep" "$(chain wl_getppid)")" \
		"$tmp/$name.rep"
done
e2e_done
