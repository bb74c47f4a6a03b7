#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/vm/kfunc.sh: kernel-function probes, run inside the VM (tests/e2e/vm_kprobe.sh boots
# Debian's stock kernel with this in the initramfs). Prints `ok NAME`, `not ok NAME: WHY`,
# `skip NAME: WHY` on the serial console; the host relays them.
#
# wl_syscall enters getppid(2) exactly N times. On x86_64 6.1 the syscall's implementation is
# __do_sys_getppid, which kallsyms also names __x64_sys_getppid and __ia32_sys_getppid (aliases at
# one address; only __do_sys_getppid is in available_filter_functions). Each call hits it once,
# from entry_SYSCALL_64_after_hwframe -> do_syscall_64.
cd /tmp || exit 1
N=2000
# The capture names the shared address as the kernel does (%pS): the alias kallsyms lists first.
GETPPID=$(awk '$3 == "__x64_sys_getppid" { print $1; exit }' /proc/kallsyms)
LEAF=$(awk -v a="$GETPPID" '$1 == a { print $3; exit }' /proc/kallsyms)
STACK="wl_syscall;entry_SYSCALL_64_after_hwframe;do_syscall_64;$LEAF"
TF=/sys/kernel/tracing/available_filter_functions

# shellcheck source=tests/vm/lib.sh
. /vmlib.sh

# run NAME MECH ARGS...: stkrec -q -K ARGS -- wl_syscall N with STKREC_KFUNC=MECH (- for
# stkrec's own choice), then the folded kernel stacks in NAME.f and the summary in NAME.sum.
# Returns stkrec's status.
run() {
	name=$1 mech=$2
	shift 2
	[ "$mech" = - ] && mech=
	env STKREC_KFUNC="$mech" stkrec -q -K -o "$name.stk" "$@" -- wl_syscall "$N" \
		>"$name.out" 2>"$name.err"
	rc=$?
	stkreport -f -P "$name.stk" >"$name.f" 2>"$name.sum"	# -P: comm first
	return $rc
}
sum_stack() { # FILE STACK: count of that exact folded stack
	awk -v s="$2" '{ c = $NF; $NF = ""; sub(/ $/, ""); if ($0 == s) t += c } END { print t + 0 }' "$1"
}
total() { awk '{ t += $NF } END { print t + 0 }' "$1"; }
attached() { sed -n 's/^Tracing \([0-9]*\) functions for.*/\1/p' "$1" | head -1; }
mechanism() { sed -n 's/^#   mechanism: \([^,]*\), skipped: .*/\1/p' "$1" | head -1; }
skipped() { sed -n 's/^#   mechanism: [^,]*, skipped: \(.*\)/\1/p' "$1" | head -1; }
# Callers of FUNC in the stack: how often do_syscall_64 appears (once: the kret repair adds the
# direct caller only where the unwinder left it out, never twice).
callers() { awk -v s="$2" '{ $NF = ""; if (index($0, s)) print gsub(/;do_syscall_64;/, "&") }' "$1" | sort -u; }

echo "# kernel $(uname -r): stkrec built on the host, CO-RE-relocated here"
start=$(cut -d' ' -f1 /proc/uptime)

# 1. One function, exact name (an alias that only kallsyms lists), default mechanism.
run exact - __x64_sys_getppid
check_eq vm.exact.exit 0 $? exact.err
check_eq vm.exact.attached 1 "$(attached exact.err)" exact.err
check_eq vm.exact.count "$N" "$(total exact.f)" exact.f
check_eq vm.exact.stack "$N" "$(sum_stack exact.f "$STACK")" exact.f
check_eq vm.exact.caller_once 1 "$(callers exact.f "$LEAF")" exact.f
auto=$(mechanism exact.sum)
case $auto in
kprobe | kprobe.multi) ok vm.exact.mechanism ;;
*) not_ok vm.exact.mechanism "expected kprobe or kprobe.multi, got '$auto'" ;;
esac

# 2. A wildcard: the aliases match in kallsyms but are not traceable: skipped, not fatal, and
# not counted twice.
want_skip=$(awk '$2 ~ /^[tTwW]$/ && $3 ~ /sys_getppid$/ { print $3 }' /proc/kallsyms | sort -u |
	while read -r f; do grep -qx "$f" "$TF" || echo "$f"; done | grep -c .)
run wild - '*sys_getppid'
check_eq vm.wildcard.exit 0 $? wild.err
check_eq vm.wildcard.attached 1 "$(attached wild.err)" wild.err
check_eq vm.wildcard.skipped "$want_skip" "$(skipped wild.sum)" wild.sum
check_eq vm.wildcard.note 1 "$(grep -c "^stkrec: note: '\*sys_getppid': skipped $want_skip " wild.err)" wild.err
check_eq vm.wildcard.count "$N" "$(total wild.f)" wild.f
check_eq vm.wildcard.stack "$N" "$(sum_stack wild.f "$STACK")" wild.f

# 3. -r: a regular expression matching two functions, one kprobe each (forced), getppid's
# stack still exact.
run regex_kp kprobe -r '__do_sys_getpp?id$'
check_eq vm.regex.kprobe.exit 0 $? regex_kp.err
check_eq vm.regex.kprobe.attached 2 "$(attached regex_kp.err)" regex_kp.err
check_eq vm.regex.kprobe.mechanism kprobe "$(mechanism regex_kp.sum)" regex_kp.sum
check_eq vm.regex.kprobe.stack "$N" "$(sum_stack regex_kp.f "$STACK")" regex_kp.f

# 4. kprobe.multi, where this kernel has it (Debian's 6.1 is built without CONFIG_FPROBE).
if [ "$auto" = kprobe.multi ]; then
	run regex_km kprobe.multi -r '__do_sys_getpp?id$'
	check_eq vm.regex.kprobe_multi.exit 0 $? regex_km.err
	check_eq vm.regex.kprobe_multi.attached 2 "$(attached regex_km.err)" regex_km.err
	check_eq vm.regex.kprobe_multi.stack "$N" "$(sum_stack regex_km.f "$STACK")" regex_km.f
else
	skip vm.kprobe_multi "kernel $(uname -r) has no kprobe.multi (CONFIG_FPROBE is off): stkrec chose '$auto'"
fi

# 5. fentry (BPF trampoline), forced: the same count; the stack starts with the probed
# function (the BPF program and trampoline frames are dropped).
run fentry fentry '*sys_getppid'
check_eq vm.fentry.exit 0 $? fentry.err
check_eq vm.fentry.mechanism fentry "$(mechanism fentry.sum)" fentry.sum
check_eq vm.fentry.count "$N" "$(total fentry.f)" fentry.f
check_eq vm.fentry.stack "$N" "$(sum_stack fentry.f "$STACK")" fentry.f

# 6. Limits and unprobeable matches: clear one-line errors, no capture left behind.
run max - --max-kprobes 1 -r '__do_sys_getpp?id$'
check_eq vm.max_kprobes.exit 1 $? max.err
check_eq vm.max_kprobes.message 1 "$(grep -c "^stkrec: '__do_sys_getpp?id\$' matches 2 kernel functions, more than --max-kprobes 1" max.err)" max.err
check_eq vm.max_kprobes.no_file no "$([ -e max.stk ] && echo yes || echo no)"
run none - '__ia32_sys_getpp*'
check_eq vm.unprobeable.exit 1 $? none.err
check_eq vm.unprobeable.message 1 "$(grep -c "^stkrec: '__ia32_sys_getpp\*' matches 1 kernel functions, none of which can be probed" none.err)" none.err

# 7. Off-CPU time on this kernel too: wl_sleep sleeps 10 x 50 ms = 500,000 us through
# sleeper_inner's nanosleep. The kernel stack starts at __schedule (the tracing frames above it
# are skipped on 6.1 as on the host). Under TCG a 50 ms sleep can overrun by 10-20 ms, so the
# time is checked against what wl_sleep measured itself (-t): at least 500,000 us, and between
# 90% and 101% of the workload's own elapsed time.
stkrec -q -K --offcpu -o offcpu.stk -- wl_sleep -t 10 >offcpu.out 2>offcpu.err
check_eq vm.offcpu.exit 0 $? offcpu.err
stkreport -f offcpu.stk >offcpu.f 2>offcpu.sum
us=$(awk '/^wl_sleep;.*do_nanosleep;/ { t += $NF } END { print t + 0 }' offcpu.f)
wall=$(awk '/^elapsed_ns / { print int($2 / 1000) }' offcpu.out)
echo "# vm.offcpu: $us us off-CPU in nanosleep, ${wall:-no} us elapsed"
check_eq vm.offcpu.time yes "$(awk -v us="$us" -v wall="${wall:-0}" 'BEGIN {
	ok = us >= 500000 && us >= wall * 0.9 && us <= wall * 1.01
	print ok ? "yes" : "no: " us " us off-CPU, " wall " us elapsed" }')" offcpu.f
leaf=$(awk '/^wl_sleep;.*do_nanosleep;/ { n = split($1, f, ";"); print f[n] }' offcpu.f | sort -u)
check_eq vm.offcpu.leaf __schedule "$leaf" offcpu.f

# 8. User stacks unwound from CFI on this kernel: wl_syscall_nofp (built -O2
# -fomit-frame-pointer, with the host's libc) through a tracepoint, a kernel function (a
# kprobe here) and the same through fentry, whose program copies the kernel loads only with
# their callbacks' BTF (bpf_loop()'s: the walk, the deferred copy): every event's user stack
# reaches _start (libc's static frames unnamed here: no debug files).
nofp_re='^wl_syscall_nofp;_start;__libc_start_main[^;]*;[^;]*;main;wl_outer;wl_middle;wl_getppid[; ]'
# cfi_walks NAME MECH SPEC: the check vm.NAME.* of SPEC, with STKREC_KFUNC=MECH (- for none).
cfi_walks() {
	name=$1 mech=$2 spec=$3
	[ "$mech" = - ] && mech=
	env STKREC_KFUNC="$mech" stkrec -q -o "$name.stk" "$spec" -- wl_syscall_nofp "$N" \
		>"$name.out" 2>"$name.err"
	check_eq "vm.$name.exit" 0 $? "$name.err"
	stkreport -f -P "$name.stk" >"$name.f" 2>"$name.sum"	# -P: comm first
	sed -n 's/^# lost: /# vm.'"$name"' lost: /p' "$name.sum"
	check_eq "vm.$name.whole_chain" "$N" \
		"$(awk -v re="$nofp_re" '$0 ~ re { t += $NF } END { print t + 0 }' "$name.f")" "$name.f"
}
cfi_walks cfi_sys_enter_getppid - t:syscalls:sys_enter_getppid
cfi_walks cfi___x64_sys_getppid - __x64_sys_getppid
cfi_walks cfi_fentry fentry '*sys_getppid'

# 9. The programs the kernel-function sections do not load, on this kernel: a profile (on_sample)
# of wl_burner (2 s of its CPU time: a loaded host starves the VM, and its start-up must stay a
# small share), and a uprobe (on_uprobe) on wl_uprobe's wl_target, fired exactly N times. Both
# count through the global count_in_gen*() functions, whose pointer arguments 6.1's verifier
# takes only as plain memory, never as a map key or value.
stkrec -q -F 199 -o prof.stk -- wl_burner -c 2 >prof.out 2>prof.err
check_eq vm.profile.exit 0 $? prof.err
stkreport -f -P prof.stk >prof.f 2>prof.sum
check_eq vm.profile.chain yes "$(awk '/^wl_burner;/ { t += $NF
		if (/;main;stk_top;stk_mid;stk_leaf /) c += $NF }
	END { print (t >= 100 && c >= t * 0.9) ? "yes" : "no: " c " of " t }' prof.f)" prof.f
stkrec -q -o up.stk "/bin/wl_uprobe:wl_target" -- wl_uprobe "$N" >up.out 2>up.err
check_eq vm.uprobe.exit 0 $? up.err
stkreport -f -P up.stk >up.f 2>up.sum
check_eq vm.uprobe.chain "$N" "$(awk '/^wl_uprobe;.*;main;wl_outer;wl_middle;wl_target / {
	t += $NF } END { print t + 0 }' up.f)" up.f

end=$(cut -d' ' -f1 /proc/uptime)
echo "# tests took $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s in the VM"
