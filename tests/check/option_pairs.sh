#!/usr/bin/env bash
# tests/check/option_pairs.sh: the table tests/check/option_pairs.txt of option pairs against
# both tools: each pair honoured (exit 0, and what comes out differs from the run without the
# added option) or refused (exit 2, the one-line reason on stderr, nothing written). No BPF:
# stkrec's pairs are all refused before anything is set up.
set -u
cd "$(dirname "$0")/../.."
OUTPUT=${OUTPUT:-.output}
export TZ=UTC LC_ALL=C
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0 n=0

# run NAME TOOL CAPTURE WORDS...: the tool on WORDS (@OUT, @Q filled in) then CAPTURE; exit
# status in $tmp/NAME.rc, stdout and stderr in $tmp/NAME.{out,err}, @OUT's file in $tmp/NAME.file
run() {
	local name=$1 tool=$2 cap=$3 w args=()
	shift 3
	for w in "$@"; do
		case $w in
		@OUT) args+=("$tmp/$name.file") ;;
		@Q) args+=("SELECT count(*) FROM samples") ;;
		*) args+=("$w") ;;
		esac
	done
	[ -n "$cap" ] && args+=("$cap")
	rm -f "$tmp/$name.file"
	if [ "$tool" = stkreport ]; then
		"$OUTPUT/stkreport" --symfs tests/golden/elf -q "${args[@]}" >"$tmp/$name.out" \
			2>"$tmp/$name.err"
	else
		(cd "$tmp" && timeout -s INT 20 "$OLDPWD/$OUTPUT/stkrec" "${args[@]}") \
			>"$tmp/$name.out" 2>"$tmp/$name.err"
	fi
	echo $? >"$tmp/$name.rc"
}

# what came out of run NAME: @OUT's file when there is one, else stdout
result() {
	[ -e "$tmp/$1.file" ] && cat "$tmp/$1.file" || cat "$tmp/$1.out"
}

while IFS='|' read -r tool case base added expect; do
	tool=$(echo $tool) case=$(echo $case) expect=${expect# }
	case $tool in '' | '#'*) continue ;; esac
	n=$((n + 1))
	name=$(echo "$tool $case:$base +$added" | tr -s ' ')
	cap=
	[ "$case" != - ] && cap=tests/golden/$case/input.stk
	read -r -a b <<<"$base"
	read -r -a a <<<"$added"
	run pair "$tool" "$cap" "${b[@]}" "${a[@]}"
	rc=$(cat "$tmp/pair.rc")
	case $expect in
	honoured)
		run base "$tool" "$cap" "${b[@]}"
		if [ "$rc" != 0 ] || [ "$(cat "$tmp/base.rc")" != 0 ]; then
			echo "not ok option_pairs: $name: exit $rc (alone $(cat "$tmp/base.rc")): $(head -1 "$tmp/pair.err")"
			failed=1
		elif cmp -s <(result pair) <(result base); then
			echo "not ok option_pairs: $name: accepted, but$added changes nothing"
			failed=1
		else
			echo "ok option_pairs: $name honoured"
		fi
		;;
	refused:*)
		want=${expect#refused: }
		if [ "$rc" = 2 ] && grep -qF -- "$want" "$tmp/pair.err" && [ ! -s "$tmp/pair.out" ] &&
			[ ! -e "$tmp/pair.file" ]; then
			echo "ok option_pairs: $name refused"
		else
			echo "not ok option_pairs: $name: expected exit 2 and '$want', got exit $rc: $(head -1 "$tmp/pair.err")"
			failed=1
		fi
		;;
	*)
		echo "not ok option_pairs: $name: unknown expectation '$expect'"
		failed=1
		;;
	esac
done <tests/check/option_pairs.txt
[ "$n" -ge 80 ] || { echo "not ok option_pairs.table: only $n pairs"; failed=1; }
exit $failed
