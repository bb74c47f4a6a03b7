#!/usr/bin/env bash
# tests/check/sql.sh [--update]: stkreport --sql, --csv, --json, --sqlite (docs/sql.md).
#  - golden results: every line of tests/golden/sql/queries (NAME CASE MODE QUERY, tab-separated)
#    runs on tests/golden/CASE/input.stk and must print tests/golden/sql/expected.NAME exactly;
#    --update rewrites the expected files instead (review the diff like code);
#  - refusals: writes, ATTACH, extensions, file functions, schema pragmas, transactions: exit 1
#    and exactly the one line expected on stderr, nothing on stdout;
#  - Ctrl-C (SIGINT) stops a query that would run for ever: exit 1, "interrupted";
#  - --sqlite writes a database the sqlite3 shell (or python3's sqlite3) reads, and nothing else;
#  - several captures load side by side.
set -u
cd "$(dirname "$0")/../.."
OUTPUT=${OUTPUT:-.output}
STKREPORT=$OUTPUT/stkreport
export TZ=UTC LC_ALL=C
GOLD=tests/golden/sql
update=0
[ "${1:-}" = --update ] && update=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok $1"; }
fail() { echo "not ok $1: $2"; failed=1; }

report() { # CASE MODE QUERY: stkreport's stdout, stderr in $tmp/err, status in $tmp/rc
	local flags=()
	case $2 in
	csv) flags=(--csv) ;;
	json) flags=(--json) ;;
	esac
	"$STKREPORT" -q --symfs tests/golden/elf "${flags[@]}" --sql "$3" "tests/golden/$1/input.stk" \
		2>"$tmp/err"
	echo $? >"$tmp/rc"
}

# ---- golden results ------------------------------------------------------------------------
while IFS=$'\t' read -r name case mode query; do
	case $name in '' | '#'*) continue ;; esac
	if [ $update = 1 ]; then
		report "$case" "$mode" "$query" >"$GOLD/expected.$name"
		echo "updated $GOLD/expected.$name"
		continue
	fi
	report "$case" "$mode" "$query" >"$tmp/out"
	if [ "$(cat "$tmp/rc")" != 0 ] || [ -s "$tmp/err" ]; then
		fail "sql/$name" "exit $(cat "$tmp/rc"), stderr: $(head -c 300 "$tmp/err")"
	elif ! cmp -s "$GOLD/expected.$name" "$tmp/out"; then
		fail "sql/$name" "stdout differs from $GOLD/expected.$name"
		diff -u "$GOLD/expected.$name" "$tmp/out" | head -30
	else
		ok "sql/$name"
	fi
done <"$GOLD/queries"
[ $update = 1 ] && exit 0

# ---- refusals --------------------------------------------------------------------------------
refuse() { # NAME QUERY EXPECTED-STDERR-LINE
	report count table "$2" >"$tmp/out"
	if [ "$(cat "$tmp/rc")" != 1 ]; then
		fail "sql.refuse/$1" "exit status: expected 1, actual $(cat "$tmp/rc")"
	elif [ "$(cat "$tmp/err")" != "$3" ]; then
		fail "sql.refuse/$1" "stderr: expected '$3', actual '$(cat "$tmp/err")'"
	elif [ -s "$tmp/out" ]; then
		fail "sql.refuse/$1" "printed a result"
	elif [ -e "$tmp/victim" ]; then
		fail "sql.refuse/$1" "a file was created"
	else
		ok "sql.refuse/$1"
	fi
}
N="stkreport: --sql: not authorized:"
refuse attach "ATTACH '$tmp/victim' AS x" "$N ATTACH"
refuse detach "DETACH main" "$N DETACH main"
refuse create-table "CREATE TABLE t (a)" "$N CREATE TABLE t"
refuse create-temp-view "CREATE TEMP VIEW v AS SELECT 1" "$N CREATE VIEW v"
refuse create-index "CREATE INDEX i ON samples (count)" "$N CREATE INDEX i"
refuse drop-view "DROP VIEW callers" "$N DROP VIEW callers"
refuse insert "INSERT INTO samples (pid) VALUES (1)" "$N INSERT samples"
refuse update "UPDATE samples SET count = 0" "$N UPDATE samples"
refuse delete "DELETE FROM samples" "$N DELETE samples"
refuse alter "ALTER TABLE samples ADD COLUMN x" "$N ALTER TABLE samples"
refuse load-extension "SELECT load_extension('$tmp/victim')" "$N function load_extension()"
refuse writable-schema "PRAGMA writable_schema = 1" "$N PRAGMA writable_schema = 1"
refuse query-only "PRAGMA query_only = 0" "$N PRAGMA query_only = 0"
refuse journal "PRAGMA journal_mode = WAL" "$N PRAGMA journal_mode = WAL"
refuse begin "BEGIN" "$N transaction"
refuse savepoint "SAVEPOINT s" "$N SAVEPOINT s"
refuse vacuum-into "VACUUM INTO '$tmp/victim'" "$N ATTACH"
# readfile() and writefile() live in the sqlite3 shell, not in the library: unknown here
refuse writefile "SELECT writefile('$tmp/victim', 'x')" \
	"stkreport: --sql: no such function: writefile"
refuse readfile "SELECT readfile('/etc/passwd')" "stkreport: --sql: no such function: readfile"
refuse second-statement "SELECT 1; DROP TABLE samples" \
	"stkreport: --sql: one statement only, found more: DROP TABLE samples"
refuse syntax "SELEC 1" 'stkreport: --sql: near "SELEC": syntax error'

# ---- Ctrl-C ----------------------------------------------------------------------------------
interrupted() { # NAME QUERY: SIGINT after 2 s stops it within seconds: exit 1, "interrupted"
	local start=$SECONDS rc
	timeout --preserve-status -k 10 -s INT 2 "$STKREPORT" -q --sql "$2" \
		tests/golden/count/input.stk >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc != 1 ] || [ "$(cat "$tmp/err")" != "stkreport: --sql: interrupted" ]; then
		fail "sql.$1" "exit $rc, stderr '$(cat "$tmp/err")' (expected 1, interrupted)"
	elif [ $((SECONDS - start)) -gt 8 ]; then
		fail "sql.$1" "took $((SECONDS - start)) s to stop"
	else
		ok "sql.$1"
	fi
}
interrupted interrupt \
	"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
# One SQL function call is one step of the engine, which its progress handler cannot stop: this
# one builds a 2 GB string (16 MiB: SQLITE_LIMIT_LENGTH) for tens of seconds.
interrupted interrupt_one_call "SELECT length(printf('%.*c', 2000000000, 'x'))"

# ---- --sqlite OUT.db ---------------------------------------------------------------------------
mkdir "$tmp/db"
"$STKREPORT" -q --symfs tests/golden/elf --sqlite "$tmp/db/out.db" tests/golden/count/input.stk \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
sqlq() { # DB QUERY: one value through the sqlite3 shell, else python3's sqlite3 module
	if command -v sqlite3 >/dev/null; then
		sqlite3 "$1" "$2"
	else
		python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$1" "$2"
	fi
}
if [ $rc != 0 ] || [ -s "$tmp/out" ] || [ -s "$tmp/err" ]; then
	fail sql.sqlite.write "exit $rc, stdout $(wc -c <"$tmp/out") bytes, stderr '$(cat "$tmp/err")'"
elif [ "$(ls "$tmp/db")" != out.db ]; then
	fail sql.sqlite.write "files left: $(ls "$tmp/db" | tr '\n' ' ')"
else
	ok sql.sqlite.write
	v=$(sqlq "$tmp/db/out.db" "SELECT sum(count) FROM samples")
	[ "$v" = 43 ] && ok sql.sqlite.samples || fail sql.sqlite.samples "sum(count): expected 43, actual '$v'"
	v=$(sqlq "$tmp/db/out.db" "SELECT total FROM functions WHERE function = 'stk_leaf'")
	[ "$v" = 19 ] && ok sql.sqlite.views || fail sql.sqlite.views "stk_leaf total: expected 19, actual '$v'"
fi
# --sqlite and --sql together: the file and the result
"$STKREPORT" -q --symfs tests/golden/elf --sqlite "$tmp/db/both.db" --csv \
	--sql "SELECT count(*) FROM samples" tests/golden/count/input.stk >"$tmp/out" 2>"$tmp/err"
if [ "$(cat "$tmp/out")" = $'count(*)\r\n13\r' ] && [ -s "$tmp/db/both.db" ]; then
	ok sql.sqlite.with-query
else
	fail sql.sqlite.with-query "stdout '$(cat -A "$tmp/out")', db $(ls "$tmp/db")"
fi

# ---- several captures ------------------------------------------------------------------------
"$STKREPORT" -q --symfs tests/golden/elf --csv --sql \
	"SELECT c.id, c.mode, count(s.id), sum(s.count) FROM captures c JOIN samples s ON s.capture = c.id GROUP BY c.id" \
	tests/golden/count/input.stk tests/golden/profile/input.stk >"$tmp/out" 2>"$tmp/err"
want=$'id,mode,count(s.id),sum(s.count)\r\n1,count,13,43\r\n2,profile,7,123\r'
if [ "$(cat "$tmp/out")" = "$want" ]; then
	ok sql.multi
else
	fail sql.multi "expected '$want', actual '$(cat "$tmp/out")' $(cat "$tmp/err")"
fi
exit $failed
