# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# tests/vm/lib.sh: the protocol of the VM test scripts (kfunc.sh, python.sh), sourced inside the
# VM as /vmlib.sh: `ok NAME`, `not ok NAME: WHY`, `skip NAME: WHY` on the serial console, which
# tests/e2e/vm_kprobe.sh relays.
ok() { echo "ok $1"; }
not_ok() { echo "not ok $1: $2"; }
skip() { echo "skip $1: $2"; }
check_eq() { # NAME EXPECTED ACTUAL [FILE]
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1" "expected '$2', got '$3'"
		[ -n "${4:-}" ] && sed -e 's/^/    | /' "$4" | head -20
	fi
}
