# tests/lib/measure.sh, sourced by tests/check/hostile.sh and many.sh: a command run with its
# exit status, peak RSS and wall time kept for the checks that follow.

# measure OUT ERR COMMAND...: COMMAND with stdout in OUT, stderr in ERR; sets rc (exit status),
# rss (peak RSS in KiB, empty without /usr/bin/time) and secs (wall seconds, 2 decimals)
measure() {
	local out=$1 err=$2 t0 t1
	shift 2
	t0=$(date +%s.%N)
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f %M -o "$out.rss" "$@" >"$out" 2>"$err"
		rc=$?
		rss=$(tail -n 1 "$out.rss")
	else
		"$@" >"$out" 2>"$err"
		rc=$?
		rss=
	fi
	t1=$(date +%s.%N)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}
