#!/usr/bin/env bash
# The live status line: on a terminal stkrec refreshes one line (events, stacks, lost, file
# size) with carriage returns; with -q, or when stderr is not a terminal, it prints none.
# `script` runs stkrec on a real pseudo-terminal.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

tp=t:syscalls:sys_enter_getppid
status_re=$'\r[0-9]+ events, [0-9]+ stacks, [0-9]+ lost, [0-9.]+ [KMG]?i?B'

script -qefc "$STKREC -D 2 -o $tmp/tty.stk $tp" /dev/null >"$tmp/tty.out" 2>&1
check_true status.tty "a '\\r<events> events, <stacks> stacks, <lost> lost, <size>' line on a terminal" \
	grep -qE "$status_re" "$tmp/tty.out" || show "$tmp/tty.out"

script -qefc "$STKREC -q -D 2 -o $tmp/ttyq.stk $tp" /dev/null >"$tmp/ttyq.out" 2>&1
check_true status.quiet "no status line with -q" bash -c "! grep -qE '$status_re' '$tmp/ttyq.out'" ||
	show "$tmp/ttyq.out"

"$STKREC" -D 2 -o "$tmp/pipe.stk" "$tp" >"$tmp/pipe.out" 2>&1
check_true status.not_tty "no status line when stderr is not a terminal" \
	bash -c "! grep -q \$'\\r' '$tmp/pipe.out'" || show "$tmp/pipe.out"
e2e_done
