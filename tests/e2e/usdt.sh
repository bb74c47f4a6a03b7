#!/usr/bin/env bash
# USDT probes: stkwl:tick (no semaphore) and stkwl:tick_sem (guarded by a semaphore, so it fires
# only when stkrec enables it), exact counts and chains, started by stkrec and attached with -p.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

bin=$WL/wl_usdt
n=50000
rec us -q -o "$tmp/us.stk" "u:$bin:tick" -- "$bin" "$n"
check_eq usdt.exit 0 $? "$tmp/us.err"
check_eq usdt.tracing_line "Tracing 1 functions for \"u:$bin:tick\"... Hit Ctrl-C to end." \
	"$(grep '^Tracing' "$tmp/us.err")" "$tmp/us.err"
folded us "$tmp/us.stk"
check_eq usdt.report_exit 0 $? "$tmp/us.rerr"
check_eq usdt.count "$n" "$(sum_folded "$tmp/us.rep")" "$tmp/us.rep"
# (stackcount's -f: the comm field is empty without -P)
check_eq usdt.chain "$n" "$(sum_folded "$tmp/us.rep" '^;(.*;)?main;wl_outer;wl_middle;wl_tick ')" \
	"$tmp/us.rep"

# -i 1 over several intervals.
rec usi -q -i 1 -o "$tmp/usi.stk" "u:$bin:tick" -- "$bin" -b 3 -d 800 "$n"
check_eq usdt.interval.exit 0 $? "$tmp/usi.err"
folded usi "$tmp/usi.stk"
check_eq usdt.interval.count "$n" "$(sum_folded "$tmp/usi.rep" "$(chain wl_tick)")" "$tmp/usi.rep"

# Semaphore probe, process started by stkrec.
sbin=$WL/wl_usdt_sem
n=3000
rec uss -q -o "$tmp/uss.stk" "u:$sbin:tick_sem" -- "$sbin" "$n"
check_eq usdt.semaphore.exit 0 $? "$tmp/uss.err"
folded uss "$tmp/uss.stk"
check_eq usdt.semaphore.count "$n" "$(sum_folded "$tmp/uss.rep" "$(chain wl_tick_sem)")" \
	"$tmp/uss.rep"

# Semaphore probe, running process attached with -p.
wl_bg ussp "$sbin" -w -v "$n"
rec_bg ussp -q -p "$WL_PID" -o "$tmp/ussp.stk" "u:$sbin:tick_sem"
if rec_ready ussp; then
	wl_release
	sleep 0.3
	rec_signal INT "$REC_PID"
	rec_wait "$REC_PID"
	check_eq usdt.semaphore_p.exit 0 $? "$tmp/ussp.err"
	folded ussp "$tmp/ussp.stk"
	check_eq usdt.semaphore_p.count "$n" "$(sum_folded "$tmp/ussp.rep" "$(chain wl_tick_sem)")" \
		"$tmp/ussp.rep"
else
	not_ok usdt.semaphore_p.ready "a 'Tracing' line within 20 s"
	show "$tmp/ussp.err"
fi
e2e_done
