#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Put the vmlinuz of the Debian kernel matching the installed linux-headers
# into the cache (downloaded, never installed); print its path.
. "$(dirname "$0")/lib.sh"
abi=$(stock_abi)
[ -n "$abi" ] || die "cannot tell the version of linux-headers-amd64"
dst="$CACHE/stock-$abi/vmlinuz"
if [ ! -f "$dst" ]; then
	tmp=$(mktemp -d "$CACHE/.stock.XXXXXX"); chmod 755 "$tmp"
	(cd "$tmp" && apt-get download -q "linux-image-$abi-amd64" >&2) ||
		die "apt-get download linux-image-$abi-amd64 failed"
	dpkg-deb -x "$tmp"/linux-image-*.deb "$tmp/x"
	mkdir -p "$(dirname "$dst")"
	mv "$tmp"/x/boot/vmlinuz-* "$dst"
	rm -rf "$tmp"
fi
echo "$dst"
