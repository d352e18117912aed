#!/bin/sh
# The torch suite, as root inside the Debian 13 guest: install the five
# packages from $1 (no network: python3-torch is in the image), load the
# driver, then run test_torch.py and the model example python3-torch-spyre installs (gpt.py) as user spyre.
# Prints TAP (test_torch.py's, then the model's); exits 1 if a check failed.
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
# The model first: test_torch.py ends by removing a card.
su - spyre -c "cd /tmp && python3 /usr/share/torch-spyre/examples/gpt.py --check --tap" 2>&1
rc1=$?
su - spyre -c "cd /tmp && python3 $share/test_torch.py" 2>&1
rc2=$?
echo "# torch: the Python checks took $(( $(date +%s) - t0 )) s"
[ $rc1 = 0 ] && [ $rc2 = 0 ]
