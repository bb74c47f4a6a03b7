#!/usr/bin/env bash
# Bad input and missing privilege: one line `stkrec: ...` naming the input, the documented exit
# status, and no capture file left behind.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

cap=$tmp/err.stk

# Kernel functions need kprobes or fentry; on a kernel without both, say so and suggest a
# tracepoint (the common brief's exact wording). Elsewhere the probe must work.
if [ -e /sys/kernel/tracing/kprobe_events ] || [ -e /sys/kernel/debug/tracing/kprobe_events ]; then
	rec kf -q -D 1 -o "$cap" vfs_read
	check_eq kfunc.exit 0 $? "$tmp/kf.err"
	rm -f "$cap"
else
	rec kf -q -o "$cap" vfs_read
	rc=$?
	check_error kfunc 1 "$rc" "$tmp/kf.err" "$cap" "'vfs_read'" 'kprobes' 'fentry' \
		't:syscalls:sys_enter_\*'
	check_true kfunc.wording "the documented message, got '$(head -1 "$tmp/kf.err")'" \
		grep -qxE "stkrec: cannot probe kernel function 'vfs_read': this kernel has neither kprobes \(CONFIG_KPROBES\) nor BPF trampolines \(fentry: [^)]*\); try a tracepoint such as t:syscalls:sys_enter_\*" \
		"$tmp/kf.err"
	rec kfp -q -o "$cap" p::vfs_read
	check_error kfunc_p 1 $? "$tmp/kfp.err" "$cap" 'vfs_read' 'kprobes'
fi

rec tp -q -o "$cap" t:nosuchcat:nosuchevent
check_error bad.tracepoint 1 $? "$tmp/tp.err" "$cap" 'nosuchcat:nosuchevent'

rec tpw -q -o "$cap" 't:syscalls:sys_enter_nosuch*'
check_error bad.tracepoint_wildcard 1 $? "$tmp/tpw.err" "$cap" 'sys_enter_nosuch'

rec bin -q -o "$cap" /nonexistent/dir/prog:main
check_error bad.binary 1 $? "$tmp/bin.err" "$cap" '/nonexistent/dir/prog'

rec lib -q -o "$cap" nosuchlibxyz:malloc
check_error bad.library 1 $? "$tmp/lib.err" "$cap" 'nosuchlibxyz'

rec fn -q -o "$cap" "$WL/wl_uprobe:no_such_function"
check_error bad.function 1 $? "$tmp/fn.err" "$cap" 'no_such_function'

rec us -q -o "$cap" "u:$WL/wl_usdt:no_such_probe"
check_error bad.usdt 1 $? "$tmp/us.err" "$cap" 'no_such_probe'

rec usn -q -o "$cap" "u:$WL/wl_uprobe:tick"
check_error bad.usdt_none 1 $? "$tmp/usn.err" "$cap" 'tick|wl_uprobe'

rec cmd -q -o "$cap" t:syscalls:sys_enter_getppid -- /nonexistent/cmd
rc=$?
check_true bad.command.exit "non-zero exit, got $rc" test "$rc" -ne 0
check_true bad.command.names "stderr naming /nonexistent/cmd, got '$(head -1 "$tmp/cmd.err")'" \
	grep -q '/nonexistent/cmd' "$tmp/cmd.err"
rm -f "$cap"

# (-D 2: if stkrec accepts the pid, the check fails in 2 s instead of hanging.)
rec pid -q -D 2 -o "$cap" -p 999999999 t:syscalls:sys_enter_getppid
rc=$?
check_true bad.pid_gone.exit "non-zero exit for a pid that does not exist, got $rc" test "$rc" -ne 0
check_true bad.pid_gone.names "stderr naming 999999999, got '$(head -1 "$tmp/pid.err")'" \
	grep -q 999999999 "$tmp/pid.err"
check_true bad.pid_gone.no_file "no capture file left" test ! -e "$cap"
rm -f "$cap"

# Usage errors: exit 2 (a malformed SPEC may be 1 or 2), the first line names the bad input,
# no file.
usage_case() { # NAME EXIT_ERE REGEX ARGS...
	local name=$1 want=$2 re=$3 rc first
	shift 3
	rec "$name" -o "$cap" "$@"
	rc=$?
	first=$(head -1 "$tmp/$name.err")
	check_true "usage.$name.exit" "exit status $want, got $rc" grep -qxE "$want" <<<"$rc" ||
		show "$tmp/$name.err"
	check_true "usage.$name.names_input" "first stderr line 'stkrec: ...' matching /$re/, got '$first'" \
		grep -qE -- "^stkrec: .*($re)" <<<"$first"
	check_true "usage.$name.short" "at most 2 lines on stderr, got $(grep -c '' "$tmp/$name.err")" \
		test "$(grep -c '' "$tmp/$name.err")" -le 2
	check_true "usage.$name.no_file" "no capture file left" test ! -e "$cap"
	rm -f "$cap"
}
usage_case option 2 'bogus' --bogus t:syscalls:sys_enter_getppid
usage_case pid_value 2 'notapid' -p notapid t:syscalls:sys_enter_getppid
usage_case freq_value 2 'abc|frequency|-F' -F abc
usage_case interval_value 2 '-5|interval|-i' -i -5 t:syscalls:sys_enter_getppid
usage_case spec_syntax '1|2' 'x:y:z:w' x:y:z:w
usage_case block_no_offcpu 2 "min-block.*offcpu" --min-block 100 -F 49
usage_case bcc_report_f 2 "-f is a report option.*stkreport -f" -f -F 49 1
usage_case bcc_ebpf 2 "--ebpf.*compiled in" --ebpf t:syscalls:sys_enter_getppid

# -h and -V: exit 0 on stdout.
"$STKREC" -h >"$tmp/h.out" 2>&1
check_eq help.exit 0 $?
check_true help.options "-h lists --stack-storage-size" grep -q -- '--stack-storage-size' "$tmp/h.out"
"$STKREC" -V >"$tmp/v.out" 2>&1
check_eq version.exit 0 $?
check_true version.text "-V prints $(cat VERSION)" grep -qF "$(cat VERSION)" "$tmp/v.out"

# Not root: one line, exit 1, no file (the directory is writable by nobody, so the failure is
# the missing privilege, not the output path).
mkdir -m 1777 "$tmp/nobody"
setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$STKREC" -q -o "$tmp/nobody/x.stk" t:syscalls:sys_enter_getppid \
	>"$tmp/nr.out" 2>"$tmp/nr.err"
check_error not_root 1 $? "$tmp/nr.err" "$tmp/nobody/x.stk" 'root|privilege|permitted|CAP_'

# stkreport needs no privilege: a capture copied to a public place reads as nobody.
rec okcap -q -o "$tmp/ok.stk" t:syscalls:sys_enter_getppid -- "$WL/wl_syscall" 100
install -m 0644 "$tmp/ok.stk" "$tmp/nobody/pub.stk"
setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$STKREPORT" -f -q "$tmp/nobody/pub.stk" >"$tmp/nrr.out" 2>"$tmp/nrr.err"
check_eq report_unprivileged.exit 0 $? "$tmp/nrr.err"
check_eq report_unprivileged.count 100 "$(sum_folded "$tmp/nrr.out" "$(chain wl_getppid)")" \
	"$tmp/nrr.out"

# stkreport on bad input: one line `stkreport: FILE: ...`, exit 1.
report_error() { # NAME FILE REGEX
	"$STKREPORT" -q "$2" >"$tmp/$1.out" 2>"$tmp/$1.err"
	check_eq "report.$1.exit" 1 $? "$tmp/$1.err"
	check_eq "report.$1.one_line" 1 "$(grep -c '' "$tmp/$1.err")" "$tmp/$1.err"
	check_true "report.$1.names_input" "'stkreport: $2...' matching /$3/, got '$(head -1 "$tmp/$1.err")'" \
		grep -qE "^stkreport: $2.*($3)" "$tmp/$1.err"
}
report_error missing "$tmp/does-not-exist.stk" 'No such file'
echo "just some text, longer than a header" >"$tmp/text.stk"
report_error not_capture "$tmp/text.stk" '.'
: >"$tmp/empty.stk"
report_error empty "$tmp/empty.stk" '.'
# A flipped byte in the last chunk: the chunks before it are reported, then the checksum error.
cp "$tmp/ok.stk" "$tmp/flip.stk"
size=$(stat -c %s "$tmp/flip.stk")
printf '\xff' | dd of="$tmp/flip.stk" bs=1 seek=$((size - 3)) conv=notrunc status=none
"$STKREPORT" -f -q "$tmp/flip.stk" >"$tmp/flip.out" 2>"$tmp/flip.err"
check_eq report.bad_checksum.exit 1 $? "$tmp/flip.err"
check_true report.bad_checksum.message "'stkreport: $tmp/flip.stk: chunk N at 0xOFF: Bad message', got '$(tail -1 "$tmp/flip.err")'" \
	grep -qE "^stkreport: $tmp/flip.stk: chunk [0-9]+ at 0x[0-9a-f]+: Bad message" "$tmp/flip.err"
e2e_done
