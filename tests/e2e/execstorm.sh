#!/usr/bin/env bash
# An exec storm: one process (a shell stkrec -p reads when it starts) runs 3,000 images of
# wl_execloop one after the other, some 500 execs a second here, each image at other addresses,
# sampled at 999 Hz. Every sample is accounted for: its user stack whole, every frame placed in
# the image its row is named with (root _start, ld.so's _dl_start_user, or the caller of
# __libc_start_main: dash's _start has no symbol; and no frame outside any mapping), or none (the
# task inside execve() between two images), or cut and counted in a `# lost:` line. Before, of
# 2,576 samples 466 were cut or named with another image's mappings uncounted, and 481 had a
# frame outside any mapping (2,556: 336 and 359; only 37 and 56 counted cut): the process was
# read from /proc again when BPF first saw it and at each exec, an image or more late, replacing
# the images in between; deferred events were walked with the last two images only; an exec
# applied between the interval's split and its process records wrote the next image in place of
# the one its rows ran in; and BPF's LRU of image stamps lost the process's stamp on a busy host.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

n=3000
name=storm
mkfifo "$tmp/go" || exit 1
sh -c 'read -r go <"$1" && exec "$2" "$3"' sh "$tmp/go" "$WL/wl_execloop" "$n" &
storm=$!
e2e_bg+=("$storm")
rec_bg "$name" -q -F 999 -o "$tmp/$name.stk" -p "$storm"
rec_ready "$name" || not_ok "$name.ready" "stkrec did not start: $(head -1 "$tmp/$name.err")"
echo go >"$tmp/go"
wait "$storm"
check_eq "$name.workload" 0 $?
sleep 1.2
rec_signal INT "$REC_PID"
rec_wait "$REC_PID"
check_eq "$name.exit" 0 $? "$tmp/$name.err"
# -v: a frame in a mapping but without a symbol reads "[unknown] (module+0xOFF)"; one outside
# every mapping of its image, "[unknown]" alone
report "$name" "$tmp/$name.stk" -U -f -P -v
read -r total whole none unplaced < <(awk -v other="$tmp/$name.other" '
	{ c = $NF; $NF = ""; sub(/ $/, ""); n = split($0, f, ";"); total += c
	  bare = $0 ~ /\[unknown\](;|$)/
	  unplaced += bare ? c : 0
	  if (n == 1) none += c
	  else if ((f[2] == "_start" || f[2] == "_dl_start_user" || f[3] == "__libc_start_main") &&
		   !bare) whole += c
	  else print c, $0 >other }
	END { print total + 0, whole + 0, none + 0, unplaced + 0 }' "$tmp/$name.rep")
cut=$(awk '/^# lost: [0-9]+ (user stacks cut|events of processes exited)/ { s += $3 }
	END { print s + 0 }' "$tmp/$name.rerr")
echo "# $name: $total samples: $whole whole and placed, $none without a user stack, $cut cut" \
	"and counted ($unplaced with a frame outside any mapping)"
check_true "$name.samples" "at least 1000 samples of the storm, got $total" test "$total" -ge 1000
check_eq "$name.uncounted" 0 $((total - whole - none - cut)) "$tmp/$name.other" ||
	show "$tmp/$name.rerr"
check_true "$name.unplaced_counted" "samples with a frame outside any mapping ($unplaced) at most \
the stacks counted cut ($cut)" test "$unplaced" -le "$cut"
e2e_done
