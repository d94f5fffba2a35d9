#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Extract the Debian linux-source tarball into the cache (once); print its path.
. "$(dirname "$0")/lib.sh"
tarball=$(ksrc_tarball)
[ -n "$tarball" ] || die "no /usr/src/linux-source-*.tar.xz (apt-get install linux-source)"
dst="$CACHE/src-$(ksrc_version)"
if [ ! -f "$dst/Makefile" ]; then
	log "extracting $tarball"
	tmp=$(mktemp -d "$CACHE/.src.XXXXXX")
	tar -C "$tmp" --strip-components=1 -xf "$tarball"
	rm -rf "$dst"
	mv "$tmp" "$dst"
fi
echo "$dst"
