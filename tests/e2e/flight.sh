#!/usr/bin/env bash
# The flight recorder (stkrec --flight SECS, issue 27): the last SECS of intervals in memory,
# nothing written until SIGUSR1, which writes them as one capture; recording goes on.
# A workload of six 5 s phases, each with its own chain (phase_a ... phase_f) firing N events:
# --flight 10, SIGUSR1 at 22 s holds the intervals of 12-22 s: phase_d (15-20 s) whole, exactly
# N events, parts of phase_c and phase_e, nothing of the others. A second SIGUSR1 at 28 s writes a
# second file (phase_e whole). Without --dump-on-exit the end writes nothing; with it, one file.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

tp=t:syscalls:sys_enter_getppid
capdump=$PWD/$OUTPUT/tests/tools/capdump
n=200

# phases NAME CAPTURE: "a=N b=N ..." the workload's events per phase chain
phases() {
	folded "$1" "$2" -P
	local p out=""
	for p in a b c d e f; do
		out="$out $p=$(sum_folded "$tmp/$1.rep" "^wl_phases;(.*;)?main;phase_$p;wl_middle;wl_getppid;")"
	done
	echo "${out# }"
}
# phase P LIST: N of P=N in a phases list
phase() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# dumped NTH: the path of the NTH "flight recorder: wrote" line of stkrec's stderr
dumped() { sed -n 's/^stkrec: flight recorder: wrote .* to \(.*\)$/\1/p' "$tmp/fl.err" | sed -n "${1}p"; }

mkdir "$tmp/f"
rec_bg fl -q -i 1 --flight 10 -o "$tmp/f/fl.stk" "$tp"
rec_ready fl || not_ok fl.ready "stkrec did not start: $(head -1 "$tmp/fl.err")"
pid=$(rec_child "$REC_PID")
"$WL/wl_phases" 5 "$n" &
wl=$!
sleep 22
check_true fl.nothing_yet "no file before the signal" test -z "$(ls -A "$tmp/f")"
kill -USR1 "$pid"
wait_for "$tmp/fl.err" '^stkrec: flight recorder: wrote ' 10
check_eq fl.first_dump 0 $? "$tmp/fl.err"
sleep 6
kill -USR1 "$pid"
for ((i = 0; i < 200 && $(grep -c '^stkrec: flight recorder: wrote ' "$tmp/fl.err") < 2; i++)); do
	sleep 0.05
done
wait "$wl"
rec_signal INT "$REC_PID"
rec_wait "$REC_PID"
check_eq fl.exit 0 $? "$tmp/fl.err"
first=$(dumped 1) second=$(dumped 2)
check_true fl.two_files "two dumps, two names, got '$first' and '$second'" \
	test -n "$first" -a -n "$second" -a "$first" != "$second" -a -e "$first" -a -e "$second"
check_eq fl.files_only_dumps 2 "$(ls "$tmp/f" | wc -l)"

p1=$(phases d1 "$first")
echo "# first dump: $p1"
check_eq fl.first.phase_d_whole "$n" "$(phase d "$p1")" "$tmp/d1.rep"
check_true fl.first.phase_c_part "some of phase_c (12-15 s): $p1" test "$(phase c "$p1")" -gt 0
check_true fl.first.phase_e_part "some of phase_e (20-22 s): $p1" test "$(phase e "$p1")" -gt 0
check_eq fl.first.none_older "0 0" "$(phase a "$p1") $(phase b "$p1")"
check_eq fl.first.none_later 0 "$(phase f "$p1")"
# the intervals that ended in the last 10 s (to the nearest interval end): from the first one's
# start to the last one's end, 9.5 to 10.5 s
span=$("$capdump" "$first" | awk '/^interval /{ for (i = 1; i <= NF; i++) {
	if ($i ~ /^start=/ && !s) s = substr($i, 7); if ($i ~ /^end=/) e = substr($i, 5) } }
	END { print int((e - s) / 1000000) }')
check_true fl.first.span "9.5 to 10.5 s of intervals, got $span ms" \
	test "$span" -ge 9400 -a "$span" -le 10600

p2=$(phases d2 "$second")
echo "# second dump: $p2"
check_eq fl.second.phase_e_whole "$n" "$(phase e "$p2")" "$tmp/d2.rep"
check_true fl.second.phase_d_part "some of phase_d (18-20 s): $p2" test "$(phase d "$p2")" -gt 0
check_true fl.second.phase_f_part "some of phase_f (25-28 s): $p2" test "$(phase f "$p2")" -gt 0
check_eq fl.second.none_older "0 0 0" "$(phase a "$p2") $(phase b "$p2") $(phase c "$p2")"

# the end: nothing written without --dump-on-exit, the last SECS with it
mkdir "$tmp/e"
rec quiet -q -i 1 --flight 2 -D 2 -o "$tmp/e/q.stk" "$tp"
check_eq end.exit 0 $? "$tmp/quiet.err"
check_true end.nothing "no file without --dump-on-exit" test -z "$(ls -A "$tmp/e")"
rec atexit -q -i 1 --flight 2 --dump-on-exit -D 3 -o "$tmp/e/x.stk" "$tp"
check_eq end.dump_exit 0 $? "$tmp/atexit.err"
check_eq end.one_file 1 "$(ls "$tmp/e" | grep -c '^x-.*Z\.stk$')" "$tmp/atexit.err"
report atexit "$(ls "$tmp"/e/x-*.stk 2>/dev/null | head -1)"
check_true end.two_intervals "the last 2 s: 2 intervals, got $(grep '^# recorded' "$tmp/atexit.rerr")" \
	grep -qE '^# recorded: .*, intervals: 2$' "$tmp/atexit.rerr"
e2e_done
