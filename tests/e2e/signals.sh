#!/usr/bin/env bash
# SIGINT/SIGTERM end a recording cleanly (exit 0, closing record, exact counts); SIGKILL leaves a
# capture that still reads up to its last complete interval.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

tp=t:syscalls:sys_enter_getppid

# start_workload NAME N: a wl_syscall that waits for SIGUSR1, so the recording (-p, its pid only: other
# processes on the machine may call getppid too) is attached before the first event.
start_workload() {
	wl_bg "$1.wl" "$WL/wl_syscall" -w -v "$2"
}

# signal_case NAME SIG: recording with -i 1, a workload completes, SIG 1.5 s later (in the
# middle of an interval).
signal_case() {
	local name=$1 sig=$2 n=7000 rc
	start_workload "$name" "$n"
	rec_bg "$name" -q -i 1 -p "$WL_PID" -o "$tmp/$name.stk" "$tp"
	if ! rec_ready "$name"; then
		not_ok "$name.ready" "a 'Tracing' line within 20 s"
		show "$tmp/$name.err"
		return
	fi
	wl_release
	sleep 1.5
	rec_signal "$sig" "$REC_PID"
	rec_wait "$REC_PID"
	rc=$?
	check_eq "$name.exit" 0 "$rc" "$tmp/$name.err"
	check_true "$name.closing_line" "'stkrec: wrote N intervals, M events, B bytes to FILE' on stderr" \
		grep -qE "^stkrec: wrote [0-9]+ intervals?, [0-9]+ events?, [0-9]+ bytes to $tmp/$name.stk\$" \
		"$tmp/$name.err" || show "$tmp/$name.err"
	report "$name" "$tmp/$name.stk" -f -P	# -P: the comm first (stackcount's -f)
	check_eq "$name.report_exit" 0 $? "$tmp/$name.rerr"
	check_true "$name.clean_close" "'clean close' and no truncation warning in stkreport's summary" \
		bash -c "grep -q 'clean close' '$tmp/$name.rerr' &&
			! grep -qiE 'truncated|not closed|unclean' '$tmp/$name.rerr'" || show "$tmp/$name.rerr"
	check_eq "$name.count" "$n" "$(sum_folded "$tmp/$name.rep" "^wl_syscall;.*$(chain wl_getppid)")" \
		"$tmp/$name.rep"
}
signal_case sigint INT
signal_case sigterm TERM

# SIGKILL after the workload's interval was written: stkreport exits 0, warns that the capture
# was not closed (or, if the kill tore a chunk, that it is truncated) and counts it all.
n=9000
start_workload kill "$n"
rec_bg kill -q -i 1 -p "$WL_PID" -o "$tmp/kill.stk" "$tp"
if rec_ready kill; then
	wl_release
	sleep 2.5
	rec_signal KILL "$REC_PID"
	rec_wait "$REC_PID"
	report kill "$tmp/kill.stk" -f -P
	check_eq sigkill.report_exit 0 $? "$tmp/kill.rerr"
	check_true sigkill.warning "a 'not closed' or 'truncated after interval' warning on stderr" \
		grep -qE "not closed|^stkreport: $tmp/kill.stk: truncated after interval [0-9]+ \(chunk [0-9]+ at 0x[0-9a-f]+\)" \
		"$tmp/kill.rerr" || show "$tmp/kill.rerr"
	check_true sigkill.not_clean "no 'clean close' in the summary" \
		bash -c "! grep -q 'clean close' '$tmp/kill.rerr'"
	check_eq sigkill.count "$n" "$(sum_folded "$tmp/kill.rep" "^wl_syscall;.*$(chain wl_getppid)")" \
		"$tmp/kill.rep"
	# A torn tail: cut the file inside its last chunk; still readable, still a warning.
	size=$(stat -c %s "$tmp/kill.stk")
	head -c $((size - 5)) "$tmp/kill.stk" >"$tmp/torn.stk"
	report torn "$tmp/torn.stk" -f
	check_eq torn.report_exit 0 $? "$tmp/torn.rerr"
	check_true torn.warning "'stkreport: FILE: truncated after interval N (chunk C at 0xOFF)'" \
		grep -qE "^stkreport: $tmp/torn.stk: truncated after interval [0-9]+ \(chunk [0-9]+ at 0x[0-9a-f]+\)" \
		"$tmp/torn.rerr" ||
		show "$tmp/torn.rerr"
else
	not_ok sigkill.ready "a 'Tracing' line within 20 s"
	show "$tmp/kill.err"
fi
e2e_done
