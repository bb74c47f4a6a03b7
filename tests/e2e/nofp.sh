#!/usr/bin/env bash
# User stacks of code without frame pointers, unwound from CFI in BPF (docs/bpf.md 7): the
# workloads built as production code is (gcc -O2 -fomit-frame-pointer, the Makefile's nofp/),
# and Debian's libc. Every event of a tracepoint, a uprobe and a USDT probe has the whole chain
# from _start down; 99 Hz samples of a burner have it at least 95% of the time; a signal
# handler unwinds through the signal frame into the interrupted code, and so does its return
# (rt_sigreturn, from the trampoline's last instruction); a stack deeper than the
# limit is counted as truncated; a deferred walk reads past 16 KiB of stack, and around pages
# never touched, and one deeper than its 64 KiB copy is counted as cut by it; vfork's return
# address is taken from rdi; a leaf without CFI or frame pointer is passed through the return
# address at its stack pointer, and _init through rules of its own; registers popped by an
# epilogue are taken from the registers, not from their slots below rsp. With --unwind fp the
# same chains break (the feature matters).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

NOFP=$WL/nofp
for b in wl_syscall wl_uprobe wl_usdt wl_burner wl_deep wl_signal wl_nocfi wl_hole wl_init; do
	[ -x "$NOFP/$b" ] || { not_ok nofp.sh "$NOFP/$b is not built (make workloads)"; exit 1; }
done
n=2000
tp=t:syscalls:sys_enter_getppid

# From _start to main: the C library's frames are named where the host has libc's symbols (a
# static __libc_start_call_main needs libc6-dbg), "[unknown]" where it does not.
start=';_start;__libc_start_main(@@GLIBC_[0-9.]+)?;(__libc_start_call_main|\[unknown\]);main;'
# whole COMM LEAF...: the folded stack of COMM from _start down to the frames given (probe
# captures: as `stkreport -f -P` prints it, stackcount's -f having the comm only with -P).
whole() {
	local comm=$1 re
	shift
	re="^$comm$start$(IFS=';'; echo "$*")"
	echo "$re( |;)"
}

# nofp_count NAME WANT_RE SPEC BIN [EXTRA]: N events of BIN under SPEC (N + EXTRA in all),
# recorded with -p on the waiting workload, all N with the whole chain; then again with --unwind
# fp, which cannot have it.
nofp_count() {
	local name=$1 want=$2 spec=$3 bin=$4 extra=${5:-0} mode got all
	for mode in auto fp; do
		wl_bg "$name$mode" "$bin" -w -v "$n"
		rec_bg "$name$mode" -q --unwind "$mode" -p "$WL_PID" -o "$tmp/$name$mode.stk" "$spec"
		rec_ready "$name$mode" && wl_release
		rec_signal INT "$REC_PID"
		rec_wait "$REC_PID"
		folded "$name$mode" "$tmp/$name$mode.stk" -P
		all=$(sum_folded "$tmp/$name$mode.rep")
		got=$(sum_folded "$tmp/$name$mode.rep" "$want")
		if [ "$mode" = auto ]; then
			check_eq "nofp.$name.events" $((n + extra)) "$all" "$tmp/$name$mode.rep"
			check_eq "nofp.$name.whole_chain" "$n" "$got" "$tmp/$name$mode.rep"
		else
			check_true "nofp.$name.fp_breaks" "fewer than half whole with --unwind fp, got $got" \
				test $((got * 2)) -lt "$n" || show "$tmp/$name$mode.rep"
		fi
	done
}

# command_chain LABEL N WANT_RE SPEC -- COMMAND...: COMMAND runs under stkrec (its first events
# deferred, walked by stkrec), exits 0, and its N events all have the whole chain.
command_chain() {
	local label=$1 want_n=$2 want=$3 spec=$4
	shift 5
	rec "$label" -q -o "$tmp/$label.stk" "$spec" -- "$@"
	check_eq "nofp.$label.exit" 0 $? "$tmp/$label.err"
	folded "$label" "$tmp/$label.stk" -P
	check_eq "nofp.$label.whole_chain" "$want_n" "$(sum_folded "$tmp/$label.rep" "$want")" \
		"$tmp/$label.rep"
}

nofp_count tracepoint "$(whole wl_syscall wl_outer wl_middle wl_getppid)" "$tp" \
	"$NOFP/wl_syscall"
nofp_count uprobe "$(whole wl_uprobe wl_outer wl_middle wl_target)" \
	"$NOFP/wl_uprobe:wl_target" "$NOFP/wl_uprobe"
nofp_count usdt "$(whole wl_usdt wl_outer wl_middle wl_tick)" "u:$NOFP/wl_usdt:tick" \
	"$NOFP/wl_usdt"
# An assembly leaf without CFI holding 3 in rbp, 0 or -16 (by event; wl_nocfi.c): its return
# address at rsp is taken, a guess its mapping confirms. In BPF (-p), and in stkrec (-- COMMAND:
# the first events are deferred). rbp 0 in the leaf ended the stack there, silently: the ABI's
# outermost mark, but any register's value in code without frame pointers; -16, aligned and
# above rsp, ended it as 'stack memory not readable' (a limb in rbp, as in GMP's assembly).
nocfi=$(whole wl_nocfi wl_outer wl_middle 'nocfi(0|hi)?_getppid')
nofp_count nocfi "$nocfi" "$tp" "$NOFP/wl_nocfi"
command_chain nocfi_command "$n" "$nocfi" "$tp" -- "$NOFP/wl_nocfi" "$n"

# _init (glibc's crti.o and crtn.o: no CFI, sub $8,%rsp first) calling init_getppid (wl_init.c):
# the rules record/unwind/cfi.c gives it carry the walk through, in BPF (-p: main calls _init() N
# times) and in stkrec (-- COMMAND: the 500 events as libc runs the initializers, deferred). Without
# them every chain stopped at _init.
nofp_count init "$(whole wl_init wl_outer _init init_getppid)" "$tp" "$NOFP/wl_init"
command_chain init_command 500 \
	"^wl_init;_start;__libc_start_main(@@GLIBC_[0-9.]+)?;_init;init_getppid( |;)" "$tp" -- \
	"$NOFP/wl_init" 0

# A system call in an epilogue, after rbp and rbx were popped and their slots overwritten
# (wl_epilogue.c, built with frame pointers: wl_middle's CFA is rbp's): the walk takes them from
# the registers, in BPF (-p) and in stkrec (-- COMMAND). Reading the slots cut every chain.
epi=$(whole wl_epilogue wl_outer wl_middle epilogue_getppid)
nofp_count epilogue "$epi" "$tp" "$WL/wl_epilogue"
command_chain epilogue_command "$n" "$epi" "$tp" -- "$WL/wl_epilogue" "$n"

# Through a signal frame: getppid in the handler, the trampoline, then kill and the chain.
sig="$(whole wl_signal wl_outer wl_middle kill \
	'(__restore_rt|\[unknown\])' wl_handler wl_getppid)"
command_chain signal "$n" "$sig" "$tp" -- "$NOFP/wl_signal" "$n"
# The handler's return: in rt_sigreturn the leaf is the trampoline's pc after its syscall, one
# past its last instruction (and past its CFI), whose row is the syscall's. Every such stack
# ended there, as a bad frame (a compile-loop minute's: bash's SIGCHLD handlers, 6.18 sampling
# restore_altstack() before the registers are restored).
sigret="$(whole wl_signal wl_outer wl_middle kill __restore_rt)"
# One more event: the return from the SIGUSR1 handler that releases the waiting workload.
nofp_count sigreturn "$sigret" t:syscalls:sys_enter_rt_sigreturn "$NOFP/wl_signal" 1
command_chain sigreturn_command "$n" "$sigret" t:syscalls:sys_enter_rt_sigreturn -- \
	"$NOFP/wl_signal" "$n"

# -- COMMAND: the first events come before stkrec has read the process; BPF defers them and
# stkrec walks them itself. Still all N whole.
command_chain command "$n" "$(whole wl_syscall wl_outer wl_middle wl_getppid)" "$tp" -- \
	"$NOFP/wl_syscall" "$n"

# -- COMMAND 118 levels deep at 144 bytes a level: the deferred events' walks read past 16 KiB
# of stack (STK_DEFER_STACK is 64 KiB; it was perf's 8 KiB, then 16 and 32, and gcc's cc1 went
# past each). Still all whole. 500 events, not N: each deferred one is 17 KiB, the 16 MiB ring holds
# some 950, and 2,000 fired in the 10 ms before libc's table reaches BPF overflowed it once in
# 20-45 runs on a busy host at 12 KiB (those events keep their leaf only; the burst is not what
# this checks).
levels=$(printf 'wl_recurse_wide;%.0s' $(seq 118))
command_chain command_deep 500 "$(whole wl_deep "${levels}wl_deep_getppid")" "$tp" -- \
	"$NOFP/wl_deep" 500 118 1 1

# -- COMMAND 80 levels deep at 1040 bytes a level, past the 64 KiB a deferred event copies: the
# events BPF walks (once stkrec has read the process) are whole; the deferred ones keep the
# 60-64 levels that fit and are counted as cut by the copy, not as stack memory not readable.
# 500 records of 64 KiB are twice the 16 MiB ring: in 5 of 25 runs one evening 8-199 events
# found it full. Those keep the leaf BPF walked (libc's syscall) and are counted as cut by the
# full ring; before, they were counted as cut at an address in no known mapping. Every event is
# one of the three.
rec huge -q -o "$tmp/huge.stk" "$tp" -- "$NOFP/wl_deep" 500 80 1 2
check_eq nofp.copy_end.exit 0 $? "$tmp/huge.err"
report huge "$tmp/huge.stk" -f -P
levels=$(printf 'wl_recurse_huge;%.0s' $(seq 80))
huge_whole=$(sum_folded "$tmp/huge.rep" "$(whole wl_deep "${levels}wl_deep_getppid")")
# 60-64 levels: where the copy ends in the frames moves with sp's place in its 1 KiB piece (63
# in all 49 of 50 runs here that cut any). mawk has no {60,64}.
levels=$(printf 'wl_recurse_huge;%.0s' $(seq 60))$(printf '(wl_recurse_huge;)?%.0s' $(seq 4))
huge_cut=$(sum_folded "$tmp/huge.rep" "^wl_deep;${levels}wl_deep_getppid;")
huge_leaf=$(sum_folded "$tmp/huge.rep" "^wl_deep;syscall;")	# then the kernel frames
check_eq nofp.copy_end.all 500 $((huge_whole + huge_cut + huge_leaf)) "$tmp/huge.rep"
check_true nofp.copy_end.deferred "some events deferred and cut by the copy, got ${huge_cut}" \
	test "$huge_cut" -ge 1
check_eq nofp.copy_end.named "$huge_cut" \
	"$(lost_count "$tmp/huge.rerr" 'user stacks cut: deeper than the 64 KiB copied')" \
	"$tmp/huge.rerr"
check_eq nofp.copy_end.ring_full "$huge_leaf" \
	"$(lost_count "$tmp/huge.rerr" 'user stacks cut: the ring of deferred events was full')" \
	"$tmp/huge.rerr"

# -- COMMAND through a 24 KiB frame whose upper pages were never touched (wl_hole.c): a deferred
# event's copy has holes where they are, and the walk reads the words it needs around them.
command_chain hole 500 "$(whole wl_hole wl_outer wl_middle wl_getppid)" "$tp" -- \
	"$NOFP/wl_hole" 500

# glibc's vfork keeps its return address in rdi across the system call (CFI: ra in rdi): the
# walk takes it from the event's registers, in BPF and in stkrec (the first events, deferred).
# -- COMMAND follows the children, and vfork returns in each child too, on the parent's stack:
# 2n whole chains.
command_chain vfork $((2 * n)) "$(whole wl_vfork vf_outer vf_middle '(__)?vfork')" \
	t:syscalls:sys_exit_vfork -- "$WL/wl_vfork" "$n"

# 99 Hz samples of the burner: at least 95% with the chain down to stk_leaf (at least 40 samples
# of the ~300 nominal: a host whose hypervisor steals CPU gave the burner 56 once).
wl_bg burn "$NOFP/wl_burner" -v 6
rec burn -q -F 99 -D 3 -p "$WL_PID" -o "$tmp/burn.stk"
kill "$WL_PID" 2>/dev/null
folded burn "$tmp/burn.stk"
check_share nofp.sample "$tmp/burn.rep" '^wl_burner;' "$(whole wl_burner stk_top stk_mid stk_leaf)" \
	40 95 "whole" "$tmp/burn.stk"

# Deeper than the limit (kernel.perf_event_max_stack): every stack truncated and counted.
depth=$(cat /proc/sys/kernel/perf_event_max_stack)
rec deep -q -o "$tmp/deep.stk" "$tp" -- "$NOFP/wl_deep" 100 $((depth * 2))
check_eq nofp.deep.exit 0 $? "$tmp/deep.err"
report deep "$tmp/deep.stk" -f
check_eq nofp.deep.truncated 1 \
	"$(grep -c -x '# truncated: 100 user stacks truncated at the depth limit (counted, innermost frames kept)' "$tmp/deep.rerr")" \
	"$tmp/deep.rerr"
check_eq nofp.deep.frames "$depth" \
	"$(head -n1 "$tmp/deep.rep" | tr ';' '\n' | grep -c -E '^(wl_recurse|wl_deep_getppid|syscall)$')" \
	"$tmp/deep.rep"

# A program's entry (wl_entry.c: _start without CFI, rbp 0, argc at rsp): each stack is the
# entry alone, and complete. Walked by BPF under -- COMMAND (stkrec reads the child at its
# exec), and by stkrec system-wide, where a new process's first events wait for it to read the
# process (those the ring has no room for keep the same leaf, counted as cut by the full ring).
# Before, each was counted as a bad frame: 20,000 of 20,000, and 3,862 of 100,000.
rec entry -q -U -o "$tmp/entry.stk" "$tp" -- "$WL/wl_entry"
check_eq nofp.entry.exit 0 $? "$tmp/entry.err"
report entry "$tmp/entry.stk" -f -P
check_eq nofp.entry.alone 20000 "$(sum_folded "$tmp/entry.rep" '^wl_entry;_start ')" \
	"$tmp/entry.rep"
check_eq nofp.entry.lost "" "$(grep '^# lost:' "$tmp/entry.rerr")" "$tmp/entry.rerr"
rec_bg entry_sys -q -U -o "$tmp/entry_sys.stk" "$tp"
rec_ready entry_sys ||
	not_ok nofp.entry_sys.ready "stkrec did not start: $(head -1 "$tmp/entry_sys.err")"
for i in 1 2 3 4 5; do "$WL/wl_entry"; done
rec_signal INT "$REC_PID"
rec_wait "$REC_PID"
check_eq nofp.entry_sys.exit 0 $? "$tmp/entry_sys.err"
report entry_sys "$tmp/entry_sys.stk" -f -P
check_eq nofp.entry_sys.alone 100000 "$(sum_folded "$tmp/entry_sys.rep" '^wl_entry;_start ')" \
	"$tmp/entry_sys.rep"
check_eq nofp.entry_sys.lost "" "$(grep '^# lost:' "$tmp/entry_sys.rerr")" "$tmp/entry_sys.rerr"
e2e_done
