#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mkinitramfs.sh KERNEL OUT.cpio.gz: busybox + build/KERNEL/src/**/*.ko under
# /lib/twheel + build/user/{bin,selftests} + guest scripts under /tests;
# TWHEEL_GUEST_BINS: more of the host's programs for /bin, with the shared
# libraries they load (e.g. perf for ../guestprof).
. "$(dirname "$0")/lib.sh"
kernel=$1 out=$2
bb=$(command -v busybox || echo /bin/busybox)
file -L "$bb" | grep -q 'statically linked' || die "$bb is not static (apt-get install busybox-static)"
root=$(mktemp -d)
chmod 755 "$root"   # mktemp makes it 0700: unprivileged tests need /
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,lib/twheel,bin/selftests,tests}
cp "$bb" "$root/bin/busybox"
cp "$VM_DIR/guest/init" "$root/init"
cp "$VM_DIR"/guest/*.sh "$root/tests/"
find "$TOP/build/$kernel/src" -name '*.ko' -exec cp {} "$root/lib/twheel/" \; 2>/dev/null || true
cp "$TOP"/build/user/bin/* "$root/bin/" 2>/dev/null || true
cp "$TOP"/build/user/selftests/* "$root/bin/selftests/" 2>/dev/null || true
for prog in ${TWHEEL_GUEST_BINS:-}; do
	cp "$prog" "$root/bin/"
	for lib in $(ldd "$prog" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done
chmod +x "$root/init" "$root"/tests/*.sh
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
