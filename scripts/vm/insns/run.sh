#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run.sh [N]: instructions per timer of a burst of N (default 1M) timers due
# at one instant, twheel against timer_list, counted rather than timed.
#
# Three boots of Debian's 6.1 kernel under the tb-count plugin: bursts of
# twheel, of timer_list, and of neither (3 rounds each, the rest of
# twheel_bench cut short, the same in all three). The guest's instructions,
# by kernel symbol, in a burst boot minus the boot without, over the number
# of burst timers, are what one timer of the burst cost: arm, fire and
# cancel_sync. Under TCG the time of a fire follows its instruction count
# (and the translation blocks it crosses) far more than the cache effects of
# real hardware; unlike a time, the count does not depend on the host's load.
# Report: build/insns/report.md.
. "$(dirname "$0")/../lib.sh"
n=${1:-1000000} rounds=3
out="$TOP/build/insns"; mkdir -p "$out"
plugin="$out/tb-count.so"
cc -O2 -Wall -shared -fPIC -o "$plugin" "$VM_DIR/insns/tb-count.c"

for run in none:0 twheel:1 timer_list:2; do
	name=${run%%:*} facs=${run##*:}
	log "insns: bursts of $name"
	TWHEEL_QEMU_ARGS="-plugin $plugin,out=$out/$name.tb" \
	TWHEEL_VM_MEM=4096 TWHEEL_VM_TIMEOUT=1800 \
	TWHEEL_GUEST_ENV="clocksource=tsc tsc=reliable TWHEEL_INSNS_FACS=$facs TWHEEL_INSNS_N=$n TWHEEL_INSNS_ROUNDS=$rounds" \
		"$VM_DIR/run-vm.sh" stock insns >/dev/null
	cp "$TOP/build/vm/stock-insns.log" "$out/$name.log"
done
python3 "$VM_DIR/insns/report.py" --timers $((n * rounds)) "$out" | tee "$out/report.md"
