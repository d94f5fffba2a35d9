# SPDX-License-Identifier: GPL-2.0
# mode=stress, make stress's second boot (the first is load.sh): load the
# modules and hammer them, with CPU hotplug on the side.
. /tests/lib.sh

hotplug() {
	local i c=/sys/devices/system/cpu/cpu1/online
	[ -w $c ] || { echo "cpu1 cannot be offlined"; return 1; }
	for i in 1 2 3 4 5; do echo 0 >$c && sleep 1 && echo 1 >$c || return 1; done
}

selftests() {
	local t
	for t in /bin/selftests/*; do
		[ -x "$t" ] || continue
		echo "# selftest: $(basename "$t")"; selftest "$t"
	done
	return 0
}

# Issue 6, long runs: 10M fuzzed calls (TWHEEL_FUZZ_CALLS, e.g. from
# TWHEEL_GUEST_ENV on the host, overrides); the abuse tests again with 1M
# timers firing over 60 s and longer close-while-firing and flood runs.
fuzz_long() (
	export TWHEEL_FUZZ_CALLS=${TWHEEL_FUZZ_CALLS:-10000000}
	selftest /bin/selftests/twheel_fuzz_test
)
abuse_long() (
	export TWHEEL_LOAD_TIMERS=1000000 TWHEEL_CLOSE_MS=30000 \
		TWHEEL_FLOOD_TIMERS=4000
	selftest /bin/selftests/twheel_abuse_test
)

# The pure wheel's differential test with 10M operations (KUnit, so the
# debug kernel only); any failed case fails the step.
wheel_long() {
	dmesg -c >/dev/null
	load twheel_wheel_stress || return 1
	dmesg -c >/tmp/kunit-wheel.txt
	cat /tmp/kunit-wheel.txt
	unload_all || return 1
	grep -Eq '^(\[[ 0-9.]*\] )? *ok [0-9]+ (- )?twheel_wheel_stress$' /tmp/kunit-wheel.txt &&
		! grep -q 'not ok' /tmp/kunit-wheel.txt
}

is_debug && have twheel_wheel_stress &&
	step "kunit: the wheel, 10M operations" wheel_long
step "load modules" load twheel
have twheel-dev && step "load twheel-dev" load twheel-dev
hotplug &
step "selftests under hotplug" selftests
step "hotplug" wait $!
step "hotplug: kernel timers" ttl_hotplug 2000 10
have twheel-dev && step "fuzz: ${TWHEEL_FUZZ_CALLS:-10000000} calls" fuzz_long
have twheel-dev && step "abuse: 1M timers over 60 s" abuse_long
step "unload modules" unload_all
step "unload: 100 cycles" unload_cycles 100
finish
