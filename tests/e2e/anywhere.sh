#!/usr/bin/env bash
# The report of a capture is the same on the recording host and on a host without its
# binaries: record a uprobe workload, report it, then report it again in a mount namespace
# where the workload's directory is hidden under an empty tmpfs (and --symfs is an empty directory).
# The capture's embedded symbol tables (OBJECTS records) must make both reports identical.
# With --no-symtabs the hidden-binary report must lose the names (proof that the first check
# can fail).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require
if ! command -v unshare >/dev/null; then
	skip anywhere "unshare(1) not installed"
	exit 0
fi

# A private copy of the workload in a directory of its own: that directory is what gets hidden.
mkdir -p "$tmp/bin"
cp "$WL/wl_uprobe" "$tmp/bin/wl_uprobe"
bin=$tmp/bin/wl_uprobe
n=5000

# hidden NAME CAPTURE ARGS...: stkreport ARGS CAPTURE with $tmp/bin hidden.
mkdir "$tmp/nothing"
hidden() {
	local name=$1 cap=$2
	shift 2
	unshare -m sh -c 'mount -t tmpfs none "$1" && shift && exec "$@"' sh "$tmp/bin" \
		timeout -k 5 "$E2E_TIMEOUT" "$STKREPORT" --symfs "$tmp/nothing" "$@" "$cap" \
		>"$tmp/$name.rep" 2>"$tmp/$name.rerr"
}

rec any -q -o "$tmp/any.stk" "$bin:wl_target" -- "$bin" "$n"
check_eq anywhere.rec_exit 0 $? "$tmp/any.err"

folded here "$tmp/any.stk"
check_eq anywhere.here_exit 0 $? "$tmp/here.rerr"
# (a uprobe capture: stackcount's -f, whose comm field is empty without -P)
check_eq anywhere.here_chain "$n" \
	"$(sum_folded "$tmp/here.rep" '^;(.*;)?main;wl_outer;wl_middle;wl_target ')" \
	"$tmp/here.rep"

# sanity of the hiding itself: the binary is not visible inside the namespace
unshare -m sh -c 'mount -t tmpfs none "$1" && test ! -e "$1/wl_uprobe"' sh "$tmp/bin"
check_eq anywhere.binary_hidden 0 $?

hidden away "$tmp/any.stk" -f -q
check_eq anywhere.away_exit 0 $? "$tmp/away.rerr"
check_true anywhere.folded_identical "identical folded reports (diff below)" \
	cmp -s "$tmp/here.rep" "$tmp/away.rep" || diff "$tmp/here.rep" "$tmp/away.rep" | head -20

report here_list "$tmp/any.stk" -q -v
hidden away_list "$tmp/any.stk" -q -v
check_true anywhere.verbose_identical "identical -v reports (diff below)" \
	cmp -s "$tmp/here_list.rep" "$tmp/away_list.rep" ||
	diff "$tmp/here_list.rep" "$tmp/away_list.rep" | head -20

# Without embedded symbol tables the hidden binary cannot be named: the check above can fail.
rec bare -q --no-symtabs -o "$tmp/bare.stk" "$bin:wl_target" -- "$bin" "$n"
check_eq anywhere.bare_rec_exit 0 $? "$tmp/bare.err"
hidden bare_away "$tmp/bare.stk" -f -q
check_eq anywhere.bare_away_unnamed 0 \
	"$(sum_folded "$tmp/bare_away.rep" ';wl_outer;wl_middle;wl_target ')" "$tmp/bare_away.rep"

e2e_done
