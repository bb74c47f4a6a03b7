#!/bin/sh
# Rebuild the committed golden ELF files (only if golden.c or plt.c change: their build-ids and
# addresses are baked into tests/golden/*/input.stk, so rerun `make golden-update` afterwards).
set -e
cd "$(dirname "$0")"
gcc -O0 -fno-pie -no-pie -Wl,--build-id=sha1 -o golden.elf golden.c
gcc -O0 -fpie -pie -Wl,--build-id=sha1 -o golden-pie.elf golden.c
# plt.elf: PLT stubs in .plt (lazy, IBT), .plt.sec and .plt.got (the golden case plt,
# tests/unit/sym_plt.c); plt-stripped.elf the same without .symtab.
gcc -O1 -fcf-protection -fpie -pie -Wl,-z,ibtplt -Wl,-z,lazy -Wl,--build-id=sha1 -o plt.elf plt.c
strip -o plt-stripped.elf plt.elf
