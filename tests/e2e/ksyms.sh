#!/usr/bin/env bash
# Kernel symbols as stkrec 2.0 writes them (docs/format.md 4.10): only the symbols hit, in
# KSYMS_ADD records, named by the kernel's own lookup at each drain, and a BPF program loaded
# during the recording gets named. k1 samples kernel stacks system-wide; a syscall loop gives its
# first drain kernel stacks before the program exists; then wl_bpfloop loads stk_loop and runs
# it: a later drain must name the samples inside it.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require
if [ ! -x "$WL/wl_bpfloop" ]; then
	not_ok ksyms "$WL/wl_bpfloop is not built (make OUTPUT=$OUTPUT workloads)"
	exit 1
fi

rec_bg k1 -q -K -F 499 -i 1 -o "$tmp/k1.stk"
k1=$REC_PID
rec_ready k1 || not_ok k1.ready "stkrec did not start: $(head -1 "$tmp/k1.err")"
"$WL/wl_syscall" 2000000
sleep 1.2	# a drain (-i 1) with the syscall loop's kernel stacks: kallsyms read
wl_bg bpf "$WL/wl_bpfloop" -v 400	# some 6 s of runs
sleep 2.5	# two drains while the program runs and is loaded
rec_signal INT "$k1"
rec_wait "$k1"
check_eq k1.exit 0 $? "$tmp/k1.err"
kill "$WL_PID" 2>/dev/null
wait "$WL_JOB" 2>/dev/null

"$PWD/$OUTPUT/tests/tools/capdump" "$tmp/k1.stk" >"$tmp/k1.dump"
check_eq ksyms.meta "meta kallsyms=hits" "$(grep '^meta kallsyms=' "$tmp/k1.dump")"
check_eq ksyms.no_snapshot 0 "$(grep -c '^ksyms ' "$tmp/k1.dump")"
nadd=$(grep -c '^ksyms_add ' "$tmp/k1.dump")
# Each symbol once: a symbol is written again only when its range changed, so no (address,
# size) twice. (Names repeat: static functions of different files share them.)
dups=$(awk '/^  ksym /{ print $2, $3 }' "$tmp/k1.dump" | sort | uniq -d | head -3 | tr '\n' ' ')
check_eq ksyms.once "" "$dups"
# Which KSYMS_ADD record (1-based) holds the program: not the first, read before it existed.
at=$(awk '/^ksyms_add /{ n++ } /^  ksym .*_stk_loop \[bpf\]$/{ print n; exit }' "$tmp/k1.dump")
check_true ksyms.bpf_added \
	"stk_loop [bpf] in a KSYMS_ADD record after the first of $nadd, got ${at:-none}" \
	test "${at:-0}" -ge 2 || SHOW_LINES=60 show "$tmp/k1.dump"
folded k1 "$tmp/k1.stk"
check_eq k1.report_exit 0 $? "$tmp/k1.rerr"
n=$(sum_folded "$tmp/k1.rep" '^wl_bpfloop;.*;bpf_prog_[0-9a-f]+_stk_loop ')
# 499 Hz for 2.5 s on a CPU that spends most of it in the program: hundreds of samples
check_true ksyms.bpf_named \
	"at least 50 wl_bpfloop samples named ...;bpf_prog_<tag>_stk_loop, got $n" \
	test "$n" -ge 50 || show "$tmp/k1.rep"
# The symbols written name addresses as the kernel does (format.md 4.10): every kernel-image
# leaf reads as a lookup of the highest kallsyms symbol at or below it names it, of aliases the
# one kallsyms lists first (the kernel's own lookup, %pS, over all its symbols). Only below the
# kernel image's last symbol: modules and BPF programs (the workload's is gone) may have changed
# since the recording.
report k1sql "$tmp/k1.stk" -q --csv --sql \
	"SELECT DISTINCT printf('%016x', address), symbol FROM frames WHERE kernel AND ip = 0"
tail -n +2 "$tmp/k1sql.rep" | tr ',' ' ' | tr -d '\r' | sort >"$tmp/leaves"
# address, name, module or -, line: sorted by address, aliases in the file's order
awk '{ print $1, $3, (NF > 3 ? "module" : "-"), NR }' /proc/kallsyms | sort -k1,1 -k4,4n \
	>"$tmp/kallsyms"
awk -v out="$tmp/mismatches" '
	NR == FNR { a[n] = $1; s[n] = $2; m[n] = $3; if ($3 == "-") last = $1; n++; next }
	{
		lo = -1; hi = n	# the last entry with a[i] <= $1 (equal-width hex: string order)
		while (hi - lo > 1) { mid = int((lo + hi) / 2); if (a[mid] <= $1) lo = mid; else hi = mid }
		while (lo > 0 && a[lo - 1] == a[lo]) lo--	# the first alias kallsyms lists
		if (lo < 0 || m[lo] != "-" || $1 >= last) next
		checked++
		if (s[lo] != $2) print $1, "capture:", $2, "kallsyms:", s[lo] >out
	}
	END { print checked + 0 }' "$tmp/kallsyms" "$tmp/leaves" >"$tmp/checked"
: >>"$tmp/mismatches"
check_true ksyms.tiling "at least 20 kernel-image leaves to check, got $(cat "$tmp/checked")" \
	test "$(cat "$tmp/checked")" -ge 20
check_eq ksyms.as_a_snapshot 0 "$(wc -l <"$tmp/mismatches")" "$tmp/mismatches"

# --all-kallsyms: the whole table first (meta kallsyms=all), then KSYMS_ADD records only for
# symbols loaded or moved later, never one of the kernel image.
rec_bg k3 -q -K -F 499 --all-kallsyms -o "$tmp/k3.stk" 2
k3=$REC_PID
rec_ready k3 || not_ok k3.ready "stkrec did not start: $(head -1 "$tmp/k3.err")"
"$WL/wl_syscall" 2000000
rec_wait "$k3"
check_eq k3.exit 0 $? "$tmp/k3.err"
"$PWD/$OUTPUT/tests/tools/capdump" "$tmp/k3.stk" >"$tmp/k3.dump"
check_eq ksyms.all.meta "meta kallsyms=all" "$(grep '^meta kallsyms=' "$tmp/k3.dump")"
check_eq ksyms.all.one_snapshot 1 "$(grep -c '^ksyms ' "$tmp/k3.dump")"
n=$(sed -n 's/^ksyms count=\([0-9]*\) .*/\1/p' "$tmp/k3.dump")
check_true ksyms.all.whole "a snapshot of kallsyms' text symbols (10000 or more), got ${n:-none}" \
	test "${n:-0}" -ge 10000
check_eq ksyms.all.no_kernel_image_added "" \
	"$(grep '^  ksym ' "$tmp/k3.dump" | grep -v ']$' | head -3)"
folded k3 "$tmp/k3.stk"
n=$(sum_folded "$tmp/k3.rep" '^wl_syscall;entry_SYSCALL_64')
check_true ksyms.all.named "wl_syscall samples in entry_SYSCALL_64..., got $n" \
	test "$n" -ge 10 || show "$tmp/k3.rep"
e2e_done
