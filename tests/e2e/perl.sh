#!/usr/bin/env bash
# Debian's own /usr/bin/perl, not rebuilt: no frame pointers in perl or libc. A 999 Hz profile
# and the stacks of c:malloc reach main in at least 95% of events, and the chains of the top
# stacks of the profile are chains `perf record --call-graph dwarf` finds in the same process at
# the same time (perf copies the stack and unwinds it from DWARF afterwards: the reference for
# code without frame pointers). perf is a test-time tool only.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

perl=/usr/bin/perl
if [ ! -x "$perl" ] || ! command -v perf >/dev/null; then
	not_ok perl.sh "needs $perl and perf (scripts/install-deps installs them)"
	exit 1
fi
# A hash-and-sort loop for SECS seconds (the issue's workload). Time::HiRes's time: with whole
# seconds the loop ended at the next second's tick, after 0 to 1 s, and the events of perl's
# start, deferred until stkrec has read it, were all of a short run's.
cat >"$tmp/hash.pl" <<'EOF'
use Time::HiRes qw(time);
my $t = time;
while (time - $t < $ARGV[0]) {
	my %h;
	$h{$_} = $_ * 2 for 1 .. 2000;
	my @k = sort { $a <=> $b } keys %h;
}
EOF

# to_main FILE: folded lines (`...;main;...;leaf COUNT`) as `main;...;leaf COUNT`.
to_main() {
	sed -n 's/^.*;\(main;[^ ]*\) \([0-9]*\)$/\1 \2/p' "$1"
}

# one_alias: libc's aliases at one address named alike. perf and stkreport pick different ones
# (malloc and __libc_malloc, __GI_x and x): a chain must not differ by that alone.
one_alias() {
	sed -e 's/\(^\|;\)__GI_/\1/g' -e 's/\(^\|;\)__libc_/\1/g'
}

# perf_chains PERF_DATA: each sample's user chain as `main;...;leaf`, one per line. perf prints
# the names of a debug file's .symtab as they are (clock_nanosleep@GLIBC_2.2.5); stkreport drops
# the symbol version (docs/format.md 4.8): so do the chains.
perf_chains() {
	perf script -i "$1" --no-inline -F ip,sym,dso 2>/dev/null | awk '
		function flush(  i, s, on) {
			s = ""; on = 0
			for (i = n; i >= 1; i--) {	# outermost first
				if (f[i] == "main") on = 1
				if (on) s = s (s == "" ? "" : ";") f[i]
			}
			if (s != "") print s
			n = 0
		}
		/^$/ { flush(); next }
		$NF ~ /kernel\.kallsyms/ { next }
		{ sym = $2; for (i = 3; i < NF; i++) sym = sym " " $i
		  sub(/\+0x[0-9a-f]+$/, "", sym); sub(/@@?[^@]+$/, "", sym); f[++n] = sym }
		END { flush() }'
}

# ---- 999 Hz profile: perf and stkrec on the same process, at the same time ---------------
"$perl" "$tmp/hash.pl" 6 &
pl=$!
e2e_bg+=("$pl")
sleep 0.5
perf record -q --call-graph dwarf -F 999 -p "$pl" -o "$tmp/perl.data" -- sleep 3 \
	>"$tmp/perf.out" 2>&1 &
perf_job=$!
rec prof -q -F 999 -D 3 -p "$pl" -o "$tmp/prof.stk"
check_eq perl.profile.exit 0 $? "$tmp/prof.err"
wait "$perf_job"
kill "$pl" 2>/dev/null
folded prof "$tmp/prof.stk" -U
check_share perl.profile "$tmp/prof.rep" '^perl;' '^perl;.*;main;' 500 95 "reach main" \
	"$tmp/prof.stk"

perf_chains "$tmp/perl.data" | one_alias | sort -u >"$tmp/perf.chains"
check_true perl.perf.samples "perf found chains to main" test -s "$tmp/perf.chains" ||
	show "$tmp/perf.out"
# Every one of stkrec's 10 most frequent chains is one perf saw too.
to_main "$tmp/prof.rep" | one_alias | sort -k2,2nr | head -n 10 >"$tmp/top.chains"
missing=$(cut -d' ' -f1 "$tmp/top.chains" | grep -vxF -f "$tmp/perf.chains" | head -n 3)
check_eq perl.perf.top_chains "" "$missing" "$tmp/top.chains"

# ---- c:malloc on a whole perl run, from its start (-- COMMAND) ----------------------------
rec malloc -q -o "$tmp/malloc.stk" c:malloc -- "$perl" "$tmp/hash.pl" 1
check_eq perl.malloc.exit 0 $? "$tmp/malloc.err"
folded malloc "$tmp/malloc.stk" -U -P	# a probe capture: the comm leads only with -P
check_share perl.malloc "$tmp/malloc.rep" '^perl;' '^perl;.*;main;' 10000 95 "reach main" \
	"$tmp/malloc.stk"
e2e_done
