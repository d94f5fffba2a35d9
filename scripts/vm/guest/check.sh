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

# examples/twheel_ttl.ko: keys expire on time, a re-set extends the TTL.
ttl_keys() { cut -d' ' -f1 /sys/kernel/debug/twheel_ttl/keys | sort | tr '\n' ' '; }
ttl_expect() {
	local got; got=$(ttl_keys)
	[ "$got" = "$1" ] || { echo "ttl: after $2 expected keys '$1', got '$got'"; return 1; }
}
ttl_example() {
	local f=/sys/kernel/debug/twheel_ttl/keys rc=0 late
	load twheel_ttl || return 1
	# TTLs in seconds: each shell step can take a few 100 ms under TCG.
	echo "set a 1 1000" >$f && echo "set b 2 3000" >$f && echo "set c 3 2000" >$f || return 1
	echo "set bad 1" >$f 2>/dev/null && { echo "ttl: bad command accepted"; rc=1; }
	ttl_expect "a b c " "arming" || rc=1
	sleep 1.5; ttl_expect "b c " "1.5 s" || rc=1
	echo "set b 2 4000" >$f || rc=1          # replaces b's TTL: now ~5.5 s
	sleep 1; ttl_expect "b " "2.5 s" || rc=1
	sleep 1.5; ttl_expect "b " "4 s (b was extended)" || rc=1
	echo "set d 4 60000" >$f && echo "del d" >$f || rc=1
	sleep 2; ttl_expect "" "6 s" || rc=1
	echo "set e 5 60000" >$f || rc=1       # left for module unload to free
	late=$(dmesg | sed -n 's/.*twheel_ttl: expired [a-z] late_us=//p' | sort -n | tail -1)
	echo "ttl: worst lateness ${late:-?} us"
	[ "$(dmesg | grep -c 'twheel_ttl: expired')" = 3 ] || { echo "ttl: expected 3 expiries"; rc=1; }
	return $rc
}

hotplug_check() { load twheel && ttl_hotplug 200 3 && unload_one twheel; }

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
step "ttl example" ttl_example
step "unload modules" unload_all
step "hotplug: kernel timers move and fire once" hotplug_check
step "unload: refused under a client, 20 cycles" unload_cycles 20
step "kmemleak" kmemleak
finish
