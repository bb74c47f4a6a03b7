#!/usr/bin/env bash
# An exec in the middle of an interval: a process makes N events from functions only its old
# image has (wl_exec), execs another program at once (wl_exec_b) and makes M events from
# functions only the new image has, all in one interval. Rows before the exec are named with
# the old image, rows after it with the new: exactly N and M, with frame pointers and with the
# CFI walker. (Before, every row was named with the pid's latest record, the new image's: the
# old image's N events read as wl_exec_b's addresses or none.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

tp=t:syscalls:sys_enter_getppid
n=300 m=200

for unwind in fp auto; do
	name=exec_$unwind
	rec_bg "$name" -q -i 60 -U --unwind "$unwind" -o "$tmp/$name.stk" "$tp"
	rec_ready "$name" || not_ok "$name.ready" "stkrec did not start: $(head -1 "$tmp/$name.err")"
	"$WL/wl_exec" "$n" "$WL/wl_exec_b" "$m"
	check_eq "$name.workload_exit" 0 $?
	sleep 1.2
	rec_signal INT "$REC_PID"
	rec_wait "$REC_PID"
	check_eq "$name.exit" 0 $? "$tmp/$name.err"
	check_eq "$name.one_interval" 1 "$(rec_intervals "$name")" "$tmp/$name.err"
	folded "$name" "$tmp/$name.stk" -P
	# the comm is the one of the row's image: wl_exec before the exec, wl_exec_b after it
	check_eq "$name.old_image" "$n" "$(sum_folded "$tmp/$name.rep" \
		'^wl_exec;(.*;)?main;exec_a_outer;exec_a_middle;exec_a_leaf ')" "$tmp/$name.rep"
	check_eq "$name.new_image" "$m" "$(sum_folded "$tmp/$name.rep" \
		'^wl_exec_b;(.*;)?main;exec_b_outer;exec_b_middle;exec_b_leaf ')" "$tmp/$name.rep"
	# and one event before the old image's chain, to have stkrec read the process first
	check_eq "$name.total" $((n + m + 1)) "$(sum_folded "$tmp/$name.rep" '^wl_exec(_b)?;')" \
		"$tmp/$name.rep"
done

# Inside the exec, from the drop of the old address space to the new image's registers, the
# saved user registers are the old image's and its stack is gone: the events there (the new
# image's mmaps by the kernel, caught by vm_unmapped_area) have no user stack, neither a cut
# one nor one read from the new image's memory. (Before, they had the old image's execve leaf,
# cut at an address in no known mapping: most of those in a profile of gcc compile loops.)
rec between -q -o "$tmp/between.stk" t:mmap:vm_unmapped_area -- \
	"$WL/wl_exec" 1 "$WL/wl_exec_b" 1
check_eq between.exit 0 $? "$tmp/between.err"
folded between "$tmp/between.stk" -P
in_exec=$(sum_folded "$tmp/between.rep" '^wl_exec_b;(.*;)?load_elf_binary;')
check_true between.events "events in load_elf_binary, got $in_exec" test "$in_exec" -gt 0 ||
	show "$tmp/between.rep"
check_eq between.no_user_stack "$in_exec" \
	"$(sum_folded "$tmp/between.rep" '^wl_exec_b;entry_SYSCALL_64[a-z_]*;(.*;)?load_elf_binary;')" \
	"$tmp/between.rep"
e2e_done
