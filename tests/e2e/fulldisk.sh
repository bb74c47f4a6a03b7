#!/usr/bin/env bash
# A full disk: stkrec warns and holds the capture in memory (up to 64 MiB) until there is room;
# room made again loses nothing. A disk that stays full ends it with a one-line error and exit
# 1, and the capture reads up to its last complete interval (the writer cuts a torn chunk back).
# A disk too small for the start of the capture, or full before it, leaves no file at all.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

tp=t:syscalls:sys_enter_getppid
mnt=$tmp/mnt
mkdir -p "$mnt"
unmount() { umount "$mnt" 2>/dev/null; }

# Room for the start of the capture and some intervals; once stkrec runs, dd fills the rest.
# fill_disk NAME: record a workload, fill the disk 2.5 s in, wait for stkrec's warning; the caller
# then frees room or not, and ends the recording with SIGINT.
fill_disk() {
	local name=$1
	wl_bg "$name.wl" "$WL/wl_syscall" -w -v -b 1000 -d 5 100000
	rec_bg "$name" -q -i 1 -p "$WL_PID" -o "$mnt/x.stk" "$tp"
	if ! rec_ready "$name"; then
		not_ok "$name.ready" "a 'Tracing' line within 20 s"
		show "$tmp/$name.err"
		return 1
	fi
	kill -USR1 "$WL_PID"
	sleep 2.5
	dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null
	# the file's last page has room for a few more intervals: the warning comes once it is full
	wait_for "$tmp/$name.err" \
		"^stkrec: warning: cannot write to $mnt/x.stk: No space left on device; the capture waits in memory" 20
	check_eq "$name.warned" 0 $? "$tmp/$name.err"
}

# Room made again (a log rotated): nothing is lost, every interval stkrec wrote is read.
if mount -t tmpfs -o size=8m tmpfs "$mnt"; then
	if fill_disk room; then
		rm -f "$mnt/filler"
		sleep 1.5
		rec_signal INT "$REC_PID"
		rec_wait "$REC_PID"
		check_eq room.exit 0 $? "$tmp/room.err"
		check_true room.said "a line that the capture is written again" \
			grep -q "^stkrec: $mnt/x.stk: room again, the capture is written" "$tmp/room.err"
		report room "$mnt/x.stk" -f
		check_eq room.report_exit 0 $? "$tmp/room.rerr"
		wrote=$(sed -n 's/^stkrec: wrote \([0-9]*\) intervals.*/\1/p' "$tmp/room.err")
		check_true room.intervals "all $wrote intervals read, got: $(grep '^# recorded' "$tmp/room.rerr")" \
			grep -qE "^# recorded: .*, intervals: $wrote\$" "$tmp/room.rerr"
		check_eq room.events "$(rec_events room)" "$(sum_folded "$tmp/room.rep")" "$tmp/room.rep"
	fi
	kill "$WL_PID" 2>/dev/null
	unmount
else
	not_ok room.mount "cannot mount a tmpfs at $mnt"
fi

# The disk stays full: stkrec ends with a one-line error and exit 1, and the capture it leaves
# reads up to its last complete interval (the writer cuts a torn chunk back).
if mount -t tmpfs -o size=8m tmpfs "$mnt"; then
	if fill_disk fd; then
		rec_signal INT "$REC_PID"
		rec_wait "$REC_PID"
		check_eq fulldisk.exit 1 $? "$tmp/fd.err"
		check_eq fulldisk.one_line 1 "$(grep -c -x \
			"stkrec: cannot write to $mnt/x.stk: No space left on device" "$tmp/fd.err")" \
			"$tmp/fd.err"
		rm -f "$mnt/filler"
		report fd "$mnt/x.stk" -f
		check_eq fulldisk.report_exit 0 $? "$tmp/fd.rerr"
		check_true fulldisk.intervals "the intervals written before the disk filled are read" \
			grep -qE '^# recorded: .*, intervals: [1-9][0-9]*$' "$tmp/fd.rerr" ||
			show "$tmp/fd.rerr"
		check_true fulldisk.events "the workload's events of those intervals are reported" \
			grep -qE "$(chain wl_getppid)" "$tmp/fd.rep" || show "$tmp/fd.rep"
	fi
	kill "$WL_PID" 2>/dev/null
	unmount
else
	not_ok fulldisk.mount "cannot mount a tmpfs at $mnt"
fi

# Too small for the start of the capture (the header and, with --all-kallsyms, a whole
# kallsyms): exit 1, one line, no file left behind.
if mount -t tmpfs -o size=64k tmpfs "$mnt"; then
	rec tiny -q -D 1 --all-kallsyms -o "$mnt/x.stk" "$tp"
	check_eq tinydisk.exit 1 $? "$tmp/tiny.err"
	check_eq tinydisk.one_line 1 "$(grep -c '^stkrec: .*No space left on device$' "$tmp/tiny.err")" \
		"$tmp/tiny.err"
	check_true tinydisk.no_file "no capture left behind" test ! -e "$mnt/x.stk"
	unmount
else
	not_ok tinydisk.mount "cannot mount a tmpfs at $mnt"
fi
# Already full: the file gets no header; none is left behind (an empty file was, which
# stkreport could only call "not a capture file").
if mount -t tmpfs -o size=64k tmpfs "$mnt"; then
	dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null
	rec full -q -D 1 -o "$mnt/x.stk" "$tp"
	check_eq fullstart.exit 1 $? "$tmp/full.err"
	check_eq fullstart.one_line 1 "$(grep -c '^stkrec: .*No space left on device$' "$tmp/full.err")" \
		"$tmp/full.err"
	check_true fullstart.no_file "no empty capture left behind" test ! -e "$mnt/x.stk"
	unmount
else
	not_ok fullstart.mount "cannot mount a tmpfs at $mnt"
fi
e2e_done
