# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034
# tests/lib/clickhouse.sh: a ClickHouse fleet for a test (sourced by tests/check/clickhouse.sh and
# tests/e2e/fleet.sh, from the top of the tree): two servers (Debian's clickhouse-server, 18.16)
# as the two shards of the cluster `fleet`, in the test's own directory and free ports, run as
# nobody when the test runs as root (never the system service), stopped by ch_stop. The schema,
# the Distributed tables and the fleet queries are taken from docs/clickhouse.md as they are.
#
#   ch_installed || skip ...         # CH_SERVER, CH_CLIENT
#   ch_ports                         # CH_H1 CH_H2 (HTTP), CH_T1 CH_T2 (native), CH_DOWN (unused)
#   ch_start DIR || fail ...         # both servers answer; ch_logs says why not
#   ch_cluster || fail ...           # stk_local.* on each server, stk.* Distributed over both
#   ch_sql PORT [CLIENT OPTIONS...] <SQL
#   ch_query PORT TAG [SED SCRIPT]   # a documented query, as TSV, literals replaced by SED
#   ch_stop                          # in the test's EXIT trap

CH_SERVER=$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)
CH_CLIENT=$(command -v clickhouse-client || echo /usr/bin/clickhouse-client)
CH_DOC=docs/clickhouse.md
ch_pids=()
ch_dir=

ch_installed() { [ -x "$CH_SERVER" ] && [ -x "$CH_CLIENT" ]; }

# port_free PORT: nothing listens on it
ch_port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ch_ports: five free ports in a row: HTTP and native TCP of each server, and one where nothing
# listens (for a server that is down)
ch_ports() {
	local try base
	for try in $(seq 50); do
		base=$((20000 + RANDOM % 30000))
		ch_port_free $base && ch_port_free $((base + 1)) && ch_port_free $((base + 2)) &&
			ch_port_free $((base + 3)) && ch_port_free $((base + 4)) && break
	done
	CH_H1=$base CH_H2=$((base + 1)) CH_T1=$((base + 2)) CH_T2=$((base + 3))
	CH_DOWN=$((base + 4))
}

# ch_users FILE: users default; reader, read-only; small, whose INSERTs are cut into blocks of 4
# rows, never squashed together (the server keeps each block it wrote when a later one fails)
ch_users() {
	cat >"$1" <<'EOF'
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
}

# ch_start_server N HTTP TCP: server N in $ch_dir/sN, in the background
ch_start_server() {
	local d=$ch_dir/s$1
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
  <users_config>$ch_dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <mlock_executable>false</mlock_executable>
  <remote_servers><fleet>
    <shard><replica><host>127.0.0.1</host><port>$CH_T1</port></replica></shard>
    <shard><replica><host>127.0.0.1</host><port>$CH_T2</port></replica></shard>
  </fleet></remote_servers>
</yandex>
EOF
	if [ "$(id -u)" = 0 ]; then
		chown -R nobody:nogroup "$d"
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
			"$CH_SERVER" --config-file="$d/config.xml" >"$d/stdout" 2>&1 &
	else
		"$CH_SERVER" --config-file="$d/config.xml" >"$d/stdout" 2>&1 &
	fi
	ch_pids+=($!)
}

# ch_start DIR: both servers, their files in DIR (which nobody must be able to enter), on the
# ports of ch_ports; returns once both answer (1 if one does not within 30 s)
ch_start() {
	local port i
	ch_dir=$1
	ch_users "$ch_dir/users.xml"
	ch_start_server 1 "$CH_H1" "$CH_T1"
	ch_start_server 2 "$CH_H2" "$CH_T2"
	for port in "$CH_T1" "$CH_T2"; do
		for i in $(seq 300); do
			ch_sql "$port" --query "SELECT 1" >/dev/null 2>&1 && break
			sleep 0.1
		done
	done
	ch_sql "$CH_T1" --query "SELECT 1" >/dev/null &&
		ch_sql "$CH_T2" --query "SELECT 1" >/dev/null
}

# ch_logs: the servers' last words, on one line, for a start that failed
ch_logs() {
	tail -n 3 "$ch_dir"/s*/stdout "$ch_dir"/s*/error.log 2>/dev/null | tr '\n' ' '
}

# ch_stop: stop every server started here (by pid): SIGTERM, then SIGKILL after 3 s (18.16
# takes 8 s and more to stop; its data goes with the directory)
ch_stop() {
	local p i
	for p in "${ch_pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${ch_pids[@]}"; do
		for i in $(seq 30); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	ch_pids=()
}

# ch_sql PORT [CLIENT OPTIONS...]: run the statement on stdin (or --query) on the server of
# native port PORT
ch_sql() {
	local port=$1
	shift
	"$CH_CLIENT" --host 127.0.0.1 --port "$port" "$@"
}

# ch_doc_sql TAG: the SQL block of docs/clickhouse.md after <!-- clickhouse:TAG -->
ch_doc_sql() {
	awk -v tag="<!-- clickhouse:$1 -->" '
		$0 == tag { want = 1; next }
		want && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }' "$CH_DOC"
}

# ch_run_statements PORT DATABASE: each statement of stdin (ending with ";" at a line end), alone
ch_run_statements() {
	local port=$1 db=$2 stmt='' line
	while IFS= read -r line; do
		stmt+="$line"$'\n'
		case $line in *\;)
			ch_sql "$port" --database "$db" --query "$stmt" || return 1
			stmt= ;;
		esac
	done
}

# ch_cluster: the documented schema in stk_local on each server, the documented Distributed
# tables in stk on both
ch_cluster() {
	local port ok=0
	for port in "$CH_T1" "$CH_T2"; do
		ch_sql "$port" --query "CREATE DATABASE IF NOT EXISTS stk_local" || ok=1
		ch_doc_sql schema | ch_run_statements "$port" stk_local || ok=1
		ch_doc_sql distributed | ch_run_statements "$port" default || ok=1
	done
	return $ok
}

# ch_query PORT TAG [SED SCRIPT]: the documented query TAG on database stk, as TSV; the script
# puts a test's own values in place of the document's literals
ch_query() {
	ch_doc_sql "query $2" | sed -e "${3:-}" |
		ch_sql "$1" --database stk --format TabSeparated --multiquery
}

# ch_by_host_columns: `stkreport -f --by host` lines (host;comm;stack count) as the columns of
# the top-stacks query (host, comm, stack, count), tab-separated
ch_by_host_columns() {
	awk '{ c = $NF; sub(/ [0-9]+$/, ""); h = $0; sub(/;.*/, "", h)
		r = substr($0, length(h) + 2); m = r; sub(/;.*/, "", m)
		printf "%s\t%s\t%s\t%s\n", h, m, substr(r, length(m) + 2), c }'
}
