#!/usr/bin/env bash
# Python frames (docs/bpf.md 10): Debian's /usr/bin/python3 (3.11, not rebuilt) runs
# tests/workloads/wl_python.py, whose chain of pure Python calls (module, function, method,
# lambda through map, a recursion of 5, a generator, a C sort calling a Python key) is known
# line by line. Every check fails without Python frames: the chain is the Python names. Each
# mode of stkrec: sampling, a tracepoint and a uprobe (counted), --snoop, --offcpu; the files of
# --rotate and --flight.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

py=/usr/bin/python3
if [ ! -x "$py" ] || ! "$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
	not_ok python.sh "needs Debian 12's $py (3.11)"
	exit 1
fi
not_grep() { ! grep -qE -- "$1" "$2"; }
mkdir -p "$tmp/py"
cp "$(dirname "$0")/../workloads/wl_python.py" "$tmp/py/wl_python.py"
script=$tmp/py/wl_python.py

# at TEXT: the line of the script holding TEXT (the chain's call sites)
at() { grep -nF -- "$1" "$script" | grep -v '^[0-9]*:#' | head -1 | cut -d: -f1; }
# at_in FUNCTION TEXT: the line of TEXT in FUNCTION's body
at_in() { awk -v f="def $1(" -v t="$2" 'index($0, f) { in_f = 1 } in_f && index($0, t) { print NR; exit }' "$script"; }
f="wl_python.py"
# The chain root first, to the leaf's frame (any line of leaf), as folded frames.
chain="<module> \\($f:$(at 'sys.exit(main(sys.argv))')\\);main \\($f:$(at 'Worker(mode, n).handle()')\\)"
chain+=";Worker.handle \\($f:$(at 'list(map(lambda')\\);(.*;)?"
chain+="Worker.handle.<locals>.<lambda> \\($f:$(at 'list(map(lambda')\\)"
r="recurse \\($f:$(at 'return recurse(depth - 1')\\)"
chain+=";$r;$r;$r;$r;recurse \\($f:$(at 'return sum(produce')\\);(.*;)?"
chain+="produce \\($f:$(at 'yield leaf')\\);leaf \\($f:"

# ---- 99 Hz sampling: the whole chain under Py_BytesMain ------------------------------------
rec prof -q -F 99 -o "$tmp/prof.stk" -- "$py" "$script" spin 3
check_eq python.profile.exit 0 $? "$tmp/prof.err"
folded prof "$tmp/prof.stk" -U
check_share python.profile "$tmp/prof.rep" "^python3;.*<module> \\($f:" \
	"^python3;_start;.*;Py_BytesMain;.*;$chain[0-9]+\\)" 200 95 "read the whole chain" \
	"$tmp/prof.stk"
# the C sort calls the Python key: native frames between two runs of Python frames
check_true python.profile.c_between "a sample in keyfn called by sorted" \
	grep -qE "leaf \\($f:[0-9]+\\);builtin_sorted[^;]*;(.*;)?keyfn \\($f:" "$tmp/prof.rep"
# mixed keeps the interpreter's frames; native drops the Python ones
folded mixed "$tmp/prof.stk" -U --python-frames mixed
check_true python.mixed "each run of Python frames, then the interpreter activation's frame" \
	grep -qE ";PyEval_EvalCode;<module> \\($f:[0-9]+\\);main \\($f:[0-9]+\\);Worker.handle \\($f:[0-9]+\\);_PyEval_EvalFrameDefault;PyObject_Vectorcall;" \
	"$tmp/mixed.rep"
folded native "$tmp/prof.stk" -U --python-frames native
check_true python.native "no Python frame with --python-frames native" \
	not_grep "\\($f:" "$tmp/native.rep"

# ---- --rotate and --flight: each file names the Python frames its stacks hold -------------
# Every file after the first holds the code objects' CODES entries again (format.md 4.11): its
# chains are named in full though the first file already held their names. A flight dump
# copies several in-memory files: each entry once.
mkdir "$tmp/rot" "$tmp/fl"
rec rot -q -i 1 --rotate 1 -F 99 -o "$tmp/rot/rot.stk" -- "$py" "$script" spin 4
check_eq python.rotate.exit 0 $? "$tmp/rot.err"
mapfile -t rotated < <(find "$tmp/rot" -name 'rot-*.stk' | sort)
check_true python.rotate.files "at least 3 files, got ${#rotated[@]}" test "${#rotated[@]}" -ge 3
: >"$tmp/rot_later.rep"
for ((i = 1; i < ${#rotated[@]}; i++)); do
	folded "rot$i" "${rotated[$i]}" -U
	cat "$tmp/rot$i.rep" >>"$tmp/rot_later.rep"
done
check_share python.rotate.later "$tmp/rot_later.rep" "^python3;.*<module> \\($f:" \
	"^python3;_start;.*;Py_BytesMain;.*;$chain[0-9]+\\)" 100 95 "read the whole chain"
rec fl -q -i 1 --flight 3 --dump-on-exit -F 99 -o "$tmp/fl/fl.stk" -- "$py" "$script" spin 4
check_eq python.flight.exit 0 $? "$tmp/fl.err"
dump=$(sed -n 's/^stkrec: flight recorder: wrote .* to \(.*\)$/\1/p' "$tmp/fl.err" | tail -1)
folded fl "$dump" -U
check_share python.flight "$tmp/fl.rep" "^python3;.*<module> \\($f:" \
	"^python3;_start;.*;Py_BytesMain;.*;$chain[0-9]+\\)" 100 95 "read the whole chain" "$dump"
"$PWD/$OUTPUT/tests/tools/capdump" "$dump" | awk '/^  code / { print $2 }' >"$tmp/fl.ids"
check_eq python.flight.codes_once 0 "$(sort "$tmp/fl.ids" | uniq -d | wc -l)" "$tmp/fl.ids"
check_true python.flight.codes "CODES entries in the dump" test -s "$tmp/fl.ids"

# ---- events: exact counts, the exact chain in every one ------------------------------------
n=2000
rec tp -q -o "$tmp/tp.stk" t:syscalls:sys_enter_getppid -- "$py" "$script" getppid "$n"
check_eq python.getppid.exit 0 $? "$tmp/tp.err"
folded tp "$tmp/tp.stk"
check_eq python.getppid.count "$n" "$(sum_folded "$tmp/tp.rep")" "$tmp/tp.rep"
check_eq python.getppid.chain "$n" \
	"$(sum_folded "$tmp/tp.rep" ";Py_BytesMain;.*;$chain$(at 'os.getppid()')\\);(.*;)?getppid;")" \
	"$tmp/tp.rep"

n=500
rec ma -q -o "$tmp/ma.stk" c:malloc -- "$py" "$script" malloc "$n"
check_eq python.malloc.exit 0 $? "$tmp/ma.err"
folded ma "$tmp/ma.stk"
check_eq python.malloc.chain "$n" \
	"$(sum_folded "$tmp/ma.rep" ";Py_BytesMain;.*;$chain$(at 'bytearray(1 << 20)')\\);(.*;)?malloc ")" \
	"$tmp/ma.rep"

# ---- --snoop: each event recorded alone, with the exact chain ------------------------------
n=300
rec sn -q --snoop -o "$tmp/sn.stk" t:syscalls:sys_enter_getppid -- "$py" "$script" getppid "$n"
check_eq python.snoop.exit 0 $? "$tmp/sn.err"
report snl "$tmp/sn.stk" -q
check_eq python.snoop.events "$n" \
	"$(grep -cE '^[0-9]+\.[0-9]{9} +t:syscalls:sys_enter_getppid$' "$tmp/snl.rep")" "$tmp/snl.rep"
# stacksnoop's layout: a line per frame, the leaf's at the line of os.getppid()
check_eq python.snoop.leaf "$n" \
	"$(grep -cxE "$(printf '\t')leaf \\($f:$(at 'os.getppid()')\\)" "$tmp/snl.rep")" "$tmp/snl.rep"
folded snf "$tmp/sn.stk"
check_eq python.snoop.chain "$n" \
	"$(sum_folded "$tmp/snf.rep" ";Py_BytesMain;.*;$chain$(at 'os.getppid()')\\);(.*;)?getppid;")" \
	"$tmp/snf.rep"

# ---- --offcpu: the time blocked in sleep(), under the Python chain --------------------------
# (stacks taken at the switch-out, walked by stkrec: the deferred path, docs/bpf.md 7)
n=40
rec off -q --offcpu -o "$tmp/off.stk" -- "$py" "$script" sleep "$n"
check_eq python.offcpu.exit 0 $? "$tmp/off.err"
folded off "$tmp/off.stk"
slept=$(sum_folded "$tmp/off.rep" ';clock_nanosleep;(.*;)?do_nanosleep;')
check_true python.offcpu.time "at least 90% of $n x 20 ms asleep in clock_nanosleep, got $slept us" \
	test "$slept" -ge $((n * 20000 * 9 / 10))
check_eq python.offcpu.chain "$slept" "$(sum_folded "$tmp/off.rep" \
	";Py_BytesMain;.*;$chain$(at 'time.sleep(0.02)')\\);(.*;)?clock_nanosleep;(.*;)?do_nanosleep;")" \
	"$tmp/off.rep"

# ---- two threads: each sample names its own thread's function -----------------------------
rec thr -q -F 99 -o "$tmp/thr.stk" -- "$py" "$script" threads 3
check_eq python.threads.exit 0 $? "$tmp/thr.err"
folded thr "$tmp/thr.stk" -U
th="Thread._bootstrap \\(threading.py:[0-9]+\\);Thread._bootstrap_inner \\(threading.py:[0-9]+\\)"
th+=";Thread.run \\(threading.py:[0-9]+\\)"
check_true python.threads.a "samples in spin_a under Thread.run" \
	grep -qE "$th;(.*;)?spin_a \\($f:" "$tmp/thr.rep"
check_true python.threads.b "samples in spin_b under Thread.run" \
	grep -qE "$th;(.*;)?spin_b \\($f:" "$tmp/thr.rep"
check_eq python.threads.mixed 0 "$(sum_folded "$tmp/thr.rep" "spin_a.*spin_b|spin_b.*spin_a")" \
	"$tmp/thr.rep"
# Every sample of spin_a, the generator's too, with each frame spliced after the interpreter
# activation that runs it: the generator expression under gen_iternext, never one activation
# off (pairing activations by rank did that in the generator's prologue: 23 of 94 samples).
# Natives between runs of Python frames: names without " (", as many as they are only where
# they may be.
nat="(;[^;( ]+)*"
loop=$(at_in spin_a 'while spin_clock() < end:') body=$(at_in spin_a 'sum(i * i for')
clock="spin_clock \\($f:$(at 'return sum(os.times()')\\)"
one=";[^;( ]+"	# the one native frame between Thread.run and the function it calls
exact="^python3;clone3;start_thread;pythread_wrapper;thread_run[^;(]*;method_vectorcall[^;(]*$one"
exact+=";$th$one;spin_a \\($f:"
gx="spin_a.<locals>.<genexpr> \\($f:$body\\)"	# run by gen_iternext, or made (in spin_a's activation)
exact+="($loop\\)(;$clock)?$nat|$body\\)(;$gx$nat|$nat(;gen_iternext[^;(]*;$gx$nat)?)) [0-9]+$"
all_a=$(sum_folded "$tmp/thr.rep" ";spin_a ")
check_true python.threads.exact_events "at least 50 samples of spin_a, got $all_a" \
	test "$all_a" -ge 50
check_eq python.threads.exact "$all_a" "$(sum_folded "$tmp/thr.rep" "$exact")" \
	"$tmp/thr.rep" || awk -v a=";spin_a " -v p="$exact" '$0 ~ a && $0 !~ p' "$tmp/thr.rep" |
	head -5 | sed -e 's/^/    miss| /'

# ---- a container: the interpreter and the script only in another mount namespace ------------
# (stkrec reads the process's objects through /proc/PID, not at their paths on this host)
ns=$tmp/ns_only	# empty here; the namespace mounts its own tmpfs on it
mkdir -p "$ns"
rec ns -q -F 99 -o "$tmp/ns.stk" -- unshare -m sh -c 'mount -t tmpfs none "$1" &&
	cp /usr/bin/python3.11 "$2" "$1/" && exec "$1/python3.11" "$1/wl_python.py" spin 2' \
	sh "$ns" "$script"
check_eq python.container.exit 0 $? "$tmp/ns.err"
check_true python.container.elsewhere "no python3.11 at $ns on this host" test ! -e "$ns/python3.11"
folded ns "$tmp/ns.stk" -U
check_share python.container "$tmp/ns.rep" "^python3.11;.*<module> \\($f:" \
	"^python3.11;_start;.*;Py_BytesMain;.*;$chain[0-9]+\\)" 100 95 "read the whole chain" \
	"$tmp/ns.stk"

# ---- the report anywhere: no python, no script, no debug files ------------------------------
away() {
	local name=$1 cap=$2
	shift 2
	unshare -m sh -c 'mount --bind /dev/null /usr/bin/python3.11 &&
		mount -t tmpfs none /usr/lib/python3.11 && mount -t tmpfs none /usr/lib/debug &&
		mount -t tmpfs none "$1" && shift && exec "$@"' sh "$tmp/py" \
		"$STKREPORT" "$@" "$cap" >"$tmp/$name.rep" 2>"$tmp/$name.rerr"
}
away prof_away "$tmp/prof.stk" -f -q -U
check_eq python.away.exit 0 $? "$tmp/prof_away.rerr"
check_true python.away.identical "the same report without python (diff below)" \
	cmp -s "$tmp/prof.rep" "$tmp/prof_away.rep" ||
	diff "$tmp/prof.rep" "$tmp/prof_away.rep" | head -10
report list "$tmp/prof.stk" -q -v
away list_away "$tmp/prof.stk" -q -v
check_true python.away.verbose "the same -v report without python" \
	cmp -s "$tmp/list.rep" "$tmp/list_away.rep"
check_true python.verbose.marker "-v marks Python frames with [py] and their code object" \
	grep -qE "\\[py\\] leaf \\($tmp/py/$f:[0-9]+\\) \\[code 0x[0-9a-f]+ \\+[0-9]+\\]" \
	"$tmp/list.rep"

# ---- a python started before stkrec, exited before the report ------------------------------
mkfifo "$tmp/go"
"$py" "$script" wait spin 3 <"$tmp/go" &
early=$!
e2e_bg+=("$early")
exec 7>"$tmp/go"
sleep 0.5
rec_bg early -q -F 99 -D 4 -p "$early" -o "$tmp/early.stk"
rec_ready early || sleep 1
echo go >&7
exec 7>&-
rec_wait "$REC_PID"
check_eq python.early.exit 0 $? "$tmp/early.err"
wait "$early"
folded early "$tmp/early.stk" -U
check_share python.early "$tmp/early.rep" "^python3;.*<module> \\($f:" \
	"^python3;.*;Py_BytesMain;.*;$chain[0-9]+\\)" 100 95 "read the whole chain" \
	"$tmp/early.stk"

# ---- not Python, or a Python without _PyRuntime: native stacks, one counted reason ----------
cp /usr/bin/python3.11 "$tmp/py/python3.11-norun"
# the dynamic symbol's name, renamed in .dynstr: the interpreter runs, stkrec finds no runtime
"$py" - "$tmp/py/python3.11-norun" <<'EOF'
import sys
p = sys.argv[1]
b = open(p, "rb").read()
assert b.count(b"\0_PyRuntime\0") == 1
open(p, "wb").write(b.replace(b"\0_PyRuntime\0", b"\0_PyRuntimX\0"))
EOF
rec norun -q -F 99 -o "$tmp/norun.stk" -- "$tmp/py/python3.11-norun" "$script" spin 2
check_eq python.norun.exit 0 $? "$tmp/norun.err"
folded norun "$tmp/norun.stk" -U
"$STKREPORT" "$tmp/norun.stk" >/dev/null 2>"$tmp/norun.sum"
check_true python.norun.native "no Python frame, native stacks to Py_BytesMain" \
	sh -c "! grep -q '($f:' '$tmp/norun.rep' && grep -q ';Py_BytesMain;' '$tmp/norun.rep'"
check_eq python.norun.reason 1 \
	"$(lost_count "$tmp/norun.sum" "Python processes without the _PyRuntime symbol: native frames")" \
	"$tmp/norun.sum"
rec notpy -q -F 99 -o "$tmp/notpy.stk" -- "$WL/wl_burner" 1
check_eq python.notpy.exit 0 $? "$tmp/notpy.err"
"$STKREPORT" "$tmp/notpy.stk" >/dev/null 2>"$tmp/notpy.sum"
check_true python.notpy.no_reason "no Python loss for a program that is not Python" \
	not_grep "Python" "$tmp/notpy.sum"
e2e_done
