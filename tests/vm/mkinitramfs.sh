#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/vm/mkinitramfs.sh OUT.cpio.gz DIR_OF_TESTS BINARY...: a gzip'd newc initramfs holding
# busybox (static), tests/vm/init as /init, the VM test scripts, and each BINARY under /bin with
# every shared library ldd lists (and the dynamic loader) at its own path. Everything the VM test
# needs lives in the initramfs: no disk, no kernel modules.
set -eu
out=$1
shift
root=$(mktemp -d /tmp/stkvm-root.XXXXXX)
trap 'rm -rf "$root"' EXIT
here=$(cd "$(dirname "$0")" && pwd)

mkdir -p "$root/bin" "$root/sbin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" \
	"$root/etc" "$root/root"
cp /bin/busybox "$root/bin/busybox"
for a in $("$root/bin/busybox" --list); do
	[ "$a" = busybox ] || ln -sf busybox "$root/bin/$a"
done
cp "$here/init" "$root/init"
cp "$here/kfunc.sh" "$root/kfunc.sh"
chmod 0755 "$root/init" "$root/kfunc.sh"

copy_lib() { # PATH: at the same path in the image, symlinks followed
	[ -e "$root$1" ] && return 0
	mkdir -p "$root$(dirname "$1")"
	cp -L "$1" "$root$1"
}
for b in "$@"; do
	cp "$b" "$root/bin/"
	for lib in $(ldd "$b" 2>/dev/null | awk '/=> \//{ print $3 } /^[[:space:]]*\//{ print $1 }'); do
		copy_lib "$lib"
	done
done
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
