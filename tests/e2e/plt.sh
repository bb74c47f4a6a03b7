#!/usr/bin/env bash
# PLT stubs are named NAME@plt, as perf names them, from the binary's relocations: a uprobe on
# memcmp@plt of a C++ program (wl_plt: the uprobe is on the stub itself, its first byte an int3
# in every mapping of the file, stkrec's own too) counts its N calls under
# main;wl_outer;wl_middle;memcmp@plt. So from the symbol table stkrec embeds and from the file
# (--no-symtabs), unstripped and stripped: before, the unstripped binary's stub read as _init+0x..
# (_init is sizeless, just before .plt) and the stripped one's as [unknown].
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require
[ "$(uname -m)" = x86_64 ] || { skip plt "PLT stubs are read as x86-64 code"; exit 0; }
bin=$WL/nofp/wl_plt
[ -x "$bin" ] || { not_ok plt.sh "$bin is not built (make workloads)"; exit 1; }
n=500
cp "$bin" "$tmp/wl_plt"
strip -o "$tmp/wl_plt_stripped" "$bin"

# plt_case NAME BIN WANT_RE [STKREC_OPTS...]: N events under the uprobe on BIN's memcmp@plt,
# all of them matching WANT_RE in the folded report.
plt_case() {
	local name=$1 b=$2 want=$3
	shift 3
	rec "$name" -q "$@" -o "$tmp/$name.stk" "$b:memcmp@plt" -- "$b" "$n"
	check_eq "plt.$name.exit" 0 $? "$tmp/$name.err"
	folded "$name" "$tmp/$name.stk"
	check_eq "plt.$name.chain" "$n" "$(sum_folded "$tmp/$name.rep" "$want")" "$tmp/$name.rep"
}

plt_case symtab "$tmp/wl_plt" "$(chain 'memcmp@plt')"
plt_case file "$tmp/wl_plt" "$(chain 'memcmp@plt')" --no-symtabs
# stripped: only the dynamic symbols and the stubs are named
stripped=';\[unknown\];__libc_start_main;__libc_start_call_main;\[unknown\];\[unknown\];\[unknown\];memcmp@plt '
plt_case stripped "$tmp/wl_plt_stripped" "$stripped"
plt_case stripped_file "$tmp/wl_plt_stripped" "$stripped" --no-symtabs
e2e_done
