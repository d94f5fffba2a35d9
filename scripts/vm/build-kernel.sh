#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the debug kernel (bzImage + tree usable as KDIR) into the cache;
# rebuilt only when the source version or kernel.config changes. Prints KDIR.
. "$(dirname "$0")/lib.sh"
frag="$VM_DIR/kernel.config"
src=$("$VM_DIR/kernel-source.sh")
hash=$( { ksrc_version; cat "$frag"; } | sha256sum | cut -c1-16)
out="$CACHE/kernel-$hash"
if [ -f "$out/arch/x86/boot/bzImage" ] && [ -f "$out/Module.symvers" ]; then
	echo "$out"; exit 0
fi
start=$(date +%s)
tmp="$CACHE/.kernel-$hash.tmp"
rm -rf "$tmp"; mkdir -p "$tmp"
log "building debug kernel in $tmp (log: $tmp/build.log)"
mk() { make -C "$src" O="$tmp" ARCH=x86_64 -j"$(nproc)" "$@" >>"$tmp/build.log" 2>&1 ||
	{ tail -n 40 "$tmp/build.log" >&2; die "make $* failed"; }; }
KCONFIG_ALLCONFIG="$frag" mk allnoconfig
"$VM_DIR/check-config.sh" "$frag" "$tmp/.config"
mk modules_prepare
mk bzImage modules
rm -rf "$out"
mv "$tmp" "$out"
log "debug kernel built in $(( $(date +%s) - start ))s"
echo "$out"
