#!/usr/bin/env bash
# An exec storm (issue 29, item 5): one process exec'ing itself some 500 times a second, sampled
# at 999 Hz. Every exec splits the interval it falls in into one more part (format.md 3.2), and
# format 3.x repeated the interval's whole stack tables in each part: 15 s of this made a 353 MB
# capture of 10,851 parts. A 4.0 file holds each stack once (format.md 4.4): no stack appears
# twice in the file, and its size grows with parts by their rows and process records only.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

rec storm -q -F 999 -i 1 -o "$tmp/storm.stk" -- "$WL/wl_execloop" 1500
check_eq storm.exit 0 $? "$tmp/storm.err"
"$PWD/$OUTPUT/tests/tools/capdump" "$tmp/storm.stk" >"$tmp/storm.dump"
check_eq storm.dump 0 $? "$tmp/storm.dump"
parts=$(grep -c '^interval ' "$tmp/storm.dump")
# each stack line without its number: flags and frames
for side in kstack ustack; do
	grep "^  $side " "$tmp/storm.dump" | cut -d' ' -f5- | sort >"$tmp/$side"
	n=$(wc -l <"$tmp/$side")
	check_eq "storm.$side.once" 0 "$(uniq -d "$tmp/$side" | wc -l)" "$tmp/$side"
	check_true "storm.$side.some" "stacks in the capture, got $n" test "$n" -gt 0
done
check_true storm.split "an interval split by the execs (parts > 100), got $parts" \
	test "$parts" -gt 100
size=$(stat -c %s "$tmp/storm.stk")
# 3.x: about 15 KiB a part at this rate (its tables); now rows and process records only
check_true storm.size "at most 1 MiB + 2 KiB a part ($parts parts), got $size bytes" \
	test "$size" -le $((1048576 + parts * 2048))
folded storm "$tmp/storm.stk"
check_true storm.report "samples of storm_spin, got $(sum_folded "$tmp/storm.rep" ';main;storm_spin')" \
	test "$(sum_folded "$tmp/storm.rep" ';main;storm_spin')" -gt 0 || show "$tmp/storm.rep"
echo "# storm: $parts interval parts, $(wc -l <"$tmp/kstack") kernel and $(wc -l <"$tmp/ustack") user stacks, $size bytes"
e2e_done
