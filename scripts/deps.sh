#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# deps.sh TARGET [KERNEL]: make sure the Debian 12 packages that `make TARGET` needs
# are installed (TARGET: run, bench, stress, check, ci; KERNEL, for bench:
# the kernel it boots, stock by default, as BENCH_KERNEL); install the
# missing ones (apt-get update, then apt-get install) when root with apt,
# else stop with one line naming them and the command that installs them.
# deps.sh --list TARGET prints the packages. This file is the one list.
set -euo pipefail

# Every VM run: modules against a kernel, static userspace binaries (the
# selftests take kselftest_harness.h from linux-source; gcc-multilib builds
# the 32-bit ring client), a busybox initramfs and QEMU.
VM="build-essential linux-source-6.1 qemu-system-x86 busybox-static cpio
    gzip file rsync gcc-multilib"
# Debian's kernels: their headers (the images come from apt-get download),
# 6.1 and the 6.12 LTS, each stock and PREEMPT_RT (scripts/vm/lib.sh).
STOCK="linux-headers-amd64"
RT="linux-headers-rt-amd64"
STOCK612="linux-headers-6.12-amd64"
RT612="linux-headers-6.12-rt-amd64"
# The debug and KCSAN kernels, built from linux-source-6.1.
DEBUG="flex bison bc libelf-dev libssl-dev dwarves xz-utils perl kmod"
# ubench's io_uring contender (a static -luring).
URING="liburing-dev"
# The static checks (checkpatch, sparse, docs, packaging) and tap-summary.
STATIC="sparse python3 python3-docutils perl kmod dkms pkgconf"

# The packages of one kernel of scripts/vm.
kernel_pkgs() {
	case "$1" in
	stock) echo "$STOCK" ;;
	rt) echo "$RT" ;;
	stock612) echo "$STOCK612" ;;
	rt612) echo "$RT612" ;;
	debug | kcsan) echo "$DEBUG" ;;
	*) echo "deps.sh: no kernel '$1' (stock, rt, stock612, rt612, debug, kcsan)" >&2
	   return 1 ;;
	esac
}

pkgs_for() {
	case "$1" in
	run) echo "$VM $STOCK" ;;
	bench) k=$(kernel_pkgs "${2:-stock}") && echo "$VM $k python3 gnuplot-nox $URING" ;;
	stress) echo "$VM $STOCK $DEBUG" ;;
	check | ci) echo "$VM $STOCK $RT $STOCK612 $RT612 $DEBUG $STATIC $URING" ;;
	*) echo "deps.sh: no target '$1' (run, bench, stress, check, ci)" >&2
	   return 1 ;;
	esac
}

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}

list=0
if [ "${1:-}" = --list ]; then list=1; shift; fi
target=${1:?usage: deps.sh [--list] run|bench|stress|check|ci [KERNEL]}
pkgs=$(pkgs_for "$target" "${2:-}" | tr -s ' \n' '\n' | sort -u | tr '\n' ' ')
pkgs=${pkgs% }
if [ $list = 1 ]; then echo "$pkgs"; exit 0; fi

missing=""
for p in $pkgs; do
	installed "$p" || missing+="${missing:+ }$p"
done
[ -n "$missing" ] || exit 0

# One line, whatever stops us: what is missing, why, and the command.
stop() {
	echo "deps: make $target needs $missing ($1); install them with: $2 install $missing" >&2
	exit 1
}
command -v apt-get >/dev/null && command -v dpkg-query >/dev/null ||
	stop "no apt here: Debian 12 packages" "apt-get"
[ "$(id -u)" = 0 ] || stop "not installed, and not root to install them" "sudo apt-get"
echo "deps: make $target: installing $missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt="apt-get -q -o DPkg::Lock::Timeout=600"
{ $apt update && $apt install -y --no-install-recommends $missing; } >&2 ||
	stop "apt-get failed, above" "apt-get"
