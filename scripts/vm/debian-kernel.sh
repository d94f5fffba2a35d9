#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# debian-kernel.sh [stock|rt]: put the vmlinuz of the Debian kernel (stock or
# PREEMPT_RT) matching the installed linux-headers-{amd64,rt-amd64} into the
# cache (downloaded, never installed); print its path.
. "$(dirname "$0")/lib.sh"
kernel=${1:-stock}
flavour=$(debian_flavour "$kernel")
abi=$(debian_abi "$kernel")
[ -n "$abi" ] || die "cannot tell the version of linux-headers-$flavour (apt-get install linux-headers-$flavour)"
pkg="linux-image-$abi-$flavour"
# stock keeps its old cache name, stock-ABI.
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
