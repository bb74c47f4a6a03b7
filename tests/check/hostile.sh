#!/usr/bin/env bash
# tests/check/hostile.sh: stkreport on captures made to hurt it (tests/tools/mkhostile), in
# bounded memory and bounded work (format.md 2 "Limits"; stkreport(1) --max-memory, --max-debug):
#  - lz4 bombs (KSYMS chunks of zeros; INTERVAL chunks with the largest row counts): with a
#    small --max-memory, exit 1 with exactly one line naming the chunk, the budget and the
#    option, and a peak RSS under the budget; the same with the default budget (2048 MiB),
#    when the machine has the memory to spare;
#  - 200 embedded objects with zlib-compressed DWARF, reported with -l, and 32 with xz
#    MiniDebugInfo: the objects left unread are said in one line, exit 0, every frame named;
#  - --max-memory and --max-debug out of range: usage errors;
#  - time bombs (issue 29 item 4 and what came with it): a KSYMS table with one-symbol KSYMS_ADD
#    records, a name or an object path of megabytes on 1,024-frame stacks, DWARF whose every
#    lookup passes 16M childless entries, a perf map of millions of entries at one address, an
#    object of a million symbols at 1,000 paths, pids whose hashes collide: each reported whole
#    at full size where that is quick now (exit status, output, peak RSS; under a 120 s timeout,
#    a guard), and its work counted at a smaller size against a control, the same capture
#    without what multiplies the work (the same symbols in one record, a stack of one frame,
#    one address, one path, sequential pids): instructions, from valgrind's cachegrind, a count
#    that is the same on every run and machine where a time would not be; the bound is a ratio
#    with room to spare (2; 10 where the bomb prints 1,024 times what the control does), where
#    before the fixes the bombs ran 18, 581, 441, 30, 21, 30 and 30 times the control; and
#    --tree of 1,024 frames in 64 nested inlined functions each (4.4 GB before: a head bounds
#    the check's output);
#  - memory bombs: --sql, --sqlite and -s on a capture whose frames' names take gigabytes stop
#    at the budget with one line (exit 1, no file), and 44M perf-map entries within it.
# Peak RSS comes from /usr/bin/time -f %M (skipped without it); times are printed, not checked.
set -u
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/measure.sh
. tests/lib/measure.sh
OUTPUT=${OUTPUT:-.output}
STKREPORT=$OUTPUT/stkreport
MK=$OUTPUT/tests/tools/mkhostile
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok $1"; }
fail() { echo "not ok $1: $2"; failed=1; }

# run NAME ARGS...: stkreport ARGS, stdout in $tmp/NAME.out, stderr in $tmp/NAME.err, exit
# status in $rc, peak RSS in KiB in $rss (empty without /usr/bin/time), seconds in $secs
run() {
	local name=$1
	shift
	measure "$tmp/$name.out" "$tmp/$name.err" "$STKREPORT" "$@"
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

# ---- time and memory bombs of issue 29 item 4 --------------------------------------------

VALGRIND=$(command -v valgrind)
# work NAME ARGS...: the instructions stkreport ARGS runs, in $ir (empty without valgrind)
work() {
	local name=$1
	shift
	ir=
	[ -n "$VALGRIND" ] || return 0
	"$VALGRIND" --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
		"$STKREPORT" "$@" >/dev/null 2>"$tmp/$name.vg"
	ir=$(sed -n 's/^==[0-9]*== I *refs: *//p' "$tmp/$name.vg" | tr -d ,)
	echo "# $name: ${ir:-?} instructions: stkreport $*"
}

# check_work NAME FACTOR BOMB_ARGS -- CONTROL_ARGS: the bomb runs at most FACTOR times the
# instructions of its control
check_work() {
	local name=$1 factor=$2 bomb control args=()
	shift 2
	while [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	shift
	if [ -z "$VALGRIND" ]; then
		echo "skip hostile/$name.work: valgrind is not installed (Debian: valgrind)"
		return
	fi
	work "$name-bomb" "${args[@]}"
	bomb=$ir
	work "$name-control" "$@"
	control=$ir
	if [ -z "$bomb" ] || [ -z "$control" ]; then
		fail "hostile/$name.work" "cachegrind failed: $(tail -n 3 "$tmp/$name-bomb.vg")"
	elif [ "$bomb" -le $((control * factor)) ]; then
		ok "hostile/$name.work"
	else
		fail "hostile/$name.work" "$bomb instructions, over $factor times the control's $control"
	fi
}

# check_exit NAME STATUS: the last run's exit status
check_exit() {
	if [ "$rc" = "$2" ]; then
		ok "hostile/$1.exit"
	elif [ "$rc" = 137 ]; then
		fail "hostile/$1.exit" "killed after $LIMIT s (timeout)"
	else
		fail "hostile/$1.exit" "exit $rc, stderr '$(head -c 300 "$tmp/$1.err")'"
	fi
}

# check_one_line NAME LINE: stderr is exactly that line
check_one_line() {
	if [ "$(cat "$tmp/$1.err")" = "$2" ]; then
		ok "hostile/$1.line"
	else
		fail "hostile/$1.line" "stderr '$(head -c 300 "$tmp/$1.err")'"
	fi
}

# A time bomb run whole runs under `timeout` (a guard, not the check: before the fixes these
# took minutes); its work is checked by check_work
LIMIT=120
TIMED=$tmp/stkreport-timed
printf '#!/bin/sh\nexec timeout -s KILL %s %s "$@"\n' "$LIMIT" "$(realpath "$STKREPORT")" >"$TIMED"
chmod +x "$TIMED"

# A 32 MiB KSYMS table, then 1,200 KSYMS_ADD records of one symbol each (235 KB): every record
# merged into a copy of the whole table took 66 s. The last interval's 1,024 frames are named.
$MK ksyms-add "$tmp/kadd.stk" 32 1200 || fail hostile/mkhostile "ksyms-add"
STKREPORT=$TIMED run kadd -q "$tmp/kadd.stk"
check_exit kadd 0
n=$(grep -c '^  k$' "$tmp/kadd.out")
[ "$n" = 1024 ] && ok hostile/kadd.names || fail hostile/kadd.names "$n of 1024 frames named k"
check_rss kadd $((2048 + 64))
$MK ksyms-add "$tmp/kadd-small.stk" 1 300 || fail hostile/mkhostile "ksyms-add small"
$MK ksyms-add "$tmp/kadd-control.stk" 1 300 one || fail hostile/mkhostile "ksyms-add control"
check_work kadd 2 -q "$tmp/kadd-small.stk" -- -q "$tmp/kadd-control.stk"
# each record replacing a symbol an interval used: a copy of the table each, within the budget
$MK ksyms-add "$tmp/kreplace.stk" 32 1200 replace || fail hostile/mkhostile "ksyms-add replace"
run kreplace -q --max-memory 256 "$tmp/kreplace.stk"
check_budget_error kreplace "$tmp/kreplace.stk" 256
check_rss kreplace $((256 + 64))

# A 16 MiB name on a stack of 1,024 frames (74 KB; 8 stacks: 103 KB): -f printed each frame
# through a vsnprintf of the whole name (56 s; over 240 s). Frames carry 4,096 bytes of it.
for n in 1 8; do
	$MK long-name "$tmp/name$n.stk" 16384 $n 1024 object || fail hostile/mkhostile "name $n"
	STKREPORT=$TIMED run "name$n" -q -f "$tmp/name$n.stk"
	check_exit "name$n" 0
	cut=$(awk -F';' '{ sub(/ [0-9]+$/, "")
		for (i = 2; i <= NF; i++) if (length($i) == 4096 && $i ~ /x[.][.][.]$/) n++ }
		END { print n + 0 }' "$tmp/name$n.out")
	[ "$cut" = 1024 ] && ok "hostile/name$n.cut" ||
		fail "hostile/name$n.cut" "$cut of 1024 frames cut to 4096 bytes"
done
# the same with a 1 MiB name, against one frame of it: printing 1,024 names of 4 KiB costs
# about ten instructions a byte, where the control prints one
$MK long-name "$tmp/name-small.stk" 1024 1 1024 object || fail hostile/mkhostile "name small"
$MK long-name "$tmp/name-control.stk" 1024 1 1 object || fail hostile/mkhostile "name control"
check_work name 10 -q -f "$tmp/name-small.stk" -- -q -f "$tmp/name-control.stk"
# the same with a path of 1 MiB as the object's: every frame hashed and compared it to find its
# object (-v), or printed it into pprof's key of its mapping (--pprof); at 16 MiB: over 60 s
$MK long-name "$tmp/path-small.stk" 1024 1 1024 path || fail hostile/mkhostile "path small"
$MK long-name "$tmp/path-control.stk" 1024 1 1 path || fail hostile/mkhostile "path control"
check_work path 10 -q -v "$tmp/path-small.stk" -- -q -v "$tmp/path-control.stk"
check_work path-pprof 10 -q --pprof "$tmp/path.pb.gz" "$tmp/path-small.stk" -- \
	-q --pprof "$tmp/path.pb.gz" "$tmp/path-control.stk"
# in the database: 1,024 frames of a 1 MiB name (9 KB) took 2.7 GB with --max-memory 64, and
# --sqlite wrote 2.16 GB
run name-sql -q --max-memory 64 --sql "SELECT count(*), max(length(symbol)) FROM frames" \
	"$tmp/name-small.stk"
check_exit name-sql 0
grep -Eq '^ +1024 +4096$' "$tmp/name-sql.out" && ok hostile/name-sql.rows ||
	fail hostile/name-sql.rows "$(tr '\n' '|' <"$tmp/name-sql.out")"
check_rss name-sql $((64 + 64))
run name-sqlite -q --max-memory 64 --sqlite "$tmp/name.db" "$tmp/name-small.stk"
check_exit name-sqlite 0
size=$(stat -c %s "$tmp/name.db" 2>/dev/null || echo 0)
[ "$size" -gt 0 ] && [ "$size" -lt $((16 << 20)) ] && ok hostile/name-sqlite.size ||
	fail hostile/name-sqlite.size "$size bytes"
check_rss name-sqlite $((64 + 64))
# 100 stacks of 1,024 frames of a 16 MiB name (470 KB): 400 MiB of frames, over 64 MiB
$MK long-name "$tmp/name100.stk" 16384 100 1024 object || fail hostile/mkhostile "name 100"
for mode in sql sqlite offsets; do
	case $mode in
	sql) args=(--sql "SELECT count(*) FROM frames") ;;
	sqlite) args=(--sqlite "$tmp/name100.db") ;;
	offsets) args=(-s) ;;
	esac
	run "name100-$mode" -q --max-memory 64 "${args[@]}" "$tmp/name100.stk"
	check_exit "name100-$mode" 1
	check_one_line "name100-$mode" \
		"stkreport: the report exceeds the 64 MiB budget (--max-memory)"
	check_rss "name100-$mode" $((64 + 64))
done
[ ! -e "$tmp/name100.db" ] && ok hostile/name100-sqlite.no_file ||
	fail hostile/name100-sqlite.no_file "a database was written"

# An embedded object whose every lookup passes a block of 16M childless DWARF entries (6 KB):
# 200 addresses with --sql took 40 s (libdw skipped the block for each), 1,024 with --pprof
# longer; the block is read once now
$MK dwarf "$tmp/dies.stk" 16 200 dies || fail hostile/mkhostile "dwarf dies"
STKREPORT=$TIMED run dies-sql -q --sql "SELECT count(*) FROM frames" "$tmp/dies.stk"
check_exit dies-sql 0
$MK dwarf "$tmp/dies1024.stk" 16 1024 dies || fail hostile/mkhostile "dwarf dies 1024"
STKREPORT=$TIMED run dies-pprof -q --pprof "$tmp/dies.pb.gz" "$tmp/dies1024.stk"
check_exit dies-pprof 0
$MK dwarf "$tmp/dies-small.stk" 1 64 dies || fail hostile/mkhostile "dwarf small"
$MK dwarf "$tmp/dies-control.stk" 1 1 dies || fail hostile/mkhostile "dwarf control"
check_work dies 2 -q -l "$tmp/dies-small.stk" -- -q -l "$tmp/dies-control.stk"

# Every address of 1,024 frames in 64 nested inlined functions (9.5 KB): --tree indented each of
# the 66,560 levels two spaces more than the one before, 4.4 GB; the indentation stops at 128
# levels (the output is read through head: before, it would have filled the disk)
$MK dwarf "$tmp/inlines.stk" 64 1024 inlines || fail hostile/mkhostile "dwarf inlines"
bytes=$("$TIMED" -q --tree --inline "$tmp/inlines.stk" 2>"$tmp/inlines.err" |
	head -c $((64 << 20)) | wc -c)
rc=${PIPESTATUS[0]}
check_exit inlines 0
[ "$bytes" -lt $((64 << 20)) ] && ok hostile/inlines.tree_size ||
	fail hostile/inlines.tree_size "the tree printed 64 MiB and more"

# A perf map of entries of 4 KiB all at one address: each frame looked back over all of them;
# at 44M of them (3.9 MB) the tables took 2.4 GB at the 2,048 MiB budget
$MK perfmap "$tmp/pm-small.stk" 262144 same 1024 || fail hostile/mkhostile "perfmap small"
$MK perfmap "$tmp/pm-control.stk" 262144 same 1 || fail hostile/mkhostile "perfmap control"
check_work perfmap 2 -q "$tmp/pm-small.stk" -- -q "$tmp/pm-control.stk"
if [ "${avail:-0}" -lt 6144 ]; then
	echo "skip hostile/perfmap: ${avail:-?} MiB available, the default budget needs 2 GiB and room"
else
	$MK perfmap "$tmp/pm.stk" 44000000 same 16 || fail hostile/mkhostile "perfmap"
	run perfmap -q "$tmp/pm.stk"
	check_exit perfmap 1
	check_one_line perfmap "stkreport: symbol tables exceed the 2048 MiB budget (--max-memory)"
	check_rss perfmap $((2048 + 64))
fi

# An object of a million symbols in the capture, mapped by 1,000 processes at 1,000 paths (46
# KB): each path sorted its own copy of the table, over 100 s; at 50,000 symbols and 50 paths
# 30x the control's instructions (one path). Its tables are made once now.
$MK paths "$tmp/paths.stk" 1000000 1000 || fail hostile/mkhostile "paths"
STKREPORT=$TIMED run paths -q "$tmp/paths.stk"
check_exit paths 0
$MK paths "$tmp/paths-small.stk" 50000 50 || fail hostile/mkhostile "paths small"
$MK paths "$tmp/paths-control.stk" 50000 50 control || fail hostile/mkhostile "paths control"
check_work paths 2 -q "$tmp/paths-small.stk" -- -q "$tmp/paths-control.stk"

# 8,192 processes whose pids' unkeyed hashes share their low 16 bits, and 65,536 rows going
# round them: one cluster of the pid table that every row's lookup walked (30x the control's
# instructions, sequential pids); the tables' hashes are keyed with a random seed now
$MK pids "$tmp/pids.stk" 8192 65536 || fail hostile/mkhostile "pids"
$MK pids "$tmp/pids-control.stk" 8192 65536 control || fail hostile/mkhostile "pids control"
check_work pids 2 -q "$tmp/pids.stk" -- -q "$tmp/pids-control.stk"

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
