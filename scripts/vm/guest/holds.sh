# SPDX-License-Identifier: GPL-2.0
# mode=holds: make bench's second boot, one vCPU under QEMU's -icount
# shift=0, whose clock counts instructions (1 ns each): the wheel's lock
# holds of twheel_load_test's burst of 1M /dev/twheel timers, in the work
# they do, without the host's preemption of the vCPU. Three rounds.
. /tests/lib.sh

holds() {
	[ "$(nproc)" = 1 ] || { echo "needs a guest of one vCPU"; return 1; }
	load_rounds holds
}

step "load modules" load twheel
step "load twheel-dev" load twheel-dev
step "holds, 1M timers, instruction time" holds
step "unload modules" unload_all
finish
