#!/usr/bin/env bash
# tests/check/many.sh: stkreport over many captures (a day of rotated files, a fleet's) holds
# memory in proportion to the distinct stacks and names, not to the number of files (issue 27):
#  - 1,000 copies of one capture (tests/tools/mkbig: 2,000 rows, 500 processes, 512 stacks an
#    interval; about 400 KiB decoded) against the capture alone: peak RSS at most MARGIN MiB
#    more (decoded all at once they took 1,000 times 400 KiB), and the folded lines the same
#    with every count times 1,000;
#  - the same at --max-memory 4 (MiB): enough for one capture at a time, and the budget is the
#    run's, not a sum over files;
#  - every other output (--tree, --json, --svg, --pprof) over 100 copies, peak RSS bounded the
#    same way. SQL is left out: its database holds every row by design (docs/sql.md).
# Peak RSS comes from /usr/bin/time -f %M (skipped without it, Debian: time).
set -u
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/measure.sh
. tests/lib/measure.sh
OUTPUT=${OUTPUT:-.output}
STKREPORT=$OUTPUT/stkreport
MKBIG=$OUTPUT/tests/tools/mkbig
MARGIN=16
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok $1"; }
fail() { echo "not ok $1: $2"; failed=1; }

if [ ! -x "$MKBIG" ] || [ ! -x "$STKREPORT" ]; then
	echo "not ok many: $MKBIG or $STKREPORT not built"
	exit 1
fi
"$MKBIG" 2000 tests/golden/elf/golden.elf "$tmp/one.stk" || exit 1
mkdir "$tmp/many"
# hard links: 1,000 files, each read, decoded and freed on its own, in 42 KB of disk
for i in $(seq -w 1 1000); do
	ln "$tmp/one.stk" "$tmp/many/c$i.stk" || exit 1
done
all=("$tmp"/many/c*.stk)
some=("${all[@]:0:100}")

# run NAME ARGS...: stkreport -q --symfs tests/golden/elf ARGS; stdout in $tmp/NAME.out, exit
# status in $rc, peak RSS in KiB in $rss (empty without /usr/bin/time), seconds in $secs
run() {
	local name=$1
	shift
	measure "$tmp/$name.out" "$tmp/$name.err" "$STKREPORT" -q --symfs tests/golden/elf "$@"
	echo "# $name: exit $rc, ${rss:-?} KiB peak RSS, $secs s"
}

# bounded NAME BASE_RSS: the run went well, within MARGIN MiB of the one-capture run's RSS
bounded() {
	if [ "$rc" != 0 ]; then
		fail "many/$1" "exit $rc: $(head -c 300 "$tmp/$1.err")"
	elif [ -z "$rss" ]; then
		echo "skip many/$1.rss: /usr/bin/time is not installed (Debian: time)"
	elif [ "$rss" -le $(($2 + MARGIN * 1024)) ]; then
		ok "many/$1.rss"
	else
		fail "many/$1.rss" "$rss KiB peak RSS, one capture took $2 KiB (margin $MARGIN MiB)"
	fi
}

run one -f "$tmp/one.stk"
one_rc=$rc one_rss=$rss
awk '{ $NF = $NF * 1000; print }' "$tmp/one.out" | sort >"$tmp/want"
run folded -f "${all[@]}"
bounded folded "$one_rss"
sort "$tmp/folded.out" >"$tmp/got"
if [ "$one_rc" = 0 ] && [ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got"; then
	ok "many/folded.counts"
else
	fail "many/folded.counts" "1,000 copies are not the capture's lines times 1,000: $(diff \
		"$tmp/want" "$tmp/got" | head -5)"
fi

run budget -f --max-memory 4 "${all[@]}"
if [ "$rc" = 0 ] && cmp -s "$tmp/folded.out" "$tmp/budget.out"; then
	ok "many/budget"
else
	fail "many/budget" "--max-memory 4 over 1,000 copies: exit $rc: $(head -c 300 \
		"$tmp/budget.err")"
fi

for mode in tree json svg pprof; do
	case $mode in
	tree | json) args=(--"$mode") ;;
	svg) args=(--svg "$tmp/out.svg") ;;
	pprof) args=(--pprof "$tmp/out.pb.gz") ;;
	esac
	run "$mode-one" "${args[@]}" "$tmp/one.stk"
	base=$rss
	run "$mode" "${args[@]}" "${some[@]}"
	bounded "$mode" "$base"
done
exit $failed
