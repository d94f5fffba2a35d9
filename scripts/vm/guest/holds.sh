# SPDX-License-Identifier: GPL-2.0
# mode=holds: one vCPU under QEMU's -icount shift=0, whose clock counts
# instructions (1 ns each): twheel_load_test's burst of 1M /dev/twheel
# timers next to a pinned task, its wheel's lock holds and the task's gaps
# as long as the work done in them, without the host's preemption of the
# vCPU. Three rounds. make bench's second boot, and make vm-icount-check.
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
