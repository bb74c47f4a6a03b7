#!/usr/bin/env bash
# Deleted and replaced binaries: one workload's binary is deleted before its events, another's
# is replaced (renamed over by a different program). stkrec reads both through
# /proc/PID/map_files; the report names their frames from the embedded copies, never from the
# file now at the path.
# What cannot be found again is embedded whole only when its bytes tell more than its record's
# symbols (docs/format.md 4.8): the workloads build with -g, so the deleted one goes whole (its
# DWARF gives lines); a copy without DWARF and without a build-id (a content hash keys it), deleted
# or run from a memfd (as the sealed executables of some agents), goes as symbols only (data=0),
# and its report, with the file back at its path or hidden, reads byte for byte as that of a
# capture holding it whole (--embed-objects).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

n=300
# Deleted: started, probed, removed, and only then its events. Their notification reads the maps
# again (" (deleted)"), but the workload may exit before that read: the file stkrec holds open,
# with no link left when its object is written, says DELETED then.
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
check_true del.has_dwarf "wl_uprobe built with DWARF (.debug_info)" \
	grep -q ' \.debug_info ' < <(readelf -S "$WL/wl_uprobe")
check_true del.embedded_whole "wl_del (with DWARF) embedded whole (data=N > 0)" \
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

# ---- no DWARF: symbols only ------------------------------------------------------------------
# run_lost NAME ARGS...: wl_syscall without DWARF or build-id as $bin (make_bin), run by $run_bin
# (the file itself, or run_memfd) and recorded with -p and ARGS; $bin is deleted before its
# events. The capture is $tmp/NAME.stk, its capdump $tmp/NAME.dump.
nd_dir=$tmp/nd
bin=$nd_dir/wl_nd
tp=t:syscalls:sys_enter_getppid
mkdir -p "$nd_dir"
make_bin() {
	objcopy --strip-debug --remove-section .note.gnu.build-id "$WL/wl_syscall" "$bin"
}
# $bin copied into a memfd and run from it: the memfd without MFD_CLOEXEC, so that its
# /proc/self/fd path stays valid through exec
# shellcheck disable=SC2317 # called as $run_bin
run_memfd() {
	python3 -c 'import os, sys
fd = os.memfd_create("wl_mem", 0)
with open(sys.argv[1], "rb") as f:
	os.write(fd, f.read())
os.execv("/proc/self/fd/%d" % fd, ["wl_mem"] + sys.argv[2:])' "$bin" "$@"
}
run_lost() {
	local name=$1
	shift
	make_bin || { not_ok "$name.objcopy" "objcopy failed"; return 1; }
	wl_bg "$name" "$run_bin" -v -w "$n"
	rec_bg "$name" -q -p "$WL_PID" -o "$tmp/$name.stk" "$@" "$tp"
	rec_ready "$name" ||
		not_ok "$name.ready" "stkrec did not start: $(head -1 "$tmp/$name.err")"
	rm -f "$bin"
	wl_release
	sleep 1.2
	rec_signal INT "$REC_PID"
	rec_wait "$REC_PID"
	check_eq "$name.exit" 0 $? "$tmp/$name.err"
	"$PWD/$OUTPUT/tests/tools/capdump" "$tmp/$name.stk" >"$tmp/$name.dump"
}

# hidden NAME CAPTURE ARGS...: stkreport ARGS CAPTURE with $nd_dir hidden under an empty tmpfs.
hidden() {
	local name=$1 cap=$2
	shift 2
	# shellcheck disable=SC2016 # $1 and $@ are the inner shell's
	unshare -m sh -c 'mount -t tmpfs none "$1" && shift && exec "$@"' sh "$nd_dir" \
		timeout -k 5 "$E2E_TIMEOUT" "$STKREPORT" "$@" "$cap" \
		>"$tmp/$name.rep" 2>"$tmp/$name.rerr"
}

# lost_checks NAME PATH_RE: NAME (default) holds the object at PATH_RE as symbols only, NAME_whole
# (--embed-objects) whole; both name the chain of all $n events, and their reports are the same
# here, with $bin back in place, and away, with $nd_dir hidden.
chain_re=';main;wl_outer;wl_middle;wl_getppid '
lost_checks() {
	local name=$1 re=$2 flags
	check_true "$name.symbols_only" "the object embedded as symbols only (syms=N > 0, data=0)" \
		grep -qE "^object .*path=$re .*syms=[1-9][0-9]* data=0\$" "$tmp/$name.dump" ||
		grep -E "^object .*path=$re " "$tmp/$name.dump"
	flags=$(sed -nE "s|^object flags=(0x[0-9a-f]+) .*path=$re .*|\1|p" "$tmp/$name.dump")
	check_true "$name.pseudo_id" "a content hash key (PSEUDO_ID, 0x10), flags ${flags:-none}" \
		test $((${flags:-0} & 0x10)) -ne 0
	check_true "$name.whole" "with --embed-objects: whole (data=N > 0)" \
		grep -qE "^object .*path=$re .*data=[1-9]" "$tmp/${name}_whole.dump"
	make_bin	# here: a file at the path (a report must still name it from the capture)
	folded "$name.here" "$tmp/$name.stk" -U
	check_eq "$name.report_exit" 0 $? "$tmp/$name.here.rerr"
	check_eq "$name.chain" "$n" "$(sum_folded "$tmp/$name.here.rep" "$chain_re")" \
		"$tmp/$name.here.rep"
	folded "$name.whole" "$tmp/${name}_whole.stk" -U
	check_true "$name.as_whole" "the same report as of the whole copy (diff below)" \
		cmp -s "$tmp/$name.here.rep" "$tmp/$name.whole.rep" ||
		diff "$tmp/$name.here.rep" "$tmp/$name.whole.rep" | head -20
	rm -f "$bin"
	command -v unshare >/dev/null || { skip "$name.away" "unshare(1) not installed"; return; }
	hidden "$name.away" "$tmp/$name.stk" -f -q -U
	check_true "$name.away_as_whole" "the same report away (diff below)" \
		cmp -s "$tmp/$name.away.rep" "$tmp/$name.whole.rep" ||
		diff "$tmp/$name.away.rep" "$tmp/$name.whole.rep" | head -20
	report "$name.list" "$tmp/$name.stk" -q -v -U
	hidden "$name.list_away" "$tmp/$name.stk" -q -v -U
	check_true "$name.verbose_away" "the same -v report away (diff below)" \
		cmp -s "$tmp/$name.list.rep" "$tmp/$name.list_away.rep" ||
		diff "$tmp/$name.list.rep" "$tmp/$name.list_away.rep" | head -20
}

# deleted while it runs
run_bin=$bin
run_lost nd
run_lost nd_whole --embed-objects
lost_checks nd '[^ ]*/wl_nd'

# run from a memfd
if command -v python3 >/dev/null && python3 -c 'import os; os.memfd_create' 2>/dev/null; then
	run_bin=run_memfd
	run_lost mem
	run_lost mem_whole --embed-objects
	lost_checks mem '/memfd:wl_mem'
else
	skip deleted.memfd "python3 with os.memfd_create not installed"
fi
e2e_done
