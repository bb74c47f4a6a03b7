#!/usr/bin/env bash
# Deleted and replaced binaries: one workload's binary is deleted before its events, another's
# is replaced (renamed over by a different program). stkrec reads both through
# /proc/PID/map_files; the report names their frames from the embedded copies, never from the
# file now at the path.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

n=300
# Deleted: started, probed, removed, and only then its events (their notification reads the
# maps again: " (deleted)").
mkdir -p "$tmp/del"
cp "$WL/wl_uprobe" "$tmp/del/wl_del"
wl_bg del "$tmp/del/wl_del" -v -w "$n"
rec_bg del -q -p "$WL_PID" -o "$tmp/del.stk" "$tmp/del/wl_del:wl_target"
rec_ready del || not_ok del.ready "stkrec did not start: $(head -1 "$tmp/del.err")"
rm -f "$tmp/del/wl_del"
wl_release
sleep 1.2
rec_signal INT "$REC_PID"
rec_wait "$REC_PID"
check_eq del.exit 0 $? "$tmp/del.err"
dump=$("$PWD/$OUTPUT/tests/tools/capdump" "$tmp/del.stk")
check_true del.deleted_flag "a mapping of wl_del flagged DELETED (0x1)" \
	grep -qE '^  map .* flags=0x[0-9a-f]*[13579bdf] .*/wl_del$' <<<"$dump"
check_true del.embedded_whole "wl_del embedded whole (data=N > 0)" \
	grep -qE '^object .*path=.*/wl_del .*data=[1-9]' <<<"$dump"
folded del "$tmp/del.stk" -U
check_eq del.report_exit 0 $? "$tmp/del.rerr"
check_eq del.chain "$n" "$(sum_folded "$tmp/del.rep" ';main;wl_outer;wl_middle;wl_target ')" \
	"$tmp/del.rep"

# Replaced: renamed over by another program while it runs (maps say " (deleted)" too).
mkdir -p "$tmp/rep"
cp "$WL/wl_uprobe" "$tmp/rep/wl_rep"
wl_bg rep "$tmp/rep/wl_rep" -v -w "$n"
rec_bg rep -q -p "$WL_PID" -o "$tmp/rep.stk" "$tmp/rep/wl_rep:wl_target"
rec_ready rep || not_ok rep.ready "stkrec did not start: $(head -1 "$tmp/rep.err")"
cp "$WL/wl_syscall" "$tmp/rep/wl_rep.new"
mv -f "$tmp/rep/wl_rep.new" "$tmp/rep/wl_rep"
wl_release
sleep 1.2
rec_signal INT "$REC_PID"
rec_wait "$REC_PID"
check_eq rep.exit 0 $? "$tmp/rep.err"
folded rep "$tmp/rep.stk" -U
check_eq rep.report_exit 0 $? "$tmp/rep.rerr"
check_eq rep.chain "$n" "$(sum_folded "$tmp/rep.rep" ';main;wl_outer;wl_middle;wl_target ')" \
	"$tmp/rep.rep"
e2e_done
