#!/usr/bin/env bash
# -e EVENT (sampling on other perf events): page faults counted exactly from a known chain,
# context switches of a sleeper, software clocks, an unknown name (usage error) and a hardware
# event: sampled where the machine has a PMU, else refused in one line with no file left.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require
for b in "$WL/wl_faults" "$WL/wl_sleep"; do
	[ -x "$b" ] || { not_ok events.sh "$b is not built (make OUTPUT=$OUTPUT workloads)"; exit 1; }
done

fault_chain=';main;wl_outer;wl_middle;wl_touch( |;)'
sleep_chain=';main;sleeper_outer;sleeper_inner;'

# page-faults, default period: every fault is a sample (events.c), so the 500 fresh pages that
# wl_touch writes are exactly 500 samples in its chain.
rec pf -q -e page-faults -o "$tmp/pf.stk" -- "$WL/wl_faults" 500
check_eq events.page_faults.exit 0 $? "$tmp/pf.err"
folded pf "$tmp/pf.stk"
check_eq events.page_faults.exact 500 "$(sum_folded "$tmp/pf.rep" "^wl_faults;.*$fault_chain")" \
	"$tmp/pf.rep"
check_true events.page_faults.banner "'Sampling at every 1 events of PID N ... on page-faults'" \
	grep -qE '^Sampling at every 1 events of PID [0-9]+ by user \+ kernel stack on page-faults' \
	"$tmp/pf.err"

# -p PID and an explicit -c 1 on a workload waiting for SIGUSR1; 300 pages in 3 batches.
wl_bg pfp "$WL/wl_faults" -w -v -b 3 -d 100 300
rec_bg pfp -q -e page-faults -c 1 -p "$WL_PID" -o "$tmp/pfp.stk"
if rec_ready pfp; then
	wl_release
	sleep 0.2
fi
rec_signal INT "$REC_PID"
rec_wait "$REC_PID"
check_eq events.page_faults_pid.exit 0 $? "$tmp/pfp.err"
folded pfp "$tmp/pfp.stk"
check_eq events.page_faults_pid.exact 300 \
	"$(sum_folded "$tmp/pfp.rep" "^wl_faults;.*$fault_chain")" "$tmp/pfp.rep"

# -c 10: one sample per 10 faults; 1000 faults in the chain give 100 (+-1: the period runs on
# across the workload's other faults).
rec pf10 -q -e page-faults -c 10 -o "$tmp/pf10.stk" -- "$WL/wl_faults" 1000
check_eq events.page_faults_c10.exit 0 $? "$tmp/pf10.err"
folded pf10 "$tmp/pf10.stk"
n=$(sum_folded "$tmp/pf10.rep" "^wl_faults;.*$fault_chain")
check_true events.page_faults_c10.samples "99 to 101 samples for 1000 faults at -c 10, got $n" \
	test "$n" -ge 99 -a "$n" -le 101 || show "$tmp/pf10.rep"

# context-switches: each of the 10 sleeps switches the sleeper out once, in its chain.
rec cs -q -e context-switches -o "$tmp/cs.stk" -- "$WL/wl_sleep" 10
check_eq events.context_switches.exit 0 $? "$tmp/cs.err"
folded cs "$tmp/cs.stk"
n=$(sum_folded "$tmp/cs.rep" "^wl_sleep;.*$sleep_chain.*do_nanosleep")
check_true events.context_switches.count "at least 10 switches in nanosleep, got $n" \
	test "$n" -ge 10 -a "$n" -le 12 || show "$tmp/cs.rep"

# task-clock at 99 Hz on the burner: it samples the burner's chain like cpu-clock. The floor is
# low because a loaded test machine gives the burner a fraction of a CPU; the share is not.
rec tc -q -e task-clock -F 99 -o "$tmp/tc.stk" -- "$WL/wl_burner" 2
check_eq events.task_clock.exit 0 $? "$tmp/tc.err"
folded tc "$tmp/tc.stk"
all=$(sum_folded "$tmp/tc.rep" '^wl_burner;')
n=$(sum_folded "$tmp/tc.rep" '^wl_burner;.*;main;stk_top;stk_mid;stk_leaf( |;|$)')
check_true events.task_clock.samples "at least 30 burner samples in 2 s at 99 Hz, got $n" \
	test "$n" -ge 30 || show "$tmp/tc.rep"
check_true events.task_clock.share "at least 90% of $all samples in stk_leaf's chain, got $n" \
	test $((n * 100)) -ge $((all * 90)) || show "$tmp/tc.rep"

# cpu-migrations: attaches and records (a count depends on the scheduler: not asserted).
rec cm -q -e cpu-migrations -D 1 -o "$tmp/cm.stk"
check_eq events.cpu_migrations.exit 0 $? "$tmp/cm.err"

# An unknown name: usage error (exit 2) listing the names, no file.
rec bad -e no-such-event -D 1 -o "$tmp/bad.stk"
rc=$?
check_eq events.unknown.exit 2 $rc "$tmp/bad.err"
check_true events.unknown.lists "the event names in the message" \
	grep -q "^stkrec: unknown event 'no-such-event' (events: cpu-clock, task-clock, page-faults, context-switches, cpu-migrations, cycles, instructions, cache-misses, branch-misses)$" \
	"$tmp/bad.err" || show "$tmp/bad.err"
check_true events.unknown.no_file "no capture file" test ! -e "$tmp/bad.stk"

# Hardware events: a machine whose PMU is exposed has /sys/bus/event_source/devices/cpu (x86
# core PMU; cpu_core/cpu_atom on hybrid parts). Without it (this VM) -e cycles is one clear line.
if ls -d /sys/bus/event_source/devices/cpu* >/dev/null 2>&1; then
	rec hw -q -e cycles -F 99 -o "$tmp/hw.stk" -- "$WL/wl_burner" 2
	check_eq events.cycles.exit 0 $? "$tmp/hw.err"
	folded hw "$tmp/hw.stk"
	n=$(sum_folded "$tmp/hw.rep" '^wl_burner;.*;main;stk_top;stk_mid;stk_leaf( |;|$)')
	check_true events.cycles.samples "at least 30 burner samples on cycles, got $n" \
		test "$n" -ge 30 || show "$tmp/hw.rep"
else
	for ev in cycles instructions cache-misses branch-misses; do
		rec "hw_$ev" -e "$ev" -D 1 -o "$tmp/hw_$ev.stk"
		check_error "events.$ev.no_pmu" 1 $? "$tmp/hw_$ev.err" "$tmp/hw_$ev.stk" \
			"^stkrec: cannot sample '$ev': this machine has no hardware PMU event for it \\(perf_event_open: "
	done
fi
e2e_done
