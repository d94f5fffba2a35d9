#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kdir.sh debug|kcsan|stock|rt|stock612|rt612: print the kernel build dir to build
# modules against.
. "$(dirname "$0")/lib.sh"
case "${1:-}" in
debug | kcsan) exec "$VM_DIR/build-kernel.sh" "$1" ;;
stock | rt | stock612 | rt612)
	d=$(debian_kdir "$1")
	[ -d "$d" ] || die "missing $d (apt-get install $(debian_meta "$1"))"
	echo "$d" ;;
*) die "usage: kdir.sh debug|kcsan|stock|rt|stock612|rt612" ;;
esac
