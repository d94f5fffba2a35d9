# SPDX-License-Identifier: GPL-2.0
# mode=guestprof: for scripts/vm/guestprof/run.sh, ubench (options in
# TWHEEL_UBENCH) under the guest's perf, sampling the CPU clock of both
# CPUs; the profile of ubench's process, its kernel time included, where
# a sample lands, by symbol and by the system call it ran under, and
# within the ioctl, by place.
. /tests/lib.sh

profile() {
	command -v perf >/dev/null || { echo "no perf in the guest"; return 1; }
	echo 0 >/proc/sys/kernel/kptr_restrict
	echo -1 >/proc/sys/kernel/perf_event_paranoid
	# shellcheck disable=SC2086 # options, split on purpose
	perf record -q -a -g -F 2000 -o /tmp/perf.data -- ubench ${TWHEEL_UBENCH:-} ||
		return 1
	# Each sample under the ioctl or the release it ran in, else [other]:
	# their shares, then by symbol.
	for sort in parent parent,sym; do
		perf report -i /tmp/perf.data --stdio --comms ubench \
			--percentage relative --no-children --sort $sort \
			--parent "${TWHEEL_GUESTPROF_PARENT:-twd_ioctl|twd_release}" \
			--percent-limit 0.3 -g none 2>/dev/null | grep -E '%|^# Samples'
	done >/tmp/guestprof.txt
	emit_file /tmp/guestprof.txt
	# Within the functions TWHEEL_GUESTPROF_SITES names, the samples by
	# place: their own instructions, and the calls they were under.
	perf script -i /tmp/perf.data --comms ubench -F ip,sym,symoff 2>/dev/null |
		awk -v re="^(${TWHEEL_GUESTPROF_SITES:-twd_ioc_arm_batch})[+]" \
			'$2 ~ re { n[$2]++ } END { for (s in n) print n[s], s }' |
		sort -rn >/tmp/guestprof-sites.txt
	emit_file /tmp/guestprof-sites.txt
}

step "load twheel" load twheel
step "load twheel-dev" load twheel-dev
step "perf of ubench" profile
step "unload modules" unload_all
finish
