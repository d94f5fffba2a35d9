# SPDX-License-Identifier: GPL-2.0
# Shared helpers for scripts/vm/*.sh (sourced, not executed).
set -euo pipefail
VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$VM_DIR/../.." && pwd)
CACHE=${TWHEEL_CACHE:-${HOME:-/root}/.cache/twheel}
mkdir -p "$CACHE"
log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Newest /usr/src/linux-source-*.tar.xz and its Debian package version.
ksrc_tarball() { ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n1; }
ksrc_version() {
	local pkg
	pkg=$(basename "$(ksrc_tarball)" .tar.xz)
	dpkg-query -W -f='${Version}' "$pkg"
}
# ABI name of the Debian kernel matching linux-headers-amd64, e.g. 6.1.0-56.
stock_abi() {
	dpkg-query -W -f='${Depends}' linux-headers-amd64 |
		sed -n 's/.*linux-headers-\([0-9.]*-[0-9]*\)-amd64.*/\1/p'
}
stock_kdir() { echo "/usr/src/linux-headers-$(stock_abi)-amd64"; }
