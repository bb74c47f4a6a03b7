#!/usr/bin/env bash
# `make install PREFIX=DIR` puts both tools, both man pages and the always-on service in place,
# and the pages format without warnings.
set -u
cd "$(dirname "$0")/../.."
OUTPUT=${OUTPUT:-.output}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # NAME CMD...
	local name=$1
	shift
	if "$@" >/dev/null 2>&1; then echo "ok $name"; else echo "not ok $name: '$*' failed"; fails=1; fi
}

check install.make make -s --no-print-directory install OUTPUT="$OUTPUT" PREFIX="$tmp/usr"
for f in bin/stkrec bin/stkreport; do
	check "install.$f" test -x "$tmp/usr/$f"
done
for f in share/man/man8/stkrec.8 share/man/man1/stkreport.1 share/doc/stkrec/format.md \
	share/doc/stkrec/sql.md share/doc/stkrec/README.md share/bash-completion/completions/stkrec \
	share/bash-completion/completions/stkreport; do
	check "install.$f" test -f "$tmp/usr/$f"
done
check install.version bash -c "'$tmp/usr/bin/stkreport' -V | grep -qx 'stkreport $(cat VERSION)'"
# the always-on service (stkrec(8), ALWAYS ON), its ExecStart the stkrec just installed
unit=$tmp/usr/lib/systemd/system/stkrec.service
check install.unit test -f "$unit"
check install.unit_execstart grep -q "^ExecStart=$tmp/usr/bin/stkrec .*--rotate .*--max-disk " "$unit"
# the options it passes parse (stkrec refuses a usage error with exit 2 before anything else)
opts=$(sed -n 's/^ExecStart=[^ ]* //p' "$unit")
# shellcheck disable=SC2086
check install.unit_options bash -c "'$tmp/usr/bin/stkrec' $opts --help >/dev/null"
if command -v systemd-analyze >/dev/null; then
	# the man page is not in the search path of a PREFIX under /tmp: not checked here
	check install.unit_verify systemd-analyze verify --man=no "$unit"
else
	echo "skip install.unit_verify: systemd-analyze is not installed"
fi
check uninstall.make make -s --no-print-directory uninstall OUTPUT="$OUTPUT" PREFIX="$tmp/usr"
check uninstall.nothing_left bash -c "test -z \"\$(find '$tmp/usr' -type f)\""
if command -v groff >/dev/null; then
	for page in docs/stkrec.8 docs/stkreport.1; do
		check "man.$page" bash -c "! groff -man -ww -z '$page' 2>&1 | grep -q ."
	done
else
	echo "skip man pages: groff is not installed, the pages were not checked"
fi
exit $fails
