#!/usr/bin/env bash
# Kernel symbols re-snapshotted: BPF programs loaded during a recording (a second stkrec) add
# bpf_prog_* symbols to kallsyms; the first recording writes a new KSYMS chunk holding them.
# Other BPF users on the machine may add snapshots: at least 2.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

# k2, a second stkrec alive across k1's interval boundaries, loads BPF programs mid-run.
# Without kernel frames outside the kernel image k1 would not need a new snapshot (kallsyms.c):
# STKREC_KSYMS_ANY_CHANGE makes it take one on any change.
export STKREC_KSYMS_ANY_CHANGE=1
rec_bg k1 -q -i 1 -o "$tmp/k1.stk" t:syscalls:sys_enter_getppid
k1=$REC_PID
rec_ready k1 || not_ok k1.ready "stkrec did not start: $(head -1 "$tmp/k1.err")"
sleep 1.2
unset STKREC_KSYMS_ANY_CHANGE
rec k2 -q -i 1 -D 3 -o "$tmp/k2.stk" t:syscalls:sys_enter_getpgid
check_eq k2.exit 0 $? "$tmp/k2.err"
sleep 1.2
rec_signal INT "$k1"
rec_wait "$k1"
check_eq k1.exit 0 $? "$tmp/k1.err"
"$PWD/$OUTPUT/tests/tools/capdump" "$tmp/k1.stk" >"$tmp/k1.dump"
nks=$(grep -c '^ksyms ' "$tmp/k1.dump")
check_true ksyms.resnapshot "at least 2 KSYMS records, got $nks" test "$nks" -ge 2
# The first snapshot has stkrec's own programs; a later one more symbols (k2's programs).
counts=$(sed -n 's/^ksyms count=\([0-9]*\).*/\1/p' "$tmp/k1.dump" | tr '\n' ' ')
read -r -a c <<<"$counts"
max=0
for v in "${c[@]}"; do [ "$v" -gt "$max" ] && max=$v; done
check_true ksyms.bpf_added "a later snapshot with more symbols than the first, got counts: $counts" \
	test "$max" -gt "${c[0]:-0}"
e2e_done
