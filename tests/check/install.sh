#!/usr/bin/env bash
# `make install PREFIX=DIR` puts both tools and both man pages in place, and the pages format
# without warnings.
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
