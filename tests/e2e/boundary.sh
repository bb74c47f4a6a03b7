#!/usr/bin/env bash
# The drain protocol at interval boundaries (docs/bpf.md 4): 1,000,000 events, 500,000 on the
# getppid tracepoint and 500,000 on a uprobe, from 4 threads, recorded with -i 1 while two CPU
# hogs keep preempting the threads (and with them uprobe programs, which run preemptible).
# Every thread's totals must be exact, nothing lost and nothing counted into a generation while
# it was drained (BPF reports such an event itself: CAP_LOSS_DRAIN_RACE). Five runs in a row.
# Then the same check for perf-event sampling (programs in NMI context): 999 Hz with -i 1.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

n=500000	# iterations over all threads; each is one tracepoint and one uprobe event
threads=4
runs=${BOUNDARY_RUNS:-5}
per_thread=$((n / threads))

for run in $(seq "$runs"); do
	name=b$run
	"$WL/wl_burner" 120 &
	hog1=$!
	"$WL/wl_burner" 120 &
	hog2=$!
	e2e_bg+=("$hog1" "$hog2")
	wl_bg "$name" "$WL/wl_rate" -u -j "$threads" -w -v "$n"
	rec_bg "$name" -q -i 1 -p "$WL_PID" -o "$tmp/$name.stk" t:syscalls:sys_enter_getppid \
		"$WL/wl_rate:wl_target"
	rec_ready "$name" && wl_release
	rec_signal INT "$REC_PID"
	rec_wait "$REC_PID"
	check_eq "boundary.$run.exit" 0 $? "$tmp/$name.err"
	kill "$hog1" "$hog2" 2>/dev/null
	wait "$hog1" "$hog2" 2>/dev/null

	# Per thread and probe: probe 0 is the tracepoint, probe 1 the uprobe.
	report "$name" "$tmp/$name.stk" -q --csv \
		--sql 'SELECT tid, probe, sum(count) FROM samples GROUP BY tid, probe ORDER BY tid, probe'
	totals=$(tail -n +2 "$tmp/$name.rep" | tr -d '\r' | awk -F, '{ print $2 ":" $3 }' |
		sort | uniq -c | awk '{ print $1 "x" $2 }' | tr '\n' ' ')
	check_eq "boundary.$run.per_thread" "${threads}x0:$per_thread ${threads}x1:$per_thread " \
		"$totals" "$tmp/$name.rep"
	report "${name}s" "$tmp/$name.stk"
	check_eq "boundary.$run.no_losses" "" "$(grep '^# lost:' "$tmp/${name}s.rerr")" \
		"$tmp/${name}s.rerr"
	intervals=$(rec_intervals "$name")
	check_true "boundary.$run.intervals" "the run to span interval boundaries, got $intervals" \
		test "${intervals:-0}" -ge 3
	echo "# boundary.$run: $intervals intervals"
done

# Sampling: 5 s at 999 Hz of a burner among two more, -i 1: no sample lost or late.
"$WL/wl_burner" 30 &
hog=$!
e2e_bg+=("$hog")
wl_bg sample "$WL/wl_burner" -v 30
t0=$(cpu_ticks "$WL_PID")
rec sample -q -F 999 -i 1 -D 5 -p "$WL_PID" -o "$tmp/sample.stk"
check_eq boundary.sample.exit 0 $? "$tmp/sample.err"
ticks=$(($(cpu_ticks "$WL_PID") - t0))
kill "$hog" "$WL_PID" 2>/dev/null
report samples "$tmp/sample.stk"
check_eq boundary.sample.no_losses "" "$(grep '^# lost:' "$tmp/samples.rerr")" "$tmp/samples.rerr"
# half of what 999 Hz takes of the burner's CPU time (other work may share the host's CPUs)
min=$((999 * ticks / 200))
check_true boundary.sample.events "at least $min samples in the capture ($ticks ticks of CPU)" \
	test "$(rec_events sample)" -ge "$min" -a "$(rec_events sample)" -gt 0
e2e_done
