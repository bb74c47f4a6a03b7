#!/usr/bin/env bash
# User stacks through ld.so's lazy binding (docs/bpf.md 7): its PLT trampoline
# _dl_runtime_resolve_xsavec (or _xsave, _fxsave) realigns the stack and finds its CFA from rbx,
# whose value the walk takes from the event's registers or from where a callee frame (_dl_fixup)
# saved it. wl_lazy (no frame pointers, -z lazy) calls 64 functions of its library once each;
# ld.so resolves each by calling the library's resolver, which enters getppid: every event has
# the whole chain from _start through the trampoline, and no stack is cut at an unsupported CFI
# rule. The same events through a uprobe (the registers of the uprobe's context), and under
# `-- COMMAND`, where the first events are deferred and walked by stkrec (record/unwind/unwind.c).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

NOFP=$WL/nofp
for b in wl_lazy libwl_lazy.so; do
	[ -e "$NOFP/$b" ] || { not_ok lazy.sh "$NOFP/$b is not built (make workloads)"; exit 1; }
done
unset LD_BIND_NOW	# it would bind every function at load time, outside any trampoline
n=64

# From _start to the resolver's getppid. ld.so's frames are named where the host has its
# symbols (Debian ships them in libc6-dbg), "[unknown]" where it does not; the resolver shares
# its address with the indirect functions it resolves, any of whose names may be reported.
ld='(\[unknown\]|'
chain="^wl_lazy;_start;__libc_start_main(@@GLIBC_[0-9.]+)?;(__libc_start_call_main|\[unknown\]);"
chain+="main;wl_outer;${ld}_dl_runtime_resolve_(xsavec|xsave|fxsave));${ld}_dl_fixup);"
chain+="(wl_lazy_resolve|wl_lazy_f[0-9]+);wl_lazy_getppid"

# check_lazy NAME CAPTURE: all n events, all with the whole chain, none cut at an unsupported rule.
check_lazy() {
	local name=$1 cap=$2
	folded "$name" "$cap" -P
	check_eq "lazy.$name.events" "$n" "$(sum_folded "$tmp/$name.rep")" "$tmp/$name.rep"
	check_eq "lazy.$name.whole_chain" "$n" "$(sum_folded "$tmp/$name.rep" "$chain( |;)")" \
		"$tmp/$name.rep"
	report "$name.sum" "$cap" -f	# the summary, with its loss lines, on stderr
	check_eq "lazy.$name.unsupported" 0 \
		"$(grep -c '^# lost: .*unsupported CFI' "$tmp/$name.sum.rerr")" "$tmp/$name.sum.rerr"
}

# -p on the waiting workload: BPF walks every event.
for probe in tracepoint=t:syscalls:sys_enter_getppid \
	uprobe="$NOFP/libwl_lazy.so:wl_lazy_getppid"; do
	name=${probe%%=*}
	spec=${probe#*=}
	wl_bg "$name" "$NOFP/wl_lazy" -w -v "$n"
	rec_bg "$name" -q -p "$WL_PID" -o "$tmp/$name.stk" "$spec"
	rec_ready "$name" && wl_release
	rec_signal INT "$REC_PID"
	rec_wait "$REC_PID"
	check_lazy "$name" "$tmp/$name.stk"
done

# -- COMMAND: the events come right after the exec, most before stkrec has read the process.
rec cmd -q -o "$tmp/cmd.stk" t:syscalls:sys_enter_getppid -- "$NOFP/wl_lazy" "$n"
check_eq lazy.command.exit 0 $? "$tmp/cmd.err"
check_lazy command "$tmp/cmd.stk"

# The same, 20 runs beside two busy loops: the first events' walks read the process after its
# exec, and BPF's exec notification, polled after that read, took its mappings off as the old
# image's. Such a run was written without mappings, every user frame "[unknown]": 7 of 100 runs.
for i in 1 2; do
	bash -c 'while :; do :; done' &
	e2e_bg+=("$!")
done
named=0
for i in $(seq 20); do
	rec busy -q -o "$tmp/busy.stk" t:syscalls:sys_enter_getppid -- "$NOFP/wl_lazy" "$n"
	folded busy "$tmp/busy.stk" -P
	[ "$(sum_folded "$tmp/busy.rep" "$chain( |;)")" = "$n" ] && named=$((named + 1))
done
check_eq lazy.busy.runs_named 20 "$named" "$tmp/busy.rep"
e2e_done
