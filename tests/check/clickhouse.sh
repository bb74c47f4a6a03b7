#!/usr/bin/env bash
# tests/check/clickhouse.sh: stkreport --clickhouse against real ClickHouse servers (Debian's
# clickhouse-server, 18.16), started here: two servers as the two shards of a cluster, in this
# test's own directory and ports, run as nobody when the test runs as root, stopped at the end.
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
DOC=docs/clickhouse.md
SERVER=$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)
CLIENT=$(command -v clickhouse-client || echo /usr/bin/clickhouse-client)
failed=0
ok() { echo "ok $1"; }
fail() { echo "not ok $1: ${*:2}"; failed=1; }

if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
	echo "skip clickhouse: clickhouse-server and clickhouse-client not installed (Debian;" \
		"scripts/install-deps installs them)"
	exit 0
fi
tmp=$(mktemp -d /tmp/stkch.XXXXXX)
chmod 755 "$tmp"
pids=()
# stop every server started here (by pid): SIGTERM, then SIGKILL after 3 s (18.16 takes 8 s
# and more to stop; its data goes with the directory)
cleanup() {
	local p i
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		for i in $(seq 30); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# four free ports in a row: HTTP and native TCP of each server
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for try in $(seq 50); do
	base=$((20000 + RANDOM % 30000))
	port_free $base && port_free $((base + 1)) && port_free $((base + 2)) &&
		port_free $((base + 3)) && port_free $((base + 4)) && break
done
H1=$base H2=$((base + 1)) T1=$((base + 2)) T2=$((base + 3)) DOWN=$((base + 4))

# users: default; reader, read-only; small, whose INSERTs are cut into blocks of 4 rows, never
# squashed together (the server keeps each block it wrote when a later one fails)
cat >"$tmp/users.xml" <<'EOF'
<?xml version="1.0"?>
<yandex>
  <profiles>
    <default><max_memory_usage>2000000000</max_memory_usage></default>
    <readonly><readonly>1</readonly></readonly>
    <small>
      <max_insert_block_size>4</max_insert_block_size>
      <min_insert_block_size_rows>0</min_insert_block_size_rows>
      <min_insert_block_size_bytes>0</min_insert_block_size_bytes>
    </small>
  </profiles>
  <users>
    <default><password></password><networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile><quota>default</quota></default>
    <reader><password></password><networks><ip>127.0.0.1</ip></networks>
      <profile>readonly</profile><quota>default</quota></reader>
    <small><password></password><networks><ip>127.0.0.1</ip></networks>
      <profile>small</profile><quota>default</quota></small>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
  </interval></default></quotas>
</yandex>
EOF

# start_server N HTTP TCP
start_server() {
	local d=$tmp/s$1
	mkdir -p "$d"
	cat >"$d/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$d/server.log</log><errorlog>$d/error.log</errorlog>
    <size>10M</size><count>1</count></logger>
  <http_port>$2</http_port>
  <tcp_port>$3</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$d/data/</path>
  <tmp_path>$d/tmp/</tmp_path>
  <user_files_path>$d/user_files/</user_files_path>
  <format_schema_path>$d/format_schemas/</format_schema_path>
  <users_config>$tmp/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <mlock_executable>false</mlock_executable>
  <remote_servers><fleet>
    <shard><replica><host>127.0.0.1</host><port>$T1</port></replica></shard>
    <shard><replica><host>127.0.0.1</host><port>$T2</port></replica></shard>
  </fleet></remote_servers>
</yandex>
EOF
	if [ "$(id -u)" = 0 ]; then
		chown -R nobody:nogroup "$d"
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			"$SERVER" --config-file="$d/config.xml" >"$d/stdout" 2>&1 &
	else
		"$SERVER" --config-file="$d/config.xml" >"$d/stdout" 2>&1 &
	fi
	pids+=($!)
}

# sql PORT [CLIENT OPTIONS...]: run the statement on stdin on the server of native port PORT
sql() {
	local port=$1
	shift
	"$CLIENT" --host 127.0.0.1 --port "$port" "$@"
}

# doc_sql TAG: the SQL block of docs/clickhouse.md after <!-- clickhouse:TAG -->
doc_sql() {
	awk -v tag="<!-- clickhouse:$1 -->" '
		$0 == tag { want = 1; next }
		want && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }' "$DOC"
}

# run_statements PORT DATABASE: each statement of stdin (ending with ";" at a line end), alone
run_statements() {
	local port=$1 db=$2 stmt= line
	while IFS= read -r line; do
		stmt+="$line"$'\n'
		case $line in *\;)
			sql "$port" --database "$db" --query "$stmt" || return 1
			stmt= ;;
		esac
	done
}

t0=$(date +%s.%N)
start_server 1 "$H1" "$T1"
start_server 2 "$H2" "$T2"
for port in "$T1" "$T2"; do
	for i in $(seq 300); do
		sql "$port" --query "SELECT 1" >/dev/null 2>&1 && break
		sleep 0.1
	done
done
if ! sql "$T1" --query "SELECT 1" >/dev/null || ! sql "$T2" --query "SELECT 1" >/dev/null; then
	echo "not ok clickhouse/start: a server did not start: $(tail -n 3 "$tmp"/s*/stdout \
		"$tmp"/s*/error.log 2>/dev/null)"
	exit 1
fi
echo "# servers up in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"

# the cluster: the schema in stk_local on each server, the Distributed tables in stk on both
ddl_ok=1
for port in "$T1" "$T2"; do
	sql "$port" --query "CREATE DATABASE IF NOT EXISTS stk_local" || ddl_ok=0
	doc_sql schema | run_statements "$port" stk_local || ddl_ok=0
	doc_sql distributed | run_statements "$port" default || ddl_ok=0
done
[ $ddl_ok = 1 ] && ok clickhouse/ddl || fail clickhouse/ddl "the documented DDL failed"

captures=("$F/input.stk" "$F/web1-04.stk" "$F/web2-03.stk" "$F/web2-04.stk" "$F/db1-03.stk"
	"$F/db1-04.stk")
URL="http://127.0.0.1:$H1/?database=stk"
stk() { "$STKREPORT" --symfs tests/golden/elf "$@"; }
total=$(stk -q -f "${captures[@]}" | awk '{ s += $NF } END { print s + 0 }')

# load: exit 0, one summary line of the load, and rows on both shards
stk --clickhouse "$URL" "${captures[@]}" >"$tmp/load.out" 2>"$tmp/load.err"
rc=$?
if [ $rc = 0 ] && [ ! -s "$tmp/load.out" ] &&
	grep -q "^# clickhouse: 127.0.0.1:$H1, database stk: 6 captures loaded" "$tmp/load.err"; then
	ok clickhouse/load
else
	fail clickhouse/load "exit $rc: $(grep -v '^# [a-z]' "$tmp/load.err" | head -5)"
fi
s1=$(sql "$T1" --query "SELECT count() FROM stk_local.samples")
s2=$(sql "$T2" --query "SELECT count() FROM stk_local.samples")
[ "${s1:-0}" -gt 0 ] && [ "${s2:-0}" -gt 0 ] && ok clickhouse/shards ||
	fail clickhouse/shards "rows on the shards: '$s1' and '$s2'"

# sums: what stkreport counts, with and without FINAL, from either server
check_sums() { # NAME
	local plain final other
	plain=$(sql "$T1" --query "SELECT sum(count) FROM stk.samples")
	final=$(sql "$T1" --query "SELECT sum(count) FROM stk.samples FINAL")
	other=$(sql "$T2" --query "SELECT sum(count) FROM stk.samples")
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
query() { # PORT TAG: the documented query, as TSV
	doc_sql "query $2" | sql "$1" --database stk --format TabSeparated --multiquery
}

# top stacks: -f --by host lines (host;comm;stack count) as the query's columns
to_columns='{ c = $NF; sub(/ [0-9]+$/, ""); h = $0; sub(/;.*/, "", h); r = substr($0, length(h) + 2)
	m = r; sub(/;.*/, "", m); printf "%s\t%s\t%s\t%s\n", h, m, substr(r, length(m) + 2), c }'
stk -q -f --by host --time 03:00:00,04:59:59 "${captures[@]}" | awk "$to_columns" |
	sort >"$tmp/top.want"
for port in "$T1" "$T2"; do
	query "$port" top-stacks | sort >"$tmp/top.got"
	compare "top-stacks.$port" "$tmp/top.want" "$tmp/top.got"
done

# a service's flame graph over an hour
stk -q -f --comm burner --time 04:00:00,04:59:59 "${captures[@]}" | sort >"$tmp/flame.want"
query "$T1" flamegraph | tr '\t' ' ' | sort >"$tmp/flame.got"
compare flamegraph "$tmp/flame.want" "$tmp/flame.got"

# two windows of web2: --diff's lines, in its order
stk -q --diff "$F/web2-03.stk" "$F/web2-04.stk" >"$tmp/diff.want"
query "$T1" diff | tr '\t' ' ' >"$tmp/diff.got"
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
query "$T1" share-jump | awk '{ printf "%s %.2f %.2f %.2f\n", $1, $2, $3, $4 }' >"$tmp/share.got"
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
n=$(sql "$T1" --query "SELECT count() FROM stk.captures")
nf=$(sql "$T1" --query "SELECT count() FROM stk.captures FINAL")
[ "$n" = 6 ] && [ "$nf" = 6 ] && ok clickhouse/captures ||
	fail clickhouse/captures "captures rows: $n, FINAL $nf, want 6"

# the tables the loader creates on a server of its own are those of the document
stk -q --clickhouse "http://127.0.0.1:$H1/?database=single" "$F/input.stk" 2>"$tmp/single.err"
same=1
for t in captures stacks samples; do
	a=$(sql "$T1" --query "SHOW CREATE TABLE single.$t" | sed 's/single\./DB./')
	b=$(sql "$T1" --query "SHOW CREATE TABLE stk_local.$t" | sed 's/stk_local\./DB./')
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
stk --clickhouse "http://127.0.0.1:$DOWN/?database=stk" "${captures[@]}" >"$tmp/down.out" \
	2>"$tmp/down.err"
rc=$?
one_line down "^stkreport: --clickhouse 127\.0\.0\.1:$DOWN: .*(onnect|refused)"

# a server that refuses: a read-only user
stk --clickhouse "http://127.0.0.1:$H1/?database=stk&user=reader" "$F/input.stk" \
	>"$tmp/readonly.out" 2>"$tmp/readonly.err"
rc=$?
one_line readonly "^stkreport: --clickhouse 127\.0\.0\.1:$H1: Code: [0-9]+, .*readonly"
check_sums sums.readonly

# a server that refuses rows half way through: database refuse, user small (4-row blocks)
R="http://127.0.0.1:$H1/?database=refuse&user=small"
stk -q --clickhouse "$R" "$F/input.stk" 2>"$tmp/refuse0.err" ||
	fail clickhouse/refuse.setup "$(cat "$tmp/refuse0.err")"
sql "$T1" --database refuse --multiquery --query "
	ALTER TABLE samples ADD COLUMN chk UInt8 DEFAULT throwIf(comm = 'postgres');
	CREATE TABLE control AS samples;"
# the control: 8 rows of which the 7th is refused, in blocks of 4: the first block stays
printf '%s\n' 1 2 3 4 5 6 7 8 |
	awk '{ printf "1\t%d\t2026-01-02 03:00:00\t0\th\t1\t1\t%s\tp\t1\t1\t1\n", $1,
		$1 == 7 ? "postgres" : "x" }' |
	sql "$T1" --database refuse --user small --max_insert_block_size=4 \
		--query "INSERT INTO control (capture, row, time, interval, host, pid, tid, comm,
			probe, stack, count, weight) FORMAT TabSeparated" 2>/dev/null
kept=$(sql "$T1" --query "SELECT count() FROM refuse.control")
[ "$kept" = 4 ] && ok clickhouse/refuse.control ||
	fail clickhouse/refuse.control "a refused 8-row INSERT in 4-row blocks kept '$kept' rows, not 4"
# the loader: web2's two captures, then db1's postgres rows, refused
stk --clickhouse "$R" "$F/web2-03.stk" "$F/web2-04.stk" "$F/db1-03.stk" >"$tmp/refuse.out" \
	2>"$tmp/refuse.err"
rc=$?
one_line refuse "^stkreport: --clickhouse 127\.0\.0\.1:$H1: samples: Code: 395"
got=$(sql "$T1" --query "SELECT count(), sum(count) FROM refuse.samples" | tr '\t' ' ')
gotf=$(sql "$T1" --query "SELECT count(), sum(count) FROM refuse.samples FINAL" | tr '\t' ' ')
[ "$got" = "4 65" ] && [ "$gotf" = "4 65" ] && ok clickhouse/refuse.nothing ||
	fail clickhouse/refuse.nothing "samples after the refusal: '$got', FINAL '$gotf'; want" \
		"input.stk's 4 rows and 65 events"
# the column gone, the next load completes the three captures, once
sql "$T1" --query "ALTER TABLE refuse.samples DROP COLUMN chk"
for i in 1 2; do
	stk -q --clickhouse "$R" "$F/web2-03.stk" "$F/web2-04.stk" "$F/db1-03.stk" \
		2>"$tmp/resume.err" || fail clickhouse/refuse.resume "$(cat "$tmp/resume.err")"
done
got=$(sql "$T1" --query "SELECT sum(count), (SELECT count() FROM refuse.captures) FROM
	refuse.samples" | tr '\t' ' ')
gotf=$(sql "$T1" --query "SELECT sum(count), (SELECT count() FROM refuse.captures FINAL) FROM
	refuse.samples FINAL" | tr '\t' ' ')
want="$(stk -q -f "$F/input.stk" "$F/web2-03.stk" "$F/web2-04.stk" "$F/db1-03.stk" |
	awk '{ s += $NF } END { print s + 0 }') 4"
[ "$got" = "$want" ] && [ "$gotf" = "$want" ] && ok clickhouse/refuse.resume ||
	fail clickhouse/refuse.resume "sum and captures '$got', FINAL '$gotf', want '$want'"
exit $failed
