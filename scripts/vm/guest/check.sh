# SPDX-License-Identifier: GPL-2.0
# mode=check: the correctness run. Add a step by writing a function that
# returns non-zero on failure and listing it with `step` at the bottom.
. /tests/lib.sh

load_core() {
	[ ! -e /sys/kernel/debug/kmemleak ] || echo clear >/sys/kernel/debug/kmemleak
	load twheel || return 1
	! have twheel-dev || load twheel-dev
}

# KUnit prints KTAP to the kernel log; it is echoed here and counted by
# tap-summary. The step fails only if the module (which our debug kernels
# build) is missing, did not load or ran nothing.
kunit() {
	is_debug || { echo "no KUnit on the $twheel_kernel kernel"; return 0; }
	have twheel_kunit || { echo "no twheel_kunit.ko"; return 1; }
	dmesg -c >/dev/null
	load twheel_kunit || return 1
	dmesg -c >/tmp/kunit.txt
	cat /tmp/kunit.txt
	grep -Eq '^(\[[ 0-9.]*\] )? *(not )?ok [0-9]' /tmp/kunit.txt ||
		{ echo "KUnit printed no results (kunit.enable=0?)"; return 1; }
}

# The pure wheel (wheel.c) on virtual time, including the 1M-operation
# differential test (twheel_wheel_kunit's wheel_ops); counted the same way.
kunit_wheel() {
	is_debug || { echo "no KUnit on the $twheel_kernel kernel"; return 0; }
	have twheel_wheel_kunit || { echo "no twheel_wheel_kunit.ko"; return 1; }
	dmesg -c >/dev/null
	load twheel_wheel_kunit || return 1
	dmesg -c >/tmp/kunit-wheel.txt
	cat /tmp/kunit-wheel.txt
	grep -Eq '^(\[[ 0-9.]*\] )? *(not )?ok [0-9]' /tmp/kunit-wheel.txt ||
		{ echo "KUnit printed no results (kunit.enable=0?)"; return 1; }
}

# Each binary prints kselftest TAP; failed tests are counted by tap-summary,
# only a crash (signal) or a missing binary fails the step.
selftests() {
	local t rc=0 r
	for t in /bin/selftests/*; do
		[ -x "$t" ] || continue
		echo "# selftest: $(basename "$t")"
		# A -m32 binary needs IA32 emulation, which the debug kernel lacks.
		case "$t" in *32) [ -e /proc/sys/abi/vsyscall32 ] || {
			echo "ok 1 # SKIP $(basename "$t"): no 32-bit support in this kernel"
			continue; } ;;
		esac
		selftest "$t"; r=$?
		[ $r -lt 128 ] || { echo "$(basename "$t") died with signal $((r - 128))"; rc=1; }
	done
	return $rc
}

# examples/twheel_ttl.ko: keys expire once, a re-set replaces the TTL, a
# deleted key never expires. Only orders of events are checked, not the
# wall clock, which a loaded host stretches for the guest's shell.
ttl_keys() { cut -d' ' -f1 /sys/kernel/debug/twheel_ttl/keys | sort | tr '\n' ' '; }
ttl_expired() { dmesg | grep -c "twheel_ttl: expired $1 "; }
ttl_wait_gone() {
	local i
	for i in $(seq 100); do
		case " $(ttl_keys)" in *" $1 "*) sleep 0.2 ;; *) return 0 ;; esac
	done
	echo "ttl: key $1 did not expire"; return 1
}
ttl_example() {
	local f=/sys/kernel/debug/twheel_ttl/keys rc=0 k late
	load twheel_ttl || return 1
	echo "set a 1 300" >$f && echo "set c 3 600" >$f || return 1
	echo "set b 2 900" >$f && echo "set b 2 600000" >$f || return 1   # replaced TTL
	echo "set d 4 600000" >$f && echo "del d" >$f || return 1
	echo "set bad 1" >$f 2>/dev/null && { echo "ttl: bad command accepted"; rc=1; }
	echo "del nosuch" >$f 2>/dev/null && { echo "ttl: deleting a missing key worked"; rc=1; }
	ttl_wait_gone a && ttl_wait_gone c || rc=1
	sleep 1   # b's first TTL, 900 ms, is long past
	[ "$(ttl_keys)" = "b " ] || { echo "ttl: expected 'b ' left, got '$(ttl_keys)'"; rc=1; }
	for k in a c; do [ "$(ttl_expired $k)" = 1 ] || { echo "ttl: $k expired $(ttl_expired $k) times"; rc=1; }; done
	for k in b d; do [ "$(ttl_expired $k)" = 0 ] || { echo "ttl: $k expired"; rc=1; }; done
	late=$(dmesg | sed -n 's/.*twheel_ttl: expired [a-z] late_us=//p' | sort -n | tail -1)
	echo "ttl: a and c expired once, b (re-set) and d (deleted) never; worst lateness ${late:-?} us"
	return $rc   # b is left for the module's unload to free
}

# Tracepoints and debugfs statistics see the TTL example's timers fire.
observability() {
	local t=/sys/kernel/tracing f=/sys/kernel/debug/twheel_ttl/keys rc=0
	[ -d $t/events/twheel ] || { echo "no twheel trace events"; return 1; }
	# No task names: recording them hooks the scheduler's tracepoints,
	# and live-patching those under TCG once oopsed on an int3 in
	# ttwu_do_activate() (6.12), in code of the kernel's, not ours.
	echo 0 >$t/options/record-cmd
	echo 1 >$t/events/twheel/enable && echo >$t/trace || return 1
	[ -d /sys/module/twheel_ttl ] || load twheel_ttl || return 1
	echo "set o1 1 20" >$f && echo "set o2 2 5000" >$f && echo "del o2" >$f || rc=1
	ttl_wait_gone o1 || rc=1
	echo 0 >$t/events/twheel/enable
	grep -q 'twheel_arm:.*level=' $t/trace || { echo "no twheel_arm event"; rc=1; }
	grep -q 'twheel_cancel:' $t/trace || { echo "no twheel_cancel event"; rc=1; }
	grep -q 'twheel_fire:.*ttl_expire.*lateness_ns=[0-9]' $t/trace ||
		{ echo "no twheel_fire event with a lateness >= 0"; rc=1; }
	grep -m3 'twheel_' $t/trace
	cat /sys/kernel/debug/twheel/stats
	grep -q '^cpu0 pending=.* fired=.* early=0 ' /sys/kernel/debug/twheel/stats ||
		{ echo "twheel/stats: no cpu0 line with early=0"; rc=1; }
	grep -q 'early=[1-9]' /sys/kernel/debug/twheel/stats && { echo "early fires"; rc=1; }
	grep -q '^cpu0 levels=[0-9,]* lateness=[0-9,]*$' /sys/kernel/debug/twheel/stats ||
		{ echo "twheel/stats: no levels/lateness line"; rc=1; }
	return $rc
}

hotplug_check() { load twheel && ttl_hotplug 200 3 && unload_one twheel; }

# twheelctl refuses a count past 32 bits (it would wrap to 0, forever),
# a delay or period whose nanoseconds pass 64 bits (they would wrap to a
# short timer), a negative key (strtoull() would wrap it) and an unknown
# command, with the usage and exit status 2; a query says "forever" of a
# timer that never stops.
cli_refuses() {
	command -v twheelctl >/dev/null || { echo "no twheelctl binary"; return 0; }
	local args out
	for args in "arm 1 1000 1000 4294967296" "arm 1 18446744073710" \
		"arm 1 10 18446744073710 1" "arm -1 10" "query -1" "frob 1"; do
		# shellcheck disable=SC2086 # the arguments, split on purpose
		twheelctl $args 2>/dev/null; [ $? = 2 ] ||
			{ echo "twheelctl $args: not refused"; return 1; }
	done
	out=$(twheelctl arm 1 1000 1000 0 query 1 cancel 1) || return 1
	echo "$out" | grep -qx "key 1: .*, fires left forever" ||
		{ echo "twheelctl query: $out"; return 1; }
	twheelctl arm 1 1000 1000 4294967295 cancel 1
}

# A per-user limit given at load bounds a file's too, when max_timers
# is left to its default.
limits_at_load() {
	local p=/sys/module/twheel_dev/parameters rc=0
	load twheel && load twheel-dev max_user_timers=1000 || { unload_all; return 1; }
	[ "$(cat $p/max_timers)" = 1000 ] ||
		{ echo "max_timers $(cat $p/max_timers), not 1000"; rc=1; }
	unload_all || rc=1
	return $rc
}

kmemleak() {
	local f=/sys/kernel/debug/kmemleak
	[ -e $f ] || return 0
	echo scan >$f; sleep 6; echo scan >$f
	if [ -n "$(cat $f)" ]; then echo "kmemleak found leaks:"; cat $f; return 1; fi
	echo "kmemleak: no leaks"
}

step "load modules" load_core
step "kunit" kunit
step "kunit: the wheel on virtual time" kunit_wheel
step "selftests" selftests
step "ttl example" ttl_example
step "tracepoints and debugfs stats" observability
step "epoll example" twheel_epoll
step "cli: bad arguments refused" cli_refuses
step "epoll example, event ring" twheel_epoll --ring
step "unload modules" unload_all
have twheel-dev && step "limits: max_timers follows max_user_timers" limits_at_load
step "hotplug: kernel timers move and fire once" hotplug_check
step "unload: refused under a client, 20 cycles" unload_cycles 20
step "kmemleak" kmemleak
finish
