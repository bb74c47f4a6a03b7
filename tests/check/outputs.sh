#!/usr/bin/env bash
# tests/check/outputs.sh: an output file never replaces a capture. `stkreport --pprof a.stk
# b.stk` (the output's name forgotten) wrote a profile over the capture a.stk and exited 0; so
# did --svg and --sqlite. Now each is a usage error (exit 2, one line naming the option and the
# file) and the capture is left byte for byte; an output naming an input of the run is refused
# the same way, and a file that is no capture is still replaced.
set -u
cd "$(dirname "$0")/../.."
OUTPUT=${OUTPUT:-.output}
STKREPORT=$OUTPUT/stkreport
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok $1"; }
fail() { echo "not ok $1: $2"; failed=1; }

src=tests/golden/profile/input.stk
# refused NAME OPTION OUTPUT INPUT: exit 2, one line naming OPTION OUTPUT, OUTPUT unchanged
refused() {
	local name=$1 opt=$2 out=$3 in=$4 rc
	cp "$src" "$tmp/a.stk"
	cp "$src" "$tmp/b.stk"
	"$STKREPORT" -q "$opt" "$out" "$in" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" = 2 ] && ok "$name.exit" || fail "$name.exit" "expected 2, got $rc: $(head -1 "$tmp/err")"
	grep -q "^stkreport: $opt $out: .*an output never replaces a capture$" "$tmp/err" &&
		ok "$name.message" || fail "$name.message" "got: $(head -2 "$tmp/err")"
	cmp -s "$src" "$out" && ok "$name.intact" || fail "$name.intact" "$out was changed"
}
for opt in --pprof --svg --sqlite; do
	name=${opt#--}
	refused "$name.forgotten" "$opt" "$tmp/a.stk" "$tmp/b.stk"
	refused "$name.input" "$opt" "$tmp/b.stk" "$tmp/b.stk"
	(cd "$tmp" && ln -sf b.stk same.stk)
	refused "$name.input_by_other_name" "$opt" "$tmp/b.stk" "$tmp/same.stk"
done

# A file that is no capture is replaced, as before.
echo old >"$tmp/old.svg"
"$STKREPORT" -q --svg "$tmp/old.svg" "$src" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] && ok other.exit || fail other.exit "expected 0, got $rc: $(head -1 "$tmp/err")"
grep -q '<svg' "$tmp/old.svg" && ok other.replaced || fail other.replaced "no SVG in old.svg"
exit $failed
