#!/usr/bin/env bash
# tests/check/paths.sh: a capture chooses no file the report opens outside the rules
# (stkreport(1), FILES): tests/golden/paths/input.stk maps objects at /proc/self/mem, /dev/zero,
# a relative path, paths with ".." and "//", and /escape/passwd, which a --symfs symlink
# (escape -> /etc) would lead out of the --symfs tree. strace lists every file stkreport opens:
# none of those may be among them, and the object beside them is still named.
set -u
cd "$(dirname "$0")/../.."
OUTPUT=${OUTPUT:-.output}
STKREPORT=$OUTPUT/stkreport
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok $1"; }
fail() { echo "not ok $1: $2"; failed=1; }

if ! command -v strace >/dev/null; then
	echo "not ok paths.strace: strace is not installed (.ci/run installs it)"
	exit 1
fi
symfs=$tmp/symfs
mkdir -p "$symfs"
cp tests/golden/elf/golden.elf "$symfs/golden.elf"
ln -s /etc "$symfs/escape"
strace -f -qq -e trace=open,openat,openat2 -o "$tmp/trace" \
	"$STKREPORT" -q -f --symfs "$symfs" tests/golden/paths/input.stk >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] && ok paths.exit || fail paths.exit "exit $rc: $(head -2 "$tmp/err")"
grep -q 'stk_leaf' "$tmp/out" && ok paths.named ||
	fail paths.named "the golden object's frames named, got: $(head -2 "$tmp/out")"
for bad in /proc/self/mem /dev/zero relative/lib.so /etc/passwd ../ // "$symfs/escape"; do
	if grep -F "\"" "$tmp/trace" | grep -qF -- "$bad"; then
		fail "paths.not_opened $bad" "$(grep -F -- "$bad" "$tmp/trace" | head -2)"
	else
		ok "paths.not_opened $bad"
	fi
done
exit $failed
