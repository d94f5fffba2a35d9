# SPDX-License-Identifier: GPL-2.0
# mode=stress: load the modules and hammer them, with CPU hotplug on the side.
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
		echo "# selftest: $(basename "$t")"; "$t"
	done
	return 0
}

step "load modules" load twheel
have twheel-dev && step "load twheel-dev" load twheel-dev
hotplug &
step "selftests under hotplug" selftests
step "hotplug" wait $!
step "hotplug: kernel timers" ttl_hotplug 2000 10
step "unload modules" unload_all
step "unload: 100 cycles" unload_cycles 100
finish
