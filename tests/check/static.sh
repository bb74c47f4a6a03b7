#!/usr/bin/env bash
# tests/check/static.sh: `make static` (stkreport(1), STATIC BUILD). $OUTPUT/stkreport-static,
# built by check-bins, is one static executable (no interpreter, no dynamic section, no NSS) and
# reports, in an empty root holding only itself, the golden captures and the golden ELF files
# (a tmpfs in a private mount namespace, entered with chroot), exactly what the dynamic
# stkreport prints outside: stdout, stderr, exit status and the files of --sqlite, --pprof and
# --svg, byte for byte. The dynamic stkreport must fail in that root (it is empty indeed).
# debuginfod (loaded with dlopen by the static build): a library it cannot load (none in the
# empty root; one that crashes, or of another glibc, or without the functions) costs one
# warning and nothing else; with this machine's libdebuginfod and a local debuginfod(8) server
# it fetches the debug file the dynamic stkreport fetches.
set -u
cd "$(dirname "$0")/../.."
OUTPUT=${OUTPUT:-.output}
STKREPORT=$(realpath "$OUTPUT/stkreport")
STATIC=$(realpath "$OUTPUT/stkreport-static")
export TZ=UTC LC_ALL=C
unset DEBUGINFOD_URLS
tmp=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server"; rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok $1"; }
fail() { echo "not ok $1: $2"; failed=1; }

if [ ! -e "$STATIC" ] && [ -x "$STKREPORT" ] && nm -D "$STKREPORT" 2>/dev/null | grep -q __asan_init; then
	echo "skip static: $OUTPUT is a sanitized build, which links no static stkreport"
	exit 0
fi
if [ ! -x "$STATIC" ] || [ ! -x "$STKREPORT" ]; then
	fail static.built "$OUTPUT/stkreport-static or $OUTPUT/stkreport not built (make check-bins)"
	exit 1
fi

# ---- one file -------------------------------------------------------------------------------
desc=$(file -b "$STATIC")
case $desc in
*"statically linked"*) ok static.file ;;
*) fail static.file "file(1) says: $desc" ;;
esac
if readelf -lW "$STATIC" | grep -qE '^ +(INTERP|DYNAMIC) '; then
	fail static.no_interpreter "$(readelf -lW "$STATIC" | grep -E '^ +(INTERP|DYNAMIC) ')"
elif ! readelf -d "$STATIC" | grep -q 'There is no dynamic section'; then
	fail static.no_interpreter "readelf -d: $(readelf -d "$STATIC" | head -3)"
else
	ok static.no_interpreter
fi
# NSS would read the target's /etc/nsswitch.conf and dlopen its libnss_*.so (Makefile, make
# static): none of its entry points may be linked in.
nss=$(nm "$STATIC" | grep -E ' [TW] (getpw|getgr(nam|gid|ent|ouplist)|getsp|getaddrinfo|gethostby|getservby|getprotoby|initgroups|getlogin)' |
	awk '{ print $3 }' | tr '\n' ' ')
[ -z "$nss" ] && ok static.no_nss || fail static.no_nss "linked in: $nss"

# ---- the same reports in an empty root --------------------------------------------------------
# NAME, FILE it writes (- for none), ARGS: one run per line, paths relative to the root (chroot
# starts in /). SELECT_FUNCTIONS stands for $query.
runs='folded-embedded	-	-f control.stk
list-embedded	-	control.stk
sql-embedded	-	-q --sql SELECT_FUNCTIONS control.stk
sqlite-embedded	out.db	--sqlite out.db control.stk
pprof-embedded	out.pb.gz	-q --pprof out.pb.gz control.stk
svg-embedded	out.svg	-q --svg out.svg control.stk
folded-symfs	-	-f --symfs elf count.stk
list-symfs	-	--symfs elf count.stk
verbose-symfs	-	-q -v --symfs elf count.stk
sql-symfs	-	-q --sql SELECT_FUNCTIONS --symfs elf profile.stk
sqlite-symfs	out.db	--sqlite out.db --symfs elf profile.stk
pprof-symfs	out.pb.gz	-q --pprof out.pb.gz --symfs elf profile.stk
svg-symfs	out.svg	-q --svg out.svg --symfs elf profile.stk'
query='SELECT function, self, total FROM functions ORDER BY total DESC, function'

# fill DIR: what the root holds besides stkreport. control.stk symbolizes from the symbol
# table embedded in it; count.stk and profile.stk from the ELF files under elf/ (--symfs).
fill() {
	mkdir -p "$1/elf" &&
		cp tests/golden/control/input.stk "$1/control.stk" &&
		cp tests/golden/count/input.stk "$1/count.stk" &&
		cp tests/golden/profile/input.stk "$1/profile.stk" &&
		cp tests/golden/elf/golden.elf tests/golden/elf/golden-pie.elf "$1/elf/"
}

# run_all RESULTS COMMAND...: from the current directory, every run as COMMAND ARGS; its stdout,
# stderr, exit status and file in RESULTS/NAME.{out,err,rc,file}
run_all() {
	local res=$1 name file args a argv
	shift
	mkdir -p "$res"
	while IFS=$'\t' read -r name file args; do
		argv=()
		for a in $args; do
			[ "$a" = SELECT_FUNCTIONS ] && argv+=("$query") || argv+=("$a")
		done
		rm -f "$file"
		"$@" "${argv[@]}" >"$res/$name.out" 2>"$res/$name.err"
		echo $? >"$res/$name.rc"
		[ "$file" = - ] || [ ! -f "$file" ] || cp "$file" "$res/$name.file"
	done <<<"$runs"
}

# shellcheck disable=SC2317 # run through `bash -c inside` in the namespace
# In a private mount namespace: a tmpfs as the root, filled, then every run with chroot. The
# dynamic stkreport is tried there first: it must not start (no ld.so, no libraries).
inside() {
	local root=$tmp/root
	mkdir -p "$root" && mount -t tmpfs -o size=64m stkroot "$root" || return 10
	mountpoint -q "$root" || return 11
	fill "$root" && cp "$STKREPORT" "$root/stkreport-dynamic" || return 12
	ls -A "$root" >"$tmp/root.ls"
	chroot "$root" /stkreport-dynamic -V >"$tmp/dynamic-in-root.out" 2>&1
	echo $? >"$tmp/dynamic-in-root.rc"
	rm "$root/stkreport-dynamic" && cp "$STATIC" "$root/stkreport" && cd "$root" || return 12
	run_all "$tmp/static" chroot "$root" /stkreport
	# DEBUGINFOD_URLS set, no libdebuginfod.so.1 in the root (count.stk maps an object that is
	# nowhere, with a build-id: debuginfod is asked for it)
	DEBUGINFOD_URLS=http://127.0.0.1:9 chroot "$root" /stkreport -f --symfs elf count.stk \
		>"$tmp/nolib.out" 2>"$tmp/nolib.err"
	echo $? >"$tmp/nolib.rc"
}

# warned_once NAME RESULT-PREFIX WHY-PATTERN: exit 0, stdout as the dynamic folded-symfs run's,
# stderr its own plus exactly one debuginfod warning matching WHY-PATTERN
warned_once() {
	local name=$1 p=$2 pat=$3
	if [ "$(cat "$p.rc")" != 0 ]; then
		fail "$name" "exit $(cat "$p.rc"): $(head -3 "$p.err" | tr '\n' '|')"
	elif ! cmp -s "$p.out" "$tmp/dynamic/folded-symfs.out"; then
		fail "$name" "the report changed: $(diff "$tmp/dynamic/folded-symfs.out" "$p.out" | head -4 | tr '\n' '|')"
	elif [ "$(grep -v '^stkreport: debuginfod: ' "$p.err")" != "$(cat "$tmp/dynamic/folded-symfs.err")" ] ||
		[ "$(grep -c '^stkreport: debuginfod: ' "$p.err")" != 1 ] ||
		! grep -qE "^stkreport: debuginfod: unavailable in this static build \($pat.*\); DEBUGINFOD_URLS ignored$" "$p.err"; then
		fail "$name" "expected one warning ($pat), stderr: $(head -4 "$p.err" | tr '\n' '|')"
	else
		ok "$name"
	fi
}

mkdir -p "$tmp/outside"
fill "$tmp/outside" || { fail static.setup "cannot copy the golden captures"; exit 1; }
(cd "$tmp/outside" && run_all "$tmp/dynamic" "$STKREPORT")

export -f inside fill run_all
export tmp STKREPORT STATIC runs query
if [ "$(id -u)" = 0 ]; then
	ns=(unshare --mount --propagation private --fork)
else
	ns=(unshare --user --map-root-user --mount --propagation private --fork)
fi
if ! "${ns[@]}" true 2>"$tmp/ns.err"; then
	echo "skip static.empty_root: cannot make a mount namespace (${ns[*]}): $(head -1 "$tmp/ns.err")"
elif ! "${ns[@]}" bash -c inside; then
	fail static.empty_root "setting up the root in the mount namespace failed"
else
	ok static.empty_root
	want=$'control.stk\ncount.stk\nelf\nprofile.stk\nstkreport-dynamic'
	[ "$(cat "$tmp/root.ls")" = "$want" ] && ok static.root_holds_only_the_test ||
		fail static.root_holds_only_the_test "it holds: $(tr '\n' ' ' <"$tmp/root.ls")"
	[ "$(cat "$tmp/dynamic-in-root.rc")" != 0 ] && ok static.root_has_no_libraries ||
		fail static.root_has_no_libraries "the dynamic stkreport ran in it: $(head -1 "$tmp/dynamic-in-root.out")"
	while IFS=$'\t' read -r name file args; do
		d=$tmp/dynamic/$name s=$tmp/static/$name why=
		# both sides empty-handed would compare equal: the dynamic run must have worked
		if [ "$(cat "$d.rc")" != 0 ] || { [ "$file" = - ] && [ ! -s "$d.out" ]; } ||
			{ [ "$file" != - ] && [ ! -s "$d.file" ]; }; then
			fail "static.same/$name" "the dynamic stkreport $args failed: $(head -1 "$d.err")"
			continue
		fi
		for f in out err rc $([ "$file" = - ] || echo file); do
			cmp -s "$d.$f" "$s.$f" || why="$why ${f/file/$file} differs;"
		done
		if [ -z "$why" ]; then
			ok "static.same/$name"
		else
			fail "static.same/$name" "stkreport $args:$why $(diff "$d.out" "$s.out" | head -4 | tr '\n' '|')"
		fi
	done <<<"$runs"
	warned_once static.debuginfod_no_library "$tmp/nolib" \
		'libdebuginfod.so.1: cannot open shared object file'
fi

# ---- debuginfod: libraries that cannot be used ----------------------------------------------
# Stand-ins for libdebuginfod.so.1, found through LD_LIBRARY_PATH (static dlopen honours it):
# one that crashes while loading (as another glibc's may), one of another glibc, one without the
# functions. None may take the report down or change it.
mkdir -p "$tmp/fake"
printf '%s\n' '#include <signal.h>' '#ifdef CRASH' \
	'__attribute__((constructor)) static void crash(void) { raise(SIGSEGV); }' '#endif' \
	'#ifdef OTHER_GLIBC' '#define F(name) void name(void) {}' \
	'F(debuginfod_begin) F(debuginfod_end) F(debuginfod_find_debuginfo)' \
	'F(debuginfod_find_executable) F(debuginfod_set_user_data) F(debuginfod_get_user_data)' \
	'F(debuginfod_set_progressfn)' 'const char *gnu_get_libc_version(void) { return "1.0"; }' \
	'#endif' 'int fake_debuginfod;' >"$tmp/fake/fake.c"
for kind in 'CRASH:loading libdebuginfod.so.1 killed a test process \(Segmentation fault\)' \
	"OTHER_GLIBC:this system's glibc is 1.0, this static stkreport's 2\\." \
	'NONE:libdebuginfod.so.1: no debuginfod_begin'; do
	def=${kind%%:*} pat=${kind#*:} lib=$tmp/fake/${kind%%:*}
	mkdir -p "$lib"
	# --no-as-needed: the stand-in brings a libc.so.6, as the real library does
	if ! cc -shared -fPIC -D"$def" -Wl,--no-as-needed -lc -o "$lib/libdebuginfod.so.1" "$tmp/fake/fake.c" 2>"$tmp/cc.err"; then
		fail "static.debuginfod_fake_$def" "cc: $(head -2 "$tmp/cc.err")"
		continue
	fi
	(cd "$tmp/outside" && LD_LIBRARY_PATH=$lib DEBUGINFOD_URLS=http://127.0.0.1:9 \
		"$STATIC" -f --symfs elf count.stk >"$tmp/$def.out" 2>"$tmp/$def.err"
	echo $? >"$tmp/$def.rc")
	warned_once "static.debuginfod_fake_$def" "$tmp/$def" "$pat"
done

# ---- debuginfod: this machine's library and a local server ----------------------------------
# golden.elf stripped under --symfs: only the server's debug file names its functions. The
# static and the dynamic stkreport must print the same, and name what the unstripped file names.
if ! command -v debuginfod >/dev/null; then
	echo "skip static.debuginfod_server: debuginfod(8) is not installed (Debian: debuginfod)"
	exit $failed
fi
srv=$tmp/srv
mkdir -p "$srv/files" "$srv/symfs"
if ! objcopy --only-keep-debug tests/golden/elf/golden.elf "$srv/files/golden.debug" ||
	! strip -o "$srv/symfs/golden.elf" tests/golden/elf/golden.elf ||
	! cp tests/golden/elf/golden-pie.elf "$srv/symfs/"; then
	fail static.debuginfod_server "objcopy/strip failed"
	exit 1
fi
build_id=$(readelf -n tests/golden/elf/golden.elf | awk '/Build ID/ { print $3 }')
port=$((20000 + $$ % 20000))
(cd "$srv" && exec debuginfod -p "$port" -d db.sqlite -F files >server.log 2>&1) &
server=$!
# served: whether the server has scanned its directory (a miss would be cached by the clients)
served() {
	local line
	{ exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || return 1
	printf 'GET /buildid/%s/debuginfo HTTP/1.0\r\n\r\n' "$build_id" >&3
	read -r line <&3
	exec 3>&-
	[[ $line == HTTP/1.?' 200'* ]]
}
for _ in $(seq 100); do served && break; sleep 0.2; done
if ! served; then
	fail static.debuginfod_server "the server on port $port never served $build_id: $(tail -2 "$srv/server.log")"
	exit 1
fi
for tool in static dynamic; do
	[ $tool = static ] && bin=$STATIC || bin=$STKREPORT
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$srv/cache-$tool \
		"$bin" -q -f --symfs "$srv/symfs" tests/golden/count/input.stk \
		>"$srv/$tool.out" 2>"$srv/$tool.err"
	echo $? >"$srv/$tool.rc"
done
"$STKREPORT" -q -f --symfs tests/golden/elf tests/golden/count/input.stk >"$srv/unstripped.out"
if [ "$(cat "$srv/static.rc")" != 0 ] || [ -s "$srv/static.err" ]; then
	fail static.debuginfod_server "exit $(cat "$srv/static.rc"): $(head -3 "$srv/static.err" | tr '\n' '|')"
elif ! cmp -s "$srv/static.out" "$srv/unstripped.out" || ! cmp -s "$srv/static.out" "$srv/dynamic.out"; then
	fail static.debuginfod_server "not the unstripped file's names: $(diff "$srv/unstripped.out" "$srv/static.out" | head -4 | tr '\n' '|')"
elif ! cmp -s "$srv/files/golden.debug" "$srv/cache-static/$build_id/debuginfo"; then
	fail static.debuginfod_server "the served debug file is not in the static stkreport's cache"
else
	ok static.debuginfod_server
fi
exit $failed
