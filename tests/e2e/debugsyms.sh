#!/usr/bin/env bash
# Names only the recording host's debug files give are in the capture (docs/format.md 4.8,
# DEBUGFILE): Debian's libc keeps only .dynsym, and its local functions (start_thread,
# __libc_start_call_main) are named by the .symtab of its debug file under /usr/lib/debug
# (package libc6-dbg). Record a two-thread workload and sleep(1), report on this host, then in
# a mount namespace where /usr/lib/debug is an empty tmpfs and HOME an empty directory (no
# debuginfod cache): the folded reports must be identical and name those functions, and no name
# carries a symbol version (clock_nanosleep, not clock_nanosleep@GLIBC_2.2.5). A capture without
# embedded symbol tables (--no-symtabs), named from the files on this host, reads the same: the
# embedded table and the debug file on disk name a frame alike. --embed-objects too.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require
if ! command -v unshare >/dev/null || ! command -v readelf >/dev/null; then
	skip debugsyms.sh "unshare(1) or readelf(1) not installed"
	exit 0
fi
[ -x "$WL/wl_rate" ] || { not_ok debugsyms.sh "$WL/wl_rate is not built (make workloads)"; exit 1; }

# The libc the workload runs with, and its debug file by build-id.
libc=$(ldd "$WL/wl_rate" | awk '$1 ~ /^libc\.so/ { print $3 }')
bid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID:/ { print $3 }')
dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
if [ -z "$bid" ] || [ ! -f "$dbg" ]; then
	skip debugsyms.sh "NO DEBUG FILE for $libc (build-id ${bid:-none}) at $dbg: install" \
		"libc6-dbg (scripts/install-deps) to test symbols from debug files"
	exit 0
fi

n=2000
tp=t:syscalls:sys_enter_getppid
mkdir -p "$tmp/home"

# away NAME CAPTURE ARGS...: stkreport ARGS CAPTURE as on a host without debug files.
away() {
	local name=$1 cap=$2
	shift 2
	env -u DEBUGINFOD_URLS HOME="$tmp/home" unshare -m sh -c \
		'mount -t tmpfs none /usr/lib/debug && exec "$@"' sh \
		timeout -k 5 "$E2E_TIMEOUT" "$STKREPORT" "$@" "$cap" \
		>"$tmp/$name.rep" 2>"$tmp/$name.rerr"
}

# sanity of the hiding itself
# shellcheck disable=SC2016 # $1 is the inner shell's
env HOME="$tmp/home" unshare -m sh -c 'mount -t tmpfs none /usr/lib/debug && test ! -e "$1"' sh \
	"$dbg"
check_eq debugsyms.debug_file_hidden 0 $?

# Main thread: _start down to main through __libc_start_call_main; thread 1 from start_thread.
main_re='^wl_rate;_start;__libc_start_main;__libc_start_call_main;main;wl_outer;wl_middle;'
main_re+='wl_getppid;'
thread_re='^wl_rate;[^;]*;start_thread;wl_thread;wl_outer;wl_middle;wl_getppid;'

rec thr -q -o "$tmp/thr.stk" "$tp" -- "$WL/wl_rate" -j 2 "$n"
check_eq debugsyms.rec_exit 0 $? "$tmp/thr.err"
folded here "$tmp/thr.stk" -P	# -P: the comm leads stackcount's folded lines
check_eq debugsyms.here_exit 0 $? "$tmp/here.rerr"
check_eq debugsyms.here_main "$((n / 2))" "$(sum_folded "$tmp/here.rep" "$main_re")" "$tmp/here.rep"
check_eq debugsyms.here_thread "$((n / 2))" "$(sum_folded "$tmp/here.rep" "$thread_re")" \
	"$tmp/here.rep"

away away "$tmp/thr.stk" -f -q -P
check_eq debugsyms.away_exit 0 $? "$tmp/away.rerr"
check_true debugsyms.folded_identical "identical folded reports with and without /usr/lib/debug" \
	cmp -s "$tmp/here.rep" "$tmp/away.rep" || diff "$tmp/here.rep" "$tmp/away.rep" | head -20
check_eq debugsyms.away_thread "$((n / 2))" "$(sum_folded "$tmp/away.rep" "$thread_re")" \
	"$tmp/away.rep"

# A versioned libc function in the stack: sleep(1) enters clock_nanosleep(2) from glibc's
# clock_nanosleep, whose .symtab names are clock_nanosleep@GLIBC_2.2.5 and @@GLIBC_2.17.
sleep_bin=$(command -v sleep)
rec nap -q -o "$tmp/nap.stk" t:syscalls:sys_enter_clock_nanosleep -- "$sleep_bin" 0.01
check_eq debugsyms.nap_rec_exit 0 $? "$tmp/nap.err"
folded nap_here "$tmp/nap.stk"
away nap_away "$tmp/nap.stk" -f -q
check_eq debugsyms.nap_named 1 "$(sum_folded "$tmp/nap_here.rep" \
	';__libc_start_call_main;.*;clock_nanosleep;entry_SYSCALL')" "$tmp/nap_here.rep"
check_true debugsyms.nap_identical "identical folded reports of sleep(1)" \
	cmp -s "$tmp/nap_here.rep" "$tmp/nap_away.rep" ||
	diff "$tmp/nap_here.rep" "$tmp/nap_away.rep" | head -20
check_eq debugsyms.no_versions 0 "$(cat "$tmp/here.rep" "$tmp/nap_here.rep" | grep -c @)" \
	"$tmp/nap_here.rep"

# Without embedded symbol tables the names come from the files on this host (libc's debug file
# on disk): the same report as from the embedded table.
rec bare -q --no-symtabs -o "$tmp/bare.stk" "$tp" -- "$WL/wl_rate" -j 2 "$n"
check_eq debugsyms.bare_rec_exit 0 $? "$tmp/bare.err"
folded bare "$tmp/bare.stk" -P
check_true debugsyms.disk_as_embedded "the same report from files on disk (--no-symtabs)" \
	cmp -s "$tmp/here.rep" "$tmp/bare.rep" || diff "$tmp/here.rep" "$tmp/bare.rep" | head -20

# --embed-objects: libc whole, its debug file's symbols in the record; reported away, the same.
rec whole -q --embed-objects -o "$tmp/whole.stk" "$tp" -- "$WL/wl_rate" -j 2 "$n"
check_eq debugsyms.whole_rec_exit 0 $? "$tmp/whole.err"
away whole_away "$tmp/whole.stk" -f -q -P
check_true debugsyms.whole_identical "the same report of an --embed-objects capture away" \
	cmp -s "$tmp/here.rep" "$tmp/whole_away.rep" ||
	diff "$tmp/here.rep" "$tmp/whole_away.rep" | head -20

e2e_done
