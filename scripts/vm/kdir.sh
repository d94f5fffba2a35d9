#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kdir.sh debug|stock: print the kernel build dir to build modules against.
. "$(dirname "$0")/lib.sh"
case "${1:-}" in
debug) exec "$VM_DIR/build-kernel.sh" ;;
stock) d=$(stock_kdir); [ -d "$d" ] || die "missing $d"; echo "$d" ;;
*) die "usage: kdir.sh debug|stock" ;;
esac
