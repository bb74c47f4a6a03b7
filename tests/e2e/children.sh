#!/usr/bin/env bash
# -- COMMAND follows every process the command starts, and theirs (fork, exec), as perf's
# inherited events do; --no-inherit traces the command alone. -p PID is the process alone unless
# --children is given, which takes its children running at the start and those it starts later.
# Tracepoint counts are exact per process; `make -j2` on a small C project shows its compilers.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

tp=t:syscalls:sys_enter_getppid
sys=$WL/wl_syscall
# per_process NAME: the counts of the whole wl_syscall chains of capture NAME, one per process,
# in increasing order, space-separated (-P: each process its own folded line).
per_process() {
	folded "$1" "$tmp/$1.stk" -P
	awk -v re="^wl_syscall;.*$(chain wl_getppid)" '$0 ~ re { print $NF }' "$tmp/$1.rep" |
		sort -n | tr '\n' ' ' | sed 's/ $//'
}

# Two children in the background of a shell, each firing its own number of events.
rec cmd -q -o "$tmp/cmd.stk" "$tp" -- sh -c "$sys 300 & $sys 500 & wait"
check_eq children.command.exit 0 $? "$tmp/cmd.err"
check_eq children.command.chains "300 500" "$(per_process cmd)" "$tmp/cmd.rep"

# A grandchild through an exec'ing subshell, and a child that forks itself (vfork of sh -c).
rec deep -q -o "$tmp/deep.stk" "$tp" -- sh -c "(sh -c 'exec $sys 200'; $sys 100) & wait"
check_eq children.grandchild.exit 0 $? "$tmp/deep.err"
check_eq children.grandchild.chains "100 200" "$(per_process deep)" "$tmp/deep.rep"

# --no-inherit: the command alone, which fires none of these events itself.
rec alone -q --no-inherit -o "$tmp/alone.stk" "$tp" -- sh -c "$sys 300 & $sys 500 & wait"
check_eq children.no_inherit.exit 0 $? "$tmp/alone.err"
check_eq children.no_inherit.chains "" "$(per_process alone)" "$tmp/alone.rep"

# -p: a shell that waits for a file, then starts a child; a subshell started before stkrec
# waits beside it, then execs. -p alone counts neither, --children both.
for opt in none --children; do
	go=$tmp/go$opt
	: >"$tmp/sh$opt.wl"
	sh -c "echo pid \$\$; (while [ ! -e $go ]; do sleep 0.05; done; exec $sys 200) &
		while [ ! -e $go ]; do sleep 0.05; done; $sys 300; wait" >"$tmp/sh$opt.wl" &
	job=$!
	e2e_bg+=("$job")
	wait_for "$tmp/sh$opt.wl" '^pid ' 5
	args=(-q -p "$(awk '/^pid /{ print $2 }' "$tmp/sh$opt.wl")")
	[ "$opt" = none ] || args+=("$opt")
	rec_bg "pid$opt" "${args[@]}" -o "$tmp/pid$opt.stk" "$tp"
	rec_ready "pid$opt" || not_ok "children.pid$opt.ready" "a 'Tracing' line within 20 s"
	touch "$go"
	wait "$job"
	rec_signal INT "$REC_PID"
	rec_wait "$REC_PID"
	check_eq "children.pid$opt.exit" 0 $? "$tmp/pid$opt.err"
	want="200 300"
	[ "$opt" = none ] && want=""
	check_eq "children.pid$opt.chains" "$want" "$(per_process "pid$opt")" "$tmp/pid$opt.rep"
done

# Options that mean nothing here: a usage error (exit 2), no capture.
usage_error() { # NAME REGEX ARGS...
	local name=$1 re=$2
	shift 2
	rec "$name" -q -o "$tmp/$name.stk" "$@"
	check_eq "children.$name.exit" 2 $? "$tmp/$name.err"
	check_true "children.$name.message" "a line 'stkrec: ...$re...'" \
		grep -q "^stkrec: .*$re" "$tmp/$name.err" || show "$tmp/$name.err"
	check_true "children.$name.no_file" "no capture" test ! -e "$tmp/$name.stk"
}
usage_error children_without_p '--children' --children "$tp" -- true
usage_error no_inherit_without_command '--no-inherit' --no-inherit -p $$ "$tp"

# make -j2 of a small C project, sampled at 99 Hz: the compilers it starts through gcc are in
# the capture, cc1 with whole stacks down to main; make itself only starts them.
mkdir -p "$tmp/objs"
rec make -q -F 99 -o "$tmp/make.stk" -- make -s -C tests/e2e/cproject -j2 O="$tmp/objs"
check_eq children.make.exit 0 $? "$tmp/make.err"
folded make "$tmp/make.stk"
cc1=$(sum_folded "$tmp/make.rep" '^cc1;')
check_true children.make.cc1 "cc1 samples in the capture (make -> gcc -> cc1), got $cc1" \
	test "$cc1" -ge 5 || show "$tmp/make.rep"
check_share children.make.cc1_main "$tmp/make.rep" '^cc1;' '^cc1;_start;[^ ]*;main;' 5 90 \
	"from _start through cc1's main" "$tmp/make.stk"
e2e_done
