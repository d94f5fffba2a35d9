#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run.sh [UBENCH OPTIONS]: where the guest's time goes in a userspace
# benchmark, by kernel symbol. By default, /dev/twheel's batch arming:
# 8 rounds of 100k timers in ioctls of 1024 (ubench -a 8).
#
# One boot of Debian's 6.1 kernel with the host's perf in the initramfs,
# ubench under perf record, sampling the CPU clock (an hrtimer: under TCG
# no hardware counters), call graphs included. What runs with interrupts
# off is charged to where they come back on (an unlock, a local_irq_enable),
# so this profile cannot look inside the wheel's locked sections: for those,
# ../insns counts instructions and ../hostprof the host's time. Where time
# goes with interrupts on, as in the ioctl's own passes, the slab allocator
# and the zeroing of init_on_alloc, it is the measure.
# Needs the host's perf (Debian: linux-perf). Report: build/guestprof/report.txt.
. "$(dirname "$0")/../lib.sh"
args=${*:-"-n 100000 -r 8 -a 8 -d 0 -b 0 -k 0"}
perf=$(command -v perf) || die "no perf on the host (apt-get install linux-perf)"
out="$TOP/build/guestprof"; mkdir -p "$out"

log "guestprof: ubench $args"
TWHEEL_GUEST_BINS="$perf" TWHEEL_VM_MEM=4096 TWHEEL_VM_TIMEOUT=1800 \
TWHEEL_GUEST_ENV="clocksource=tsc tsc=reliable TWHEEL_UBENCH=\"$args\"" \
	"$VM_DIR/run-vm.sh" stock guestprof >/dev/null
cp "$TOP/build/vm/stock-guestprof.log" "$out/guest.log"
"$VM_DIR/extract-files" "$out/guest.log" "$out"
{
	echo "# ubench $args"
	grep -o 'RESULT {"kind":"u[a-z]*".*' "$out/guest.log"
	cat "$out/guestprof.txt"
} | tee "$out/report.txt"
