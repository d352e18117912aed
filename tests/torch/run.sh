#!/bin/bash
# The torch suite, host side (docs/torch.md): make deb's four packages and
# make torch's python3-torch-spyre go into the Debian 13 guest (two cards)
# the way a user installs them, then tests/torch/test_torch.py and the
# model example run there as user spyre, in one Python process each.
# Prints TAP.  usage: run.sh BUILD_DIR
set -uo pipefail
B=$(cd "$1" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)

"$top/scripts/build-debian-guest.sh" > "$B/debian-guest.log" 2>&1 || {
	tail -20 "$B/debian-guest.log" | sed 's/^/# /'
	echo "Bail out! the Debian guest image could not be built ($B/debian-guest.log)"
	exit 1
}
debs=$(ls "$B"/deb/*.deb "$B"/deb-torch/python3-torch-spyre_*.deb 2>/dev/null | grep -v -- '-dbgsym_')
[ "$(echo "$debs" | grep -c .)" = 5 ] || {
	echo "Bail out! $B/deb and $B/deb-torch do not hold the five packages (make deb torch)"
	exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
share=$work/share
mkdir -p "$share"
# shellcheck disable=SC2086
cp $debs "$top"/tests/torch/in-guest.sh "$top"/tests/torch/test_torch.py \
	"$share/"
chmod -R a+rX "$work"

start=$(date +%s)
"$top/scripts/distro-run.sh" --cards 2 --share "$share" --timeout 2400 -- "sh $share/in-guest.sh $share"
rc=$?
# 1: a check failed (its TAP says which); anything else: the guest did not finish.
[ $rc = 0 ] || [ $rc = 1 ] || echo "Bail out! the Debian guest's in-guest.sh exited with status $rc"
echo "# torch: $(( $(date +%s) - start )) s in the guest"
