#!/usr/bin/env bash
# tests/check/completion.sh: scripts/completion/stkrec.bash completes both tools in bash: every
# option the tools' --help lists, the values of --unwind, -e and --by, and captures by name.
set -u
cd "$(dirname "$0")/../.."
OUTPUT=${OUTPUT:-.output}
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# complete WORD...: what bash's completion offers for the last word, one per line, sorted
complete_words() {
	bash -c 'source scripts/completion/stkrec.bash
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		case ${COMP_WORDS[0]} in *stkrec) _stkrec ;; *) _stkreport ;; esac
		printf "%s\n" "${COMPREPLY[@]}" | sort' sh "$@"
}

expect() { # NAME WANT WORD...: the offered words, joined by spaces, are WANT
	local name=$1 want=$2 got
	shift 2
	got=$(complete_words "$@" | tr '\n' ' ' | sed 's/ $//')
	if [ "$got" = "$want" ]; then
		echo "ok completion.$name"
	else
		echo "not ok completion.$name: expected '$want', got '$got'"
		failed=1
	fi
}

rec=$OUTPUT/stkrec rep=$OUTPUT/stkreport
expect unwind_option "--unwind --unwind-memory" "$rec" --unw
expect unwind_value "auto cfi fp" "$rec" --unwind ""
expect event_value "page-faults" "$rec" -e pa
expect report_by "capture comm" "$rep" --by c
expect report_option "--symfs" "$rep" --sym
touch "$tmp/a.stk" "$tmp/b.txt"
expect capture_file "$tmp/a.stk" "$rep" "$tmp/"
# every long option of each tool's --help is offered for "--"
for tool in "$rec" "$rep"; do
	want=$("$tool" --help | grep -oE -- '(^|[ ,])--[a-z][-a-z0-9]*' | tr -d ' ,' | sort -u)
	got=$(complete_words "$tool" -- | grep -- '^--')
	if [ "$want" = "$got" ]; then
		echo "ok completion.all_options.${tool##*/}"
	else
		echo "not ok completion.all_options.${tool##*/}: $(diff <(echo "$want") <(echo "$got") | head -5 | tr '\n' ' ')"
		failed=1
	fi
done
exit $failed
