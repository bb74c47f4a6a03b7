#!/usr/bin/env bash
# sudo stkrec: the capture belongs to the user who ran sudo (SUDO_UID, SUDO_GID), who reads it
# with stkreport and no root, wherever that user may create a file; elsewhere it is root's, and
# stkrec says how to hand it over. Here sudo's environment is set by hand (uid and gid 65534,
# nobody), and nobody's reads go through setpriv.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
e2e_require

NOBODY=65534
as_nobody() {
	setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$@"
}
sudo_rec() { # NAME ARGS...: stkrec as `sudo stkrec` by nobody runs it, on a burner of its own
	local name=$1
	shift
	# a profile of an idle host may hold no stack at all (idle samples are left out): the
	# command burns CPU time so that the capture has stacks whatever the host is doing
	SUDO_UID=$NOBODY SUDO_GID=$NOBODY SUDO_USER=nobody rec "$name" -q "$@" -- "$WL/wl_burner" -c 0.3
}
owner() { stat -c '%u:%g %a' "$1" 2>/dev/null; }

mine=$tmp/mine roots=$tmp/roots
mkdir "$mine" "$roots"
chown $NOBODY:$NOBODY "$mine"
chmod 0755 "$roots"

# a directory of the user's: the capture is theirs, private, and stkreport reads it as them
sudo_rec own -o "$mine/cap.stk"
check_eq sudo.own.exit 0 $? "$tmp/own.err"
check_eq sudo.own.owner "$NOBODY:$NOBODY 600" "$(owner "$mine/cap.stk")"
as_nobody "$STKREPORT" -q -f "$mine/cap.stk" >"$tmp/own.rep" 2>"$tmp/own.rerr"
check_eq sudo.own.report 0 $? "$tmp/own.rerr"
check_true sudo.own.stacks "stacks in nobody's report, got $(wc -l <"$tmp/own.rep") lines" \
	test -s "$tmp/own.rep"

# again: the user's earlier capture is replaced, and stays theirs
sudo_rec again -o "$mine/cap.stk"
check_eq sudo.again.exit 0 $? "$tmp/again.err"
check_eq sudo.again.owner "$NOBODY:$NOBODY 600" "$(owner "$mine/cap.stk")"

# a directory only root writes: root's, and one line saying how to hand it over
sudo_rec rootdir -o "$roots/cap.stk"
check_eq sudo.root_dir.exit 0 $? "$tmp/rootdir.err"
check_eq sudo.root_dir.owner "0:0 600" "$(owner "$roots/cap.stk")"
check_true sudo.root_dir.says "the chown hint on stderr, got '$(grep "root's" "$tmp/rootdir.err")'" \
	grep -qxF "stkrec: $roots/cap.stk is root's, not nobody's, who could not create it there; 'sudo chown nobody $roots/cap.stk' gives it to them" \
	"$tmp/rootdir.err"

# the user's symlink to a file of root's: refused, the file untouched (a capture is never
# written through a link, as root or as the user)
echo precious >"$roots/target"
ln -s "$roots/target" "$mine/link.stk"
chown -h $NOBODY:$NOBODY "$mine/link.stk"
sudo_rec link -o "$mine/link.stk"
check_eq sudo.symlink.exit 1 $? "$tmp/link.err"
check_eq sudo.symlink.target "precious" "$(cat "$roots/target")"

# without sudo: root's, as before
rec plain -q -o "$mine/plain.stk" -- "$WL/wl_burner" -c 0.3
check_eq sudo.none.exit 0 $? "$tmp/plain.err"
check_eq sudo.none.owner "0:0 600" "$(owner "$mine/plain.stk")"

e2e_done
