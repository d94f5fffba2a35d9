# SPDX-License-Identifier: GPL-2.0
# mode=check: the correctness run. Add a step by writing a function that
# returns non-zero on failure and listing it with `step` at the bottom.
. /tests/lib.sh

load_core() {
	is_debug && echo clear >/sys/kernel/debug/kmemleak
	load twheel || return 1
	! have twheel-dev || load twheel-dev
}

# KUnit prints KTAP to the kernel log; it is echoed here and counted by
# tap-summary. The step fails only if the module did not load or ran nothing.
kunit() {
	is_debug || { echo "no KUnit on the $twheel_kernel kernel"; return 0; }
	have twheel_kunit || { echo "no twheel_kunit.ko"; return 0; }
	dmesg -c >/dev/null
	load twheel_kunit || return 1
	dmesg -c >/tmp/kunit.txt
	cat /tmp/kunit.txt
	grep -Eq '^(\[[ 0-9.]*\] )? *(not )?ok [0-9]' /tmp/kunit.txt ||
		{ echo "KUnit printed no results (kunit.enable=0?)"; return 1; }
}

# Each binary prints kselftest TAP; failed tests are counted by tap-summary,
# only a crash (signal) or a missing binary fails the step.
selftests() {
	local t rc=0 r
	for t in /bin/selftests/*; do
		[ -x "$t" ] || continue
		echo "# selftest: $(basename "$t")"
		"$t"; r=$?
		[ $r -lt 128 ] || { echo "$(basename "$t") died with signal $((r - 128))"; rc=1; }
	done
	return $rc
}

kmemleak() {
	is_debug || return 0
	local f=/sys/kernel/debug/kmemleak
	echo scan >$f; sleep 6; echo scan >$f
	if [ -n "$(cat $f)" ]; then echo "kmemleak found leaks:"; cat $f; return 1; fi
	echo "kmemleak: no leaks"
}

step "load modules" load_core
step "kunit" kunit
step "selftests" selftests
step "unload modules" unload_all
step "kmemleak" kmemleak
finish
