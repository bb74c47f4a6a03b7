#!/usr/bin/env bash
# Files other users control. stkrec runs as root, writes where others can write (/tmp) and reads
# the perf maps traced processes leave in /tmp. Planted by `nobody`:
#  - at the output path (-o, --svg, --pprof): a symlink to a root file, a FIFO, a file of theirs:
#    refused in one line, the target untouched, nothing hangs;
#  - as /tmp/perf-PID.map of their own process: a FIFO, a symlink to a root-only file, a 10 GB
#    sparse file, a root-only file bind-mounted onto it in a user and mount namespace of its
#    own; and one made by another user (daemon) for nobody's process: the recording ends on
#    time, reports, and holds none of those files' lines. A map of nobody's own is read. And
#    root's map of 256 MiB of tiny lines for root's process: read up to stkrec's bounds.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require
command -v setpriv >/dev/null || { not_ok hostile.setpriv "setpriv(1) (util-linux) missing"; e2e_done; }

nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
as_nobody() { "${nobody[@]}" "$@"; }
as_daemon() { setpriv --reuid=daemon --regid=daemon --clear-groups -- "$@"; }

pub=$tmp/pub
mkdir -m 1777 "$pub"
victim=$tmp/victim
echo precious >"$victim"
chmod 0644 "$victim"

# the target left as it was: content and mode
victim_untouched() { # NAME
	check_eq "$1.victim_content" precious "$(head -c 16 "$victim" | tr -dc "[:print:]")"
	check_eq "$1.victim_mode" 644 "$(stat -c %a "$victim")"
}

# ---- outputs -------------------------------------------------------------------------------

as_nobody ln -s "$victim" "$pub/link.stk"
rec out_link -q -F 49 -D 1 -o "$pub/link.stk"
check_error out_link 1 $? "$tmp/out_link.err" /nonexistent 'link\.stk: .*exists'
victim_untouched out_link
check_true out_link.still_link "the symlink left in place" test -L "$pub/link.stk"

as_nobody mkfifo "$pub/fifo.stk"
rec out_fifo -q -F 49 -D 1 -o "$pub/fifo.stk"
check_error out_fifo 1 $? "$tmp/out_fifo.err" /nonexistent 'fifo\.stk: .*exists'
check_true out_fifo.still_fifo "the FIFO left in place" test -p "$pub/fifo.stk"

as_nobody sh -c "echo theirs >'$pub/theirs.stk'"
rec out_theirs -q -F 49 -D 1 -o "$pub/theirs.stk"
check_error out_theirs 1 $? "$tmp/out_theirs.err" /nonexistent 'theirs\.stk: .*exists'
check_eq out_theirs.owner nobody "$(stat -c %U "$pub/theirs.stk")"
check_eq out_theirs.content theirs "$(head -c 16 "$pub/theirs.stk" | tr -dc "[:print:]")"

# A file of root's own is replaced, and private again.
echo old >"$pub/mine.stk"
chmod 0644 "$pub/mine.stk"
rec out_mine -q -F 49 -D 1 -o "$pub/mine.stk"
check_eq out_mine.exit 0 $? "$tmp/out_mine.err"
check_eq out_mine.mode 600 "$(stat -c %a "$pub/mine.stk")"
report out_mine_rep "$pub/mine.stk" -q
check_eq out_mine.reports 0 $? "$tmp/out_mine_rep.rerr"

for kind in svg pprof; do
	as_nobody ln -s "$victim" "$pub/link.$kind"
	report "rep_$kind" "$pub/mine.stk" "--$kind" "$pub/link.$kind"
	rc=$?
	check_eq "rep_$kind.exit" 1 "$rc" "$tmp/rep_$kind.rerr"
	check_true "rep_$kind.one_line" "one line naming the path, got '$(head -1 "$tmp/rep_$kind.rerr")'" \
		grep -q "^stkreport: .*link\.$kind: .*exists" "$tmp/rep_$kind.rerr"
	victim_untouched "rep_$kind"
	as_nobody mkfifo "$pub/fifo.$kind"
	report "rep_${kind}_fifo" "$pub/mine.stk" "--$kind" "$pub/fifo.$kind"
	check_eq "rep_${kind}_fifo.exit" 1 $? "$tmp/rep_${kind}_fifo.rerr"
done

# ---- process names -------------------------------------------------------------------------

# A comm with a newline in it (the name of the file a process runs): /proc/PID/stat then holds
# two lines, and its stacks must still be named (a line-wise read lost every user stack).
nl_name="$tmp/wl_nl
comm"
cp "$WL/wl_syscall" "$nl_name"
wl_bg comm_nl "$nl_name" -w -v 500
rec_bg comm_nl -q -p "$WL_PID" -o "$tmp/comm_nl.stk" t:syscalls:sys_enter_getppid
rec_ready comm_nl && wl_release
rec_signal INT "$REC_PID"
rec_wait "$REC_PID"
check_eq comm_nl.exit 0 $? "$tmp/comm_nl.err"
folded comm_nl "$tmp/comm_nl.stk"
check_eq comm_nl.user_chain 500 "$(sum_folded "$tmp/comm_nl.rep" "$(chain wl_getppid)")" \
	"$tmp/comm_nl.rep"

# ---- perf maps ---------------------------------------------------------------------------

secret=$tmp/secret
mkdir -m 0700 "$secret"
printf '1000 100 ROOT_ONLY_LINE\n' >"$secret/perf.map"
chmod 0600 "$secret/perf.map"

pids=()
burner() { # NAME: a burner as nobody; sets BURNER
	wl_bg "$1" "${nobody[@]}" "$WL/wl_burner" -v 8	# setpriv execs: WL_PID is the job
	BURNER=$WL_PID
	pids+=("$WL_PID")
}
burner pm_fifo
as_nobody mkfifo "/tmp/perf-$BURNER.map"
burner pm_link
as_nobody ln -s "$secret/perf.map" "/tmp/perf-$BURNER.map"
burner pm_sparse
as_nobody truncate -s 10G "/tmp/perf-$BURNER.map"
burner pm_daemon
as_daemon sh -c "printf '2000 100 DAEMON_PLANTED\n' >/tmp/perf-$BURNER.map"
burner pm_own
as_nobody sh -c "printf '3000 100 NOBODY_OWN\n' >/tmp/perf-$BURNER.map"
# nobody in a user and mount namespace of its own bind-mounts a root-only file (in a directory it
# may search) onto its own map: it cannot read the file, so stkrec must not copy it either
printf '4000 100 ROOT_BOUND_LINE\n' >"$tmp/rootonly.map"
chmod 0600 "$tmp/rootonly.map"
wl_bg pm_bind "${nobody[@]}" unshare -Urm sh -c \
	"touch /tmp/perf-\$\$.map && mount --bind '$tmp/rootonly.map' /tmp/perf-\$\$.map &&
	 exec '$WL/wl_burner' -v 8"
pids+=("$WL_PID")
check_true pm_bind.mounted "the bind mount in nobody's namespace" \
	grep -q ROOT_BOUND_LINE "/proc/$WL_PID/root/tmp/perf-$WL_PID.map"

list=$(IFS=,; echo "${pids[*]}")
start=$(date +%s)
rec pm -F 49 -D 2 -o "$tmp/pm.stk" -p "$list"
rc=$?
took=$(($(date +%s) - start))
for p in "${pids[@]}"; do
	kill "$p" 2>/dev/null
	rm -f "/tmp/perf-$p.map"
done
check_eq pm.exit 0 "$rc" "$tmp/pm.err"
check_true pm.on_time "-D 2 to end within 20 s, took ${took} s" test "$took" -le 20
check_true pm.sparse_warned "a warning for the 10 GB file, got: $(grep -v '^Sampling' "$tmp/pm.err" | head -3)" \
	grep -q 'perf-[0-9]*\.map: over its 64 MiB (stkrec(8) FILES), the rest is left out' \
	"$tmp/pm.err"
"$PWD/$OUTPUT/tests/tools/capdump" "$tmp/pm.stk" >"$tmp/pm.dump"
lacks() { ! grep -qa "$1" "$tmp/pm.dump"; }
check_true pm.own_read "nobody's own map read (NOBODY_OWN)" grep -qa NOBODY_OWN "$tmp/pm.dump"
check_true pm.no_root_file "no line of the root-only file" lacks ROOT_ONLY_LINE
check_true pm.no_daemon_file "no line of daemon's file" lacks DAEMON_PLANTED
check_true pm.no_bound_file "no line of the root-only file bound in a namespace" lacks ROOT_BOUND_LINE
report pm_rep "$tmp/pm.stk" -q
check_eq pm.reports 0 $? "$tmp/pm_rep.rerr"

# A map of 256 MiB of 6-byte lines (read whole, it kept `stkrec -D 5` running 14.3 s on 12.7 s of
# CPU): the recording ends on time, with its CPU bounded, both against the same recording
# without the map (ratios: the host is shared); the first 1,000,000 lines are copied, and the
# rest is counted as left out, in bytes.
timed() { # NAME ARGS...: rec NAME ARGS; "WALL_MS CPU_MS STATUS" (CPU: user + system, getrusage)
	local TIMEFORMAT='%3R %3U %3S'
	{ { time rec "$@"; } 2>&1; echo "$?"; } |
		awk 'NR == 1 { t = sprintf("%d %d", $1 * 1000, ($2 + $3) * 1000) } NR == 2 { print t, $1 }'
}
perfmap_syms() { # CAPTURE: the symbols of its PERFMAP records
	"$PWD/$OUTPUT/tests/tools/capdump" "$1" |
		awk '/^perfmap / { sub(/.*syms=/, ""); n += $1 } END { print n + 0 }'
}
wl_bg pm_tiny "$WL/wl_burner" -v 30
read -r nomap_wall nomap_cpu rc < <(timed pm_nomap -q -F 49 -D 5 -o "$tmp/pm_nomap.stk" -p "$WL_PID")
check_eq pm_nomap.exit 0 "$rc" "$tmp/pm_nomap.err"
tiny_bytes=$((256 << 20))
yes '0 1 a' | head -c "$tiny_bytes" >"/tmp/perf-$WL_PID.map"
read -r tiny_wall tiny_cpu rc < <(timed pm_tiny -q -F 49 -D 5 -o "$tmp/pm_tiny.stk" -p "$WL_PID")
rm -f "/tmp/perf-$WL_PID.map"
kill "$WL_JOB" 2>/dev/null
check_eq pm_tiny.exit 0 "$rc" "$tmp/pm_tiny.err"
echo "# pm_tiny: -D 5 took ${tiny_wall} ms, ${tiny_cpu} ms of CPU; without the map ${nomap_wall} ms," \
	"${nomap_cpu} ms"
check_true pm_tiny.on_time "at most 2 times the ${nomap_wall} ms without the map, took ${tiny_wall} ms" \
	test "$tiny_wall" -le $((2 * nomap_wall))
check_true pm_tiny.cpu "at most 10 times the ${nomap_cpu} ms of CPU without the map (20 ms at least), \
took ${tiny_cpu} ms" test "$tiny_cpu" -le $((10 * (nomap_cpu > 20 ? nomap_cpu : 20)))
check_true pm_tiny.warned "a warning naming the bound, got: $(grep -v '^Sampling' "$tmp/pm_tiny.err" | head -3)" \
	grep -q "perf-$WL_PID\.map: over its 1000000 lines (stkrec(8) FILES), the rest is left out" \
	"$tmp/pm_tiny.err"
check_eq pm_tiny.symbols 1000000 "$(perfmap_syms "$tmp/pm_tiny.stk")"
report pm_tiny_rep "$tmp/pm_tiny.stk" -f
check_eq pm_tiny.left_out $((tiny_bytes - 1000000 * 6)) \
	"$(lost_count "$tmp/pm_tiny_rep.rerr" "bytes of JIT perf maps left out (over stkrec's bounds)")" \
	"$tmp/pm_tiny_rep.rerr"

# Five processes with a map of 1,000,000 such lines each: the capture gets 4,000,000 lines,
# its bound, and counts the last map's 6,000,000 bytes as left out.
pids=()
for i in 1 2 3 4 5; do
	wl_bg "pm_run$i" "$WL/wl_burner" -v 8
	pids+=("$WL_PID")
	yes '0 1 a' | head -n 1000000 >"/tmp/perf-$WL_PID.map"
done
rec pm_run -q -F 49 -D 2 -o "$tmp/pm_run.stk" -p "$(IFS=,; echo "${pids[*]}")"
rc=$?
for p in "${pids[@]}"; do
	kill "$p" 2>/dev/null
	rm -f "/tmp/perf-$p.map"
done
check_eq pm_run.exit 0 "$rc" "$tmp/pm_run.err"
check_true pm_run.warned "a warning naming the capture's bound, got: $(grep -v '^Sampling' "$tmp/pm_run.err" | head -3)" \
	grep -q "over the capture's 4000000 lines of perf maps (stkrec(8) FILES), the rest of every perf map is left out" \
	"$tmp/pm_run.err"
check_eq pm_run.symbols 4000000 "$(perfmap_syms "$tmp/pm_run.stk")"
report pm_run_rep "$tmp/pm_run.stk" -f
check_eq pm_run.left_out 6000000 \
	"$(lost_count "$tmp/pm_run_rep.rerr" "bytes of JIT perf maps left out (over stkrec's bounds)")" \
	"$tmp/pm_run_rep.rerr"
e2e_done
