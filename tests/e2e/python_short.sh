#!/usr/bin/env bash
# Python frames of short-lived processes (docs/bpf.md 10): 200 runs, one after another, of a
# script that lives about 20 ms on Debian's /usr/bin/python3.11 (not rebuilt), while stkrec
# records the whole system with a tracepoint on getppid(). Each run calls os.getppid() once,
# from a known chain: every event must read it, named, with its lines; then the same runs as
# the children of -- sh -c 'LOOP', and 100 runs while stkrec is starved of CPU. Before BPF
# copied the names at a code object's first sight and walked a new process's chain with its
# executable's interpreter (py_exes), 200 runs gave 197 events with [unknown] Python frames, 2
# with none, 1 named.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

py=/usr/bin/python3.11
if [ ! -x "$py" ] || ! "$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
	not_ok python_short.sh "needs Debian 12's $py (3.11)"
	exit 1
fi
runs=${PYSHORT_RUNS:-200}
mkdir -p "$tmp/py"
# The runs' own comm and file name (a symbolic link execs as its name, the same executable):
# other processes of the shared host call getppid() too.
me=pys$$
ln -s "$py" "$tmp/py/$me"
f=short_$$.py
cat >"$tmp/py/$f" <<'EOF'
import os
def leaf():
    os.getppid()
def mid():
    leaf()
mid()
EOF

# the whole chain, named, each frame at its line, under the interpreter's own frames
exact="^$me;_start;.*;Py_BytesMain;.*;<module> \\($f:6\\);mid \\($f:5\\);leaf \\($f:3\\);"
exact+="[^();]+(;[^();]+)* [0-9]+$"

# short NAME RUNS [CPU]: the script RUNS times, one after another (on CPU), while stkrec, in the
# background since rec_bg NAME, records; then every event must read the exact chain.
short() {
	local name=$1 runs=$2 i pin=()
	[ $# -ge 3 ] && pin=(taskset -c "$3")
	for ((i = 0; i < runs; i++)); do
		"${pin[@]}" "$tmp/py/$me" -S "$tmp/py/$f" || break
	done
	check_eq "$name.runs" "$runs" "$i"
	hogs_stop
	rec_signal INT "$REC_PID"
	rec_wait "$REC_PID"
	check_eq "$name.exit" 0 $? "$tmp/$name.err"
	check_short "$name" "$runs"
}

# check_short NAME RUNS: RUNS events in $tmp/NAME.stk, each with the exact chain, all named.
check_short() {
	local name=$1 runs=$2
	grep '^stkrec: python:' "$tmp/$name.err"
	folded "$name" "$tmp/$name.stk" -P	# comm first
	check_eq "$name.events" "$runs" "$(sum_folded "$tmp/$name.rep" "^$me;")" "$tmp/$name.rep"
	check_eq "$name.chain" "$runs" "$(sum_folded "$tmp/$name.rep" "$exact")" ||
		grep "^$me;" "$tmp/$name.rep" | grep -vE "$exact" | head -5 | sed -e 's/^/    miss| /'
	"$STKREPORT" "$tmp/$name.stk" >/dev/null 2>"$tmp/$name.sum"
	check_eq "$name.unnamed" 0 \
		"$(lost_count "$tmp/$name.sum" "Python code objects whose names could not be read")" \
		"$tmp/$name.sum"
}

# hogs_start N / hogs_stop: N busy loops on CPU 0 (as tests/e2e/starved.sh).
hogs=()
hogs_start() {
	local i
	for ((i = 0; i < $1; i++)); do
		taskset -c 0 sh -c 'while :; do :; done' &
		hogs+=("$!")
		e2e_bg+=("$!")
	done
}
hogs_stop() {
	[ ${#hogs[@]} -gt 0 ] || return 0
	kill "${hogs[@]}" 2>/dev/null
	wait "${hogs[@]}" 2>/dev/null
	hogs=()
}

rec_bg python_short -q -o "$tmp/python_short.stk" t:syscalls:sys_enter_getppid
rec_ready python_short || sleep 2
short python_short "$runs"

# The runs as -- COMMAND's children: stkrec follows each process the command starts.
# shellcheck disable=SC2016 # the loop's $1..$3 are sh's
rec python_short.command -q -o "$tmp/python_short.command.stk" t:syscalls:sys_enter_getppid \
	-- sh -c 'i=0; while [ $i -lt "$1" ]; do "$2" -S "$3" || exit 1; i=$((i + 1)); done' \
	sh "$runs" "$tmp/py/$me" "$tmp/py/$f"
check_eq python_short.command.exit 0 $? "$tmp/python_short.command.err"
check_short python_short.command "$runs"

# The same while stkrec is starved of CPU (at nice 19, pinned beside busy loops): it reads each
# process long after its first events, which BPF walks with its executable's interpreter
# (py_exes). Without that, 68 and 80 of 100 runs had no Python frame here.
if [ "$(nproc)" -ge 2 ]; then
	rec_bg python_short.starved -q -o "$tmp/python_short.starved.stk" t:syscalls:sys_enter_getppid
	rec_ready python_short.starved || sleep 2
	taskset -a -c -p 0 "$(rec_child "$REC_PID")" >/dev/null
	mapfile -t threads < <(ls "/proc/$(rec_child "$REC_PID")/task")
	renice -n 19 -p "${threads[@]}" >/dev/null
	hogs_start "${PYSHORT_HOGS:-4}"
	short python_short.starved "${PYSHORT_STARVED_RUNS:-100}" 1
else
	skip python_short.starved "needs 2 CPUs: stkrec and busy loops on one, python on another"
fi
e2e_done
