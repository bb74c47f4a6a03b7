#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/vm/mkinitramfs.sh [-t TREE]... OUT.cpio.gz BINARY...: a gzip'd newc initramfs holding
# busybox (static), tests/vm/init as /init, the VM test scripts, each BINARY under /bin, each
# TREE's files at their paths in it (tests/vm/pytree.sh's Python), and every shared library ldd
# lists for those programs (and the dynamic loader) at its own path. Everything the VM test
# needs lives in the initramfs: no disk, no kernel modules.
set -eu
trees=
while [ "$1" = -t ]; do
	trees="$trees $2"
	shift 2
done
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
cp "$here/python.sh" "$root/python.sh"
cp "$here/lib.sh" "$root/vmlib.sh"
chmod 0755 "$root/init" "$root/kfunc.sh" "$root/python.sh"

copy_lib() { # PATH: at the same path in the image, symlinks followed
	[ -e "$root$1" ] && return 0
	mkdir -p "$root$(dirname "$1")"
	cp -L "$1" "$root$1"
}
copy_libs() { # PROGRAM
	for lib in $(ldd "$1" 2>/dev/null | awk '/=> \//{ print $3 } /^[[:space:]]*\//{ print $1 }'); do
		copy_lib "$lib"
	done
}
for b in "$@"; do
	cp "$b" "$root/bin/"
	copy_libs "$b"
done
for t in $trees; do
	cp -a "$t/." "$root/"
	for f in $(find "$t" -type f -perm -u+x); do
		copy_libs "$f"
	done
done
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
