#!/usr/bin/env bash
# tests/check/pprof.sh [--update]: stkreport --pprof on the golden captures. The file must be
# gzip, decode with `protoc --decode=perftools.profiles.Profile` against
# tests/golden/pprof/profile.proto to exactly expected.CASE.txt, and read, through its own id
# tables (tests/golden/pprof/stacks.py), as exactly expected.CASE.stacks: sample values, labels
# pid/tid/comm/probe, and function names leaf first. --update rewrites the expected files.
set -u
cd "$(dirname "$0")/../.."
OUTPUT=${OUTPUT:-.output}
STKREPORT=$OUTPUT/stkreport
export TZ=UTC LC_ALL=C
GOLD=tests/golden/pprof
update=0
[ "${1:-}" = --update ] && update=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
if ! command -v protoc >/dev/null; then
	echo "skip pprof: protoc not installed (Debian: protobuf-compiler)"
	exit 0
fi
have_python=1
command -v python3 >/dev/null || have_python=0

for case in count profile unknown merge saturated; do
	out=$tmp/$case.pb.gz
	if ! "$STKREPORT" -q --symfs tests/golden/elf --pprof "$out" "tests/golden/$case/input.stk" \
		>"$tmp/stdout" 2>"$tmp/err"; then
		echo "not ok pprof/$case: stkreport failed: $(cat "$tmp/err")"
		failed=1
		continue
	fi
	if [ "$(head -c 2 "$out" | od -An -tx1 | tr -d ' ')" != 1f8b ]; then
		echo "not ok pprof/$case.gzip: not a gzip file"
		failed=1
		continue
	fi
	if ! gzip -dc "$out" | protoc --decode=perftools.profiles.Profile -I "$GOLD" profile.proto \
		>"$tmp/$case.txt" 2>"$tmp/err"; then
		echo "not ok pprof/$case.decode: $(cat "$tmp/err")"
		failed=1
		continue
	fi
	[ $have_python = 1 ] && python3 "$GOLD/stacks.py" <"$tmp/$case.txt" >"$tmp/$case.stacks"
	if [ $update = 1 ]; then
		cp "$tmp/$case.txt" "$GOLD/expected.$case.txt"
		cp "$tmp/$case.stacks" "$GOLD/expected.$case.stacks"
		echo "updated $GOLD/expected.$case.*"
		continue
	fi
	for kind in txt stacks; do
		if [ $kind = stacks ] && [ $have_python = 0 ]; then
			echo "skip pprof/$case.stacks: python3 not installed"
		elif cmp -s "$GOLD/expected.$case.$kind" "$tmp/$case.$kind"; then
			echo "ok pprof/$case.$kind"
		else
			echo "not ok pprof/$case.$kind: differs from $GOLD/expected.$case.$kind"
			diff -u "$GOLD/expected.$case.$kind" "$tmp/$case.$kind" | head -30
			failed=1
		fi
	done
done

# -K: kernel frames only, still one sample per (stack, labels)
if ! "$STKREPORT" -q --symfs tests/golden/elf -K --pprof "$tmp/k.pb.gz" \
	tests/golden/count/input.stk 2>"$tmp/err"; then
	echo "not ok pprof/kernel-only: stkreport failed: $(cat "$tmp/err")"
	failed=1
elif [ $have_python = 1 ]; then
	got=$(gzip -dc "$tmp/k.pb.gz" | protoc --decode=perftools.profiles.Profile -I "$GOLD" \
		profile.proto | python3 "$GOLD/stacks.py" | grep -c ': .*main')
	[ "$got" = 0 ] && echo "ok pprof/kernel-only" ||
		{ echo "not ok pprof/kernel-only: $got samples with user frames"; failed=1; }
fi
# an unwritable destination: one line, exit 1, nothing left
"$STKREPORT" -q --pprof "$tmp/no/such/dir/x.pb.gz" tests/golden/count/input.stk 2>"$tmp/err"
rc=$?
if [ $rc = 1 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "x.pb.gz" "$tmp/err"; then
	echo "ok pprof/unwritable"
else
	echo "not ok pprof/unwritable: exit $rc, stderr '$(cat "$tmp/err")'"
	failed=1
fi
exit $failed
