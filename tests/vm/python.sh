#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/vm/python.sh: Python frames on this kernel (Debian's 6.1, tests/e2e/vm_kprobe.sh), run
# inside the VM: Debian's python3.11 as it is (tests/vm/pytree.sh put it in the image with the
# few modules it needs) runs tests/workloads/wl_python.py, whose chain of Python calls is known
# line by line. The chain is walked in BPF under this kernel's verifier: sampled at 99 Hz, >= 95%
# of the samples of the script's main() read it whole under Py_BytesMain (its imports, slow
# under TCG, are left out: 10% of the samples in one run); through a tracepoint, every one of N
# getppid(2) calls does.
cd /tmp || exit 1
# shellcheck source=tests/vm/lib.sh
. /vmlib.sh
py=/usr/bin/python3.11
script=/wl_python.py
f=wl_python.py
if [ ! -x "$py" ]; then
	skip vm.python "no $py in the image (tests/e2e/vm_kprobe.sh said why)"
	exit 0
fi
# at TEXT: the line of the script holding TEXT (the chain's call sites)
at() { grep -nF -- "$1" "$script" | grep -v '^[0-9]*:#' | head -1 | cut -d: -f1; }
# sum FILE ERE: the counts (last field) of the folded lines matching ERE
sum() { grep -E -- "$2" "$1" | awk '{ t += $NF } END { print t + 0 }'; }
# The chain root first, to the leaf's frame (any line of leaf), as folded frames.
r="recurse \\($f:$(at 'return recurse(depth - 1')\\)"
chain="<module> \\($f:$(at 'sys.exit(main(sys.argv))')\\);main \\($f:$(at 'Worker(mode, n).handle()')\\)"
chain="$chain;Worker.handle \\($f:$(at 'list(map(lambda')\\);(.*;)?"
chain="$chain""Worker.handle.<locals>.<lambda> \\($f:$(at 'list(map(lambda')\\);$r;$r;$r;$r"
chain="$chain;recurse \\($f:$(at 'return sum(produce')\\);(.*;)?produce \\($f:$(at 'yield leaf')\\)"
chain="$chain;leaf \\($f:"

start=$(cut -d' ' -f1 /proc/uptime)
# 1. 99 Hz for 4 s of the interpreter's CPU time
stkrec -q -F 99 -o py.stk -- "$py" "$script" spin 4 >py.out 2>py.err
check_eq vm.python.profile.exit 0 $? py.err
stkreport -f -U py.stk >py.f 2>py.sum
sed -n 's/^# lost: /# vm.python.profile lost: /p' py.sum
all=$(sum py.f "^python3.11;.*<module> \\($f:$(at 'sys.exit(main(sys.argv))')\\)")
whole=$(sum py.f "^python3.11;(.*;)?Py_BytesMain;.*;$chain[0-9]+\\)")
echo "# vm.python.profile: $whole of $all samples with the whole chain"
check_eq vm.python.profile.chain yes "$(awk -v a="$all" -v w="$whole" \
	'BEGIN { print (a >= 100 && w * 100 >= a * 95) ? "yes" : "no: " w " of " a }')" py.f

# 2. A tracepoint: N getppid(2) calls, each counted once with the whole chain. Enough of them
# that the interpreter outlives stkrec's reading of its code objects, which it frees at its exit:
# with 300 calls, two of them read 6 ms after the first call were freed already (glibc's tcache
# key where the type was: 'changed', counted), in two runs of three.
N=20000
stkrec -q -o tp.stk t:syscalls:sys_enter_getppid -- "$py" "$script" getppid "$N" \
	>tp.out 2>tp.err
check_eq vm.python.getppid.exit 0 $? tp.err
stkreport -f tp.stk >tp.f 2>tp.sum
sed -n 's/^# lost: /# vm.python.getppid lost: /p' tp.sum
check_eq vm.python.getppid.count "$N" "$(sum tp.f .)" tp.f
# Every event with the chain, but those whose user stack the summary counts as cut: the calls
# come in a burst before stkrec has read the process (its tables take 150-250 ms under TCG), and
# the ring of deferred events filled in one run of three (2,139 events). The kernel stack of a
# syscall's entry tracepoint may be empty on 6.1: getppid may end the line.
ncut=$(awk '/^# lost: [0-9]+ user stacks/ { s += $3 } END { print s + 0 }' tp.sum)
check_eq vm.python.getppid.chain "$((N - ncut))" \
	"$(sum tp.f ";Py_BytesMain;.*;$chain$(at 'os.getppid()')\\);(.*;)?getppid[; ]")" tp.f
end=$(cut -d' ' -f1 /proc/uptime)
echo "# python tests took $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s in the VM"
