# SPDX-License-Identifier: GPL-2.0
# Shared helpers for scripts/vm/*.sh (sourced, not executed).
set -euo pipefail
VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$VM_DIR/../.." && pwd)
CACHE=${TWHEEL_CACHE:-${HOME:-/root}/.cache/twheel}
mkdir -p "$CACHE"
log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Newest /usr/src/linux-source-*.tar.xz, empty if none (under pipefail a
# failing ls would end the caller silently), and its Debian package version.
ksrc_tarball() { { ls /usr/src/linux-source-*.tar.xz 2>/dev/null || true; } | sort -V | tail -n1; }
ksrc_version() {
	local pkg
	pkg=$(basename "$(ksrc_tarball)" .tar.xz)
	dpkg-query -W -f='${Version}' "$pkg"
}
# Debian's kernels in the rig, by flavour: stock (amd64) and PREEMPT_RT
# (rt-amd64). The image is the one matching the installed headers
# metapackage linux-headers-FLAVOUR.
debian_flavour() {
	case "$1" in
	stock) echo amd64 ;;
	rt) echo rt-amd64 ;;
	*) die "no Debian kernel called '$1' (stock|rt)" ;;
	esac
}
# ABI name of the Debian kernel KERNEL (stock|rt), e.g. 6.1.0-56.
debian_abi() {
	local f
	f=$(debian_flavour "$1")
	dpkg-query -W -f='${Depends}' "linux-headers-$f" 2>/dev/null |
		sed -n "s/.*linux-headers-\([0-9.]*-[0-9]*\)-$f.*/\1/p"
}
# Its release (uname -r) and its headers, the KDIR to build modules against.
debian_release() { echo "$(debian_abi "$1")-$(debian_flavour "$1")"; }
debian_kdir() { echo "/usr/src/linux-headers-$(debian_release "$1")"; }
stock_abi() { debian_abi stock; }
stock_kdir() { debian_kdir stock; }
