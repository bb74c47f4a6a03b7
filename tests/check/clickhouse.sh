#!/usr/bin/env bash
# tests/check/clickhouse.sh: stkreport --clickhouse against real ClickHouse servers (Debian's
# clickhouse-server, 18.16), started here by tests/lib/clickhouse.sh: two servers as the two
# shards of a cluster, in this test's own directory and ports, run as nobody when the test runs
# as root, stopped at the end.
#  - the schema and the Distributed tables of docs/clickhouse.md, taken from the document;
#  - the six captures of tests/golden/fleet (three hosts, two hours; exact counts) loaded through
#    the Distributed tables, whose rows land on both shards;
#  - each documented fleet query, taken from the document and run as it is, prints exactly the
#    numbers of the stkreport command the document pairs it with (-f --by host, -f --comm
#    --time, --diff and its shares);
#  - loading again counts nothing twice: every capture skipped, sum(count) the same with and
#    without FINAL; the tables the loader creates are those the document gives;
#  - a server that is down, or refuses (a read-only user), or refuses rows half way through an
#    INSERT (a column whose DEFAULT throws for one comm, under a profile that cuts INSERTs into
#    blocks of 4 rows, which does leave the first blocks of a plain INSERT behind: the control):
#    one line on stderr, exit 1, and no row of the refused captures counted; once the column is
#    gone, the next load completes them.
set -u
cd "$(dirname "$0")/../.."
OUTPUT=${OUTPUT:-.output}
STKREPORT=$PWD/$OUTPUT/stkreport
export TZ=UTC LC_ALL=C
F=tests/golden/fleet
# shellcheck source=tests/lib/clickhouse.sh
. tests/lib/clickhouse.sh
failed=0
ok() { echo "ok $1"; }
fail() { echo "not ok $1: ${*:2}"; failed=1; }

if ! ch_installed; then
	echo "skip clickhouse: clickhouse-server and clickhouse-client not installed (Debian;" \
		"scripts/install-deps installs them)"
	exit 0
fi
tmp=$(mktemp -d /tmp/stkch.XXXXXX)
chmod 755 "$tmp"
trap 'ch_stop; rm -rf "$tmp"' EXIT

t0=$(date +%s.%N)
ch_ports
if ! ch_start "$tmp"; then
	echo "not ok clickhouse/start: a server did not start: $(ch_logs)"
	exit 1
fi
echo "# servers up in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"

# the cluster: the schema in stk_local on each server, the Distributed tables in stk on both
ch_cluster && ok clickhouse/ddl || fail clickhouse/ddl "the documented DDL failed"

captures=("$F/input.stk" "$F/web1-04.stk" "$F/web2-03.stk" "$F/web2-04.stk" "$F/db1-03.stk"
	"$F/db1-04.stk")
URL="http://127.0.0.1:$CH_H1/?database=stk"
stk() { "$STKREPORT" --symfs tests/golden/elf "$@"; }
total=$(stk -q -f "${captures[@]}" | awk '{ s += $NF } END { print s + 0 }')

# load: exit 0, one summary line of the load, and rows on both shards
stk --clickhouse "$URL" "${captures[@]}" >"$tmp/load.out" 2>"$tmp/load.err"
rc=$?
if [ $rc = 0 ] && [ ! -s "$tmp/load.out" ] &&
	grep -q "^# clickhouse: 127.0.0.1:$CH_H1, database stk: 6 captures loaded" \
		"$tmp/load.err"; then
	ok clickhouse/load
else
	fail clickhouse/load "exit $rc: $(grep -v '^# [a-z]' "$tmp/load.err" | head -5)"
fi
s1=$(ch_sql "$CH_T1" --query "SELECT count() FROM stk_local.samples")
s2=$(ch_sql "$CH_T2" --query "SELECT count() FROM stk_local.samples")
[ "${s1:-0}" -gt 0 ] && [ "${s2:-0}" -gt 0 ] && ok clickhouse/shards ||
	fail clickhouse/shards "rows on the shards: '$s1' and '$s2'"

# sums: what stkreport counts, with and without FINAL, from either server
check_sums() { # NAME
	local plain final other
	plain=$(ch_sql "$CH_T1" --query "SELECT sum(count) FROM stk.samples")
	final=$(ch_sql "$CH_T1" --query "SELECT sum(count) FROM stk.samples FINAL")
	other=$(ch_sql "$CH_T2" --query "SELECT sum(count) FROM stk.samples")
	if [ "$plain" = "$total" ] && [ "$final" = "$total" ] && [ "$other" = "$total" ]; then
		ok "clickhouse/$1"
	else
		fail "clickhouse/$1" "sum(count) $plain, FINAL $final, on the other server $other," \
			"stkreport $total"
	fi
}
check_sums sums

# compare NAME WANT GOT
compare() {
	if [ -s "$2" ] && cmp -s "$2" "$3"; then
		ok "clickhouse/$1"
	else
		fail "clickhouse/$1" "$(diff "$2" "$3" | head -8 | tr '\n' '|')"
	fi
}

# top stacks: -f --by host lines (host;comm;stack count) as the query's columns
stk -q -f --by host --time 03:00:00,04:59:59 "${captures[@]}" | ch_by_host_columns |
	sort >"$tmp/top.want"
for port in "$CH_T1" "$CH_T2"; do
	ch_query "$port" top-stacks | sort >"$tmp/top.got"
	compare "top-stacks.$port" "$tmp/top.want" "$tmp/top.got"
done

# a service's flame graph over an hour
stk -q -f --comm burner --time 04:00:00,04:59:59 "${captures[@]}" | sort >"$tmp/flame.want"
ch_query "$CH_T1" flamegraph | tr '\t' ' ' | sort >"$tmp/flame.got"
compare flamegraph "$tmp/flame.want" "$tmp/flame.got"

# two windows of web2: --diff's lines, in its order
stk -q --diff "$F/web2-03.stk" "$F/web2-04.stk" >"$tmp/diff.want"
ch_query "$CH_T1" diff | tr '\t' ' ' >"$tmp/diff.got"
compare diff "$tmp/diff.want" "$tmp/diff.got"

# the share of stk_leaf on each host: --diff's share line where it grew by more than 10 points
: >"$tmp/share.want"
for host in web1 web2 db1; do
	before=$F/$host-03.stk
	[ $host = web1 ] && before=$F/input.stk
	stk --diff "$before" "$F/$host-04.stk" 2>&1 >/dev/null |
		awk -v h=$host '$NF == "stk_leaf" && $2 + 0 > 10 {
			gsub(/%/, ""); printf "%s %.2f %.2f %.2f\n", h, $3, $5, $2 }' >>"$tmp/share.want"
done
ch_query "$CH_T1" share-jump | awk '{ printf "%s %.2f %.2f %.2f\n", $1, $2, $3, $4 }' \
	>"$tmp/share.got"
compare share-jump "$tmp/share.want" "$tmp/share.got"

# again: every capture skipped, nothing counted twice
stk --clickhouse "$URL" "${captures[@]}" "$F/input.stk" >/dev/null 2>"$tmp/again.err"
rc=$?
skipped=$(grep -c ': already loaded (capture [0-9]*): skipped$' "$tmp/again.err")
if [ $rc = 0 ] && [ "$skipped" = 7 ] &&
	grep -q "0 captures loaded (0 rows, 0 stacks sent), 7 already there" "$tmp/again.err"; then
	ok clickhouse/again
else
	fail clickhouse/again "exit $rc, $skipped skipped: $(grep -v '^# [a-z]' "$tmp/again.err" |
		head -3)"
fi
check_sums sums.again
n=$(ch_sql "$CH_T1" --query "SELECT count() FROM stk.captures")
nf=$(ch_sql "$CH_T1" --query "SELECT count() FROM stk.captures FINAL")
[ "$n" = 6 ] && [ "$nf" = 6 ] && ok clickhouse/captures ||
	fail clickhouse/captures "captures rows: $n, FINAL $nf, want 6"

# the tables the loader creates on a server of its own are those of the document
stk -q --clickhouse "http://127.0.0.1:$CH_H1/?database=single" "$F/input.stk" 2>"$tmp/single.err"
same=1
for t in captures stacks samples; do
	a=$(ch_sql "$CH_T1" --query "SHOW CREATE TABLE single.$t" | sed 's/single\./DB./')
	b=$(ch_sql "$CH_T1" --query "SHOW CREATE TABLE stk_local.$t" | sed 's/stk_local\./DB./')
	[ -n "$a" ] && [ "$a" = "$b" ] || { same=0; echo "# $t: '$a' against '$b'"; }
done
[ $same = 1 ] && ok clickhouse/schema || fail clickhouse/schema "the loader's tables differ"

# one_line NAME: the run failed with one line on stderr matching ERE $2, nothing on stdout
one_line() {
	if [ "$rc" = 1 ] && [ ! -s "$tmp/$1.out" ] && [ "$(wc -l <"$tmp/$1.err")" = 1 ] &&
		grep -Eq "$2" "$tmp/$1.err"; then
		ok "clickhouse/$1"
	else
		fail "clickhouse/$1" "exit $rc, stderr '$(head -c 300 "$tmp/$1.err")'"
	fi
}

# a server that is down
stk --clickhouse "http://127.0.0.1:$CH_DOWN/?database=stk" "${captures[@]}" >"$tmp/down.out" \
	2>"$tmp/down.err"
rc=$?
one_line down "^stkreport: --clickhouse 127\.0\.0\.1:$CH_DOWN: .*(onnect|refused)"

# a server that refuses: a read-only user
stk --clickhouse "http://127.0.0.1:$CH_H1/?database=stk&user=reader" "$F/input.stk" \
	>"$tmp/readonly.out" 2>"$tmp/readonly.err"
rc=$?
one_line readonly "^stkreport: --clickhouse 127\.0\.0\.1:$CH_H1: Code: [0-9]+, .*readonly"
check_sums sums.readonly

# a server that refuses rows half way through: database refuse, user small (4-row blocks)
R="http://127.0.0.1:$CH_H1/?database=refuse&user=small"
stk -q --clickhouse "$R" "$F/input.stk" 2>"$tmp/refuse0.err" ||
	fail clickhouse/refuse.setup "$(cat "$tmp/refuse0.err")"
ch_sql "$CH_T1" --database refuse --multiquery --query "
	ALTER TABLE samples ADD COLUMN chk UInt8 DEFAULT throwIf(comm = 'postgres');
	CREATE TABLE control AS samples;"
# the control: 8 rows of which the 7th is refused, in blocks of 4: the first block stays
printf '%s\n' 1 2 3 4 5 6 7 8 |
	awk '{ printf "1\t%d\t2026-01-02 03:00:00\t0\th\t1\t1\t%s\tp\t1\t1\t1\n", $1,
		$1 == 7 ? "postgres" : "x" }' |
	ch_sql "$CH_T1" --database refuse --user small --max_insert_block_size=4 \
		--query "INSERT INTO control (capture, row, time, interval, host, pid, tid, comm,
			probe, stack, count, weight) FORMAT TabSeparated" 2>/dev/null
kept=$(ch_sql "$CH_T1" --query "SELECT count() FROM refuse.control")
[ "$kept" = 4 ] && ok clickhouse/refuse.control ||
	fail clickhouse/refuse.control "a refused 8-row INSERT in 4-row blocks kept '$kept' rows, not 4"
# the loader: web2's two captures, then db1's postgres rows, refused
stk --clickhouse "$R" "$F/web2-03.stk" "$F/web2-04.stk" "$F/db1-03.stk" >"$tmp/refuse.out" \
	2>"$tmp/refuse.err"
rc=$?
one_line refuse "^stkreport: --clickhouse 127\.0\.0\.1:$CH_H1: samples: Code: 395"
got=$(ch_sql "$CH_T1" --query "SELECT count(), sum(count) FROM refuse.samples" | tr '\t' ' ')
gotf=$(ch_sql "$CH_T1" --query "SELECT count(), sum(count) FROM refuse.samples FINAL" | tr '\t' ' ')
[ "$got" = "4 65" ] && [ "$gotf" = "4 65" ] && ok clickhouse/refuse.nothing ||
	fail clickhouse/refuse.nothing "samples after the refusal: '$got', FINAL '$gotf'; want" \
		"input.stk's 4 rows and 65 events"
# the column gone, the next load completes the three captures, once
ch_sql "$CH_T1" --query "ALTER TABLE refuse.samples DROP COLUMN chk"
for i in 1 2; do
	stk -q --clickhouse "$R" "$F/web2-03.stk" "$F/web2-04.stk" "$F/db1-03.stk" \
		2>"$tmp/resume.err" || fail clickhouse/refuse.resume "$(cat "$tmp/resume.err")"
done
got=$(ch_sql "$CH_T1" --query "SELECT sum(count), (SELECT count() FROM refuse.captures) FROM
	refuse.samples" | tr '\t' ' ')
gotf=$(ch_sql "$CH_T1" --query "SELECT sum(count), (SELECT count() FROM refuse.captures FINAL) FROM
	refuse.samples FINAL" | tr '\t' ' ')
want="$(stk -q -f "$F/input.stk" "$F/web2-03.stk" "$F/web2-04.stk" "$F/db1-03.stk" |
	awk '{ s += $NF } END { print s + 0 }') 4"
[ "$got" = "$want" ] && [ "$gotf" = "$want" ] && ok clickhouse/refuse.resume ||
	fail clickhouse/refuse.resume "sum and captures '$got', FINAL '$gotf', want '$want'"
exit $failed
