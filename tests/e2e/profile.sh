#!/usr/bin/env bash
# Timed sampling (no SPEC, bcc profile): the burner's samples read main;stk_top;stk_mid;stk_leaf,
# a syscall loop shows kernel frames, and the profile layouts.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

burn_chain=';main;stk_top;stk_mid;stk_leaf( |;)'

# share NAME FILE MIN: at least MIN burner samples, and at least 90% of them with the chain.
share_check() {
	local name=$1 file=$2 min=$3 all in
	all=$(sum_folded "$file" '^wl_burner;')
	in=$(sum_folded "$file" "^wl_burner;.*$burn_chain")
	check_true "$name.samples" "at least $min burner samples, got $all" test "$all" -ge "$min" ||
		show "$file"
	check_true "$name.share" "at least 90% of $all samples with stk_top;stk_mid;stk_leaf, got $in" \
		test $((in * 100)) -ge $((all * 90)) || show "$file"
}

# min_samples HZ TICKS: half the samples HZ takes of TICKS of CPU time (fewer means sampling is
# broken, not noisy), at least 1. The burner's CPU time, not the wall clock, since the host may
# be busy with other work (the checks name the burner's own samples, never a CPU's).
min_samples() {
	local m=$(($1 * $2 / 200))
	echo $((m > 0 ? m : 1))
}

# -- COMMAND: sample the burner alone, for 3 s of its CPU time (~297 samples at 99 Hz).
rec pc -q -F 99 -o "$tmp/pc.stk" -- "$WL/wl_burner" -c 3
check_eq profile.cmd.exit 0 $? "$tmp/pc.err"
folded pc "$tmp/pc.stk"
check_eq profile.cmd.report_exit 0 $? "$tmp/pc.rerr"
share_check profile.cmd "$tmp/pc.rep" "$(min_samples 99 300)"
check_eq profile.cmd.only_burner "$(sum_folded "$tmp/pc.rep")" \
	"$(sum_folded "$tmp/pc.rep" '^wl_burner;')" "$tmp/pc.rep"

# -p PID -D 3 on a running burner.
wl_bg pp "$WL/wl_burner" -v 8
burner=$WL_PID
t0=$(cpu_ticks "$burner")
rec pp -q -F 99 -p "$burner" -D 3 -o "$tmp/pp.stk"
check_eq profile.pid.exit 0 $? "$tmp/pp.err"
t1=$(cpu_ticks "$burner")
kill "$burner" 2>/dev/null
folded pp "$tmp/pp.stk"
share_check profile.pid "$tmp/pp.rep" "$(min_samples 99 $((t1 - t0)))"

# System-wide, positional duration, with a burner running: its chain is there, and the default
# layout is bcc profile's (frames, `    -                comm (pid)`, count).
wl_bg ps "$WL/wl_burner" -v 5
burner=$WL_PID
t0=$(cpu_ticks "$burner")
rec ps -F 49 -o "$tmp/ps.stk" 2
check_eq profile.system.exit 0 $? "$tmp/ps.err"
t1=$(cpu_ticks "$burner")
check_true profile.system.sampling_line \
	"'Sampling at 49 Hertz of all threads by user + kernel stack...', got '$(grep '^Sampling' "$tmp/ps.err")'" \
	grep -q '^Sampling at 49 Hertz of all threads by user + kernel stack' "$tmp/ps.err"
kill "$burner" 2>/dev/null
folded ps "$tmp/ps.stk"
# Half the samples 49 Hz takes of the burner's CPU time (98 on an idle host), and at least 95%
# of them with the chain.
min=$(min_samples 49 $((t1 - t0)))
all=$(sum_folded "$tmp/ps.rep" '^wl_burner;')
in=$(sum_folded "$tmp/ps.rep" "^wl_burner;.*$burn_chain")
check_true profile.system.burner_chain \
	"the burner's chain in >= $min samples and >= 95% of its $all, got $in" \
	test "$in" -ge "$min" -a $((in * 100)) -ge $((all * 95)) || show "$tmp/ps.rep"
report psd "$tmp/ps.stk" -q
check_true profile.system.layout "a line '    -                wl_burner ($burner)' in the default output" \
	grep -qxF "    -                wl_burner ($burner)" "$tmp/psd.rep" || show "$tmp/psd.rep"
# bcc profile's frames since 0.33: NAME+0xOFF [MODULE] (the check was piped into its own
# grep before, and printed nothing)
check_true profile.system.leaf_first "'    stk_leaf+0xOFF [wl_burner]' followed by '    stk_mid+0xOFF [wl_burner]' in the default output" \
	bash -c "grep -A1 -xE '    stk_leaf\+0x[0-9a-f]+ \[wl_burner\]' '$tmp/psd.rep' |
		grep -qxE '    stk_mid\+0x[0-9a-f]+ \[wl_burner\]'"

# -C: one CPU only. Two burners, one pinned to each CPU (copies named for it): a profile of
# CPU 1 has the first and none of the second, a profile of CPU 0 the other way round. Counted
# by the burners' own samples, never by a CPU's share: other work may run there.
cp "$WL/wl_burner" "$tmp/burner_cpu1" && cp "$WL/wl_burner" "$tmp/burner_cpu0" || exit 1
wl_bg pin1 taskset -c 1 "$tmp/burner_cpu1" -v 8
b1=$WL_PID
wl_bg pin0 taskset -c 0 "$tmp/burner_cpu0" -v 8
b0=$WL_PID
t1=$(cpu_ticks "$b1")
rec pc1 -q -F 99 -C 1 -o "$tmp/pc1.stk" 2
check_eq profile.cpu.exit 0 $? "$tmp/pc1.err"
t1=$(($(cpu_ticks "$b1") - t1))
t0=$(cpu_ticks "$b0")
rec pc0 -q -F 99 -C 0 -o "$tmp/pc0.stk" 2
t0=$(($(cpu_ticks "$b0") - t0))
kill "$b1" "$b0" 2>/dev/null
folded pc1 "$tmp/pc1.stk"
folded pc0 "$tmp/pc0.stk"
min=$(min_samples 99 "$t1")
c1=$(sum_folded "$tmp/pc1.rep" '^burner_cpu1;')
check_true profile.cpu.on "CPU 1's burner in >= $min samples of CPU 1, got $c1" \
	test "$c1" -ge "$min" || show "$tmp/pc1.rep"
check_eq profile.cpu.on_only 0 "$(sum_folded "$tmp/pc1.rep" '^burner_cpu0;')" "$tmp/pc1.rep"
min=$(min_samples 99 "$t0")
c0=$(sum_folded "$tmp/pc0.rep" '^burner_cpu0;')
check_true profile.cpu.on0 "CPU 0's burner in >= $min samples of CPU 0, got $c0" \
	test "$c0" -ge "$min" || show "$tmp/pc0.rep"
check_eq profile.cpu.off 0 "$(sum_folded "$tmp/pc0.rep" '^burner_cpu1;')" "$tmp/pc0.rep"

# -c N: one sample every N ns of CPU clock; 10 ms is 100 per second of the burner's CPU time.
rec pcount -q -c 10000000 -o "$tmp/pcount.stk" -- "$WL/wl_burner" -c 2
check_eq profile.count.exit 0 $? "$tmp/pcount.err"
folded pcount "$tmp/pcount.stk"
c=$(sum_folded "$tmp/pcount.rep" '^wl_burner;')
check_true profile.count.samples "100-300 samples for 2 s of CPU with -c 10000000, got $c" \
	test "$c" -ge 100 -a "$c" -le 300 || show "$tmp/pcount.rep"

# The idle task (pid 0) only with -I: of every CPU, since on a loaded host (a build on one CPU)
# CPU 0 alone was busy for the whole second. A host busy on every CPU for the whole second has
# no idle task to sample: said, not failed.
i0=$(idle_ticks)
rec pidle -q -F 99 -I -o "$tmp/pidle.stk" 1
check_eq profile.idle.exit 0 $? "$tmp/pidle.err"
idle=$(($(idle_ticks) - i0))
report pidle "$tmp/pidle.stk" -q -P
if [ "$idle" -ge 20 ]; then
	check_true profile.idle.kept "samples of pid 0 (swapper) with -I ($idle idle ticks)" \
		grep -qE '^    -  +swapper/[0-9]+ \(0\)$' "$tmp/pidle.rep" || show "$tmp/pidle.rep"
else
	skip profile.idle.kept "THE HOST WAS NOT IDLE: $idle ticks of idle time during the 1 s run"
fi
report pc0P "$tmp/pc0.stk" -q
check_true profile.idle.dropped "no samples of pid 0 without -I" \
	bash -c "! grep -qE '\\(0\\)\$' '$tmp/pc0P.rep'" || show "$tmp/pc0P.rep"

# A syscall loop: samples inside the kernel carry kernel frames under the user chain; -a marks
# them _[k], -d puts a `-` frame between user and kernel frames.
rec pk -q -F 99 -o "$tmp/pk.stk" -- "$WL/wl_syscall" 10000000
check_eq profile.kernel.exit 0 $? "$tmp/pk.err"
folded pk "$tmp/pk.stk"
kre='(do_syscall_64|entry_SYSCALL_64[a-z_]*|x64_sys_call|__(x64|do)_sys_getppid)'
kin=$(sum_folded "$tmp/pk.rep" "$(chain wl_getppid | sed 's/( |;)$/;/').*$kre")
check_true profile.kernel.frames "at least 5 samples with kernel frames under wl_getppid, got $kin" \
	test "$kin" -ge 5 || show "$tmp/pk.rep"
folded pka "$tmp/pk.stk" -a
check_true profile.kernel.annotations "kernel frames marked _[k] with -a" \
	grep -qE ";wl_getppid;(.*;)?${kre}_\[k\]" "$tmp/pka.rep" || show "$tmp/pka.rep"
check_true profile.kernel.annotations_user "no _[k] on user frames with -a" \
	bash -c "! grep -q 'wl_getppid_\[k\]' '$tmp/pka.rep'"
folded pkd "$tmp/pk.stk" -d
check_true profile.kernel.delimited "a '-' frame between wl_getppid and the kernel frames with -d" \
	grep -qE ";wl_getppid;-;(.*;)?$kre" "$tmp/pkd.rep" || show "$tmp/pkd.rep"
e2e_done
