#!/usr/bin/env bash
# Python frames of short-lived processes (docs/bpf.md 10): 200 runs, one after another, of a
# script that lives about 20 ms on Debian's /usr/bin/python3.11 (not rebuilt), while stkrec
# records the whole system with a tracepoint on getppid(). Each run calls os.getppid() once,
# from a known chain: every event must read it, named, with its lines. Before BPF copied the
# names at a code object's first sight and walked a new process's chain with its executable's
# interpreter template, 20 runs gave 7 events with [unknown] Python frames, 13 with none.
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

rec_bg short -q -o "$tmp/short.stk" t:syscalls:sys_enter_getppid
rec_ready short || sleep 2
for ((i = 0; i < runs; i++)); do
	"$tmp/py/$me" -S "$tmp/py/$f" || break
done
check_eq python_short.runs "$runs" "$i"
rec_signal INT "$REC_PID"
rec_wait "$REC_PID"
check_eq python_short.exit 0 $? "$tmp/short.err"
grep '^stkrec: python:' "$tmp/short.err"
folded short "$tmp/short.stk" -P	# comm first
check_eq python_short.events "$runs" "$(sum_folded "$tmp/short.rep" "^$me;")" "$tmp/short.rep"
# the whole chain, named, each frame at its line, under the interpreter's own frames
exact="^$me;_start;.*;Py_BytesMain;.*;<module> \\($f:6\\);mid \\($f:5\\);leaf \\($f:3\\);"
exact+="[^();]+(;[^();]+)* [0-9]+$"
check_eq python_short.chain "$runs" "$(sum_folded "$tmp/short.rep" "$exact")" ||
	grep "^$me;" "$tmp/short.rep" | grep -vE "$exact" | head -5 | sed -e 's/^/    miss| /'
"$STKREPORT" "$tmp/short.stk" >/dev/null 2>"$tmp/short.sum"
check_eq python_short.unnamed 0 \
	"$(lost_count "$tmp/short.sum" "Python code objects whose names could not be read")" \
	"$tmp/short.sum"
e2e_done
