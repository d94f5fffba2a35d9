/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the /dev/twheel selftests.
 *
 * Timing under TCG is noisy, so no test asserts on the time userspace
 * observes an event. The kernel-reported lateness (fire_ns - deadline_ns)
 * must be >= 0 (never early) and at most one tick plus TW_SLACK_NS, the
 * softirq allowance: 20 ms by default, TWHEEL_SLACK_MS in the environment.
 */
#ifndef _TWHEEL_TEST_H
#define _TWHEEL_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>
#include <twheel/libtwheel.h>

#include "kselftest.h"

#define TW_DEV		"/dev/twheel"
#define TW_PARAMS	"/sys/module/twheel_dev/parameters/"
#define MS		1000000ULL

/* The UAPI layout documented in Documentation/twheel-uapi.rst. */
#define TW_LAYOUT(type, field, off) \
	static_assert(offsetof(struct type, field) == (off), #type "." #field)
static_assert(sizeof(struct twheel_version) == 48, "twheel_version");
TW_LAYOUT(twheel_version, features, 8);
TW_LAYOUT(twheel_version, tick_ns, 16);
TW_LAYOUT(twheel_version, min_period_ns, 24);
TW_LAYOUT(twheel_version, max_timers, 32);
TW_LAYOUT(twheel_version, event_size, 40);
TW_LAYOUT(twheel_version, want_event_size, 44);
static_assert(sizeof(struct twheel_arm) == 56, "twheel_arm");
TW_LAYOUT(twheel_arm, key, 8);
TW_LAYOUT(twheel_arm, data, 16);
TW_LAYOUT(twheel_arm, expiry_ns, 24);
TW_LAYOUT(twheel_arm, period_ns, 32);
TW_LAYOUT(twheel_arm, count, 40);
TW_LAYOUT(twheel_arm, __reserved, 44);
TW_LAYOUT(twheel_arm, slack_ns, 48);
static_assert(sizeof(struct twheel_arm_batch) == 32, "twheel_arm_batch");
TW_LAYOUT(twheel_arm_batch, entries, 8);
TW_LAYOUT(twheel_arm_batch, status, 16);
TW_LAYOUT(twheel_arm_batch, count, 24);
TW_LAYOUT(twheel_arm_batch, entry_size, 28);
static_assert(sizeof(struct twheel_cancel) == 16, "twheel_cancel");
TW_LAYOUT(twheel_cancel, key, 8);
static_assert(sizeof(struct twheel_cancel_batch) == 32, "twheel_cancel_batch");
TW_LAYOUT(twheel_cancel_batch, keys, 8);
TW_LAYOUT(twheel_cancel_batch, status, 16);
TW_LAYOUT(twheel_cancel_batch, count, 24);
static_assert(sizeof(struct twheel_modify) == 40, "twheel_modify");
TW_LAYOUT(twheel_modify, key, 8);
TW_LAYOUT(twheel_modify, expiry_ns, 16);
TW_LAYOUT(twheel_modify, period_ns, 24);
TW_LAYOUT(twheel_modify, count, 32);
static_assert(sizeof(struct twheel_query) == 72, "twheel_query");
TW_LAYOUT(twheel_query, key, 8);
TW_LAYOUT(twheel_query, state, 16);
TW_LAYOUT(twheel_query, fires_left, 20);
TW_LAYOUT(twheel_query, remaining_ns, 24);
TW_LAYOUT(twheel_query, deadline_ns, 32);
TW_LAYOUT(twheel_query, period_ns, 40);
TW_LAYOUT(twheel_query, data, 48);
TW_LAYOUT(twheel_query, overruns, 56);
TW_LAYOUT(twheel_query, slack_ns, 64);
static_assert(sizeof(struct twheel_cancel_all) == 8, "twheel_cancel_all");
static_assert(sizeof(struct twheel_event) == 40, "twheel_event");
TW_LAYOUT(twheel_event, data, 8);
TW_LAYOUT(twheel_event, deadline_ns, 16);
TW_LAYOUT(twheel_event, fire_ns, 24);
TW_LAYOUT(twheel_event, overruns, 32);
TW_LAYOUT(twheel_event, flags, 36);

static inline __u64 tw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline void tw_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Wait, 10 ms at a time and up to 5 s, until @cond holds; the test then
 * checks it. For what a timer due now has done: it fires within a tick,
 * but a loaded host stalls a TCG guest for seconds (1.7 s seen).
 */
#define TW_WAIT_FOR(cond) do {					\
	int _tw_i;						\
								\
	for (_tw_i = 0; _tw_i < 500 && !(cond); _tw_i++)	\
		tw_sleep_ms(10);				\
} while (0)

/*
 * Opening, the handshake, arming, cancelling, querying and reading go
 * through libtwheel.h, as an application's would. tw_ioctl() is for the
 * tests that send the kernel what the library never builds: short,
 * oversized or malformed structs, unknown flags, bad pointers.
 */

/* ioctl() on a raw fd as 0 or -errno. */
static inline int tw_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

/*
 * Read events until @n have arrived or @timeout_ms passed without one;
 * returns the number read.
 */
static inline int tw_read_n(const struct twl *tw, struct twheel_event *ev,
			    int n, int timeout_ms)
{
	int got = 0;

	while (got < n) {
		long r;

		if (twl_wait(tw, timeout_ms) <= 0)
			break;
		r = twl_read(tw, ev + got, n - got);
		if (r == -EAGAIN)
			continue;
		if (r <= 0)
			break;
		got += r;
	}
	return got;
}

/* No event within @ms milliseconds? */
static inline int tw_quiet_for(const struct twl *tw, int ms)
{
	return twl_wait(tw, ms) == 0;
}

/* An address that faults, unknown to the compiler. */
static inline void *tw_bad_ptr(void)
{
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Is this the VM rig's @name kernel (debug, kcsan, stock, ...)? The rig
 * puts twheel_kernel in the tests' environment; elsewhere it is none.
 */
static inline int tw_on_kernel(const char *name)
{
	const char *kernel = getenv("twheel_kernel");

	return kernel && !strcmp(kernel, name);
}

static inline __u64 tw_slack_ns(void)
{
	const char *s = getenv("TWHEEL_SLACK_MS");

	return (s ? strtoull(s, NULL, 0) : 20) * MS;
}

/* Kernel-reported lateness in range: never early, at most tick + slack. */
static inline int tw_late_ok(const struct twheel_event *ev, __u64 tick_ns)
{
	if (ev->fire_ns >= ev->deadline_ns &&
	    ev->fire_ns - ev->deadline_ns <= tick_ns + tw_slack_ns())
		return 1;
	fprintf(stderr, "# key %llu: fired at %llu for deadline %llu: %lld us late\n",
		ev->key, ev->fire_ns, ev->deadline_ns,
		(long long)(ev->fire_ns - ev->deadline_ns) / 1000);
	return 0;
}

static inline int tw_param_read(const char *name, unsigned long *val)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), TW_PARAMS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fscanf(f, "%lu", val) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

static inline int tw_param_write(const char *name, unsigned long val)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), TW_PARAMS "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ok = fprintf(f, "%lu\n", val) > 0;
	return fclose(f) == 0 && ok ? 0 : -EIO;
}

/*
 * Raise the limits max_timers and max_user_timers to at least @n (their
 * defaults scale with the guest's memory); @old receives the values for
 * tw_limits_restore(). Returns 0 or -errno (not root).
 */
static inline int tw_limits_raise(unsigned long n, unsigned long old[2])
{
	int ret;

	ret = tw_param_read("max_timers", &old[0]);
	if (!ret)
		ret = tw_param_read("max_user_timers", &old[1]);
	if (!ret && old[0] < n)
		ret = tw_param_write("max_timers", n);
	if (!ret && old[1] < n)
		ret = tw_param_write("max_user_timers", n);
	return ret;
}

static inline void tw_limits_restore(const unsigned long old[2])
{
	tw_param_write("max_timers", old[0]);
	tw_param_write("max_user_timers", old[1]);
}

/*
 * The value of a "name:\tvalue" line of the fdinfo of process @pid's @fd
 * (0: this process's), or -1.
 */
static inline long long tw_fdinfo_of(int pid, int fd, const char *name)
{
	char path[64], line[128];
	long long val = -1;
	size_t len = strlen(name);
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	else
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ':')
			val = strtoll(line + len + 1, NULL, 0);
	fclose(f);
	return val;
}

/* The value of a "name:\tvalue" line of the fd's fdinfo, or -1. */
static inline long long tw_fdinfo(int fd, const char *name)
{
	return tw_fdinfo_of(0, fd, name);
}

/*
 * The value of "@name=" on @cpu's lines of debugfs twheel/stats, or -1
 * (no such CPU, or no debugfs: it is root's).
 */
static inline long long tw_wheel_stat(unsigned int cpu, const char *name)
{
	FILE *f = fopen("/sys/kernel/debug/twheel/stats", "r");
	char line[512], prefix[32], key[64], *p;
	long long val = -1;

	if (!f)
		return -1;
	snprintf(prefix, sizeof(prefix), "cpu%u ", cpu);
	snprintf(key, sizeof(key), " %s=", name);
	while (val < 0 && fgets(line, sizeof(line), f)) {
		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		p = strstr(line, key);
		if (p)
			val = strtoll(p + strlen(key), NULL, 10);
	}
	fclose(f);
	return val;
}

#ifdef _GNU_SOURCE
#include <sched.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

/*
 * The test process enters a new time namespace whose @clock ("monotonic"
 * or "boottime") is @offset_s seconds ahead of the host's, by forking:
 * unshare(CLONE_NEWTIME) moves only its children, and the offsets can be
 * written only before one enters. Returns the child's pid (0 in the
 * child), or -errno if the kernel has no time namespaces.
 */
static inline int tw_timens_fork(const char *clock, long offset_s)
{
	char buf[64];
	int fd, len;

	if (unshare(CLONE_NEWTIME))
		return -errno;
	fd = open("/proc/self/timens_offsets", O_WRONLY);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%s %ld 0\n", clock, offset_s);
	if (write(fd, buf, len) != len) {
		close(fd);
		return -errno;
	}
	close(fd);
	return fork();
}

/* Run the calling thread on @cpu only; 0 or -1 (errno set). */
static inline int tw_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}
#endif /* _GNU_SOURCE */

/* Called first by main(): skip the whole binary without the device. */
static inline void tw_require_device(void)
{
	if (access(TW_DEV, F_OK)) {
		ksft_print_header();
		ksft_exit_skip(TW_DEV " is absent (twheel-dev.ko not loaded)\n");
	}
}

/* main() of a test binary: kselftest_harness.h's, skipping without the device. */
#define TW_HARNESS_MAIN							\
	int main(int argc, char **argv)					\
	{								\
		tw_require_device();					\
		exit(test_harness_run(argc, argv));			\
	}

#endif /* _TWHEEL_TEST_H */
