#!/bin/sh
# The torch suite, as root inside the Debian 13 guest: install the five
# packages from $1 (no network: python3-torch is in the image), load the
# driver, then run as user spyre: the one-liner of docs/torch.md, the model
# example python3-torch-spyre installs (gpt.py) and test_torch.py.
# Prints TAP (each program's own plan); exits 1 if a check failed.
share=${1:?usage: in-guest.sh SHARE_DIR}
cd "$share" || exit 2
if ! apt-get install -y ./spyre-dkms_*.deb ./libspyre0_*.deb ./libspyre-dev_*.deb \
	./spyre-tools_*.deb ./python3-torch-spyre_*.deb > /tmp/install.log 2>&1; then
	sed 's/^/# /' /tmp/install.log | tail -30
	echo "Bail out! the packages did not install"
	exit 2
fi
modprobe spyre && udevadm settle || { echo "Bail out! the driver did not load"; exit 2; }
t0=$(date +%s)
# docs/torch.md's one-liner, exactly as a user types it.
out=$(su - spyre -c "cd /tmp && python3 -c 'import torch, torch_spyre; x = torch.randn(4, 4).to(\"spyre\"); print((x @ x).cpu())'" 2>&1)
echo "$out" | sed 's/^/  # /'
if echo "$out" | grep -q '^tensor(\[\['; then
	echo "ok 1 - python3 -c 'import torch, torch_spyre; x = torch.randn(4, 4).to(\"spyre\"); print((x @ x).cpu())'"
	rc0=0
else
	echo "not ok 1 - the one-liner printed no tensor"
	rc0=1
fi
echo "1..1"
# The model first: test_torch.py ends by removing a card.
su - spyre -c "cd /tmp && python3 /usr/share/torch-spyre/examples/gpt.py --check --tap" 2>&1
rc1=$?
su - spyre -c "cd /tmp && python3 $share/test_torch.py" 2>&1
rc2=$?
echo "# torch: the Python checks took $(( $(date +%s) - t0 )) s"
[ $rc0 = 0 ] && [ $rc1 = 0 ] && [ $rc2 = 0 ]
