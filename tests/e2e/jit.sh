#!/usr/bin/env bash
# JIT: wl_jit runs code it generated in anonymous executable memory (jit_stub) and names it in
# /tmp/perf-PID.map. stkrec copies the map into the capture (PERFMAP); the report names the JIT
# frame between wl_middle and the probed wl_jit_target, with the map file gone.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require
[ "$(uname -m)" = x86_64 ] || { skip jit "wl_jit emits x86-64 code"; exit 0; }

bin=$WL/wl_jit
n=400
rec jit -q -o "$tmp/jit.stk" "$bin:wl_jit_target" -- "$bin" "$n"
check_eq jit.exit 0 $? "$tmp/jit.err"
dump=$("$PWD/$OUTPUT/tests/tools/capdump" "$tmp/jit.stk")
pid=$(sed -n 's/^meta pid_filter=//p' <<<"$dump")
rm -f "/tmp/perf-$pid.map"
check_true jit.perfmap_record "a perf-map record with jit_stub" grep -q 'jit_stub' <<<"$dump"
folded jit "$tmp/jit.stk" -U
check_eq jit.report_exit 0 $? "$tmp/jit.rerr"
check_eq jit.chain "$n" \
	"$(sum_folded "$tmp/jit.rep" ';main;wl_outer;wl_middle;jit_stub;wl_jit_target ')" "$tmp/jit.rep"
e2e_done
