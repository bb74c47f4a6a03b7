#!/usr/bin/env bash
# A user stack that cannot be read at the event is walked again on the task's return to user
# space (BPF task work, 6.18+; docs/bpf.md 8). wl_pageout enters pread64(2) N times with the stack
# page holding its caller's return address not present (dropped with MADV_DONTNEED from a shared
# memfd stack, so its bytes stay), and the read brings that page back before the return: at
# sys_enter the walk stops at the first return address; at the return it is whole. Every one of
# the N events must have the whole chain and none may count as "stack memory not readable".
# Without task work (older kernels) stkrec counts such stacks cut, as before: skipped, loudly.
# The same captures have ld.so's start in them, whose outermost frame must be named too.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

if ! grep -qa bpf_task_work_schedule_resume_impl /sys/kernel/btf/vmlinux; then
	skip retry "SKIPPED: kernel $(uname -r) has no BPF task work (bpf_task_work_schedule_resume_impl)"
	exit 0
fi
n=1000
chain=';clone3;start_thread;wl_thread;wl_outer;wl_pageout '
for mode in count snoop; do
	flags=()
	[ $mode = snoop ] && flags=(--snoop)
	rec "$mode" -q -U "${flags[@]}" -o "$tmp/$mode.stk" t:syscalls:sys_enter_pread64 \
		-- "$WL/wl_pageout" "$n"
	check_eq "retry.$mode.exit" 0 $? "$tmp/$mode.err"
	folded "$mode" "$tmp/$mode.stk"
	check_eq "retry.$mode.chain" "$n" "$(sum_folded "$tmp/$mode.rep" "$chain")" "$tmp/$mode.rep"
	# ld.so's own pread64s at start have `_start` at their root: a sizeless label in ld.so's
	# debug file (libc6-dbg, scripts/install-deps), [unknown] while only functions were kept
	check_eq "retry.$mode.named" 0 "$(grep -c '\[unknown\]' "$tmp/$mode.rep")" "$tmp/$mode.rep"
	report "$mode.sum" "$tmp/$mode.stk" -f	# not -q: the summary has the loss lines
	check_eq "retry.$mode.unreadable" 0 \
		"$(lost_count "$tmp/$mode.sum.rerr" 'user stacks cut: stack memory not readable')" \
		"$tmp/$mode.sum.rerr"
done
e2e_done
