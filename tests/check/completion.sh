#!/usr/bin/env bash
# tests/check/completion.sh: scripts/completion/stkrec.bash completes both tools in bash: every
# option the tools' --help lists, the values of --unwind, -e and --by, captures by name, and
# tracepoint SPECs (`stkrec t:sys<TAB>`) from `stkrec -l`.
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

# complete_line LINE: the same for the end of LINE as bash splits it: a ':' is a word of its own
# (COMP_WORDBREAKS), COMP_LINE and COMP_POINT as typed
complete_line() {
	bash -c 'source scripts/completion/stkrec.bash
		COMP_LINE=$1 COMP_POINT=${#1}
		read -r -a COMP_WORDS <<<"${1//:/ : }"
		case $1 in *: | *" ") COMP_WORDS+=("") ;; esac
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_stkrec
		printf "%s\n" "${COMPREPLY[@]}" | sort' sh "$1"
}

# expect NAME WANT WORD...: the offered words, joined by spaces, are WANT (expect_line NAME
# WANT LINE: for the end of LINE)
expect() { expect_from complete_words "$@"; }
expect_line() { expect_from complete_line "$@"; }
expect_from() {
	local how=$1 name=$2 want=$3 got
	shift 3
	got=$("$how" "$@" | tr '\n' ' ' | sed 's/ $//')
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
expect python_frames_value "mixed native python" "$rec" --python-frames ""
expect report_python_frames_value "mixed" "$rep" --python-frames m
expect report_by "capture comm" "$rep" --by c
expect report_option "--symfs" "$rep" --sym
expect block_time "--min-block --min-block-time" "$rec" --min-bl
# tracepoints: `stkrec -l` needs root (tracefs is root's)
if "$rec" -l >/dev/null 2>&1; then
	expect_line tracepoint_category "syscalls:" "$rec t:sysc"
	expect_line tracepoint_event "sys_enter_getppid" "$rec -D 1 t:syscalls:sys_enter_getpp"
else
	echo "skip completion.tracepoint: stkrec -l fails here (not root?)"
fi
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
