#!/usr/bin/env bash
# Losses are counted, stored and reported, weighted by events: stacks cut at the depth limit
# (kernel.perf_event_max_stack) and a full counts map.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

tp=t:syscalls:sys_enter_getppid
n=500
depth=$(cat /proc/sys/kernel/perf_event_max_stack)

# Recursing twice the depth limit: every one of the N user stacks is truncated, none is lost.
rec deep -q -o "$tmp/deep.stk" "$tp" -- "$WL/wl_deep" "$n" $((depth * 2))
check_eq deep.exit 0 $? "$tmp/deep.err"
report deep "$tmp/deep.stk" -f
check_eq deep.truncated_line 1 \
	"$(grep -c -x "# truncated: $n user stacks truncated at the depth limit (counted, innermost frames kept)" "$tmp/deep.rerr")" \
	"$tmp/deep.rerr"
check_eq deep.events "$n" "$(sum_folded "$tmp/deep.rep")" "$tmp/deep.rep"
check_eq deep.user_frames "$depth" \
	"$(head -n1 "$tmp/deep.rep" | tr ';' '\n' | grep -c -E '^(wl_recurse|wl_deep_getppid|syscall)$')" \
	"$tmp/deep.rep"

# A shallow stack is not reported as truncated.
rec shallow -q -o "$tmp/shallow.stk" "$tp" -- "$WL/wl_deep" "$n" 3
report shallow "$tmp/shallow.stk" -f
check_true shallow.no_truncation "no truncation line for a 3-deep recursion" \
	bash -c "! grep -q 'truncated at the depth limit' '$tmp/shallow.rerr'" || show "$tmp/shallow.rerr"

# A counts map of one entry and two processes firing N events each at once: what does not fit
# is lost and counted as such, so counted + lost is exactly 2N, and some are lost. (How they
# split depends on when stkrec drains: it drains early once a map is half full.) -p on waiting
# workloads: their tables are in BPF before the first event, so no event is deferred (stkrec
# counts a deferred event itself, outside the counts map).
wl_bg fulla "$WL/wl_syscall" -w -v "$n"
a_pid=$WL_PID a_job=$WL_JOB
wl_bg fullb "$WL/wl_syscall" -w -v "$n"
rec_bg full -q --hash-storage-size 1 -p "$a_pid,$WL_PID" -o "$tmp/full.stk" "$tp"
if rec_ready full; then
	kill -USR1 "$a_pid" "$WL_PID"
	wait "$a_job" "$WL_JOB"
fi
rec_signal INT "$REC_PID"
rec_wait "$REC_PID"
report full "$tmp/full.stk" -f
lost=$(lost_count "$tmp/full.rerr" 'events not counted (counts map full)')
counted=$(sum_folded "$tmp/full.rep" ';wl_getppid;')
check_eq full.counted_plus_lost $((2 * n)) $((counted + lost)) "$tmp/full.rerr"
check_true full.lost "some events lost to the full counts map, got $lost" test "$lost" -gt 0

# Early drains without polling: 110 distinct stacks (recursions 3 to 112 deep) at about 450
# events a second into stacks maps of 64 entries, in one 60 s interval. BPF wakes stkrec when a
# map is over half full and it drains at once, so no stack is lost; stkrec otherwise looks at its
# maps once a second, and 235 of the 600 were lost when the wake-up was left out. The workload is
# stkrec's command, alone in the maps: another process calling getppid on a shared host would
# fill them too, and its losses are not this check's.
rec wake -q -i 60 --stack-storage-size 64 -o "$tmp/wake.stk" "$tp" -- "$WL/wl_deep" 600 3 110 0 2000
check_eq wake.exit 0 $? "$tmp/wake.err"
report wake "$tmp/wake.stk" -f
check_eq wake.counted 600 "$(sum_folded "$tmp/wake.rep" ';wl_deep_getppid;')" "$tmp/wake.rerr"
check_true wake.no_losses "no losses line" \
	bash -c "! grep -q '^# lost' '$tmp/wake.rerr'" || show "$tmp/wake.rerr"

# A stacks map of 3 entries under 2 s of sampling every CPU: it fills at once, and stkrec drains
# early and counts what did not fit (the odd size once failed the run with EINVAL). A burner
# runs meanwhile: an idle host gives no samples at all (the idle task is left out).
wl_bg odd "$WL/wl_burner" -v 3
rec odd -q -D 2 -F 199 --stack-storage-size 3 -o "$tmp/odd.stk"
check_eq odd.exit 0 $? "$tmp/odd.err"
kill "$WL_PID" 2>/dev/null
report odd "$tmp/odd.stk" -f
check_eq odd.report_exit 0 $? "$tmp/odd.rerr"
check_true odd.samples "samples in the report" test "$(sum_folded "$tmp/odd.rep")" -gt 0
e2e_done
