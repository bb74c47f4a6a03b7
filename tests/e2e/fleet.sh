#!/usr/bin/env bash
# A recorded fleet in ClickHouse (issue 27): three hosts, each stkrec in a UTS namespace of its
# own (hostname fleet-a, fleet-b, fleet-c), record t:syscalls:sys_enter_getppid of two workloads
# with known counts and chains, in two time windows (a capture per host and window); loaded with
# stkreport --clickhouse into two servers, the two shards of a cluster (tests/lib/clickhouse.sh,
# as tests/check/clickhouse.sh starts them), through the Distributed tables of docs/clickhouse.md:
#   - each capture's host is the namespace's hostname, in its summary and in ClickHouse;
#   - ClickHouse holds exactly the workloads' events per host, window, comm and chain;
#   - each documented fleet query, its literals set to these captures' windows, host, comm and
#     function, prints exactly what the stkreport command paired with it prints on the same
#     files (-f --by comm per host and -f --by host, -f --by comm --comm --time, -P --diff and
#     --diff's shares), on either server;
#   - loading the six captures again skips them all and changes no sum, with or without FINAL.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require
# shellcheck source=tests/lib/clickhouse.sh
. tests/lib/clickhouse.sh
export TZ=UTC LC_ALL=C
if ! ch_installed; then
	skip fleet "clickhouse-server and clickhouse-client not installed (Debian;" \
		"scripts/install-deps installs them)"
	exit 0
fi
trap 'ch_stop; e2e_cleanup' EXIT
[ -x "$WL/wl_signal" ] || { not_ok fleet "$WL/wl_signal is not built"; exit 1; }

tp=t:syscalls:sys_enter_getppid
hosts=(fleet-a fleet-b fleet-c)
# getppid calls of wl_syscall and wl_signal on each host, in windows 1 and 2: the share of
# wl_handler (wl_signal's chain) goes from 25% to 75% on fleet-a, 50% to 55% on fleet-b, 20% to
# 80% on fleet-c
declare -A events=(
	[fleet-a.1]="3000 1000" [fleet-a.2]="1000 3000"
	[fleet-b.1]="2000 2000" [fleet-b.2]="1800 2200"
	[fleet-c.1]="4000 1000" [fleet-c.2]="1000 4000"
)
# the user chains below main, down to the system call's entry
direct='main;wl_outer;wl_middle;wl_getppid;entry_SYSCALL'
signal='main;wl_outer;wl_middle;kill;__restore_rt;wl_handler;wl_getppid;entry_SYSCALL'

# record_window W: the three hosts at once, each a stkrec -p on its two waiting workloads in a
# UTS namespace named after the host, into $tmp/HOST-W.stk
record_window() {
	local w=$1 h n1 n2 name wls=() wljobs=() recs=()
	for h in "${hosts[@]}"; do
		read -r n1 n2 <<<"${events[$h.$w]}"
		wl_bg "$h-$w.direct" "$WL/wl_syscall" -w -v "$n1"
		wls+=("$WL_PID") wljobs+=("$WL_JOB")
		wl_bg "$h-$w.signal" "$WL/wl_signal" -w -v "$n2"
		wls+=("$WL_PID") wljobs+=("$WL_JOB")
		name=$h-$w
		: >"$tmp/$name.err"
		# shellcheck disable=SC2016 # the script's $1 and $@ are sh's
		timeout -s INT -k 10 "$E2E_TIMEOUT" unshare -u \
			sh -c 'hostname "$1" && shift && exec "$@"' sh "$h" \
			"$STKREC" -q -p "${wls[-2]},${wls[-1]}" -o "$tmp/$name.stk" "$tp" \
			>"$tmp/$name.out" 2>"$tmp/$name.err" &
		recs+=($!)
		e2e_bg+=($!)
	done
	for h in "${hosts[@]}"; do
		rec_ready "$h-$w" || not_ok "fleet.rec.$h-$w.ready" "$(head -3 "$tmp/$h-$w.err")"
	done
	kill -USR1 "${wls[@]}"
	wait "${wljobs[@]}"
	for h in "${!hosts[@]}"; do
		rec_signal INT "${recs[$h]}"
		rec_wait "${recs[$h]}"
		check_eq "fleet.rec.${hosts[$h]}-$w.exit" 0 $? "$tmp/${hosts[$h]}-$w.err"
	done
}

# when windows 1 and 2 start and 2 ends, in whole seconds (samples.time is in seconds): each
# window starts after the one before has ended, on a second of its own
wait_next_second() {
	local t
	t=$(($(date +%s) + 1))
	sleep "$(awk -v t="$t" -v now="$(date +%s.%N)" 'BEGIN { printf "%.3f", t - now + 0.02 }')"
	echo "$t"
}
t0=$(date +%s.%N)
w1=$(date +%s)
record_window 1
b=$(wait_next_second)
record_window 2
end=$(wait_next_second)
echo "# recorded in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
day() { date -d "@$1" '+%F %T'; }		# as ClickHouse prints a DateTime (UTC)
tod() { date -d "@$1" '+%FT%T'; }		# as stkreport --time takes it

# each capture: the host's name, and the workloads' events in their chains
caps=() total=0
for h in "${hosts[@]}"; do
	for w in 1 2; do
		f=$tmp/$h-$w.stk
		caps+=("$f")
		read -r n1 n2 <<<"${events[$h.$w]}"
		total=$((total + n1 + n2))
		report "sum.$h-$w" "$f"
		check_true "fleet.host.$h-$w" "'# host: $h,' in the summary" \
			grep -q "^# host: $h, " "$tmp/sum.$h-$w.rerr" || show "$tmp/sum.$h-$w.rerr"
		folded "$h-$w" "$f" -P
		check_eq "fleet.rec.$h-$w.events" "$n1 $n2" \
			"$(sum_folded "$tmp/$h-$w.rep" "^wl_syscall;.*;$direct") $(sum_folded \
				"$tmp/$h-$w.rep" "^wl_signal;.*;$signal")" "$tmp/$h-$w.rep"
	done
done

# ---- the servers, the cluster, the load ------------------------------------------------------
mkdir "$tmp/ch"
t0=$(date +%s.%N)
ch_ports
if ! ch_start "$tmp/ch"; then
	not_ok fleet.clickhouse.start "a server did not start: $(ch_logs)"
	e2e_done
fi
echo "# servers up in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
ch_cluster
check_eq fleet.clickhouse.ddl 0 $?
url="http://127.0.0.1:$CH_H1/?database=stk"
"$STKREPORT" --clickhouse "$url" "${caps[@]}" >"$tmp/load.out" 2>"$tmp/load.err"
check_eq fleet.load.exit 0 $? "$tmp/load.err"
check_true fleet.load.said "'6 captures loaded' on stderr" grep -q \
	"^# clickhouse: 127.0.0.1:$CH_H1, database stk: 6 captures loaded" "$tmp/load.err" ||
	show "$tmp/load.err"

# exact counts: host, window, comm, chain, events
: >"$tmp/counts.want"
for h in "${hosts[@]}"; do
	for w in 1 2; do
		read -r n1 n2 <<<"${events[$h.$w]}"
		printf '%s\t%s\twl_signal\tsignal\t%s\n%s\t%s\twl_syscall\tdirect\t%s\n' \
			"$h" "$w" "$n2" "$h" "$w" "$n1" >>"$tmp/counts.want"
	done
done
counts() { # PORT: the same from ClickHouse
	ch_sql "$1" --database stk --format TabSeparated --query "
		SELECT host, if(time < '$(day "$b")', 1, 2) AS w, comm,
			multiIf(line LIKE '%;$direct%', 'direct',
				line LIKE '%;$signal%', 'signal', line) AS chain, sum(count)
		FROM (SELECT host, time, comm, stack, count FROM samples)
		ANY INNER JOIN (SELECT id AS stack, arrayStringConcat(frames, ';') AS line
			FROM stacks FINAL) USING stack
		GROUP BY host, w, comm, chain
		ORDER BY host, w, comm"
}
# compare NAME WANT GOT: the files are the same, and not empty
compare() {
	if [ -s "$2" ] && cmp -s "$2" "$3"; then
		ok "fleet.$1"
	else
		not_ok "fleet.$1" "$(diff "$2" "$3" | head -8 | tr '\n' '|')"
	fi
}
# each check names the server it asked by its shard (1, 2), not by its port, which changes
# from run to run
shard() { [ "$1" = "$CH_T1" ] && echo shard1 || echo shard2; }
for port in "$CH_T1" "$CH_T2"; do
	counts "$port" >"$tmp/counts.got"
	compare "counts.$(shard "$port")" "$tmp/counts.want" "$tmp/counts.got"
done
printf '%s\t2\n' "${hosts[@]}" >"$tmp/hosts.want"
ch_sql "$CH_T1" --database stk --query "SELECT host, count() FROM captures FINAL GROUP BY host
	ORDER BY host" >"$tmp/hosts.got"
compare captures.hosts "$tmp/hosts.want" "$tmp/hosts.got"

# ---- the documented queries, on this fleet ---------------------------------------------------
# the document's windows (03:00, 04:00, 05:00), host web2, comm burner and function stk_leaf
# become windows 1 and 2, fleet-a, wl_signal and wl_handler
lit="s/'2026-01-02 03:00:00'/'$(day "$w1")'/g; s/'2026-01-02 04:00:00'/'$(day "$b")'/g"
lit+="; s/'2026-01-02 05:00:00'/'$(day "$end")'/g; s/'web2'/'fleet-a'/g"
lit+="; s/'burner'/'wl_signal'/g; s/'stk_leaf'/'wl_handler'/g"
stk() { timeout -k 5 "$E2E_TIMEOUT" "$STKREPORT" -q "$@"; }

# top stacks over both windows: host;comm;stack lines (a counting capture's -f has no comm
# field: --by comm prints it, for each host's captures), and -f --by host's host;stack lines
# for the same rows summed over comms. --time keeps the intervals that overlap (FROM, TO), the
# queries those that start in [FROM, TO): the same here, where no interval straddles a window's
# ends
window=$(tod "$w1"),$(tod "$end")
for h in "${hosts[@]}"; do
	stk -f --by comm --time "$window" "$tmp/$h"-[12].stk | sed "s/^/$h;/"
done | ch_by_host_columns | sort >"$tmp/top.want"
stk -f --by host --time "$window" "${caps[@]}" | sort >"$tmp/byhost.want"
for port in "$CH_T1" "$CH_T2"; do
	ch_query "$port" top-stacks "$lit" | sort >"$tmp/top.got"
	compare "top-stacks.$(shard "$port")" "$tmp/top.want" "$tmp/top.got"
	awk -F '\t' '{ n[$1 ";" $3] += $4 } END { for (l in n) print l, n[l] }' "$tmp/top.got" |
		sort >"$tmp/byhost.got"
	compare "top-stacks.by-host.$(shard "$port")" "$tmp/byhost.want" "$tmp/byhost.got"
done

# wl_signal's flame graph over window 2, every host
stk -f --by comm --comm wl_signal --time "$(tod "$b"),$(tod "$end")" "${caps[@]}" |
	sort >"$tmp/flame.want"
ch_query "$CH_T1" flamegraph "$lit" | tr '\t' ' ' | sort >"$tmp/flame.got"
compare flamegraph "$tmp/flame.want" "$tmp/flame.got"

# fleet-a's two windows: --diff's lines (-P: with the comm), in its order
stk -P --diff "$tmp/fleet-a-1.stk" "$tmp/fleet-a-2.stk" >"$tmp/diff.want"
ch_query "$CH_T2" diff "$lit" | tr '\t' ' ' >"$tmp/diff.got"
compare diff "$tmp/diff.want" "$tmp/diff.got"

# wl_handler's share on each host: --diff's share line where it grew by more than 10 points,
# the largest jump first
for h in "${hosts[@]}"; do
	"$STKREPORT" --diff "$tmp/$h-1.stk" "$tmp/$h-2.stk" 2>&1 >/dev/null |
		awk -v h="$h" '$NF == "wl_handler" && $2 + 0 > 10 {
			gsub(/%/, ""); printf "%s %.2f %.2f %.2f\n", h, $3, $5, $2 }'
done | sort -k4,4gr -k1,1 >"$tmp/share.want"
ch_query "$CH_T1" share-jump "$lit" | awk '{ printf "%s %.2f %.2f %.2f\n", $1, $2, $3, $4 }' \
	>"$tmp/share.got"
compare share-jump "$tmp/share.want" "$tmp/share.got"
check_eq fleet.share-jump.hosts "fleet-c 20.00 80.00 60.00|fleet-a 25.00 75.00 50.00|" \
	"$(tr '\n' '|' <"$tmp/share.got")"

# ---- again: nothing counted twice ------------------------------------------------------------
"$STKREPORT" --clickhouse "$url" "${caps[@]}" >/dev/null 2>"$tmp/again.err"
check_eq fleet.again.exit 0 $? "$tmp/again.err"
check_eq fleet.again.skipped 6 "$(grep -c ': already loaded (capture [0-9]*): skipped$' \
	"$tmp/again.err")" "$tmp/again.err"
for port in "$CH_T1" "$CH_T2"; do
	check_eq "fleet.again.sums.$(shard "$port")" "$total $total" "$(ch_sql "$port" --query \
		"SELECT sum(count), (SELECT sum(count) FROM stk.samples FINAL) FROM stk.samples" |
		tr '\t' ' ')"
done
counts "$CH_T1" >"$tmp/counts.again"
compare again.counts "$tmp/counts.want" "$tmp/counts.again"
e2e_done
