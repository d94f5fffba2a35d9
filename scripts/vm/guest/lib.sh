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

is_debug() { [ "$twheel_kernel" = debug ]; }
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

# Print a file to the console between markers; the host's extract-files
# saves it (e.g. bench results into bench/results/).
emit_file() {
	echo "--- BEGIN $(basename "$1") ---"; cat "$1"; echo "--- END $(basename "$1") ---"
}
