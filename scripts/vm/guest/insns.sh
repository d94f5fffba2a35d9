# SPDX-License-Identifier: GPL-2.0
# mode=insns: twheel_bench's bursts of one facility (TWHEEL_INSNS_FACS, its
# burst_facs; 0 for none), little else, for scripts/vm/insns/run.sh, which
# counts the instructions the guest runs. Then the kernel's text symbols,
# to name where they ran.
. /tests/lib.sh

bursts() {
	load twheel_bench "rounds=${TWHEEL_INSNS_ROUNDS:-3} burst_list=${TWHEEL_INSNS_N:-1000000} burst_facs=${TWHEEL_INSNS_FACS:-7} n_list=1000 lat_n=10 sparse_n=1 wake_ms=1 slack_n=0"
}

text_symbols() {
	echo 0 >/proc/sys/kernel/kptr_restrict
	awk '$2 ~ /^[tT]$/ { print $1, $3, $4 }' /proc/kallsyms >/tmp/ksyms.txt
	emit_file /tmp/ksyms.txt
}

step "load twheel" load twheel
step "bursts" bursts
step "text symbols" text_symbols
step "unload modules" unload_all
finish
