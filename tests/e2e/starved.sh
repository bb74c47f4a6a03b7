#!/usr/bin/env bash
# New processes while stkrec is starved of CPU: 16 busy loops pinned to stkrec's CPU, the traced
# processes on another. A new process's first events wait for stkrec to read it (BPF defers
# them: docs/bpf.md 7); none of their user stacks may be cut for want of room meanwhile, and the
# counts stay exact:
#  - 6 x 500,000 USDT events of 6 processes started at once (system-wide spec on the file);
#  - a 99 Hz system-wide profile while 10 compilers start (gcc -O2, cc1 has no frame pointers).
# Before the deferred events had a thread of their own, raised in priority, and a queue that
# grows, both cut thousands of stacks here ("the ring of deferred events was full": 35,014 to
# 122,371 of the USDT events, 287 to 361 samples of the profile, in three runs each).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

E2E_TIMEOUT=300	# 3,000,000 uprobe traps on one CPU of a shared host
nhogs=16
if [ "$(nproc)" -lt 2 ]; then
	skip "${0##*/}" "needs 2 CPUs: stkrec and its hogs on one, the traced processes on another"
	exit 0
fi

# hogs_start / hogs_stop: the busy loops on CPU 0, where stkrec runs.
hogs=()
hogs_start() {
	local i
	for ((i = 0; i < nhogs; i++)); do
		taskset -c 0 sh -c 'while :; do :; done' &
		hogs+=("$!")
		e2e_bg+=("$!")
	done
}
hogs_stop() {
	kill "${hogs[@]}" 2>/dev/null
	wait "${hogs[@]}" 2>/dev/null
	hogs=()
}

# starved NAME ARGS...: stkrec ARGS on CPU 0 beside the hogs, in the background (rec_bg).
starved() {
	local name=$1
	shift
	rec_bg "$name" -q -o "$tmp/$name.stk" "$@"
	rec_ready "$name" || not_ok "$name.ready" "stkrec did not start: $(head -1 "$tmp/$name.err")"
	taskset -a -c -p 0 "$(rec_child "$REC_PID")" >/dev/null
}

# starved_end NAME WHAT PID...: once the processes PID... have exited (NAME.WHAT: all with 0),
# the hogs stop, then stkrec, and its capture is reported (-f -P).
starved_end() {
	local name=$1 what=$2 p failed=0
	shift 2
	for p in "$@"; do
		wait "$p" || failed=$((failed + 1))
	done
	check_eq "$name.$what" 0 "$failed"
	hogs_stop
	sleep 1.2
	rec_signal INT "$REC_PID"
	rec_wait "$REC_PID"
	check_eq "$name.exit" 0 $? "$tmp/$name.err"
	report "$name" "$tmp/$name.stk" -f -P
}

# no_room_lost NAME: none of the losses of stkrec running late may appear in NAME's summary.
no_room_lost() {
	check_eq "$1.no_room_lost" "" "$(grep -E '^# lost: .*(ring of deferred events was full|map full)' \
		"$tmp/$1.rerr")" "$tmp/$1.rerr"
}

# -- USDT: 6 new processes of 500,000 events each, started together.
n=500000 nprocs=6
name=usdt
hogs_start
starved "$name" "u:$WL/wl_usdt:tick"
pids=()
for ((i = 0; i < nprocs; i++)); do
	taskset -c 1 "$WL/wl_usdt" "$n" &
	pids+=("$!")
done
starved_end "$name" workloads "${pids[@]}"
check_eq "$name.count" $((nprocs * n)) "$(sum_folded "$tmp/$name.rep" '^wl_usdt;')" "$tmp/$name.rep"
check_eq "$name.whole" $((nprocs * n)) \
	"$(sum_folded "$tmp/$name.rep" "^wl_usdt;_start(;.*)?$(chain wl_tick)")" "$tmp/$name.rep"
# -P: a line per process and stack, each process's whole chain its 500,000 events
check_eq "$name.per_process" "$(seq "$nprocs" | sed "s/.*/$n/")" \
	"$(awk '/^wl_usdt;/ { print $NF }' "$tmp/$name.rep" | sort)" "$tmp/$name.rep"
check_eq "$name.lost" "" "$(grep '^# lost:' "$tmp/$name.rerr")" "$tmp/$name.rerr"

# -- A profile while 10 compilers start: a C file of 400 functions, compiled 10 times at once.
if ! command -v gcc >/dev/null; then
	skip profile "no gcc to start compilers with"
	e2e_done
fi
src=$tmp/cc.c
for ((i = 0; i < 400; i++)); do
	echo "int f$i(int x) { int s = 0; for (int j = 0; j < x; j++) s += (j * $i) ^ (s >> 3); return s; }"
done >"$src"
name=profile
hogs_start
starved "$name" -F 99
pids=()
for ((i = 0; i < 10; i++)); do
	taskset -c 1 gcc -O2 -c "$src" -o "$tmp/cc$i.o" &
	pids+=("$!")
done
starved_end "$name" compilers "${pids[@]}"
check_true "$name.cc1" "samples of cc1" test "$(sum_folded "$tmp/$name.rep" '^cc1;')" -gt 0
check_eq "$name.count" "$(rec_events "$name")" "$(sum_folded "$tmp/$name.rep")" "$tmp/$name.rep"
no_room_lost "$name"
e2e_done
