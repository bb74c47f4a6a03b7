#!/usr/bin/env bash
# Missing caller at uprobe entry: main -> leaf_a -> leaf_b -> leaf_target, leaf_target a GCC
# leaf without `push %rbp`. At its first instruction rbp still points at leaf_b's frame, so a
# frame-pointer walk goes from leaf_target to leaf_a: leaf_b, the direct caller, is lost unless
# stkrec adds the return address at the stack pointer (and never adds it twice where the kernel
# already did). Each of main, leaf_a, leaf_b, leaf_target exactly once per stack.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

bin=$WL/wl_leaf
first=$(objdump -d --no-show-raw-insn "$bin" | awk '/<leaf_target>:$/ { getline; print; exit }')
check_true leaf.no_prologue "leaf_target not to start with push %rbp, got '$first'" \
	sh -c "! echo '$first' | grep -q 'push *%rbp'"

n=1000
rec leaf -q -o "$tmp/leaf.stk" "$bin:leaf_target" -- "$bin" "$n"
check_eq leaf.exit 0 $? "$tmp/leaf.err"
folded leaf "$tmp/leaf.stk" -U
check_eq leaf.report_exit 0 $? "$tmp/leaf.rerr"
check_eq leaf.count "$n" "$(sum_folded "$tmp/leaf.rep")" "$tmp/leaf.rep"
check_eq leaf.chain "$n" "$(sum_folded "$tmp/leaf.rep" ';main;leaf_a;leaf_b;leaf_target ')" \
	"$tmp/leaf.rep"
# Exactly once each: no stack names one of them twice (a caller added twice) or misses one.
once=$(awk '{ line = $0; sub(/ [0-9]+$/, "", line); split(line, f, ";")
	for (i in f) if (f[i] ~ /^(main|leaf_a|leaf_b|leaf_target)$/) seen[f[i]]++
	ok = seen["main"] == 1 && seen["leaf_a"] == 1 && seen["leaf_b"] == 1 && seen["leaf_target"] == 1
	if (ok) s += $NF; delete seen } END { print s + 0 }' "$tmp/leaf.rep")
check_eq leaf.once_each "$n" "$once" "$tmp/leaf.rep"
e2e_done
