#!/usr/bin/env bash
# A full disk: stkrec stops with a one-line error and exit 1, and the capture it leaves reads up
# to its last complete interval (the writer cuts a torn chunk back). A disk too small for the
# start of the capture leaves no file at all.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

tp=t:syscalls:sys_enter_getppid
mnt=$tmp/mnt
mkdir -p "$mnt"
unmount() { umount "$mnt" 2>/dev/null; }

# Room for the start of the capture and some intervals; once stkrec runs, dd fills the rest.
if mount -t tmpfs -o size=8m tmpfs "$mnt"; then
	wl_bg fd.wl "$WL/wl_syscall" -w -v -b 1000 -d 5 100000
	rec_bg fd -q -i 1 -p "$WL_PID" -o "$mnt/x.stk" "$tp"
	if rec_ready fd; then
		kill -USR1 "$WL_PID"
		sleep 2.5
		dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null
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
	else
		not_ok fulldisk.ready "a 'Tracing' line within 20 s"
		show "$tmp/fd.err"
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
e2e_done
