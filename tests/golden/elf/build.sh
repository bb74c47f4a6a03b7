#!/bin/sh
# Rebuild the committed golden ELF files (only if golden.c changes: their build-ids and
# addresses are baked into tests/golden/*/input.stk, so rerun `make golden-update` afterwards).
set -e
cd "$(dirname "$0")"
gcc -O0 -fno-pie -no-pie -Wl,--build-id=sha1 -o golden.elf golden.c
gcc -O0 -fpie -pie -Wl,--build-id=sha1 -o golden-pie.elf golden.c
