#!/bin/sh
# make bench's torch rows, as root inside the Debian 13 guest: install the
# five packages from $1, then, as user spyre, the dispatch overhead
# (dispatch_bench.c built here with pkg-config, dispatch_bench.py) and the
# GPT example's eager and compiled figures (gpt.py --json).
share=${1:?usage: bench-in-guest.sh SHARE_DIR}
cd "$share" || exit 2
apt-get install -y ./spyre-dkms_*.deb ./libspyre0_*.deb ./libspyre-dev_*.deb \
	./spyre-tools_*.deb ./python3-torch-spyre_*.deb > /tmp/install.log 2>&1 ||
	{ tail -30 /tmp/install.log; exit 2; }
modprobe spyre && udevadm settle || exit 2
cc -O2 -o /tmp/dispatch_bench "$share/dispatch_bench.c" $(pkg-config --cflags --libs spyre) || exit 2
c_us=$(su spyre -c "/tmp/dispatch_bench 200") || exit 2
su - spyre -c "python3 $share/dispatch_bench.py $c_us 200" || exit 2
su - spyre -c "python3 /usr/share/torch-spyre/examples/gpt.py --json --rounds 5" || exit 2
