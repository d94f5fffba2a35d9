# SPDX-License-Identifier: GPL-2.0
# Guest helpers, sourced by the /tests/<mode>.sh scripts.
# step NAME CMD...: run one step under a header; a failing step makes the
# whole run fail. Kernel messages logged during the step are echoed after it.
# Name step functions unlike any binary in /bin (a function "ubench" calling
# the ubench binary would recurse).
FAILED=0
KO=/lib/twheel
LOADED=""
dmesg -c >/tmp/boot-dmesg.txt   # boot noise; step() shows only new messages

step() {
	local name=$1; shift
	echo; echo "######## step: $name"
	if "$@"; then
		echo "twheel-step: ok $name"
	else
		echo "twheel-step: FAIL $name"
		FAILED=1
	fi
	dmesg -c | sed 's/^/  dmesg| /'
}

finish() {
	echo; echo "######## done: $([ $FAILED = 0 ] && echo all steps passed || echo some steps FAILED)"
	[ $FAILED = 0 ]
}

# Our own kernels (KUnit, fault injection): debug, and kcsan.
is_debug() { [ "$twheel_kernel" = debug ] || [ "$twheel_kernel" = kcsan ]; }
have() { [ -f "$KO/$1.ko" ]; }

# load MODULE [PARAMS]: insmod from /lib/twheel; remembered for unload_all.
load() {
	insmod "$KO/$1.ko" ${2:+"$2"} || { echo "insmod $1 failed"; return 1; }
	LOADED="$1 $LOADED"
}

# Unload every module load()ed, newest first.
unload_all() {
	local m rc=0
	for m in $LOADED; do
		rmmod "$m" || { echo "rmmod $m failed"; rc=1; }
	done
	LOADED=""
	return $rc
}

# selftest BINARY: run it, then put back what a test of it may leave
# behind when it fails an assertion or is killed at its timeout: the
# limits of twheel-dev, the interrupts-off accounting of twheel.
selftest() {
	local p=/sys/module/twheel_dev/parameters r
	local timers user
	timers=$(cat $p/max_timers 2>/dev/null) user=$(cat $p/max_user_timers 2>/dev/null)
	"$1"; r=$?
	[ -z "$timers" ] || echo "$timers" >$p/max_timers
	[ -z "$user" ] || echo "$user" >$p/max_user_timers
	[ ! -w /sys/kernel/debug/twheel/irqoff ] || echo 0 >/sys/kernel/debug/twheel/irqoff
	return $r
}

# Print a file to the console between markers; the host's extract-files
# saves it (e.g. bench results into bench/results/).
emit_file() {
	echo "--- BEGIN $(basename "$1") ---"; cat "$1"; echo "--- END $(basename "$1") ---"
}

# make bench: three rounds of twheel_load_test (TWHEEL_LOAD_N timers, 1M
# by default), its records in /tmp/$1.txt, emitted to the host (and so
# counted once by tap-summary). A round that misses the test's bounds is
# still a measurement (its failures are counted); one that did not run to
# its end (a signal, a skip of the whole binary) fails the step.
load_rounds() {
	local r e rc=0 out=/tmp/$1.txt
	: >"$out"
	for r in 1 2 3; do
		TWHEEL_LOAD_N=${TWHEEL_LOAD_N:-1000000} TWHEEL_LOAD_ROUND=$r \
			/bin/selftests/twheel_load_test >>"$out"; e=$?
		[ $e -le 1 ] || { echo "twheel_load_test round $r: exit $e"; rc=1; }
	done
	emit_file "$out"
	return $rc
}

# ttl_hotplug N CYCLES: N keys of examples/twheel_ttl.ko (0.1-3 s TTLs)
# expire while cpu1 goes offline and online CYCLES times; every key must
# expire exactly once. Needs twheel loaded.
ttl_hotplug() {
	local n=$1 cycles=$2 f=/sys/kernel/debug/twheel_ttl/keys i got
	local c=/sys/devices/system/cpu/cpu1/online
	[ -w $c ] || { echo "cpu1 cannot go offline here"; return 0; }
	load twheel_ttl || return 1
	dmesg -c >/dev/null
	for i in $(seq "$n"); do echo "set h$i $i $((100 + i * 2900 / n))" >$f || return 1; done
	for i in $(seq "$cycles"); do
		echo 0 >$c && sleep 0.3 && echo 1 >$c && sleep 0.3 || return 1
	done
	sleep 3.5
	got=$(dmesg | grep -c 'twheel_ttl: expired h')
	echo "ttl_hotplug: $got of $n keys expired across $cycles hotplug cycles"
	unload_one twheel_ttl && [ "$got" = "$n" ]
}

# unload_cycles N: load twheel and a client with timers pending and firing;
# twheel must refuse to unload under the client, then both unload cleanly.
# Needs twheel unloaded.
unload_cycles() {
	local n=$1 f=/sys/kernel/debug/twheel_ttl/keys i
	for i in $(seq "$n"); do
		insmod $KO/twheel.ko && insmod $KO/twheel_ttl.ko || return 1
		echo "set far 1 3600000" >$f && echo "set now$i 1 $((i % 3))" >$f || return 1
		if rmmod twheel 2>/dev/null; then echo "twheel unloaded under a client"; return 1; fi
		rmmod twheel_ttl && rmmod twheel || return 1
	done
	echo "unload_cycles: $n load/arm/unload cycles"
}

# Unload one module load()ed earlier.
unload_one() {
	rmmod "$1" || return 1
	LOADED=$(echo "$LOADED" | sed "s/\b$1 //")
}
