#!/usr/bin/env bash
# tests/check/include_graph.sh: the tree keeps the layout rules scripts/include-graph checks (no
# module including another's internal header or a header of a module above it, no circle between
# folders, files or rooms), and the script finds each kind of problem in small trees made here.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUTPUT=${OUTPUT:-.output}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok $1"; }
fail() { echo "not ok $1: $2"; failed=1; }

out=$(scripts/include-graph -q "$OUTPUT" 2>&1)
rc=$?
if [ "$rc" = 0 ] && ! grep -q 'not checked' <<<"$out"; then
	ok include_graph.tree
else
	fail include_graph.tree "exit $rc: $(head -5 <<<"$out")"
fi

# put TREE FILE TEXT: one file of a small tree
put() { mkdir -p "$(dirname "$tmp/$1/$2")" && printf '%b\n' "$3" >"$tmp/$1/$2"; }
# objects TREE: compile the tree's .c files into TREE/out, as make does into .output
objects() {
	local c
	for c in $(cd "$tmp/$1" && find . -name '*.c'); do
		mkdir -p "$tmp/$1/out/$(dirname "$c")"
		cc -c -I"$tmp/$1/include" "$tmp/$1/$c" -o "$tmp/$1/out/${c%.c}.o" 2>"$tmp/cc.err" || {
			fail "include_graph.$1" "cc: $(head -1 "$tmp/cc.err")"
			return 1
		}
	done
}
# expect NAME TREE RC PATTERN: scripts/include-graph on TREE exits RC and prints PATTERN
expect() {
	local got rc
	got=$(scripts/include-graph -q -C "$tmp/$2" out 2>&1)
	rc=$?
	if [ "$rc" = "$3" ] && grep -q -- "$4" <<<"$got"; then
		ok "include_graph.$1"
	else
		fail "include_graph.$1" "exit $rc (want $3), output: $(head -3 <<<"$got")"
	fi
}

# a clean tree: one room over another, a module over format/
put clean record/a/a.h '#include "../b/b.h"'
put clean record/b/b.h 'int b(void);'
put clean record/a/a.c '#include "a.h"\nint a(void) { return b(); }'
put clean record/b/b.c '#include "b.h"\nint b(void) { return 1; }'
put clean include/stk/capture.h 'int cap(void);'
put clean symbolize/s.c '#include "stk/capture.h"\nint s(void) { return cap(); }'
put clean format/cap.c '#include "stk/capture.h"\nint cap(void) { return 0; }'
objects clean && expect clean clean 0 '^$'

put room_circle record/a/a.h '#include "../b/b.h"'
put room_circle record/b/b.h '#include "../a/a.h"'
expect room_circle room_circle 1 'circle between folders: record/[ab] -> record/[ab] -> record/[ab]'

put top_circle record/rec.h '#include "a/a.h"'
put top_circle record/a/a.h '#include "../rec.h"'
expect top_circle top_circle 1 'circle between folders'

put internal symbolize/s.c '#include "../report/report.h"'
put internal report/report.h 'int r(void);'
expect internal internal 1 'an internal header of report/'

put upward format/f.c '#include "stk/symbolize.h"'
put upward include/stk/symbolize.h 'int s(void);'
expect upward upward 1 'a module above format/'

put no_owner record/r.c '#include "stk/report.h"'
put no_owner include/stk/report.h 'int r(void);'
expect no_owner no_owner 1 'a public header of no module'

put file_circle record/p/p.h 'int a(void); int b(int);'
put file_circle record/p/a.c '#include "p.h"\nint a(void) { return b(1); }'
put file_circle record/p/b.c '#include "p.h"\nint b(int n) { return n ? a() : 0; }'
objects file_circle && expect file_circle file_circle 1 \
	'circle between files: record/p/[ab].c -> record/p/[ab].c -> record/p/[ab].c'

# p/a.c -> q/b.c -> p/c.c: no two files need each other, the rooms p and q do
put room_calls record/p/p.h 'int a(void); int c(void); int b(void);'
put room_calls record/p/a.c '#include "p.h"\nint a(void) { return b(); }'
put room_calls record/p/c.c '#include "p.h"\nint c(void) { return 2; }'
put room_calls record/q/b.c '#include "../p/p.h"\nint b(void) { return c(); }'
objects room_calls && expect room_calls room_calls 1 'circle between rooms: record/[pq] -> record/[pq]'
exit $failed
