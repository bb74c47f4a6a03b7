#!/usr/bin/env bash
# Mappings as the kernel makes them (issue 11): stkrec learns every executable mapping from the
# kernel's mmap2 records, not only from /proc/PID/maps read when BPF first sees a process,
# which is often before ld.so has mapped libc, never sees a process gone by then, and misses a
# library dlopen()ed later.
#   - 100 processes that live about 1 ms make their events inside libc (getppid through a
#     syscall tracepoint): >= 99% have libc's leaf and the program's own chain named;
#   - a program dlopen()s a library a second after its exec and calls into it: every event
#     has the library's frames named, with the CFI walker and with frame pointers, and with
#     the library calling back into a routine without CFI, whose return address is guessed.
# Before, the first gave 25 to 275 named libc leaves of 300 (issue 11), the second unnamed
# library frames with --unwind fp.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

tp=t:syscalls:sys_enter_getppid
nprocs=100 hits=5
# Copies under names of their own, this run's (the shell's pid in them): the counts are by comm,
# in system-wide recordings that must not count another wl_short or wl_dlopen running meanwhile
# (a benchmark's, another checkout's, this test's in another checkout).
u=$(($$ % 100000))
mp_short=mp_short$u mp_dlopen=mp_dlopen$u mp_dlnocfi=mp_dlnocfi$u
cp "$WL/wl_short" "$tmp/$mp_short" && cp "$WL/wl_dlopen" "$tmp/$mp_dlopen" || exit 1

# record_during NAME UNWIND COMMAND...: a system-wide count of $tp while COMMAND runs.
record_during() {
	local name=$1 unwind=$2
	shift 2
	rec_bg "$name" -q -i 1 -U --unwind "$unwind" -o "$tmp/$name.stk" "$tp"
	rec_ready "$name" || not_ok "$name.ready" "stkrec did not start: $(head -1 "$tmp/$name.err")"
	"$@"
	check_eq "$name.workload_exit" 0 $?
	sleep 1.2
	rec_signal INT "$REC_PID"
	rec_wait "$REC_PID"
	check_eq "$name.exit" 0 $? "$tmp/$name.err"
}

for unwind in auto fp; do
	name=libc_$unwind
	record_during "$name" "$unwind" "$tmp/$mp_short" "$nprocs" "$hits" 1
	folded "$name" "$tmp/$name.stk" -P
	total=$(sum_folded "$tmp/$name.rep" "^$mp_short"';')
	# A frame-pointer walk from a leaf without a frame (getppid) skips its caller.
	named=$(sum_folded "$tmp/$name.rep" \
		"^$mp_short"';(.*;)?main;child;short_outer;short_middle;(short_target;)?getppid ')
	check_eq "$name.count" $((nprocs * hits)) "$total" "$tmp/$name.rep"
	check_true "$name.libc_named" "at least 99% of $total events with libc's getppid and the \
program's chain named, got $named" test $((named * 100)) -ge $((total * 99))
done

# A library dlopen()ed a second after the process's first events, system-wide (a -- COMMAND
# child is read again at its exit, which would hide the miss). With frame pointers the walker
# never misses an address, so nothing but the mmap record says where the library is.
n=1000
lib=$WL/libwl_dlib.so
for unwind in auto fp; do
	name=dlopen_$unwind
	record_during "$name" "$unwind" "$tmp/$mp_dlopen" "$lib" "$n" 1000
	folded "$name" "$tmp/$name.stk" -P
	check_eq "$name.count" $((2 * n)) "$(sum_folded "$tmp/$name.rep" "^$mp_dlopen"';')" \
		"$tmp/$name.rep"
	check_eq "$name.library_named" "$n" "$(sum_folded "$tmp/$name.rep" \
		"^$mp_dlopen"';(.*;)?main;call_library;dlib_outer;(dlib_work;)?getppid ')" "$tmp/$name.rep"
done

# The library's events while stkrec is stopped (SIGSTOP): each waits for it in the `deferred`
# ring, until the ring is full (60,000 records of about 1 KiB, against 16 MiB). An event it has no
# room for is counted by BPF with the stack walked so far, the leaf alone (libc's getppid: its
# caller is in the library), and named as cut by the full ring. Before, such stacks were named
# as cut at an address in no known mapping, a miss of the walk, which they are not.
n_full=60000
name=defer_full
rec_bg "$name" -q -i 1 -U -o "$tmp/$name.stk" "$tp"
rec_ready "$name" || not_ok "$name.ready" "stkrec did not start: $(head -1 "$tmp/$name.err")"
"$tmp/$mp_dlopen" "$lib" "$n_full" 1000 &
wl_pid=$!
sleep 0.5	# the library comes a second after the process's first events: stkrec has read it
rec_signal STOP "$REC_PID"
wait "$wl_pid"
check_eq "$name.workload_exit" 0 $?
rec_signal CONT "$REC_PID"
sleep 1.2
rec_signal INT "$REC_PID"
rec_wait "$REC_PID"
check_eq "$name.exit" 0 $? "$tmp/$name.err"
report "$name" "$tmp/$name.stk" -f -P
whole=$(sum_folded "$tmp/$name.rep" \
	"^$mp_dlopen"';(.*;)?main;(call_library;dlib_outer;(dlib_work;)?)?getppid ')
leaf=$(sum_folded "$tmp/$name.rep" "^$mp_dlopen"';getppid ')
full=$(lost_count "$tmp/$name.rerr" 'user stacks cut: the ring of deferred events was full')
check_eq "$name.count" $((2 * n_full)) "$(sum_folded "$tmp/$name.rep" "^$mp_dlopen"';')" \
	"$tmp/$name.rep"
check_eq "$name.whole_or_leaf" $((2 * n_full)) $((whole + leaf)) "$tmp/$name.rep"
check_true "$name.filled" "some events found the ring full, got $full" test "$full" -ge 1
check_eq "$name.named" "$leaf" "$full" "$tmp/$name.rerr"

# The same, built without frame pointers, the library calling back into a routine of the
# program without CFI (wl_dlopen nocfi): the walk guesses the routine's return address, which
# lies in the library. While stkrec does not know the library yet, the guess is asked about
# like any other miss (docs/bpf.md 7): every event whole, where before every one was cut to
# its leaf as a bad frame.
cp "$WL/nofp/wl_dlopen" "$tmp/$mp_dlnocfi" || exit 1
name=dlopen_nocfi
record_during "$name" auto "$tmp/$mp_dlnocfi" "$WL/nofp/libwl_dlib.so" "$n" 1000 nocfi
folded "$name" "$tmp/$name.stk" -P
check_eq "$name.count" $((2 * n)) "$(sum_folded "$tmp/$name.rep" "^$mp_dlnocfi"';')" "$tmp/$name.rep"
check_eq "$name.guess_in_library" "$n" "$(sum_folded "$tmp/$name.rep" \
	"^$mp_dlnocfi"';_start;(.*;)?call_back;dlib_callback;nocfi_getppid ')" "$tmp/$name.rep"
e2e_done
