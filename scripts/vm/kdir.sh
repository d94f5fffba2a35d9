#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kdir.sh debug|stock|rt: print the kernel build dir to build modules against.
. "$(dirname "$0")/lib.sh"
case "${1:-}" in
debug) exec "$VM_DIR/build-kernel.sh" ;;
stock | rt)
	d=$(debian_kdir "$1")
	[ -d "$d" ] || die "missing $d (apt-get install linux-headers-$(debian_flavour "$1"))"
	echo "$d" ;;
*) die "usage: kdir.sh debug|stock|rt" ;;
esac
