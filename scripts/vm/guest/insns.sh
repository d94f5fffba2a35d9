# SPDX-License-Identifier: GPL-2.0
# mode=insns: for scripts/vm/insns/run.sh, which counts the instructions the
# guest runs, twheel_bench's bursts (TWHEEL_INSNS_WHAT=burst) or cost rounds
# (=cost) of the facilities TWHEEL_INSNS_FACS (its burst_facs or cost_facs;
# 0 for none), little else. Then the kernel's text symbols, to name where
# they ran.
. /tests/lib.sh

work() {
	local n=${TWHEEL_INSNS_N:-1000000} facs=${TWHEEL_INSNS_FACS:-7}
	local args="rounds=${TWHEEL_INSNS_ROUNDS:-3} lat_n=10 sparse_n=1 flood_n=0 wake_ms=1 slack_n=0"

	if [ "${TWHEEL_INSNS_WHAT:-burst}" = cost ]; then
		args="$args n_list=$n cost_facs=$facs burst_facs=0"
	else
		args="$args burst_list=$n burst_facs=$facs n_list=1000"
	fi
	load twheel_bench "$args"
}

text_symbols() {
	echo 0 >/proc/sys/kernel/kptr_restrict
	awk '$2 ~ /^[tT]$/ { print $1, $3, $4 }' /proc/kallsyms >/tmp/ksyms.txt
	emit_file /tmp/ksyms.txt
}

step "load twheel" load twheel
step "${TWHEEL_INSNS_WHAT:-burst}" work
step "text symbols" text_symbols
step "unload modules" unload_all
finish
