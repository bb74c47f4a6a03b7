#!/usr/bin/env bash
# --offcpu (bcc offcputime): blocked time per stack in microseconds, from sched_switch. wl_sleep
# sleeps N x 50 ms in main -> sleeper_outer -> sleeper_inner -> nanosleep(2): the chain is exact
# and its off-CPU time is the time it measured itself asleep (asleep()). --min-block/--max-block
# bound it, the idle task never appears, and the report's summary speaks of time.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require
[ -x "$WL/wl_sleep" ] || { not_ok offcpu.sh "$WL/wl_sleep is not built"; exit 1; }

# The sleeper's chain from main down to the kernel's nanosleep path (user then kernel frames).
chain='^wl_sleep;[^ ]*;main;sleeper_outer;sleeper_inner;[^ ]*do_nanosleep;'

# asleep NAME NOMINAL_US ACTUAL_US OUT FILE: the sleeper's off-CPU time is at least 90% of what
# it asked to sleep, and between 80% and 101% of the time it measured itself (wl_sleep -t, its
# `elapsed_ns` line in OUT). Not the nominal time +10%: a busy host wakes a sleeper late, and
# the wait for a CPU is off-CPU time too (a CI run saw 2.45 s for 40 x 50 ms). 80%, not 90%: on
# a host with a quarter of its time stolen, 1.31 s of a measured 1.49 s were counted: steal while
# the sleeper runs is time the guest's scheduler never sees as off-CPU. (Whole blocks were also
# lost, 1 run in 30 beside three busy loops, when the kernel ran the sleeper again without a
# sched_switch naming it; they are ended at the next switch-out now: docs/bpf.md 6.)
asleep() {
	local wall
	wall=$(awk '/^elapsed_ns / { print int($2 / 1000) }' "$4")
	check_true "$1" "off-CPU time >= 90% of $2 us and 80-101% of the ${wall:-?} us the sleeper measured, got $3 us" \
		awk -v n="$2" -v us="$3" -v w="${wall:-0}" \
		'BEGIN { exit !(us >= n * 0.9 && us >= w * 0.8 && us <= w * 1.01) }' || show "$5"
}

# -- COMMAND: 20 sleeps of 50 ms are 1,000,000 us asleep.
rec cmd --offcpu -o "$tmp/cmd.stk" -- "$WL/wl_sleep" -t 20
check_eq offcpu.cmd.exit 0 $? "$tmp/cmd.err"
check_true offcpu.cmd.banner "'Tracing off-CPU time (us) of PID N by user + kernel stack... Hit Ctrl-C to end.'" \
	grep -qxE 'Tracing off-CPU time \(us\) of PID [0-9]+ by user \+ kernel stack\.\.\. Hit Ctrl-C to end\.' \
	"$tmp/cmd.err" || show "$tmp/cmd.err"
folded cmd "$tmp/cmd.stk"
check_eq offcpu.cmd.report_exit 0 $? "$tmp/cmd.rerr"
us=$(sum_folded "$tmp/cmd.rep" "$chain")
asleep offcpu.cmd.time 1000000 "$us" "$tmp/cmd.out" "$tmp/cmd.rep"
echo "# offcpu.cmd: 20 x 50 ms asleep measured as $us us" >&2
# The child's ptrace stops (its exec, its exit) are stkrec's time, not the program's.
check_eq offcpu.cmd.no_ptrace_stop 0 "$(sum_folded "$tmp/cmd.rep" ';ptrace_stop;')" "$tmp/cmd.rep"
# Every sleep is one block, each at least 50 ms: no row of the chain holds less than that.
check_true offcpu.cmd.chain_rows "every row of the sleeper's chain to hold >= 50000 us" \
	awk -v re="$chain" '$0 ~ re && $NF < 50000 { exit 1 }' "$tmp/cmd.rep" || show "$tmp/cmd.rep"
# The kernel stack starts at __schedule: the tracing frames above it (which differ between 6.1
# and 6.18) are not part of the sleep.
check_eq offcpu.cmd.leaf __schedule "$(awk -v re="$chain" '$0 ~ re { n = split($1, f, ";")
	print f[n] }' "$tmp/cmd.rep" | sort -u)" "$tmp/cmd.rep"

# The summary says time, not events; the probe is sched_switch.
report sum "$tmp/cmd.stk" -f
check_true offcpu.summary.total "a '# total off-CPU time: N us' summary line" \
	grep -qE '^# total off-CPU time: [0-9]+ us$' "$tmp/sum.rerr" || show "$tmp/sum.rerr"
check_true offcpu.summary.mode "'# mode: offcpu, probes: 1'" \
	grep -qx '# mode: offcpu, probes: 1' "$tmp/sum.rerr" || show "$tmp/sum.rerr"
check_true offcpu.summary.no_events "no '# events:' line for a capture weighted in us" \
	test -z "$(grep '^# events:' "$tmp/sum.rerr")" || show "$tmp/sum.rerr"

# -p PID on a sleeper held until SIGUSR1: 10 sleeps, 500,000 us.
wl_bg pid "$WL/wl_sleep" -w -v -t 10
rec_bg pid --offcpu -q -p "$WL_PID" -o "$tmp/pid.stk"
if rec_ready pid; then
	wl_release
	sleep 0.1
fi
rec_signal INT "$REC_PID"
rec_wait "$REC_PID"
check_eq offcpu.pid.exit 0 $? "$tmp/pid.err"
folded pid "$tmp/pid.stk"
asleep offcpu.pid.time 500000 "$(sum_folded "$tmp/pid.rep" "$chain")" "$tmp/pid.wl" "$tmp/pid.rep"
check_eq offcpu.pid.only_pid "$(sum_folded "$tmp/pid.rep")" \
	"$(sum_folded "$tmp/pid.rep" '^wl_sleep;')" "$tmp/pid.rep"

# --min-block above 50 ms drops every sleep, --max-block below drops them too; bounds around
# 50 ms keep them all (the upper ones generous: a loaded machine woke a 50 ms sleeper after 71 ms).
rec min --offcpu -q --min-block 250000 -o "$tmp/min.stk" -- "$WL/wl_sleep" 4
check_eq offcpu.min_block.exit 0 $? "$tmp/min.err"
folded min "$tmp/min.stk"
check_eq offcpu.min_block.dropped 0 "$(sum_folded "$tmp/min.rep" "$chain")" "$tmp/min.rep"
rec max --offcpu -q --max-block 40000 -o "$tmp/max.stk" -- "$WL/wl_sleep" 4
check_eq offcpu.max_block.exit 0 $? "$tmp/max.err"
folded max "$tmp/max.stk"
check_eq offcpu.max_block.dropped 0 "$(sum_folded "$tmp/max.rep" "$chain")" "$tmp/max.rep"
rec both --offcpu -q --min-block 40000 --max-block 1000000 -o "$tmp/both.stk" -- "$WL/wl_sleep" -t 4
check_eq offcpu.bounds.exit 0 $? "$tmp/both.err"
folded both "$tmp/both.stk"
asleep offcpu.bounds.kept 200000 "$(sum_folded "$tmp/both.rep" "$chain")" "$tmp/both.out" \
	"$tmp/both.rep"
# With --min-block 40000 nothing shorter than 40 ms is in the capture at all.
check_true offcpu.bounds.min "no row under 40000 us with --min-block 40000" \
	awk '$NF ~ /^[0-9]+$/ && $NF < 40000 { exit 1 }' "$tmp/both.rep" || show "$tmp/both.rep"

# A command's only block comes before stkrec has read the libraries ld.so maps after the exec:
# its user stack goes to stkrec at switch-out, its time at switch-in (a deferred walk), and the
# two meet in the whole chain. Three commands of one 50 ms sleep each: each sleep has at least
# 45,000 us, all of them in the whole chain. (Only the sleep: on a loaded host stkrec's own
# ptrace stop of the child before its exec can also last over 40 ms.)
for i in 1 2 3; do
	rec first$i --offcpu -q --min-block 40000 -o "$tmp/first$i.stk" -- "$WL/wl_sleep" 1
	folded first$i "$tmp/first$i.stk"
	all=$(sum_folded "$tmp/first$i.rep" '^wl_sleep;.*;do_nanosleep;')
	check_true offcpu.first$i.time "at least 45000 us asleep, got $all" test "$all" -ge 45000 ||
		show "$tmp/first$i.rep"
	check_eq offcpu.first$i.whole "$all" \
		"$(sum_folded "$tmp/first$i.rep" "^wl_sleep;_start;.*;main;sleeper_outer;")" \
		"$tmp/first$i.rep"
done

# System-wide, with a sleeper running across interval boundaries (-i 1, 2 s of 50 ms sleeps):
# the sleeper's time is all there in its chain (blocks that span a drain are counted, not lost),
# and the idle task (pid 0, swapper/N) never appears.
wl_bg sys "$WL/wl_sleep" -v -w -t 40
rec_bg sys --offcpu -q -i 1 -o "$tmp/sys.stk"
if rec_ready sys; then
	wl_release
	sleep 0.1
fi
rec_signal INT "$REC_PID"
rec_wait "$REC_PID"
check_eq offcpu.system.exit 0 $? "$tmp/sys.err"
check_true offcpu.system.intervals "at least 2 intervals, got $(rec_intervals sys)" \
	test "$(rec_intervals sys)" -ge 2
folded sys "$tmp/sys.stk"
asleep offcpu.system.sleeper 2000000 "$(sum_folded "$tmp/sys.rep" "$chain")" "$tmp/sys.wl" \
	"$tmp/sys.rep"
check_eq offcpu.system.no_idle 0 "$(grep -c '^swapper/' "$tmp/sys.rep")" "$tmp/sys.rep"

# --offcpu takes no SPEC, and no -e.
rec spec --offcpu t:sched:sched_switch -o "$tmp/spec.stk"
check_eq offcpu.spec.exit 2 $? "$tmp/spec.err"
check_true offcpu.spec.no_file "no capture file" test ! -e "$tmp/spec.stk"

# bcc offcputime's options. --state: a nanosleep blocks interruptible (1), never uninterruptible
# (2); -u keeps the sleeper (a user thread), -k drops it; -m is --min-block.
for opt in "--state 1" "--state 2" "-u" "-m 250000"; do
	name=st${opt//[ -]/}
	# shellcheck disable=SC2086
	rec "$name" --offcpu -q $opt -o "$tmp/$name.stk" -- "$WL/wl_sleep" -t 4
	check_eq "offcpu.opt${opt// /}.exit" 0 $? "$tmp/$name.err"
	folded "$name" "$tmp/$name.stk"
	us=$(sum_folded "$tmp/$name.rep" "$chain")
	case $opt in
	"--state 2" | "-m 250000") check_eq "offcpu.opt${opt// /}.dropped" 0 "$us" "$tmp/$name.rep" ;;
	*) asleep "offcpu.opt${opt// /}.kept" 200000 "$us" "$tmp/$name.out" "$tmp/$name.rep" ;;
	esac
done
wl_bg kthr "$WL/wl_sleep" -v 40
rec kthr --offcpu -q -k -o "$tmp/kthr.stk" 1
check_eq offcpu.kthreads.exit 0 $? "$tmp/kthr.err"
kill "$WL_PID" 2>/dev/null
folded kthr "$tmp/kthr.stk"
check_eq offcpu.kthreads.no_user 0 "$(sum_folded "$tmp/kthr.rep" '^wl_sleep;')" "$tmp/kthr.rep"
check_true offcpu.kthreads.some "kernel threads' off-CPU time" test "$(sum_folded "$tmp/kthr.rep")" -gt 0
e2e_done
