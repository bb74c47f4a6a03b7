#!/usr/bin/env bash
# tests/check/bcc_options.sh: the man page's table of bcc's options (stkrec(8), COMPATIBILITY
# WITH BCC: stackcount, profile, offcputime, stacksnoop) against the option parsers. Every
# equivalent it names (`stkrec ...` or `stkreport ...`) is parsed with -h added: the parser must
# accept it (exit 0). No BPF, no root: -h ends the run once the options are read. The lines of
# its "Refused as bcc refuses them" part run as they are: each must be a usage error (exit 2,
# one line naming an option), as bcc's tools refuse them, before anything is set up.
set -u
cd "$(dirname "$0")/../.."
OUTPUT=${OUTPUT:-.output}
failed=0 n=0

# placeholders of the table, as values the parsers accept
fill() {
	sed -e 's/\\-/-/g' -e 's/ PID/ 1/; s/ TID/ 1/; s/ CPU/ 0/; s/ USECS/ 100/; s/ MASK/ 2/' \
		-e 's/ HZ/ 99/; s/ N\b/ 64/; s/ S\b/ 1/; s/ DURATION/ 1/' \
		-e 's/ SPEC/ t:syscalls:sys_enter_getppid/' -e 's| FILE| tests/golden/count/input.stk|'
}

# the bold command lines of the section, e.g. `.B "stkrec \-\-offcpu \-m USECS"`, after
# "refused " in the part of refusals
equivalents=$(awk '/^\.SH COMPATIBILITY WITH BCC/ { on = 1; next } /^\.SH / { on = 0 }
	on && /^\.SS / { refused = /^\.SS Refused/ }
	on && /^\.B "stk(rec|report) / { sub(/^\.B "/, ""); sub(/"$/, "");
		print (refused ? "refused " : "") $0 }' docs/stkrec.8 | sort -u)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
while IFS= read -r line; do
	[ -n "$line" ] || continue
	n=$((n + 1))
	read -r -a words <<<"$(fill <<<"$line")"
	tool=${words[0]}
	if [ "$tool" = refused ]; then
		tool=${words[1]} line=${line#refused }
		(cd "$tmp" && timeout -s INT 10 "$OLDPWD/$OUTPUT/$tool" "${words[@]:2}" \
			>/dev/null 2>"$tmp/err")
		rc=$?
		if [ $rc = 2 ] && [ "$(wc -l <"$tmp/err")" -le 2 ] && grep -q -- ' -' "$tmp/err"; then
			echo "ok bcc_options: refused: $line"
		else
			echo "not ok bcc_options: '$line' exits $rc, not 2 with a usage line: $(head -1 "$tmp/err")"
			failed=1
		fi
		continue
	fi
	if "$OUTPUT/$tool" "${words[@]:1}" -h >/dev/null 2>&1; then
		echo "ok bcc_options: $line"
	else
		echo "not ok bcc_options: '$line' is refused by the parser: $("$OUTPUT/$tool" "${words[@]:1}" -h 2>&1 >/dev/null | head -1)"
		failed=1
	fi
done <<<"$equivalents"
[ "$n" -ge 30 ] || { echo "not ok bcc_options.table: only $n equivalents found in docs/stkrec.8"; failed=1; }
exit $failed
