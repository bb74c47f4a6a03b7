#!/usr/bin/env bash
# Containers and namespaces: a workload in its own mount namespace (unshare -m plus a bind mount)
# runs from a path that does not exist on the host. stkrec opens its binary through
# /proc/PID/map_files, marks the mapping CAP_MAP_F_NS_PATH and embeds its symbol table; the
# report names its frames after the host copy is gone too.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require
command -v unshare >/dev/null || { skip container "unshare(1) not installed"; exit 0; }

mkdir -p "$tmp/ctr" "$tmp/mnt"
cp "$WL/wl_uprobe" "$tmp/ctr/wl_ct"
inner=$tmp/mnt/wl_ct	# exists only inside the namespace
n=500
# The uprobe is set on the host copy: same inode, so it fires in the namespace too.
rec ct -q -o "$tmp/ct.stk" "$tmp/ctr/wl_ct:wl_target" -- \
	unshare -m --propagation private sh -c "mount --bind '$tmp/ctr' '$tmp/mnt' && exec '$inner' $n"
check_eq ct.exit 0 $? "$tmp/ct.err"
check_true ct.host_path_absent "$inner not to exist on the host" test ! -e "$inner"
flags=$("$PWD/$OUTPUT/tests/tools/capdump" "$tmp/ct.stk" |
	awk -v p="$inner" '$1 == "map" && $NF == p { print $7; exit }')
check_true ct.ns_path_flag "the mapping of $inner flagged NS_PATH (0x8), got '$flags'" \
	test $(( ${flags#flags=} & 8 )) -eq 8
rm -rf "$tmp/ctr"	# no copy of the binary left anywhere
folded ct "$tmp/ct.stk" -U
check_eq ct.report_exit 0 $? "$tmp/ct.rerr"
check_eq ct.chain "$n" "$(sum_folded "$tmp/ct.rep" ';main;wl_outer;wl_middle;wl_target ')" \
	"$tmp/ct.rep"
e2e_done
