#!/usr/bin/env bash
# vdso frames are named from the vdso image stored in the capture (there is no file to read it
# from later). wl_vdso calls clock_gettime(CLOCK_PROCESS_CPUTIME_ID) N times: the vdso falls back
# to the system call for that clock, so every sys_enter_clock_gettime event has a user stack whose
# leaf is __vdso_clock_gettime in [vdso], under libc's clock_gettime and the workload's chain.
# (libc's clock_gettime keeps no frame pointer, so wl_clock, its caller, may be skipped: the
# pattern allows that; everything else is exact.) The vdso is embedded even with --no-symtabs.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

n=1000
leafs=';main;wl_outer;wl_middle;(wl_clock;)?clock_gettime[^;]*;__vdso_clock_gettime '
for variant in default no-symtabs; do
	flags=()
	[ $variant = no-symtabs ] && flags=(--no-symtabs)
	rec "$variant" -q "${flags[@]}" -o "$tmp/$variant.stk" t:syscalls:sys_enter_clock_gettime \
		-- "$WL/wl_vdso" "$n"
	check_eq "vdso.$variant.exit" 0 $? "$tmp/$variant.err"
	folded "$variant" "$tmp/$variant.stk" -U
	check_eq "vdso.$variant.report_exit" 0 $? "$tmp/$variant.rerr"
	check_eq "vdso.$variant.chain" "$n" "$(sum_folded "$tmp/$variant.rep" "$leafs")" \
		"$tmp/$variant.rep"
done
e2e_done
