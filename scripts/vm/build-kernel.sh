#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# build-kernel.sh [debug|kcsan]: build our kernel (bzImage + tree usable as
# KDIR) into the cache: debug from kernel.config, kcsan from kernel.config
# with kernel-kcsan.config's changes and the kernel's own code left without
# KCSAN's instrumentation (see there). Rebuilt only when the source version
# or the fragment changes. Prints KDIR.
. "$(dirname "$0")/lib.sh"
flavour=${1:-debug}
frag=$(mktemp)
trap 'rm -f "$frag"' EXIT
kargs=()
case $flavour in
debug)	cp "$VM_DIR/kernel.config" "$frag" ;;
kcsan)	{ grep -v -e KASAN -e KMEMLEAK "$VM_DIR/kernel.config"
	  cat "$VM_DIR/kernel-kcsan.config"; } >"$frag"
	kargs=(KCSAN_SANITIZE=n) ;;
*)	die "usage: build-kernel.sh [debug|kcsan]" ;;
esac
src=$("$VM_DIR/kernel-source.sh")
hash=$( { ksrc_version; cat "$frag"; [ ${#kargs[@]} = 0 ] || echo "${kargs[*]}"; } |
	sha256sum | cut -c1-16)
out="$CACHE/kernel-$hash"
if [ -f "$out/arch/x86/boot/bzImage" ] && [ -f "$out/Module.symvers" ]; then
	echo "$out"; exit 0
fi
start=$(date +%s)
tmp="$CACHE/.kernel-$hash.tmp"
rm -rf "$tmp"; mkdir -p "$tmp"
log "building $flavour kernel in $tmp (log: $tmp/build.log)"
mk() { make -C "$src" O="$tmp" ARCH=x86_64 -j"$(nproc)" "${kargs[@]}" "$@" >>"$tmp/build.log" 2>&1 ||
	{ tail -n 40 "$tmp/build.log" >&2; die "make $* failed"; }; }
KCONFIG_ALLCONFIG="$frag" mk allnoconfig
"$VM_DIR/check-config.sh" "$frag" "$tmp/.config"
mk modules_prepare
mk bzImage modules
rm -rf "$out"
mv "$tmp" "$out"
log "$flavour kernel built in $(( $(date +%s) - start ))s"
echo "$out"
