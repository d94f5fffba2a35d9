# SPDX-License-Identifier: GPL-2.0
# mode=load, make stress's first boot (Issue 11): 4M timers from an
# unprivileged user on 4 files, with one deadline and spread over a second,
# at a 1 ms and a 100 us tick, next to a task pinned to their CPU. On the
# stock kernel (the debug one arms and reads 4M timers too slowly for the
# test's 15 minutes), one vCPU under QEMU's -icount shift=0, so that
# twheel_load_test checks the design's bounds: no lock hold over a tenth of
# a tick, the task never without its CPU for more than 2 ticks.
. /tests/lib.sh

load_4m() {
	local tick=$1 rc=0
	load twheel "tick_us=$tick" && load twheel-dev || { unload_all; return 1; }
	TWHEEL_LOAD_N=4000000 TWHEEL_LOAD_FILES=4 \
		/bin/selftests/twheel_load_test || rc=1
	unload_all || rc=1
	return $rc
}

step "load: 4M timers, a pinned task, 1 ms tick" load_4m 1000
step "load: 4M timers, a pinned task, 100 us tick" load_4m 100
finish
