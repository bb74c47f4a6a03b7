#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/vm/pytree.sh DIR: Debian's CPython 3.11, as it is, for the VM test (tests/vm/python.sh):
# DIR/usr/bin/python3.11 (mkinitramfs.sh -t adds the shared libraries ldd lists), the few
# modules of /usr/lib/python3.11 that tests/workloads/wl_python.py needs beyond the frozen ones
# (encodings for the interpreter's start, threading and its imports), with their compiled
# copies, and the workload as DIR/wl_python.py. Exits 1 with one line when there is no
# python3.11 to copy.
set -eu
dir=$1
py=/usr/bin/python3.11
lib=/usr/lib/python3.11
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$py" ] && [ -f "$lib/os.py" ] || { echo "no $py with $lib/os.py on this host" >&2; exit 1; }
mkdir -p "$dir/usr/bin" "$dir$lib/lib-dynload"
cp "$py" "$dir/usr/bin/"
# os.py and lib-dynload are the landmarks by which python finds its prefix; the others are
# what `python3.11 -S -v wl_python.py` imports from files (python3.11 freezes the rest)
for m in os encodings/__init__ encodings/aliases encodings/utf_8 threading functools \
	collections/__init__ keyword operator reprlib types _weakrefset; do
	sub=$(dirname "$m")
	mkdir -p "$dir$lib/$sub/__pycache__"
	cp -p "$lib/$m.py" "$dir$lib/$m.py"
	pyc="$lib/$sub/__pycache__/$(basename "$m").cpython-311.pyc"
	if [ -f "$pyc" ]; then cp -p "$pyc" "$dir$lib/$sub/__pycache__/"; fi
done
cp "$here/../workloads/wl_python.py" "$dir/wl_python.py"
