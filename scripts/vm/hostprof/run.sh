#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# run.sh [N]: where the host's time goes while a burst of N (default 1M)
# timers fires, twheel against timer_list.
#
# Two boots of Debian's 6.1 kernel, one with twheel's bursts, one with
# timer_list's (5 rounds each, the rest of twheel_bench cut short), QEMU
# under the host's perf. The first 120 ms of busy time after each burst's
# idle wait is its fire; its samples, sorted into QEMU's translated code,
# QEMU's own code (helpers, softmmu), its execution loop and the host
# kernel, times the burst's time per callback, say what a callback costs
# the host in each. It complements run.sh of ../insns, which counts the
# guest's instructions: two paths with the same count can differ in time
# by the translated code's loads and stores, or by the interrupts and
# timer programming the guest asks QEMU to emulate.
# Needs the host's perf (Debian: linux-perf). Report: build/hostprof/report.md.
. "$(dirname "$0")/../lib.sh"
n=${1:-1000000} rounds=5
command -v perf >/dev/null || die "no perf on the host (apt-get install linux-perf)"
out="$TOP/build/hostprof"; mkdir -p "$out"

for run in twheel:1 timer_list:2; do
	name=${run%%:*} mask=${run##*:}
	log "hostprof: bursts of $name"
	rm -f "$out/$name.data"
	(
		pid=
		for _ in $(seq 1200); do
			pid=$(pgrep -f '^qemu-system-x86_64.*stock-bench') && break
			sleep 0.5
		done
		[ -n "$pid" ] || exit 0
		# Its vCPU threads exist once it runs: perf -p follows those.
		sleep 3
		perf record -q -F 4999 -o "$out/$name.data" -p "${pid%%$'\n'*}" \
			>/dev/null 2>&1
	) &
	TWHEEL_VM_MEM=4096 TWHEEL_VM_TIMEOUT=1800 \
	TWHEEL_GUEST_ENV="clocksource=tsc tsc=reliable log_buf_len=4M TWHEEL_BENCH_ONLY=kernel TWHEEL_BENCH=\"rounds=$rounds n_list=1000 cost_facs=0 burst_list=$n burst_facs=$mask lat_n=10 sparse_n=1 flood_n=0 wake_ms=1 slack_list=0 slack_n=0\"" \
		"$VM_DIR/run-vm.sh" stock bench >/dev/null
	wait
	cp "$TOP/build/vm/stock-bench.log" "$out/$name.log"
	perf script -i "$out/$name.data" -F tid,time,ip,sym,dso \
		>"$out/$name.txt" 2>/dev/null
done
python3 "$VM_DIR/hostprof/report.py" "$out" "$n" | tee "$out/report.md"
