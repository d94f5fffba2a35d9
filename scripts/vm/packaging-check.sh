#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# packaging-check.sh: install twheel as a user or a package would, against
# Debian's stock headers, but only into build/packaging: `make install`
# (modules, depmod, API headers, Module.symvers) staged with
# INSTALL_MOD_PATH and PREFIX; an out-of-tree client module built against
# the installed API with KBUILD_EXTRA_SYMBOLS; and, if dkms is installed,
# `make dkms-build` with a private dkms tree, source tree and install tree
# and a throwaway signing key. Nothing outside build/packaging changes.
. "$(dirname "$0")/lib.sh"
kdir=$(debian_kdir stock) krel=$(debian_release stock)
[ -d "$kdir" ] || die "missing $kdir (apt-get install linux-headers-amd64)"
out="$TOP/build/packaging" src="$TOP/build/packaging/src"
root="$out/root"
fail=0
bad() { log "FAIL: $*"; fail=1; }
has() { [ -f "$1" ] && log "ok: $1" || bad "missing $1"; }

rm -rf "$out"; mkdir -p "$src"
rsync -a --exclude=/build --exclude=/.git --exclude='*.o' --exclude='*.ko' \
	--exclude='.*.cmd' --exclude='*.mod' --exclude='*.mod.c' \
	--exclude=modules.order --exclude=Module.symvers "$TOP/" "$src/"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$src/dkms.conf")
[ -n "$ver" ] || die "no PACKAGE_VERSION in dkms.conf"
sdk="$root/usr/src/twheel-$ver"
log "twheel $ver for $krel ($kdir)"

# make, then make install into a staging root.
make -C "$src" KDIR="$kdir" module >"$out/build.log" 2>&1 ||
	{ cat "$out/build.log"; die "make failed"; }
make -C "$src" KDIR="$kdir" INSTALL_MOD_PATH="$root" PREFIX="$root/usr" \
	install >"$out/install.log" 2>&1 || { cat "$out/install.log"; die "make install failed"; }
cat "$out/install.log"
mods="$root/lib/modules/$krel"
for m in twheel twheel-dev; do
	f=$(find "$mods" -name "$m.ko" | head -n1)
	has "${f:-$mods/.../$m.ko}"
	[ -z "$f" ] || [ "$(modinfo -F vermagic "$f" | cut -d' ' -f1)" = "$krel" ] ||
		bad "$m.ko: vermagic is not $krel"
done
# depmod ran on the staged tree, and the modules-load.d entry resolves.
load=$(grep -v '^#' "$TOP/packaging/twheel.conf")
deps=$(modprobe -d "$root" -S "$krel" --show-depends $load 2>&1)
echo "$deps"
echo "$deps" | grep -q '/twheel\.ko' && echo "$deps" | grep -q '/twheel-dev\.ko' ||
	bad "modprobe --show-depends $load: not twheel then twheel-dev"
has "$sdk/twheel.h"
has "$sdk/include/uapi/linux/twheel.h"
has "$sdk/$krel/Module.symvers"
grep -q '	twheel_add	' "$sdk/$krel/Module.symvers" 2>/dev/null ||
	bad "twheel_add is not in the installed Module.symvers"
# The userspace library: a client built with pkg-config's flags alone.
has "$root/usr/include/twheel/libtwheel.h"
has "$root/usr/lib/pkgconfig/libtwheel.pc"
cflags=$(PKG_CONFIG_PATH="$root/usr/lib/pkgconfig" pkg-config --cflags libtwheel) ||
	bad "pkg-config --cflags libtwheel failed"
cc $cflags -Wall -Werror -o "$out/twheel_epoll" "$TOP/examples/twheel_epoll.c" ||
	bad "examples/twheel_epoll.c does not build with pkg-config --cflags libtwheel"

# Another out-of-tree module, built only from what was installed.
client="$out/client"
mkdir -p "$client"
cp "$TOP/examples/twheel_ttl.c" "$client/"
printf 'obj-m := twheel_ttl.o\nccflags-y := -I%s -I%s/include\n' "$sdk" "$sdk" >"$client/Kbuild"
make -C "$kdir" M="$client" KBUILD_EXTRA_SYMBOLS="$sdk/$krel/Module.symvers" \
	modules >"$out/client.log" 2>&1 || { cat "$out/client.log"; bad "client build failed"; }
if grep -E 'WARNING|warning:' "$out/client.log"; then
	bad "client build warned (undefined twheel symbols?)"
elif [ "$(modinfo -F depends "$client/twheel_ttl.ko" 2>/dev/null)" = twheel ]; then
	log "ok: a client built against $sdk depends on twheel"
else
	bad "client twheel_ttl.ko does not depend on twheel"
fi

# DKMS, if installed: add and build against the stock headers, privately.
if command -v dkms >/dev/null; then
	d="$out/dkms"; mkdir -p "$d/tree" "$d/src" "$d/inst"
	# dkms signs with these, generating them if missing: not the system's.
	export mok_signing_key="$d/mok.key" mok_certificate="$d/mok.pub"
	dk="dkms --dkmstree $d/tree --sourcetree $d/src --installtree $d/inst"
	if make -C "$src" dkms-build DKMS="$dk --kernelsourcedir $kdir" \
		DKMS_SRCTREE="$d/src" DKMS_KERNEL="$krel" >"$out/dkms.log" 2>&1; then
		cat "$out/dkms.log"
		built=$(ls "$d/tree/twheel/$ver/$krel/"*/module/ 2>/dev/null | sort | tr '\n' ' ')
		[ "$built" = "twheel-dev.ko twheel.ko " ] && log "ok: dkms built $built" ||
			bad "dkms built '$built', not twheel.ko and twheel-dev.ko only"
		$dk status twheel
	else
		cat "$out/dkms.log" "$d/tree/twheel/$ver/build/make.log" 2>/dev/null
		bad "make dkms-build failed"
	fi
else
	log "dkms not installed: dkms build not tested (apt-get install dkms)"
fi
[ $fail = 0 ] || die "packaging check failed"
log "packaging: all good"
