# SPDX-License-Identifier: GPL-2.0
# mode=bench: run the benchmarks; result files go to the host between
# BEGIN/END markers (emit_file) and land in bench/results/.
# TWHEEL_BENCH (twheel_bench.ko's parameters), TWHEEL_UBENCH (ubench's
# options) and TWHEEL_BENCH_ONLY come from the kernel command line, e.g.:
#   make bench TWHEEL_GUEST_ENV='TWHEEL_BENCH="rounds=3 n_list=1000"'
. /tests/lib.sh

# The guest's clocksource and command line, for the report's env record.
guest_env() {
	local cs
	cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
	echo "RESULT {\"kind\":\"guest\",\"clocksource\":\"$cs\",\"cmdline\":\"$(sed 's/"//g' /proc/cmdline)\"}"
}

bench_kernel() {
	have twheel_bench || { echo "no twheel_bench.ko"; return 0; }
	dmesg -c >/dev/null
	load twheel_bench "${TWHEEL_BENCH:-}" || return 1
	{ guest_env; dmesg -c; } >/tmp/kbench.txt
	cat /tmp/kbench.txt
	emit_file /tmp/kbench.txt
}

bench_user() {
	command -v ubench >/dev/null || { echo "no ubench binary"; return 0; }
	# shellcheck disable=SC2086 # options, split on purpose
	ubench ${TWHEEL_UBENCH:-} >/tmp/ubench.txt || return 1
	cat /tmp/ubench.txt; emit_file /tmp/ubench.txt
	# How the wheels ran it (slices, backlogs): for the log only.
	cat /sys/kernel/debug/twheel/stats
}

# A burst of 1M /dev/twheel timers against a task pinned to their CPU:
# the longest interrupts-off stretch and the task's longest gap.
# Three rounds: each takes about a minute under TCG.
bench_load() {
	[ -x /bin/selftests/twheel_load_test ] || { echo "no twheel_load_test"; return 0; }
	load_rounds load
}

# TWHEEL_BENCH_ONLY (kernel, user or load) runs one part alone.
only() { [ -z "${TWHEEL_BENCH_ONLY:-}" ] || [ "$TWHEEL_BENCH_ONLY" = "$1" ]; }

step "load modules" load twheel
have twheel-dev && step "load twheel-dev" load twheel-dev
only kernel && step "kernel bench" bench_kernel
only user && step "userspace bench" bench_user
only load && have twheel-dev && step "load bench" bench_load
step "unload modules" unload_all
finish
