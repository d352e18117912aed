#!/bin/bash
# Build the Debian packages (docs/packages.md) into $SPYRE_BUILD/deb:
# spyre-dkms, libspyre0, libspyre-dev and spyre-tools, version $1 (the
# project's, from libspyre's header; the Makefile passes it).  The tracked
# sources are staged with packaging/debian and a generated changelog, then
# dpkg-buildpackage builds them and lintian checks them.
# usage: build-deb.sh VERSION
set -euo pipefail
. "$(dirname "$0")/common.sh"

version=${1:?usage: build-deb.sh VERSION}
out=$SPYRE_BUILD/deb
stage=$out/spyre-$version

"$SPYRE_TOP/scripts/setup.sh" --deb

rm -rf "$out"
mkdir -p "$stage"
# What git tracks (plus uncommitted changes to it): no build output, no cache.
git -C "$SPYRE_TOP" ls-files -z --cached --others --exclude-standard |
	(cd "$SPYRE_TOP" && xargs -0 cp --parents -t "$stage" 2>/dev/null || true)
cp -r "$SPYRE_TOP/packaging/debian" "$stage/debian"
rev=$(git -C "$SPYRE_TOP" describe --always --dirty 2>/dev/null || echo unknown)
cat > "$stage/debian/changelog" <<CHANGELOG
spyre ($version) unstable; urgency=medium

  * Built from $rev.

 -- Spyre emulation project <spyre-maintainers@spyre.invalid>  $(date -R)
CHANGELOG

(cd "$stage" && dpkg-buildpackage -b -us -uc -j"$(nproc)") > "$out/build.log" 2>&1 || {
	echo "build-deb: dpkg-buildpackage failed; the end of $out/build.log:" >&2
	tail -40 "$out/build.log" >&2
	exit 1
}
rm -rf "$stage"
ls -1 "$out"/*.deb
if command -v lintian > /dev/null; then
	# Findings are reported, not fatal: docs/packages.md lists the known ones.
	lintian --tag-display-limit 0 "$out"/*.changes | tee "$out/lintian.log" || true
fi
