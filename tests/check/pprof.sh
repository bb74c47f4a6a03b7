#!/usr/bin/env bash
# tests/check/pprof.sh [--update]: stkreport --pprof on the golden captures. The file must be
# gzip, decode with `protoc --decode=perftools.profiles.Profile` against
# tests/golden/pprof/profile.proto to exactly expected.CASE.txt, and read, through its own id
# tables (tests/golden/pprof/stacks.py), as exactly expected.CASE.stacks: sample values, labels
# pid/tid/comm/probe/host (and capture with --by capture), and function names leaf first. --update rewrites the expected files.
# Where go is installed (Debian: golang-go), `go tool pprof` reads the files too, and the total
# of each sample type equals the folded total (the sum of `stkreport -f`'s counts) times what one
# count is worth in that type.
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

# go_total NAME CAPTURE SAMPLE_INDEX PER_COUNT: `go tool pprof -top` of CAPTURE's profile, the
# total of SAMPLE_INDEX (its "of N total"; nanoseconds printed as ns, not scaled) against the
# folded total times PER_COUNT.
go_total() {
	local name=$1 cap=$2 index=$3 per=$4 unit=() folded want got
	[ "$per" = 1 ] || unit=(-unit=ns)
	folded=$("$STKREPORT" -q --symfs tests/golden/elf -f "$cap" |
		awk '{ s += $NF } END { print s + 0 }')
	want=$((folded * per))
	if ! "$STKREPORT" -q --symfs tests/golden/elf --pprof "$tmp/go.pb.gz" "$cap" 2>"$tmp/err"; then
		echo "not ok pprof/go.$name: stkreport failed: $(cat "$tmp/err")"
		failed=1
		return
	fi
	# -symbolize=none: the profile is symbolized; pprof must not look for the binaries
	got=$(HOME=$tmp go tool pprof -symbolize=none -top -sample_index="$index" "${unit[@]}" \
		"$tmp/go.pb.gz" 2>"$tmp/err" |
		sed -n 's/^Showing nodes accounting for .* of \([0-9]*\)\(ns\)\{0,1\} total$/\1/p')
	if [ -n "$got" ] && [ "$folded" -gt 0 ] && [ "$got" = "$want" ]; then
		echo "ok pprof/go.$name"
	else
		echo "not ok pprof/go.$name: go tool pprof total of $index '$got', want $want" \
			"($folded folded x $per) $(head -3 "$tmp/err")"
		failed=1
	fi
}

if [ $update = 1 ]; then
	:
elif ! command -v go >/dev/null; then
	echo "skip pprof/go: SKIP: go not installed (Debian: golang-go): go tool pprof NOT checked"
else
	# a timed sampling capture: samples/count is the folded total, cpu/nanoseconds that many
	# times 1 s / frequency (integer ns, as emit_pprof.c writes the period)
	M=tests/golden/merge/input.stk
	freq=$("$STKREPORT" -q --csv --sql "SELECT value FROM meta WHERE key = 'freq_hz'" "$M" |
		tail -1 | tr -d '\r')
	go_total samples "$M" samples 1
	if [ "${freq:-0}" -gt 0 ] 2>/dev/null; then
		go_total cpu "$M" cpu $((1000000000 / freq))
	else
		echo "not ok pprof/go.cpu: no freq_hz in $M's meta, got '$freq'"
		failed=1
	fi
	# an off-CPU capture (the golden profile capture as stkrec --offcpu writes it: weight=us,
	# kept in the fuzz corpus): off_cpu/nanoseconds is the folded microseconds x 1000
	go_total off_cpu tests/fuzz/corpus/report-offcpu.stk off_cpu 1000
	# a counting capture: events/count
	go_total events tests/golden/count/input.stk events 1
	# three captures of two hosts, --by capture: pprof's tag filter keeps one host's samples,
	# as many as its capture's folded total (the part shown, not the profile's total)
	if "$STKREPORT" -q --symfs tests/golden/elf --by capture --pprof "$tmp/tags.pb.gz" \
		"$M" tests/golden/merge/web2.stk tests/golden/merge/before.stk 2>"$tmp/err"; then
		want=$("$STKREPORT" -q --symfs tests/golden/elf -f tests/golden/merge/web2.stk |
			awk '{ s += $NF } END { print s + 0 }')
		got=$(HOME=$tmp go tool pprof -symbolize=none -top -sample_index=samples \
			-tagfocus=host=web2 "$tmp/tags.pb.gz" 2>/dev/null |
			sed -n 's/^Showing nodes accounting for \([0-9]*\), .* of [0-9]* total$/\1/p')
		if [ -n "$got" ] && [ "$got" = "$want" ]; then
			echo "ok pprof/go.tagfocus"
		else
			echo "not ok pprof/go.tagfocus: -tagfocus=host=web2 total '$got', want $want"
			failed=1
		fi
	else
		echo "not ok pprof/go.tagfocus: stkreport failed: $(cat "$tmp/err")"
		failed=1
	fi
fi

if ! command -v protoc >/dev/null; then
	echo "skip pprof: protoc not installed (Debian: protobuf-compiler)"
	exit $failed
fi
have_python=1
command -v python3 >/dev/null || have_python=0

for case in count profile unknown merge saturated offcpu faults python; do
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

# what pprof names a profile after (mapping 1, go tool pprof's "File:"): the main process's
# executable, not the first process's (offcpu: pid 300, /golden-pie.elf, comes first with 1200
# us; pid 100, /golden.elf, has 2054448); and the period type of -e page-faults
if [ $have_python = 1 ] && [ $update = 0 ]; then
	got=$(sed -n 's/^mapping 1 [^ ]* \([^ ]*\) .*/\1/p' "$tmp/offcpu.stacks")
	[ "$got" = /golden.elf ] && echo "ok pprof/main_mapping" ||
		{ echo "not ok pprof/main_mapping: mapping 1 is '$got', want /golden.elf"; failed=1; }
	got=$(sed -n 's/.* period_type \([^ ]*\) period \([0-9]*\)$/\1 \2/p' "$tmp/faults.stacks")
	[ "$got" = "page-faults/count 1" ] && echo "ok pprof/period_type.event" ||
		{ echo "not ok pprof/period_type.event: '$got', want 'page-faults/count 1'"; failed=1; }
fi
# the filters choose rows and frames as in every output: --pid 100 keeps pid 100's samples
# only, --max-depth 2 at most two locations a side
if [ $have_python = 1 ] && "$STKREPORT" -q --symfs tests/golden/elf --pid 100 --max-depth 2 \
	--pprof "$tmp/f.pb.gz" tests/golden/count/input.stk 2>"$tmp/err"; then
	gzip -dc "$tmp/f.pb.gz" | protoc --decode=perftools.profiles.Profile -I "$GOLD" \
		profile.proto | python3 "$GOLD/stacks.py" >"$tmp/f.stacks"
	others=$(grep -c ' pid=' "$tmp/f.stacks")
	pid100=$(grep -c ' pid=100 ' "$tmp/f.stacks")
	deep=$(awk -F': ' '/ pid=/ { n = split($2, f, ";"); if (n > 4) print }' "$tmp/f.stacks" | wc -l)
	if [ "$pid100" -gt 0 ] && [ "$others" = "$pid100" ] && [ "$deep" = 0 ]; then
		echo "ok pprof/filters"
	else
		echo "not ok pprof/filters: $pid100 samples of pid 100 of $others, $deep deeper than 2+2"
		failed=1
	fi
fi
# several hosts in one profile (tests/golden/merge: web1 twice, web2), --by capture: every
# sample carries its host and its capture as labels (pprof -tagfocus, Parca's and Pyroscope's
# label filters), and samples of different captures stay apart
M=tests/golden/merge
if [ $have_python = 0 ]; then
	echo "skip pprof/by-capture: python3 not installed"
elif ! "$STKREPORT" -q --symfs tests/golden/elf --by capture --pprof "$tmp/bc.pb.gz" \
	$M/input.stk $M/web2.stk $M/before.stk 2>"$tmp/err"; then
	echo "not ok pprof/by-capture: stkreport failed: $(cat "$tmp/err")"
	failed=1
else
	gzip -dc "$tmp/bc.pb.gz" | protoc --decode=perftools.profiles.Profile -I "$GOLD" \
		profile.proto | python3 "$GOLD/stacks.py" >"$tmp/bc.stacks"
	if [ $update = 1 ]; then
		cp "$tmp/bc.stacks" "$GOLD/expected.by-capture.stacks"
		echo "updated $GOLD/expected.by-capture.stacks"
	elif cmp -s "$GOLD/expected.by-capture.stacks" "$tmp/bc.stacks"; then
		echo "ok pprof/by-capture"
	else
		echo "not ok pprof/by-capture: differs from $GOLD/expected.by-capture.stacks"
		diff -u "$GOLD/expected.by-capture.stacks" "$tmp/bc.stacks" | head -30
		failed=1
	fi
fi

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
