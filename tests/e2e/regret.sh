#!/usr/bin/env bash
# The return address in a register: libgcc's exception return (_Unwind_RaiseException and its
# siblings: `mov %rcx,%rsp` with CFA = rcx + 8, then `pop %rcx; jmp *%rcx`, the return address
# in rcx) is walked through from the event's rcx, in BPF and in stkrec's own walker
# (STKREC_DEFER=all: every user stack deferred), which must agree. wl_regret burns its time in
# those two shapes; wl_throw, C++ throwing exceptions in a loop, loses no stack to a rule the
# tables do not follow (1-2 stacks a run did, at the jmp).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require
[ "$(uname -m)" = x86_64 ] || { skip regret "the workloads are x86-64 code"; exit 0; }
for b in "$WL/wl_regret" "$WL/nofp/wl_throw"; do
	[ -x "$b" ] || { not_ok regret.sh "$b is not built (make workloads)"; exit 1; }
done

start=';_start;__libc_start_main(@@GLIBC_[0-9.]+)?;(__libc_start_call_main|\[unknown\]);main;'
# 999 Hz for 2 s of wl_regret, by BPF (-p) and by stkrec's walker: at least 95% of its samples
# have the whole chain (at least 200 samples: a busy host gives it less than its CPU), and none
# ends at an unsupported rule.
for walker in bpf user; do
	env=()
	[ "$walker" = user ] && env=(env STKREC_DEFER=all)
	wl_bg "rr$walker" "$WL/wl_regret" -v 4
	"${env[@]}" timeout -s INT -k 10 "$E2E_TIMEOUT" "$STKREC" -q -F 999 -D 2 -p "$WL_PID" \
		-o "$tmp/rr$walker.stk" >"$tmp/rr$walker.out" 2>"$tmp/rr$walker.err"
	check_eq "regret.$walker.exit" 0 $? "$tmp/rr$walker.err"
	kill "$WL_PID" 2>/dev/null
	folded "rr$walker" "$tmp/rr$walker.stk"
	check_share "regret.$walker.chain" "$tmp/rr$walker.rep" '^wl_regret;' \
		"^wl_regret${start}stk_top;stk_mid;wl_(cfa|ra)_rcx " 200 95 "whole to main" \
		"$tmp/rr$walker.stk"
	report "rr$walker.sum" "$tmp/rr$walker.stk" -f
	check_eq "regret.$walker.unsupported" 0 \
		"$(lost_count "$tmp/rr$walker.sum.rerr" 'user stacks cut at an unsupported CFI rule')" \
		"$tmp/rr$walker.sum.rerr"
done

# C++ exceptions, 999 Hz for 3 s: no stack cut at a rule the tables do not follow, and the
# stacks of the throws reach main.
wl_bg throw "$WL/nofp/wl_throw" -v 5
rec throw -q -F 999 -D 3 -p "$WL_PID" -o "$tmp/throw.stk"
check_eq regret.throw.exit 0 $? "$tmp/throw.err"
kill "$WL_PID" 2>/dev/null
folded throw "$tmp/throw.stk"
check_share regret.throw.chain "$tmp/throw.rep" '^wl_throw;' \
	"^wl_throw${start}wl_outer;wl_middle;" 300 95 "whole to main" "$tmp/throw.stk"
report throw.sum "$tmp/throw.stk" -f
check_eq regret.throw.unsupported 0 \
	"$(lost_count "$tmp/throw.sum.rerr" 'user stacks cut at an unsupported CFI rule')" \
	"$tmp/throw.sum.rerr"
e2e_done
