#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/e2e/vm_kprobe.sh: kernel-function probes (kprobe, fentry) proven in a VM. This host's
# kernel may lack kprobes; Debian's stock kernel (linux-image-amd64, 6.1 on Debian 12) has them.
# Boots it under qemu (TCG, no KVM needed) with an initramfs holding busybox, stkrec, stkreport and
# the workloads (tests/vm/mkinitramfs.sh), runs tests/vm/kfunc.sh inside and relays its `ok`/`not ok`/
# `skip` lines from the serial console. The stkrec that runs there is the one built here: the
# CO-RE portability check. Skips loudly only when qemu or a kernel image cannot be installed.
# With Debian's python3.11 on this host (tests/vm/pytree.sh copies it and the modules it needs),
# tests/vm/python.sh samples and traces tests/workloads/wl_python.py there too.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUTPUT=${OUTPUT:-.output}
VM_TIMEOUT=${VM_TIMEOUT:-300}
bins=("$OUTPUT/stkrec" "$OUTPUT/stkreport" "$OUTPUT/tests/workloads/wl_syscall"
	"$OUTPUT/tests/workloads/wl_sleep" "$OUTPUT/tests/workloads/wl_burner"
	"$OUTPUT/tests/workloads/wl_uprobe")

skip_all() { echo "skip vm_kprobe: $1"; exit 0; }

find_kernel() { # Debian's stock kernels, newest 6.1 first, else the newest there is
	local k
	k=$(ls /boot/vmlinuz-6.1.* 2>/dev/null | sort -V | tail -1)
	[ -n "$k" ] || k=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)
	echo "$k"
}

try_install() { # PACKAGE...: as root with apt-get only; quiet, bounded
	[ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
	DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -q "$@" >/dev/null 2>&1
}

for b in "${bins[@]}"; do
	if [ ! -x "$b" ]; then
		echo "not ok vm_kprobe: $b is not built (make OUTPUT=$OUTPUT tools workloads)"
		exit 1
	fi
done
command -v qemu-system-x86_64 >/dev/null || try_install qemu-system-x86 ||
	skip_all "qemu-system-x86_64 is missing and apt-get install qemu-system-x86 failed"
[ -n "$(find_kernel)" ] || try_install linux-image-amd64 ||
	skip_all "no /boot/vmlinuz-* and apt-get install linux-image-amd64 failed"
command -v busybox >/dev/null && busybox --list >/dev/null 2>&1 && command -v cpio >/dev/null ||
	try_install busybox-static cpio || skip_all "busybox-static or cpio cannot be installed"
kernel=$(find_kernel)
[ -r "$kernel" ] || skip_all "$kernel is not readable (run as root)"
[ "$(uname -m)" = x86_64 ] || skip_all "the VM test boots an x86_64 kernel; this is $(uname -m)"

tmp=$(mktemp -d /tmp/stkvm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# The frame-pointer-less build under a name of its own (the image keeps basenames).
nofp=$OUTPUT/tests/workloads/nofp/wl_syscall
[ -x "$nofp" ] || { echo "not ok vm_kprobe: $nofp is not built (make workloads)"; exit 1; }
cp "$nofp" "$tmp/wl_syscall_nofp"
bins+=("$tmp/wl_syscall_nofp")
trees=()
if tests/vm/pytree.sh "$tmp/py" 2>"$tmp/py.err"; then
	trees=(-t "$tmp/py")
else
	echo "skip vm.python: SKIP: Python frames NOT tested on 6.1: $(head -1 "$tmp/py.err")" \
		"(Debian: apt-get install python3.11)"
fi
t0=$(date +%s.%N)
if ! tests/vm/mkinitramfs.sh "${trees[@]}" "$tmp/initrd.gz" "${bins[@]}" 2>"$tmp/mk.err"; then
	echo "not ok vm_kprobe.initramfs: $(head -1 "$tmp/mk.err")"
	exit 1
fi
# TCG by default: nested KVM is not reliable everywhere (qemu aborts on MSRs it cannot set).
accel=()
[ "${STK_VM_KVM:-0}" = 1 ] && accel=(-enable-kvm)
timeout -k 10 "$VM_TIMEOUT" qemu-system-x86_64 "${accel[@]}" -kernel "$kernel" \
	-initrd "$tmp/initrd.gz" -append 'console=ttyS0 quiet panic=-1' -nographic -no-reboot \
	-m 1G -smp 2 </dev/null >"$tmp/console" 2>&1
rc=$?
t1=$(date +%s.%N)
tr -d '\r' <"$tmp/console" >"$tmp/console.txt"
echo "# kernel $kernel, qemu exit $rc, wall $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s"
grep -oE '(stkvm: .*|^# .*)' "$tmp/console.txt"
grep -E '^(ok |not ok |skip |    \| )' "$tmp/console.txt"
if ! grep -q '^stkvm: done' "$tmp/console.txt"; then
	echo "not ok vm_kprobe.boot: the VM did not finish its tests (qemu exit $rc; timeout ${VM_TIMEOUT}s)"
	tail -n 30 "$tmp/console.txt" | sed -e 's/^/    | /'
	exit 1
fi
if ! grep -q '^ok ' "$tmp/console.txt"; then
	echo "not ok vm_kprobe.ran: no test passed in the VM"
	exit 1
fi
! grep -q '^not ok ' "$tmp/console.txt"
