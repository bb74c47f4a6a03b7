# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034
# tests/e2e/lib.sh: helpers for the end-to-end tests (sourced by tests/e2e/*.sh, run as root by
# `make e2e` / tests/run e2e). Each check prints `ok NAME`, `not ok NAME: expected X, got Y` or
# `skip NAME: why` (tests/test.h protocol); a script exits 1 when a check failed.
#
# Workloads (tests/workloads/, see wl.h) fire a known number of events from a known chain of
# noinline functions, so counts are asserted exactly and chains symbol by symbol.

set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
OUTPUT=${OUTPUT:-.output}
STKREC=$PWD/$OUTPUT/stkrec
STKREPORT=$PWD/$OUTPUT/stkreport
WL=$PWD/$OUTPUT/tests/workloads
E2E_TIMEOUT=${E2E_TIMEOUT:-60}	# seconds any one stkrec run may take

e2e_failures=0
e2e_bg=()
tmp=$(mktemp -d /tmp/stke2e.XXXXXX)
chmod 0755 "$tmp"	# the not-root checks read and write under it as nobody

e2e_cleanup() {
	local p
	for p in "${e2e_bg[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if [ -n "${E2E_KEEP:-}" ] && [ "$e2e_failures" -gt 0 ]; then
		echo "kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap e2e_cleanup EXIT

ok() { echo "ok $1"; }
not_ok() { # NAME WHY
	echo "not ok $1: $2"
	e2e_failures=$((e2e_failures + 1))
}
skip() { echo "skip $1: $2"; }

# check_eq NAME EXPECTED ACTUAL [CONTEXT_FILE]: on failure, the file's first lines follow.
check_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1"
		return 0
	fi
	not_ok "$1" "expected '$2', got '$3'"
	[ $# -ge 4 ] && show "$4"
	return 1
}

# check_true NAME WHY COMMAND...: passes when COMMAND succeeds; WHY says what was expected.
check_true() {
	local name=$1 why=$2
	shift 2
	if "$@"; then
		ok "$name"
		return 0
	fi
	not_ok "$name" "$why"
	return 1
}

# show FILE: its first lines, indented, for the reader of a failure.
show() {
	[ -s "$1" ] || { echo "    ($1 is empty)"; return; }
	head -n "${SHOW_LINES:-25}" "$1" | sed -e 's/^/    | /'
}

e2e_done() {
	[ "$e2e_failures" -eq 0 ]
	exit $?
}

# e2e_require: root, BTF and the tools. Without root or BTF every check of the script is
# skipped loudly (exit 0); missing binaries are a failure (`make e2e` builds them).
e2e_require() {
	if [ "$(id -u)" != 0 ]; then
		skip "${0##*/}" "needs root (real BPF): run as root"
		exit 0
	fi
	if [ ! -r /sys/kernel/btf/vmlinux ]; then
		skip "${0##*/}" "kernel has no BTF (/sys/kernel/btf/vmlinux): stkrec cannot load"
		exit 0
	fi
	local b
	for b in "$STKREC" "$STKREPORT" "$WL/wl_syscall" "$WL/wl_uprobe" "$WL/wl_usdt" \
		"$WL/wl_usdt_sem" "$WL/wl_burner"; do
		if [ ! -x "$b" ]; then
			not_ok "${0##*/}" "$b is not built (make OUTPUT=$OUTPUT tools workloads)"
			exit 1
		fi
	done
}

# rec NAME ARGS...: run stkrec in the foreground with a timeout. stderr goes to $tmp/NAME.err,
# stdout to $tmp/NAME.out; returns stkrec's exit status (124 on timeout).
rec() {
	local name=$1
	shift
	timeout -s INT -k 10 "$E2E_TIMEOUT" "$STKREC" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
}

# rec_bg NAME ARGS...: stkrec in the background; sets REC_PID. Wait for it with rec_wait.
rec_bg() {
	local name=$1
	shift
	: >"$tmp/$name.err"
	timeout -s INT -k 10 "$E2E_TIMEOUT" "$STKREC" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	REC_PID=$!
	e2e_bg+=("$REC_PID")
}

# rec_ready NAME: wait (20 s at most) for the "Tracing ..."/"Sampling ..." line of a background
# stkrec, i.e. until its probes are attached.
rec_ready() {
	wait_for "$tmp/$1.err" '^(Tracing|Sampling) ' 20
}

# rec_wait PID: exit status of a background stkrec.
rec_wait() {
	wait "$1" 2>/dev/null
}

# rec_child TIMEOUT_PID: the pid of stkrec itself: timeout(1) runs it as its child.
rec_child() {
	local child
	child=$(pgrep -P "$1" | head -1)
	echo "${child:-$1}"
}

# rec_signal SIG TIMEOUT_PID: signal stkrec itself, not timeout.
rec_signal() {
	kill -"$1" "$(rec_child "$2")"
}

# wait_for FILE REGEX SECS: until a line of FILE matches (returns 1 on timeout).
wait_for() {
	local i
	for ((i = 0; i < $3 * 20; i++)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# wl_bg NAME BIN ARGS...: start a workload in the background with -v (prints its pid) and
# usually -w (waits for SIGUSR1); sets WL_JOB and WL_PID.
wl_bg() {
	local name=$1
	shift
	: >"$tmp/$name.wl"
	"$@" >"$tmp/$name.wl" &
	WL_JOB=$!
	e2e_bg+=("$WL_JOB")
	wait_for "$tmp/$name.wl" '^pid ' 5
	WL_PID=$(awk '/^pid /{ print $2 }' "$tmp/$name.wl")
}

# wl_release: let the workload of wl_bg go (SIGUSR1) and wait until it has fired every event.
wl_release() {
	kill -USR1 "$WL_PID"
	wait "$WL_JOB"
}

# report NAME CAPTURE ARGS...: stkreport ARGS CAPTURE; stdout to $tmp/NAME.rep, stderr to
# $tmp/NAME.rerr; returns its exit status.
report() {
	local name=$1 cap=$2
	shift 2
	timeout -k 5 "$E2E_TIMEOUT" "$STKREPORT" "$@" "$cap" >"$tmp/$name.rep" 2>"$tmp/$name.rerr"
}

# folded NAME CAPTURE [ARGS...]: `stkreport -f -q` into $tmp/NAME.rep.
folded() {
	local name=$1 cap=$2
	shift 2
	report "$name" "$cap" -f -q "$@"
}

# sum_folded FILE [ERE]: sum of the counts (last field) of the folded lines matching ERE.
sum_folded() {
	awk -v re="${2:-.}" '$0 ~ re && $NF ~ /^[0-9]+$/ { s += $NF } END { print s + 0 }' "$1"
}

# lost_count FILE WHAT: N of the summary line `# lost: N WHAT` (WHAT as printed), 0 without one.
lost_count() {
	awk -v w="$2" '$1 == "#" && $2 == "lost:" && $0 == "# lost: " $3 " " w { n = $3 }
		END { print n + 0 }' "$1"
}

# rec_events NAME: M of stkrec's closing line `stkrec: wrote N intervals, M events, ...`.
rec_events() {
	sed -n 's/^stkrec: wrote [0-9]* intervals*, \([0-9]*\) events*,.*/\1/p' "$tmp/$1.err"
}

# rec_intervals NAME: N of the same line.
rec_intervals() {
	sed -n 's/^stkrec: wrote \([0-9]*\) intervals*,.*/\1/p' "$tmp/$1.err"
}

# check_error NAME RC_EXPECTED RC ERR_FILE CAPTURE REGEX...: an error exit: the status, a
# stderr of exactly one line starting `stkrec: ` and matching every REGEX (the input named), and
# no capture file left behind.
check_error() {
	local name=$1 want_rc=$2 rc=$3 err=$4 cap=$5
	shift 5
	check_eq "$name.exit" "$want_rc" "$rc" "$err"
	local lines first
	lines=$(grep -c '' "$err")
	first=$(head -1 "$err")
	check_eq "$name.one_line" 1 "$lines" "$err"
	check_true "$name.prefix" "stderr to start with 'stkrec: ', got '$first'" \
		grep -q '^stkrec: ' "$err"
	local re
	for re in "$@"; do
		check_true "$name.names_input" "stderr to match /$re/, got '$first'" \
			grep -qE -- "$re" "$err"
	done
	check_true "$name.no_file" "no capture file left at $cap" test ! -e "$cap"
}

# check_share NAME FILE ALL_RE PART_RE MIN_ALL PCT WHAT: in folded FILE, at least MIN_ALL events
# match ALL_RE (NAME.events), and at least PCT% of those match PART_RE too (NAME.share); WHAT
# says what the part is, for the message. A failed share shows the heaviest stacks that miss
# PART_RE and, given CAPTURE, its summary's loss lines (why stacks were cut).
check_share() { # ... [CAPTURE]
	local name=$1 file=$2 all part
	all=$(sum_folded "$file" "$3")
	part=$(sum_folded "$file" "$4")
	check_true "$name.events" "at least $5 events, got $all" test "$all" -ge "$5" || show "$file"
	check_true "$name.share" "at least $6% of $all events $7, got $part" \
		test $((part * 100)) -ge $((all * $6)) && return
	awk -v a="$3" -v p="$4" '$0 ~ a && $0 !~ p { print $NF "\t" $0 }' "$file" | sort -rn |
		cut -f2- >"$file.miss"
	show "$file.miss"
	[ -n "${8:-}" ] && "$STKREPORT" -f "$8" 2>&1 >/dev/null | grep '^# lost' | sed -e 's/^/    | /'
}

# cpu_ticks PID: the user + system CPU time PID has had, in clock ticks (USER_HZ, 100 a
# second; 0 when it is gone). On a host other work shares, the samples a profile can take of a
# process follow its CPU time, not the wall clock: checks on sample counts compare with this.
cpu_ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# idle_ticks: the idle time of all CPUs so far, in clock ticks (/proc/stat).
idle_ticks() { awk '$1 == "cpu" { print $5; exit }' /proc/stat; }

# The user chain of the event workloads, from main down (wl.h; the leaf depends on the program).
chain() { echo ";main;wl_outer;wl_middle;$1( |;)"; }
