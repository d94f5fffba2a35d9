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
# Debian's kernels in the rig: stock (amd64) and PREEMPT_RT (rt-amd64) of
# the default 6.1, and stock612 and rt612, the same flavours of the 6.12 LTS
# kernel that Debian 12 also ships. Each is the one matching the installed
# headers metapackage (debian_meta).
debian_flavour() {
	case "$1" in
	stock | stock612) echo amd64 ;;
	rt | rt612) echo rt-amd64 ;;
	*) die "no Debian kernel called '$1' (stock|rt|stock612|rt612)" ;;
	esac
}
# The headers metapackage of KERNEL, e.g. linux-headers-6.12-rt-amd64.
debian_meta() {
	case "$1" in
	*612) echo "linux-headers-6.12-$(debian_flavour "$1")" ;;
	*) echo "linux-headers-$(debian_flavour "$1")" ;;
	esac
}
# ABI name of the Debian kernel KERNEL, e.g. 6.1.0-56 or 6.12.117+deb12.
debian_abi() {
	local f
	f=$(debian_flavour "$1")
	dpkg-query -W -f='${Depends}' "$(debian_meta "$1")" 2>/dev/null |
		sed -n "s/.*linux-headers-\([0-9][0-9.]*\(-[0-9]*\|+deb[0-9]*\)\)-$f .*/\1/p"
}
# Its release (uname -r) and its headers, the KDIR to build modules against.
debian_release() { echo "$(debian_abi "$1")-$(debian_flavour "$1")"; }
debian_kdir() { echo "/usr/src/linux-headers-$(debian_release "$1")"; }
stock_abi() { debian_abi stock; }
stock_kdir() { debian_kdir stock; }
