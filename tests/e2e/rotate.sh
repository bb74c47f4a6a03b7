#!/usr/bin/env bash
# Rotation (stkrec --rotate, issue 27): a new file at an interval boundary, each a complete
# capture named FILE-YYYYmmddTHHMMSS.mmmZ.stk that reports alone, every event in exactly one.
#   - 12 s rotated every 3 s of a workload of N events: 4 files, each closed cleanly and naming
#     the workload's chain in a mount namespace without its binary (its own OBJECTS, process
#     and kernel symbol records), the counts summing to N exactly;
#   - --max-files 2 leaves the newest 2, an earlier run's file removed, others' files left;
#   - kill -9 during rotations (SIGHUP every 20 ms) leaves every earlier file whole;
#   - a full disk holds the rotation back (the capture waits in memory, as without rotation) and
#     room made again loses nothing.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

tp=t:syscalls:sys_enter_getppid
capdump=$PWD/$OUTPUT/tests/tools/capdump

# The workload in a directory of its own, hidden for the reports (anywhere.sh), under a name of
# this run's (the shell's pid in it): the recordings are system-wide, and their counts by comm
# must not take in another wl_rate running meanwhile (another checkout's test, a benchmark's).
mkdir -p "$tmp/bin" "$tmp/nothing"
rate=wl_rate$(($$ % 100000))
cp "$WL/wl_rate" "$tmp/bin/$rate"
hidden() { # NAME CAPTURE ARGS...: stkreport ARGS CAPTURE with $tmp/bin hidden
	local name=$1 cap=$2
	shift 2
	unshare -m sh -c 'mount -t tmpfs none "$1" && shift && exec "$@"' sh "$tmp/bin" \
		timeout -k 5 "$E2E_TIMEOUT" "$STKREPORT" --symfs "$tmp/nothing" "$@" "$cap" \
		>"$tmp/$name.rep" 2>"$tmp/$name.rerr"
}
# stamped DIR BASE: the rotated files of BASE in DIR, oldest first
stamped() {
	find "$1" -maxdepth 1 -regextype posix-extended \
		-regex ".*/$2-[0-9]{8}T[0-9]{6}\.[0-9]{3}Z\.stk" | sort
}
# start_ns CAPTURE: its meta start.mono_ns
start_ns() { "$capdump" "$1" | sed -n 's/^meta start\.mono_ns=//p'; }

# ---- 12 s rotated every 3 s ----------------------------------------------------------------
n=3600
mkdir "$tmp/r"
rec_bg rot -q -i 1 --rotate 3 -D 12 -o "$tmp/r/rot.stk" "$tp"
rec_ready rot || not_ok rot.ready "stkrec did not start: $(head -1 "$tmp/rot.err")"
"$tmp/bin/$rate" -r 360 "$n"	# 10 s: into all four files
rec_wait "$REC_PID"
check_eq rot.exit 0 $? "$tmp/rot.err"
mapfile -t files < <(stamped "$tmp/r" rot)
check_eq rot.files 4 "${#files[@]}" "$tmp/rot.err"
check_true rot.said "the closing line to count 4 files" \
	grep -q "^stkrec: wrote 12 intervals, .* to 4 files (the last: ${files[3]:-?})" "$tmp/rot.err"
sum=0
for i in "${!files[@]}"; do
	f=${files[$i]}
	hidden "rot$i" "$f" -f -q -P
	check_eq "rot.file$i.report" 0 $? "$tmp/rot$i.rerr"
	hidden "rot${i}s" "$f"
	check_true "rot.file$i.clean" "a capture closed cleanly, 3 intervals" \
		grep -qE '^# capture: .*\(format [0-9.]+, clean close\)' "$tmp/rot${i}s.rerr" ||
		show "$tmp/rot${i}s.rerr"
	check_true "rot.file$i.intervals" "3 intervals" \
		grep -qE '^# recorded: .*, intervals: 3$' "$tmp/rot${i}s.rerr"
	all=$(sum_folded "$tmp/rot$i.rep" "^$rate;")
	# user frames from the file's own OBJECTS records, kernel frames from its KSYMS_ADD
	named=$(sum_folded "$tmp/rot$i.rep" \
		"^$rate"';(.*;)?main;wl_outer;wl_middle;wl_getppid;entry_SYSCALL_64[a-z_]*;do_syscall_64;')
	check_true "rot.file$i.events" "events of the workload, got $all" test "$all" -gt 0
	check_eq "rot.file$i.named_alone" "$all" "$named" "$tmp/rot$i.rep"
	sum=$((sum + all))
done
check_eq rot.sum "$n" "$sum"
# back to back: each file starts where the one before ended
if [ "${#files[@]}" = 4 ]; then
	gap=$(($(start_ns "${files[3]}") - $(start_ns "${files[0]}")))
	check_true rot.contiguous "the fourth file 9 s after the first, got $gap ns" \
		test "$gap" -ge 8900000000 -a "$gap" -le 9100000000
fi

# ---- --max-files 2 -------------------------------------------------------------------------
mkdir "$tmp/m"
cp "${files[0]:-/dev/null}" "$tmp/m/mf-20000101T000000.000Z.stk"	# an earlier run's
echo notes >"$tmp/m/mf-notes.txt"
echo "not a capture" >"$tmp/m/mf-20000101T000001.000Z.stk"
rec mf -q -i 1 --rotate 1 --max-files 2 -D 5 -o "$tmp/m/mf.stk" "$tp"
check_eq mf.exit 0 $? "$tmp/mf.err"
mapfile -t kept < <(stamped "$tmp/m" mf | grep -v 20000101T000001)
check_eq mf.kept 2 "${#kept[@]}" "$tmp/mf.err"
check_true mf.newest "the last file written kept" \
	grep -q "^stkrec: wrote 5 intervals, .* to 5 files (the last: ${kept[1]:-?})" "$tmp/mf.err"
if [ "${#kept[@]}" = 2 ]; then
	gap=$(($(start_ns "${kept[1]}") - $(start_ns "${kept[0]}")))
	check_true mf.newest_two "the two newest, 1 s apart, got $gap ns" \
		test "$gap" -ge 900000000 -a "$gap" -le 1100000000
fi
check_true mf.others_left "files not ours left alone" \
	test -e "$tmp/m/mf-notes.txt" -a -e "$tmp/m/mf-20000101T000001.000Z.stk"

# ---- kill -9 during rotations ----------------------------------------------------------------
for round in 1 2 3; do
	d=$tmp/k$round
	mkdir "$d"
	rec_bg "kill$round" -q -i 1 --rotate signal -o "$d/k.stk" "$tp"
	rec_ready "kill$round" || not_ok "kill$round.ready" "stkrec did not start"
	pid=$(rec_child "$REC_PID")
	"$WL/wl_rate" -r 2000 4000 &
	for ((i = 0; i < 40 + round * 7; i++)); do
		kill -HUP "$pid"
		sleep 0.02
	done
	kill -KILL "$pid"
	rec_wait "$REC_PID"
	wait
	mapfile -t kfiles < <(stamped "$d" k)
	check_true "kill$round.rotated" "many files, got ${#kfiles[@]}" test "${#kfiles[@]}" -gt 5
	bad=0
	for ((i = 0; i + 1 < ${#kfiles[@]}; i++)); do
		"$capdump" -s "${kfiles[$i]}" >"$d/dump" 2>&1 && grep -q ' end=1$' "$d/dump" ||
			{ bad=$((bad + 1)); show "$d/dump"; }
	done
	check_eq "kill$round.earlier_whole" 0 "$bad"
	last=${kfiles[${#kfiles[@]} - 1]:-}
	report "kill${round}last" "$last" -q -f
	check_eq "kill$round.last_reads" 0 $? "$tmp/kill${round}last.rerr"
done

# ---- a full disk -----------------------------------------------------------------------------
mnt=$tmp/mnt
mkdir -p "$mnt"
if mount -t tmpfs -o size=8m tmpfs "$mnt"; then
	wl_bg full.wl "$WL/wl_syscall" -w -v -b 1000 -d 5 100000
	rec_bg full -q -i 1 --rotate 1 -p "$WL_PID" -o "$mnt/x.stk" "$tp"
	if rec_ready full; then
		kill -USR1 "$WL_PID"
		sleep 2.5
		dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null
		wait_for "$tmp/full.err" '^stkrec: warning: cannot (write to|create) ' 20
		check_eq full.warned 0 $? "$tmp/full.err"
		sleep 1.5
		rm -f "$mnt/filler"
		sleep 2
		rec_signal INT "$REC_PID"
		rec_wait "$REC_PID"
		check_eq full.exit 0 $? "$tmp/full.err"
		mapfile -t ffiles < <(stamped "$mnt" x)
		fsum=0 unclean=0
		for f in "${ffiles[@]}"; do
			"$capdump" -s "$f" >"$tmp/fdump" 2>&1 && grep -q ' end=1$' "$tmp/fdump" ||
				unclean=$((unclean + 1))
			fsum=$((fsum + $(sed -n 's/^total events=\([0-9]*\) .*/\1/p' "$tmp/fdump")))
		done
		check_eq full.all_clean 0 "$unclean" "$tmp/full.err"
		check_eq full.nothing_lost "$(rec_events full)" "$fsum" "$tmp/full.err"
		check_true full.rotated_after "files after the disk was full again, got ${#ffiles[@]}" \
			test "${#ffiles[@]}" -ge 5
	else
		not_ok full.ready "stkrec did not start: $(head -1 "$tmp/full.err")"
	fi
	kill "$WL_PID" 2>/dev/null
	umount "$mnt"
else
	not_ok full.mount "cannot mount a tmpfs at $mnt"
fi
e2e_done
