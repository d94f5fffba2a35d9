# SPDX-License-Identifier: GPL-2.0
# mode=bench: run the benchmarks; result files go to the host between
# BEGIN/END markers (emit_file) and land in bench/results/.
. /tests/lib.sh

bench_kernel() {
	have twheel_bench || { echo "no twheel_bench.ko"; return 0; }
	load twheel_bench || return 1
	dmesg -c >/tmp/kbench.txt; cat /tmp/kbench.txt
	emit_file /tmp/kbench.txt
}

bench_user() {
	command -v ubench >/dev/null || { echo "no ubench binary"; return 0; }
	ubench >/tmp/ubench.txt || return 1
	cat /tmp/ubench.txt; emit_file /tmp/ubench.txt
}

step "load modules" load twheel
have twheel-dev && step "load twheel-dev" load twheel-dev
step "kernel bench" bench_kernel
step "userspace bench" bench_user
step "unload modules" unload_all
finish
