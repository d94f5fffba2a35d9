#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# debian-kernel.sh [stock|rt|stock612|rt612]: put the vmlinuz of the Debian
# kernel (6.1 or 6.12, stock or PREEMPT_RT) matching the installed headers
# metapackage (lib.sh: debian_meta) into the cache (downloaded, never
# installed); print its path.
. "$(dirname "$0")/lib.sh"
kernel=${1:-stock}
abi=$(debian_abi "$kernel")
meta=$(debian_meta "$kernel")
[ -n "$abi" ] || die "cannot tell the version of $meta (apt-get install $meta)"
pkg="linux-image-$(debian_release "$kernel")"
dst="$CACHE/$kernel-$abi/vmlinuz"
if [ ! -f "$dst" ]; then
	tmp=$(mktemp -d "$CACHE/.$kernel.XXXXXX"); chmod 755 "$tmp"
	(cd "$tmp" && apt-get download -q "$pkg" >&2) ||
		die "apt-get download $pkg failed"
	dpkg-deb -x "$tmp"/linux-image-*.deb "$tmp/x"
	mkdir -p "$(dirname "$dst")"
	mv "$tmp"/x/boot/vmlinuz-* "$dst"
	rm -rf "$tmp"
fi
echo "$dst"
