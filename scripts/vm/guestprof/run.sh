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
# and the zeroing of init_on_alloc, it is the measure. The report lists
# the shares by symbol, under the system call they ran in, then by source
# line within the functions TWHEEL_GUESTPROF_SITES names (by default the
# arming ioctl), inlined calls unfolded, from the modules' debug info.
# Needs the host's perf (Debian: linux-perf). Report: build/guestprof/report.txt.
. "$(dirname "$0")/../lib.sh"
args=${*:-"-n 100000 -r 8 -a 8 -d 0 -b 0 -k 0"}
perf=$(command -v perf) || die "no perf on the host (apt-get install linux-perf)"
out="$TOP/build/guestprof"; mkdir -p "$out"

log "guestprof: ubench $args"
TWHEEL_GUEST_BINS="$perf" TWHEEL_VM_MEM=4096 TWHEEL_VM_TIMEOUT=1800 \
TWHEEL_GUEST_ENV="clocksource=tsc tsc=reliable TWHEEL_UBENCH=\"$args\" ${TWHEEL_GUESTPROF_SITES:+TWHEEL_GUESTPROF_SITES=$TWHEEL_GUESTPROF_SITES}" \
	"$VM_DIR/run-vm.sh" stock guestprof >/dev/null
cp "$TOP/build/vm/stock-guestprof.log" "$out/guest.log"
"$VM_DIR/extract-files" "$out/guest.log" "$out"
# sites: "COUNT SYMBOL+OFFSET" lines; each with its share of the samples
# and where it is in the source (inlined functions innermost first; the
# offset of a caller's frame is its return address, hence the - 1).
sites() {
	local count site sym off ko base total
	total=$(awk '{ s += $1 } END { print s }' "$out/guestprof-sites.txt")
	head -n 25 "$out/guestprof-sites.txt" | while read -r count site; do
		sym=${site%+*} off=${site#*+} base=
		for ko in "$TOP/build/stock/src/"*.ko; do
			base=$(nm "$ko" | awk -v s="$sym" '$3 == s { print $1 }')
			[ -n "$base" ] && break
		done
		[ -n "$base" ] || continue
		printf '%6d %5.1f%%  %-28s %s\n' "$count" \
			"$(echo "$count $total" | awk '{ print 100 * $1 / $2 }')" "$site" \
			"$(addr2line -f -i -e "$ko" "$(printf '%#x' $((0x$base + off - 1)))" |
			   sed 's|^.*/||' | paste -sd ' ')"
	done
}
{
	echo "# ubench $args"
	grep -o 'RESULT {"kind":"u[a-z]*".*' "$out/guest.log"
	cat "$out/guestprof.txt"
	echo "# samples by place within ${TWHEEL_GUESTPROF_SITES:-twd_ioc_arm_batch}"
	sites
} | tee "$out/report.txt"
