#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run.sh [burst|cost] [N]: instructions per timer, twheel against
# timer_list, counted rather than timed.
#
# burst (default): of a burst of N (default 1M) timers due at one instant:
# arm, fire and cancel_sync of each. cost: of an arm, a modify or a cancel
# (their mean) at random deadlines up to an hour, N (default 100k) timers
# pending, twheel with absolute deadlines (twheel-abs) as in the cost runs.
#
# Three boots of Debian's 6.1 kernel under the tb-count plugin: one with the
# work of twheel, one of timer_list, one of neither (3 rounds each, the rest
# of twheel_bench cut short, the same in all three). The guest's
# instructions, by kernel symbol, in a boot minus the boot without, over the
# number of timers or operations, are what one cost. Under TCG the time of
# an operation follows its instruction count (and the translation blocks it
# crosses) far more than the cache effects of real hardware; unlike a time,
# the count does not depend on the host's load.
# Report: build/insns/WHAT/report.md.
. "$(dirname "$0")/../lib.sh"
what=${1:-burst} rounds=3
case $what in
burst)	n=${2:-1000000} facs="none:0 twheel:1 timer_list:2" ;;
cost)	n=${2:-100000} facs="none:0 twheel:8 timer_list:2" ;;
*)	die "usage: run.sh [burst|cost] [N]" ;;
esac
out="$TOP/build/insns/$what"; mkdir -p "$out"
plugin="$TOP/build/insns/tb-count.so"
cc -O2 -Wall -shared -fPIC -o "$plugin" "$VM_DIR/insns/tb-count.c"

for run in $facs; do
	name=${run%%:*} mask=${run##*:}
	log "insns: $what of $name"
	TWHEEL_QEMU_ARGS="-plugin $plugin,out=$out/$name.tb" \
	TWHEEL_VM_MEM=4096 TWHEEL_VM_TIMEOUT=1800 \
	TWHEEL_GUEST_ENV="clocksource=tsc tsc=reliable TWHEEL_INSNS_WHAT=$what TWHEEL_INSNS_FACS=$mask TWHEEL_INSNS_N=$n TWHEEL_INSNS_ROUNDS=$rounds" \
		"$VM_DIR/run-vm.sh" stock insns >/dev/null
	cp "$TOP/build/vm/stock-insns.log" "$out/$name.log"
done
python3 "$VM_DIR/insns/report.py" --what "$what" --timers $((n * rounds)) "$out" |
	tee "$out/report.md"
