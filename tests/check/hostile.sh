#!/usr/bin/env bash
# tests/check/hostile.sh: stkreport on captures made to hurt it (tests/tools/mkhostile), in
# bounded memory and bounded work (format.md 2 "Limits"; stkreport(1) --max-memory, --max-debug):
#  - lz4 bombs (KSYMS chunks of zeros; INTERVAL chunks with the largest row counts): with a
#    small --max-memory, exit 1 with exactly one line naming the chunk, the budget and the
#    option, and a peak RSS under the budget; the same with the default budget (2048 MiB),
#    when the machine has the memory to spare;
#  - 200 embedded objects with zlib-compressed DWARF, reported with -l, and 32 with xz
#    MiniDebugInfo: the objects left unread are said in one line, exit 0, every frame named;
#  - --max-memory and --max-debug out of range: usage errors.
# Peak RSS comes from /usr/bin/time -f %M (skipped without it); times are printed, not checked.
set -u
cd "$(dirname "$0")/../.."
OUTPUT=${OUTPUT:-.output}
STKREPORT=$OUTPUT/stkreport
MK=$OUTPUT/tests/tools/mkhostile
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok $1"; }
fail() { echo "not ok $1: $2"; failed=1; }
TIME=/usr/bin/time
[ -x $TIME ] || TIME=

# run NAME ARGS...: stkreport ARGS, stdout in $tmp/NAME.out, stderr in $tmp/NAME.err, exit
# status in $rc, peak RSS in KiB in $rss (empty without /usr/bin/time), seconds in $secs
run() {
	local name=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	if [ -n "$TIME" ]; then
		$TIME -f %M -o "$tmp/$name.rss" "$STKREPORT" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
		rc=$?
		rss=$(tail -n 1 "$tmp/$name.rss")
	else
		"$STKREPORT" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
		rc=$?
		rss=
	fi
	t1=$(date +%s.%N)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	echo "# $name: exit $rc, ${rss:-?} KiB peak RSS, $secs s: stkreport $*"
}

# check_budget_error NAME FILE MIB: exit 1, one line on stderr naming FILE's chunk and the budget
check_budget_error() {
	local name=$1 file=$2 mib=$3
	local re="^stkreport: $file: chunk [0-9]+ at 0x[0-9a-f]+: decoded data exceed the $mib MiB budget \(--max-memory\)\$"
	if [ "$rc" = 1 ] && [ "$(wc -l <"$tmp/$name.err")" = 1 ] && grep -Eq "$re" "$tmp/$name.err"; then
		ok "hostile/$name.error"
	else
		fail "hostile/$name.error" "exit $rc, stderr '$(head -c 300 "$tmp/$name.err")'"
	fi
}

# check_rss NAME MAX_MIB
check_rss() {
	if [ -z "$rss" ]; then
		echo "skip hostile/$1.rss: /usr/bin/time is not installed (Debian: time)"
	elif [ "$rss" -lt $(($2 * 1024)) ]; then
		ok "hostile/$1.rss"
	else
		fail "hostile/$1.rss" "peak RSS $rss KiB, over $2 MiB"
	fi
}

# lz4 bombs: 8 chunks of 32 MiB of zeros, about 1 MiB on disk, 0.8 to 1.5 GiB decoded in all
$MK ksyms "$tmp/ksyms.stk" 8 32 || fail hostile/mkhostile "ksyms"
$MK rows "$tmp/rows.stk" 8 32 || fail hostile/mkhostile "rows"
for kind in ksyms rows; do
	# a chunk's buffer takes 32 MiB, and its record two to three times as much: over at once
	run "$kind-64" -q --max-memory 64 "$tmp/$kind.stk"
	check_budget_error "$kind-64" "$tmp/$kind.stk" 64
	# the budget bounds decoded data; stkreport itself and its libraries take ~10 MiB more
	check_rss "$kind-64" $((64 + 32))
done

# the default budget, on a bomb over it: 16 chunks of 64 MiB of KSYMS (3 GiB decoded)
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo 2>/dev/null)
if [ "${avail:-0}" -lt 6144 ]; then
	echo "skip hostile/default: ${avail:-?} MiB available, the default budget needs 2 GiB and room"
else
	$MK ksyms "$tmp/big.stk" 16 64 || fail hostile/mkhostile "big"
	run default -q "$tmp/big.stk"
	check_budget_error default "$tmp/big.stk" 2048
	check_rss default $((2048 + 64))
fi

# many embedded objects, each with 1 MiB of zeros in a zlib-compressed .debug_info: libdw
# inflates it and then walks 262144 empty units, 17 MiB of the budget per object. 64 MiB: three
# objects read, the fourth cut short, 196 left unread.
$MK objects "$tmp/objects.stk" 200 1 || fail hostile/mkhostile "objects"
run objects -l --max-debug 64 "$tmp/objects.stk"
want="stkreport: debug data of 197 objects not read: over the 64 MiB budget (--max-debug)"
if [ "$rc" = 0 ] && grep -qxF "$want" "$tmp/objects.err" &&
	[ "$(grep -cF "$want" "$tmp/objects.err")" = 1 ]; then
	ok hostile/objects.skipped
else
	fail hostile/objects.skipped "exit $rc, stderr '$(grep -v '^#' "$tmp/objects.err" | head -c 300)'"
fi
n=$(grep -c '^  hostile_fn_[0-3]$' "$tmp/objects.out")
[ "$n" = 200 ] && ok hostile/objects.names || fail hostile/objects.names "$n of 200 frames named"

# MiniDebugInfo bombs, read without -l: 32 objects of 16 MiB of xz'd zeros, 4 fit in 64 MiB
$MK objects "$tmp/debugdata.stk" 32 16 debugdata || fail hostile/mkhostile "debugdata"
run debugdata --max-debug 64 "$tmp/debugdata.stk"
want="stkreport: debug data of 28 objects not read: over the 64 MiB budget (--max-debug)"
if [ "$rc" = 0 ] && grep -qxF "$want" "$tmp/debugdata.err"; then
	ok hostile/debugdata.skipped
else
	fail hostile/debugdata.skipped "exit $rc, stderr '$(grep -v '^#' "$tmp/debugdata.err" | head -c 300)'"
fi
n=$(grep -c '^  hostile_fn_[0-3]$' "$tmp/debugdata.out")
[ "$n" = 32 ] && ok hostile/debugdata.names || fail hostile/debugdata.names "$n of 32 frames named"

# sizes out of range are usage errors
for arg in "--max-memory 0" "--max-memory abc" "--max-debug -1" "--max-debug 99999999999"; do
	# shellcheck disable=SC2086
	"$STKREPORT" $arg "$tmp/objects.stk" >/dev/null 2>"$tmp/usage.err"
	rc=$?
	if [ "$rc" = 2 ] && grep -q "wants a size in MiB" "$tmp/usage.err"; then
		ok "hostile/usage ${arg// /=}"
	else
		fail "hostile/usage ${arg// /=}" "exit $rc, stderr '$(cat "$tmp/usage.err")'"
	fi
done
exit $failed
