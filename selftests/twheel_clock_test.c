// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel selftests: timers of CLOCK_BOOTTIME and CLOCK_REALTIME.
 *
 * - boottime_*: deadlines in and out, and fire times, are CLOCK_BOOTTIME,
 *   of the caller's time namespace: a namespace with a large boottime
 *   offset sees its own times, never an early fire; a suspend of the test
 *   guest (timekeeping suspended and resumed 5 s later) makes
 *   CLOCK_BOOTTIME run ahead of CLOCK_MONOTONIC, and its timers with it.
 * - realtime_*: the wall clock set forward past a deadline fires the timer
 *   promptly; set back, it never fires before the clock reaches it.
 * - cancel_on_set_*: a TWHEEL_ARM_CANCEL_ON_SET timer is cancelled by a
 *   set of the clock, with a last event flagged TWHEEL_EVENT_CANCELED, also
 *   while another file's ioctl waits for a page holding that file's mutex.
 * - clock_flags_*: bad flag combinations fail with -EINVAL and change
 *   nothing.
 *
 * Tests that set CLOCK_REALTIME need root (they skip otherwise) and put the
 * clock back in the teardown, where it would be had it not been set. Each
 * test arms a sentinel CLOCK_MONOTONIC timer first; the teardown checks
 * that it still fires: clocks set and timers cancelled lose no other timer.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest_harness.h"

#define SENTINEL	0x5e5e5e5eULL
#define NS		1000000000ULL

/*
 * How late a fire may be here: a wrong clock is off by days, and a loaded
 * host stalls a TCG guest for seconds (1.7 s seen).
 */
#define LATE_MAX	(5000 * MS)

static __u64 clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * NS + ts.tv_nsec;
}

static int clock_set_ns(__u64 t)
{
	struct timespec ts = { t / NS, t % NS };

	return clock_settime(CLOCK_REALTIME, &ts) ? -errno : 0;
}

/* Move CLOCK_REALTIME by @delta ns; 0 or -errno (-EPERM: not root). */
static int realtime_step(long long delta)
{
	return clock_set_ns(clock_ns(CLOCK_REALTIME) + delta);
}

static int tw_arm_flags(const struct twl *tw, __u64 key, __u64 expiry,
			__u64 period, __u32 flags)
{
	return twl_arm(tw, key, key, expiry, period, 0, flags);
}

FIXTURE(clock) {
	struct twl tw;
	/* CLOCK_REALTIME and CLOCK_MONOTONIC at the start, to restore. */
	__u64 real0, mono0;
	int set;
	/* The sentinel's event, if a test's read met it. */
	struct twheel_event sentinel;
	int seen;
};

/*
 * tw_read_n() for a test's own timers: the sentinel's event, whenever it
 * comes, is put aside for the teardown.
 */
static int read_ev(struct _test_data_clock *self, struct twheel_event *ev,
		   int n, int timeout_ms)
{
	int got = 0;

	while (got < n && tw_read_n(&self->tw, &ev[got], 1, timeout_ms) == 1) {
		if (ev[got].key != SENTINEL) {
			got++;
			continue;
		}
		self->sentinel = ev[got];
		self->seen++;
	}
	return got;
}

FIXTURE_SETUP(clock)
{
	self->mono0 = clock_ns(CLOCK_MONOTONIC);
	self->real0 = clock_ns(CLOCK_REALTIME);
	self->set = 0;
	self->seen = 0;
	ASSERT_EQ(0, twl_open(&self->tw, O_CLOEXEC));
	ASSERT_TRUE(self->tw.version.features & TWHEEL_FEATURE_CLOCKS);
	ASSERT_EQ(0, twl_arm(&self->tw, SENTINEL, ~SENTINEL, 300 * MS, 0, 0, 0));
}

FIXTURE_TEARDOWN(clock)
{
	struct twheel_event ev[1] = { 0 };

	/* The wall clock where it would be, had no test set it. */
	if (self->set)
		EXPECT_EQ(0, clock_set_ns(self->real0 +
					  clock_ns(CLOCK_MONOTONIC) -
					  self->mono0));
	if (!self->seen) {
		EXPECT_EQ(1, tw_read_n(&self->tw, ev, 1, 5000));
		self->sentinel = ev[0];
	}
	EXPECT_GE(1, self->seen);
	EXPECT_EQ(SENTINEL, self->sentinel.key);
	EXPECT_EQ(~SENTINEL, self->sentinel.data);
	EXPECT_EQ(TWHEEL_EVENT_LAST, self->sentinel.flags);
	/* Lateness is other tests' business: a loaded host stretches it. */
	EXPECT_LE(self->sentinel.deadline_ns, self->sentinel.fire_ns);
	EXPECT_GT(self->sentinel.deadline_ns + LATE_MAX,
		  self->sentinel.fire_ns);
	/* Nothing else. */
	EXPECT_TRUE(tw_quiet_for(&self->tw, 0));
	twl_close(&self->tw);
}

/* Move the wall clock from a test; the teardown puts it back. */
static int step(struct _test_data_clock *self, long long delta)
{
	self->set = 1;
	return realtime_step(delta);
}

/*
 * An event of a timer that fired on its deadline in @clk: never early,
 * reported no later than @clk reads now, and late by less than LATE_MAX.
 */
static int fired_on(const struct twheel_event *ev, clockid_t clk)
{
	if (ev->fire_ns >= ev->deadline_ns &&
	    ev->fire_ns - ev->deadline_ns < LATE_MAX &&
	    ev->fire_ns <= clock_ns(clk) && clock_ns(clk) >= ev->deadline_ns)
		return 1;
	fprintf(stderr, "# key %llu: deadline %llu fired %llu, clock now %llu\n",
		ev->key, ev->deadline_ns, ev->fire_ns, clock_ns(clk));
	return 0;
}

/*
 * Two events in the order of their keys: a guest stalled between two arms
 * (a loaded host does that for seconds) delivers them in either order.
 */
static void key_order(struct twheel_event *ev)
{
	struct twheel_event t = ev[0];

	if (ev[0].key > ev[1].key) {
		ev[0] = ev[1];
		ev[1] = t;
	}
}

/* Relative: from now in CLOCK_BOOTTIME, reported in it. */
TEST_F(clock, boottime_relative)
{
	struct twheel_event ev[1];
	struct twheel_query q;
	__u64 before, after;

	before = clock_ns(CLOCK_BOOTTIME);
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, 100 * MS, 0,
				  TWHEEL_ARM_BOOTTIME));
	after = clock_ns(CLOCK_BOOTTIME);
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	EXPECT_LE(before + 100 * MS, q.deadline_ns);
	EXPECT_GE(after + 100 * MS, q.deadline_ns);
	EXPECT_GE(100 * MS, q.remaining_ns);
	ASSERT_EQ(1, read_ev(self, ev, 1, 5000));
	EXPECT_EQ(1, ev[0].key);
	EXPECT_EQ(TWHEEL_EVENT_LAST, ev[0].flags);
	EXPECT_EQ(q.deadline_ns, ev[0].deadline_ns);
	EXPECT_TRUE(fired_on(&ev[0], CLOCK_BOOTTIME));
}

/* Absolute: a CLOCK_BOOTTIME time, as given; a past one fires at once. */
TEST_F(clock, boottime_absolute)
{
	struct twheel_event ev[2];
	__u64 d1 = clock_ns(CLOCK_BOOTTIME) + 150 * MS;
	__u64 d2 = clock_ns(CLOCK_BOOTTIME) - 1000 * MS;

	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, d1, 0,
				  TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_ABS));
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 2, d2, 0,
				  TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_ABS));
	ASSERT_EQ(2, read_ev(self, ev, 2, 5000));
	key_order(ev);
	EXPECT_EQ(1, ev[0].key);
	EXPECT_EQ(d1, ev[0].deadline_ns);
	EXPECT_TRUE(fired_on(&ev[0], CLOCK_BOOTTIME));
	EXPECT_EQ(2, ev[1].key);
	EXPECT_EQ(d2, ev[1].deadline_ns);
	EXPECT_LE(d1 - 150 * MS, ev[1].fire_ns);
	/* MODIFY keeps the clock, and must name it. */
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 3, 100000 * MS, 0,
				  TWHEEL_ARM_BOOTTIME));
	d1 = clock_ns(CLOCK_BOOTTIME) + 50 * MS;
	EXPECT_EQ(-EINVAL, twl_modify(&self->tw, 3, d1, TWHEEL_ARM_ABS));
	ASSERT_EQ(0, twl_modify(&self->tw, 3, d1,
				TWHEEL_ARM_ABS | TWHEEL_ARM_BOOTTIME));
	ASSERT_EQ(1, read_ev(self, ev, 1, 5000));
	EXPECT_EQ(3, ev[0].key);
	EXPECT_EQ(d1, ev[0].deadline_ns);
	EXPECT_TRUE(fired_on(&ev[0], CLOCK_BOOTTIME));
}

#define TIMENS_BOOT_S	(100 * 86400L)	/* 100 days of "suspend" */

/* In the namespace: exit with the number of the first failed check. */
static int timens_boot_child(const struct twl *ptw)
{
	__u64 boot = clock_ns(CLOCK_BOOTTIME), mono = clock_ns(CLOCK_MONOTONIC);
	struct twl tw;
	int err = twl_open(&tw, O_CLOEXEC);
	struct twheel_event ev[1];
	struct twheel_query q;
	__u64 d, before, after;

	/* The namespace's boottime is ahead: otherwise the test is moot. */
	if (boot < mono + (TIMENS_BOOT_S - 1) * NS)
		return 10;
	if (err)
		return 9;
	/* Absolute, 200 ms ahead in the namespace's boottime. */
	d = boot + 200 * MS;
	if (tw_arm_flags(&tw, 1, d, 0, TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_ABS))
		return 11;
	if (twl_query(&tw, 1, &q) || q.deadline_ns != d ||
	    q.remaining_ns > 200 * MS || !q.remaining_ns)
		return 12;
	/* Relative, 100 ms: reported in the namespace's boottime. */
	before = clock_ns(CLOCK_BOOTTIME);
	if (tw_arm_flags(&tw, 2, 100 * MS, 0, TWHEEL_ARM_BOOTTIME))
		return 13;
	after = clock_ns(CLOCK_BOOTTIME);
	if (tw_read_n(&tw, ev, 1, 5000) != 1 || ev[0].key != 2)
		return 14;
	if (ev[0].deadline_ns < before + 100 * MS ||
	    ev[0].deadline_ns > after + 100 * MS)
		return 15;
	if (!fired_on(&ev[0], CLOCK_BOOTTIME))
		return 16;
	/* Key 1 fires 200 ms later, not 100 days later, and not early. */
	if (tw_read_n(&tw, ev, 1, 5000) != 1 || ev[0].key != 1 ||
	    ev[0].deadline_ns != d || !fired_on(&ev[0], CLOCK_BOOTTIME))
		return 17;
	/* A CLOCK_MONOTONIC timer of the namespace has no boottime offset. */
	d = clock_ns(CLOCK_MONOTONIC) + 50 * MS;
	if (tw_arm_flags(&tw, 3, d, 0, TWHEEL_ARM_ABS))
		return 18;
	if (tw_read_n(&tw, ev, 1, 5000) != 1 || ev[0].key != 3 ||
	    ev[0].deadline_ns != d || !fired_on(&ev[0], CLOCK_MONOTONIC))
		return 19;
	/* A boottime before the namespace's offset: long past, at once. */
	if (tw_arm_flags(&tw, 4, NS, 0, TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_ABS))
		return 20;
	if (tw_read_n(&tw, ev, 1, 5000) != 1 || ev[0].key != 4 ||
	    ev[0].deadline_ns != TIMENS_BOOT_S * NS)
		return 21;
	/* Left for the parent: key 5, 10 s ahead in the namespace. */
	if (tw_arm_flags(ptw, 5, clock_ns(CLOCK_BOOTTIME) + 10000 * MS, 0,
			 TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_ABS))
		return 22;
	twl_close(&tw);
	return 0;
}

/*
 * A namespace whose CLOCK_BOOTTIME is 100 days ahead, as after a long
 * suspend: its timers' times are its own; the parent, in the host's
 * namespace, sees the child's timer 100 days earlier.
 */
TEST_F(clock, boottime_timens_offset)
{
	__u64 before = clock_ns(CLOCK_BOOTTIME);
	struct twheel_query q;
	int pid, wst;

	pid = tw_timens_fork("boottime", TIMENS_BOOT_S);
	if (pid == -EINVAL || pid == -ENOENT)
		SKIP(return, "no time namespaces (CONFIG_TIME_NS=n)");
	if (pid == -EPERM)
		SKIP(return, "may not create a time namespace");
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(timens_boot_child(&self->tw));
	ASSERT_EQ(pid, waitpid(pid, &wst, 0));
	ASSERT_TRUE(WIFEXITED(wst));
	EXPECT_EQ(0, WEXITSTATUS(wst));
	ASSERT_EQ(0, twl_query(&self->tw, 5, &q));
	EXPECT_LT(before + 9000 * MS, q.deadline_ns);
	EXPECT_GT(clock_ns(CLOCK_BOOTTIME) + 10000 * MS, q.deadline_ns);
	EXPECT_EQ(0, twl_cancel(&self->tw, 5));
}

/* Write @val to the sysfs file @path: 0 or -errno. */
static int sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;
	ssize_t len = strlen(val);

	if (fd < 0)
		return -errno;
	if (write(fd, val, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

#define PM_TEST		"/sys/power/pm_test"

/*
 * A suspend to RAM that stops short of the platform: with pm_test "core"
 * the kernel freezes tasks, suspends devices and timekeeping, waits 5 s
 * (pm_test_delay) instead of entering S3, and resumes. CLOCK_BOOTTIME runs
 * on, CLOCK_MONOTONIC does not: the time slept is injected on resume just
 * as after a real S3, without the firmware's resume path (which once reset
 * the QEMU guest in CI instead of resuming it). A
 * CLOCK_BOOTTIME timer whose deadline passed during the suspend fires at
 * once after the resume (the clock set, its timers filed again); a
 * CLOCK_MONOTONIC one with the same deadline fires later. It suspends the
 * machine, so it runs only in twheel's test guest (twheel_kernel set by its
 * init) or with TWHEEL_SUSPEND=1, and skips where the kernel cannot
 * suspend (the debug kernel has no CONFIG_SUSPEND) or has no
 * CONFIG_PM_DEBUG.
 */
TEST_F(clock, boottime_suspend_resume)
{
	__u64 b0, m0, b1, m1;
	struct twheel_event ev[1];
	int ret;

	if (!getenv("twheel_kernel") && !getenv("TWHEEL_SUSPEND"))
		SKIP(return, "suspends the machine: set TWHEEL_SUSPEND=1");
	if (geteuid())
		SKIP(return, "may not suspend (not root)");
	if (access(PM_TEST, W_OK))
		SKIP(return, "no suspend test (CONFIG_PM_DEBUG, CONFIG_SUSPEND)");

	b0 = clock_ns(CLOCK_BOOTTIME);
	m0 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, b0 + 3000 * MS, 0,
				  TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_ABS));
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 2, m0 + 3000 * MS, 0,
				  TWHEEL_ARM_ABS));
	/* "core" only for this suspend: nothing in between may fail. */
	ret = sysfs_write(PM_TEST, "core") ?:
	      sysfs_write("/sys/power/state", "mem");
	sysfs_write(PM_TEST, "none");
	b1 = clock_ns(CLOCK_BOOTTIME);
	m1 = clock_ns(CLOCK_MONOTONIC);
	fprintf(stderr, "# suspended: boottime +%llu ms, monotonic +%llu ms\n",
		(b1 - b0) / MS, (m1 - m0) / MS);
	if (ret || b1 - b0 < m1 - m0 + 3500 * MS || m1 - m0 > 2500 * MS) {
		twl_cancel(&self->tw, 1);
		twl_cancel(&self->tw, 2);
		if (ret)
			SKIP(return, "suspend failed: %s", strerror(-ret));
		SKIP(return, "no suspend of 3.5 s counted in CLOCK_BOOTTIME");
	}
	/* The boottime timer first, at once, not early in its clock. */
	ASSERT_EQ(1, read_ev(self, ev, 1, 5000));
	EXPECT_EQ(1, ev[0].key);
	EXPECT_EQ(b0 + 3000 * MS, ev[0].deadline_ns);
	EXPECT_LE(ev[0].deadline_ns, ev[0].fire_ns);
	EXPECT_GE(clock_ns(CLOCK_BOOTTIME), ev[0].fire_ns);
	EXPECT_GT(m0 + 3000 * MS, clock_ns(CLOCK_MONOTONIC));
	/* The monotonic timer at its own deadline. */
	ASSERT_EQ(1, read_ev(self, ev, 1, 5000));
	EXPECT_EQ(2, ev[0].key);
	EXPECT_TRUE(fired_on(&ev[0], CLOCK_MONOTONIC));
}

/* Wall-clock times in and out, without a set of the clock. */
TEST_F(clock, realtime_absolute_and_relative)
{
	__u64 d = clock_ns(CLOCK_REALTIME) + 150 * MS, before, after;
	struct twheel_event ev[2];
	struct twheel_query q;

	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, d, 0,
				  TWHEEL_ARM_REALTIME | TWHEEL_ARM_ABS));
	before = clock_ns(CLOCK_REALTIME);
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 2, 50 * MS, 0,
				  TWHEEL_ARM_REALTIME));
	after = clock_ns(CLOCK_REALTIME);
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(d, q.deadline_ns);
	EXPECT_GE(150 * MS, q.remaining_ns);
	ASSERT_EQ(2, read_ev(self, ev, 2, 5000));
	key_order(ev);
	EXPECT_EQ(1, ev[0].key);
	EXPECT_EQ(d, ev[0].deadline_ns);
	EXPECT_TRUE(fired_on(&ev[0], CLOCK_REALTIME));
	EXPECT_EQ(2, ev[1].key);
	EXPECT_LE(before + 50 * MS, ev[1].deadline_ns);
	EXPECT_GE(after + 50 * MS, ev[1].deadline_ns);
	EXPECT_TRUE(fired_on(&ev[1], CLOCK_REALTIME));
}

/*
 * The wall clock set forward 20 s: timers 10 s ahead of it, absolute and
 * relative (made absolute when armed), fire at once, on their deadlines
 * in the clock; the monotonic sentinel does not.
 */
TEST_F(clock, realtime_set_forward_fires)
{
	__u64 d = clock_ns(CLOCK_REALTIME) + 10000 * MS, t0;
	struct twheel_event ev[2];

	if (geteuid())
		SKIP(return, "may not set CLOCK_REALTIME (not root)");

	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, d, 0,
				  TWHEEL_ARM_REALTIME | TWHEEL_ARM_ABS));
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 2, 10000 * MS, 0,
				  TWHEEL_ARM_REALTIME));
	t0 = tw_now();
	ASSERT_EQ(0, step(self, 20000 * MS));
	ASSERT_EQ(2, read_ev(self, ev, 2, 5000));
	/* Promptly: well before the 10 s they had left. */
	EXPECT_GT(t0 + LATE_MAX, tw_now());
	EXPECT_EQ(1, ev[0].key + ev[1].key - 2);
	EXPECT_EQ(TWHEEL_EVENT_LAST, ev[0].flags);
	EXPECT_EQ(TWHEEL_EVENT_LAST, ev[1].flags);
	EXPECT_EQ(d, ev[ev[0].key == 1 ? 0 : 1].deadline_ns);
	EXPECT_LE(ev[0].deadline_ns + 9000 * MS, ev[0].fire_ns);
	EXPECT_LE(ev[1].deadline_ns + 9000 * MS, ev[1].fire_ns);
	EXPECT_GE(clock_ns(CLOCK_REALTIME), ev[0].fire_ns);
}

/*
 * The wall clock set forward by more than the uptime: deadlines then lie
 * before the boot in the clock, where no CLOCK_MONOTONIC time maps them.
 * They still fire at once with their own deadlines, and a periodic timer
 * folds every period it jumped and keeps its phase.
 */
TEST_F(clock, realtime_set_forward_past_boot)
{
	__u64 d = clock_ns(CLOCK_REALTIME) + 10000 * MS, d0, jump, n;
	struct twheel_event ev[2];

	if (geteuid())
		SKIP(return, "may not set CLOCK_REALTIME (not root)");

	d0 = clock_ns(CLOCK_REALTIME) + 1000 * MS;
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, d, 0,
				  TWHEEL_ARM_REALTIME | TWHEEL_ARM_ABS));
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 2, d0, 1000 * MS,
				  TWHEEL_ARM_REALTIME | TWHEEL_ARM_ABS));
	jump = clock_ns(CLOCK_MONOTONIC) + 60000 * MS;
	ASSERT_EQ(0, step(self, jump));
	ASSERT_EQ(2, read_ev(self, ev, 2, 5000));
	if (ev[0].key == 2) {
		struct twheel_event e = ev[0];

		ev[0] = ev[1];
		ev[1] = e;
	}
	EXPECT_EQ(1, ev[0].key);
	EXPECT_EQ(TWHEEL_EVENT_LAST, ev[0].flags);
	EXPECT_EQ(d, ev[0].deadline_ns);
	EXPECT_LE(d + jump - 20000 * MS, ev[0].fire_ns);
	EXPECT_GE(clock_ns(CLOCK_REALTIME), ev[0].fire_ns);
	/* The latest deadline passed, the earlier ones folded. */
	EXPECT_EQ(2, ev[1].key);
	EXPECT_EQ(0, ev[1].flags);
	EXPECT_EQ(0, (ev[1].deadline_ns - d0) % (1000 * MS));
	n = (ev[1].deadline_ns - d0) / (1000 * MS);
	EXPECT_EQ(n, ev[1].overruns);
	EXPECT_LE(ev[1].deadline_ns, ev[1].fire_ns);
	EXPECT_GT(ev[1].deadline_ns + 1000 * MS, ev[1].fire_ns);
	EXPECT_LE(50, n);
	/* Then one period later, in phase. */
	ASSERT_EQ(1, read_ev(self, ev, 1, 5000));
	EXPECT_EQ(2, ev[0].key);
	EXPECT_EQ(d0 + (n + 1) * 1000 * MS, ev[0].deadline_ns);
	EXPECT_EQ(0, ev[0].overruns);
	EXPECT_TRUE(fired_on(&ev[0], CLOCK_REALTIME));
	EXPECT_EQ(0, twl_cancel(&self->tw, 2));
}

/*
 * The wall clock set back 10 s: a timer 200 ms ahead does not fire until
 * the clock reaches its deadline again, 10.2 s later.
 */
/* About 10 s by design; its waits allow up to 27 s: not the default 30. */
TEST_F_TIMEOUT(clock, realtime_set_back_not_early, 90)
{
	struct twheel_event ev[2];
	struct twheel_query q;

	if (geteuid())
		SKIP(return, "may not set CLOCK_REALTIME (not root)");

	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, 200 * MS, 0,
				  TWHEEL_ARM_REALTIME));
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	ASSERT_EQ(0, step(self, -10000LL * MS));
	/* The sentinel only (and it is read again by the teardown). */
	ASSERT_EQ(0, twl_arm(&self->tw, 2, 2, 1000 * MS, 0, 0, 0));
	ASSERT_EQ(1, read_ev(self, ev, 1, 5000));
	EXPECT_EQ(2, ev[0].key);
	/* Not yet: the wall clock has about 9 s to go. */
	ASSERT_TRUE(clock_ns(CLOCK_REALTIME) + 4000 * MS < q.deadline_ns);
	EXPECT_EQ(0, read_ev(self, ev, 1, 1500));
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	EXPECT_LT(1000 * MS, q.remaining_ns);
	ASSERT_EQ(1, read_ev(self, ev, 1, 15000));
	EXPECT_EQ(1, ev[0].key);
	EXPECT_EQ(q.deadline_ns, ev[0].deadline_ns);
	EXPECT_TRUE(fired_on(&ev[0], CLOCK_REALTIME));
}

/*
 * A periodic wall-clock timer counts its deadlines in the clock: set
 * forward 2 s, it comes to the clock's time at once, folding the 10
 * periods of 200 ms it jumped into overruns; no deadline is lost or
 * delivered twice.
 */
TEST_F(clock, realtime_periodic_counts_set)
{
	__u64 d0, prev, t0, r1;
	struct twheel_event ev[1];
	int n = 0;

	if (geteuid())
		SKIP(return, "may not set CLOCK_REALTIME (not root)");

	d0 = clock_ns(CLOCK_REALTIME) + 200 * MS;
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, d0, 200 * MS,
				  TWHEEL_ARM_REALTIME | TWHEEL_ARM_ABS));
	ASSERT_EQ(1, read_ev(self, ev, 1, 5000));
	ASSERT_EQ(1, ev[0].key);
	EXPECT_EQ(0, (ev[0].deadline_ns - d0) % (200 * MS));
	t0 = tw_now();
	ASSERT_EQ(0, step(self, 2000 * MS));
	r1 = clock_ns(CLOCK_REALTIME);
	prev = ev[0].deadline_ns;
	/* Until an event reaches the clock's new time. */
	do {
		ASSERT_EQ(1, read_ev(self, ev, 1, 5000));
		n++;
		EXPECT_EQ(1, ev[0].key);
		EXPECT_EQ(0, ev[0].flags);
		EXPECT_EQ(prev + (ev[0].overruns + 1ULL) * 200 * MS,
			  ev[0].deadline_ns);
		EXPECT_TRUE(ev[0].fire_ns >= ev[0].deadline_ns);
		EXPECT_GE(clock_ns(CLOCK_REALTIME), ev[0].fire_ns);
		prev = ev[0].deadline_ns;
	} while (prev + 200 * MS < r1 && tw_now() < t0 + 5000 * MS);
	/* At once, not period by period through the 2 s. */
	EXPECT_GE(3, n);
	EXPECT_LE(r1 - 200 * MS, prev);
	EXPECT_EQ(0, twl_cancel(&self->tw, 1));
}

/*
 * Periodic CLOCK_REALTIME timers keep firing through sets of the clock
 * forward that come while they fire: the clock work files each again, and
 * a fire on its way meanwhile is not taken for the last one.
 */
TEST_F_TIMEOUT(clock, realtime_periodic_survives_sets, 120)
{
	enum { K = 64, SETS = 300 };
	struct twheel_event ev[K];
	struct twheel_query q;
	int i, n, r;

	if (geteuid())
		SKIP(return, "may not set CLOCK_REALTIME (not root)");

	for (i = 0; i < K; i++)
		ASSERT_EQ(0, tw_arm_flags(&self->tw, i + 1, MS, MS,
					  TWHEEL_ARM_REALTIME));
	for (i = 0; i < SETS; i++) {
		ASSERT_EQ(0, step(self, MS));
		tw_sleep_ms(1);
	}
	for (i = 0; i < K; i++) {
		ASSERT_EQ(0, twl_query(&self->tw, i + 1, &q));
		EXPECT_TRUE(q.state & TWHEEL_STATE_PENDING) {
			TH_LOG("key %d: state %#x", i + 1, q.state);
		}
	}
	/* They fire on: a few reads' worth of their events. */
	for (r = 0; r < 8 && (n = read_ev(self, ev, K, 0)) > 0; r++)
		for (i = 0; i < n; i++)
			EXPECT_EQ(0, ev[i].flags);
	for (i = 0; i < K; i++)
		EXPECT_EQ(0, twl_cancel(&self->tw, i + 1));
}

/*
 * A cancel-on-set timer far ahead is cancelled by a set forward by a
 * little: its last event comes at once, flagged, with its deadline, and
 * its key is free once it is read. A CLOCK_REALTIME timer without the flag,
 * a CLOCK_BOOTTIME one and a monotonic one stay.
 */
TEST_F(clock, cancel_on_set_forward)
{
	__u64 d = clock_ns(CLOCK_REALTIME) + 3600 * NS, t0;
	struct twheel_event ev[1];
	struct twheel_query q;

	if (geteuid())
		SKIP(return, "may not set CLOCK_REALTIME (not root)");

	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, d, 0, TWHEEL_ARM_REALTIME |
				  TWHEEL_ARM_ABS | TWHEEL_ARM_CANCEL_ON_SET));
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 2, d, 0,
				  TWHEEL_ARM_REALTIME | TWHEEL_ARM_ABS));
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 3, 3600 * NS, 0,
				  TWHEEL_ARM_BOOTTIME));
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 4, 3600 * NS, 0, 0));
	t0 = tw_now();
	ASSERT_EQ(0, step(self, 1000 * MS));
	ASSERT_EQ(1, read_ev(self, ev, 1, 5000));
	EXPECT_GT(t0 + LATE_MAX, tw_now());
	EXPECT_EQ(1, ev[0].key);
	EXPECT_EQ(1, ev[0].data);
	EXPECT_EQ(TWHEEL_EVENT_LAST | TWHEEL_EVENT_CANCELED, ev[0].flags);
	EXPECT_EQ(d, ev[0].deadline_ns);
	EXPECT_EQ(0, ev[0].overruns);
	/* When it was cancelled: after the set. */
	EXPECT_LE(clock_ns(CLOCK_REALTIME) - LATE_MAX, ev[0].fire_ns);
	EXPECT_GE(clock_ns(CLOCK_REALTIME), ev[0].fire_ns);
	EXPECT_EQ(-ENOENT, twl_query(&self->tw, 1, &q));
	/* The others are pending, at their deadlines. */
	ASSERT_EQ(0, twl_query(&self->tw, 2, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	EXPECT_EQ(d, q.deadline_ns);
	EXPECT_GT(3600 * NS - 500 * MS, q.remaining_ns);
	ASSERT_EQ(0, twl_query(&self->tw, 3, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	ASSERT_EQ(0, twl_query(&self->tw, 4, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	EXPECT_EQ(0, twl_cancel(&self->tw, 2));
	EXPECT_EQ(0, twl_cancel(&self->tw, 3));
	EXPECT_EQ(0, twl_cancel(&self->tw, 4));
	/* The key is free. */
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, d, 0, TWHEEL_ARM_REALTIME |
				  TWHEEL_ARM_ABS | TWHEEL_ARM_CANCEL_ON_SET));
	EXPECT_EQ(0, twl_cancel(&self->tw, 1));
}

/*
 * A page that stays missing, under userfaultfd, until uffd_serve(), and a
 * page for what is to fill it. Returns 0, 1 if there is no userfaultfd
 * (errno says why), else -errno.
 */
static int uffd_page(int *uffd, void **page, void **src, long *psz)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };

	*psz = sysconf(_SC_PAGESIZE);
	*uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (*uffd < 0)
		return 1;
	*page = mmap(NULL, *psz, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	*src = mmap(NULL, *psz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*page == MAP_FAILED || *src == MAP_FAILED)
		return -ENOMEM;
	reg.range.start = (uintptr_t)*page;
	reg.range.len = *psz;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(*uffd, UFFDIO_API, &api) ||
	    ioctl(*uffd, UFFDIO_REGISTER, &reg))
		return -errno;
	return 0;
}

/* Wait until something faults on @uffd's page: 0, or -EIO after 5 s. */
static int uffd_faulted(int uffd)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&pfd, 1, 5000) != 1 ||
	    read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		return -EIO;
	return 0;
}

/* Fill @uffd's page from @src; the fault that waits for it goes on. */
static void uffd_serve(int uffd, void *page, void *src, long psz)
{
	struct uffdio_copy copy = {
		.dst = (uintptr_t)page,
		.src = (uintptr_t)src,
		.len = psz,
	};

	/* Had the copy failed, closing fails the fault, which returns. */
	if (ioctl(uffd, UFFDIO_COPY, &copy))
		perror("UFFDIO_COPY");
	close(uffd);
}

/* A thread's read() of one event into @buf. */
struct reader {
	const struct twl	*tw;
	void			*buf;
};

static void *reader_fn(void *arg)
{
	struct reader *r = arg;

	twl_read(r->tw, r->buf, 1);
	return NULL;
}

/*
 * A file held stuck (see stuck_start()): a thread's ARM_BATCH of one entry
 * on a page that userfaultfd leaves missing, and its result.
 */
struct stuck {
	const struct twl	*tw;
	long			ret;
	int			uffd;
	long			psz;
	void			*page, *src;
	pthread_t		th;
};

static void *stuck_arm_fn(void *arg)
{
	struct stuck *st = arg;

	st->ret = twl_arm_batch(st->tw, st->page, 1, NULL);
	return NULL;
}

/*
 * Make @tw's mutex held, as any user can do with a FUSE file or
 * userfaultfd: a thread's ARM_BATCH copies its entry from a page that is
 * missing until stuck_end(). Returns 0 once the batch waits for the page,
 * 1 if there is no userfaultfd (errno says why), else -errno.
 */
static int stuck_start(struct stuck *st, const struct twl *tw)
{
	int ret;

	st->tw = tw;
	ret = uffd_page(&st->uffd, &st->page, &st->src, &st->psz);
	if (ret)
		return ret;
	errno = pthread_create(&st->th, NULL, stuck_arm_fn, st);
	if (errno)
		return -errno;
	/* Its batch waits for the page, holding the file's mutex. */
	return uffd_faulted(st->uffd);
}

/* Give the page the entry @arm; returns the batch's result. */
static long stuck_end(struct stuck *st, const struct twheel_arm *arm)
{
	memcpy(st->src, arm, sizeof(*arm));
	uffd_serve(st->uffd, st->page, st->src, st->psz);
	pthread_join(st->th, NULL);
	munmap(st->src, st->psz);
	munmap(st->page, st->psz);
	return st->ret;
}

/*
 * A set of the clock reaches every file while another file's ioctl holds
 * that file's mutex waiting for a page: this file's cancel-on-set timer is
 * cancelled at once, the other file's batch completes once its page comes.
 */
TEST_F(clock, cancel_on_set_past_a_stuck_file)
{
	__u64 d = clock_ns(CLOCK_REALTIME) + 3600 * NS;
	struct twheel_arm arm = twl_arm_entry(7, 0, 3600 * NS, 0, 0, 0);
	struct twheel_event ev[1];
	struct twl other;
	struct stuck st;
	int ret;

	if (geteuid())
		SKIP(return, "may not set CLOCK_REALTIME (not root)");
	/* The other file joins the files a set visits first. */
	ASSERT_EQ(0, twl_open(&other, O_CLOEXEC));
	ASSERT_EQ(0, tw_arm_flags(&other, 1, d, 0,
				  TWHEEL_ARM_REALTIME | TWHEEL_ARM_ABS));
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, d, 0, TWHEEL_ARM_REALTIME |
				  TWHEEL_ARM_ABS | TWHEEL_ARM_CANCEL_ON_SET));
	ret = stuck_start(&st, &other);
	if (ret > 0)
		SKIP(goto out_close, "no userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ret);

	ASSERT_EQ(0, step(self, 1000 * MS));
	EXPECT_EQ(1, read_ev(self, ev, 1, 5000));
	EXPECT_EQ(1, ev[0].key);
	EXPECT_EQ(TWHEEL_EVENT_LAST | TWHEEL_EVENT_CANCELED, ev[0].flags);

	EXPECT_EQ(1, stuck_end(&st, &arm));
	EXPECT_EQ(2, tw_fdinfo(other.fd, "timers"));
out_close:
	twl_close(&other);
}

/*
 * The same with more stuck files than the clock work's workqueue runs
 * works at once (256): a set still reaches the file that joined the clock
 * files last, at once, and each stuck file's cancel-on-set timer is
 * cancelled once its ioctl returns.
 */
TEST_F_TIMEOUT(clock, cancel_on_set_past_many_stuck_files, 300)
{
	enum { N = 260 };
	__u64 d = clock_ns(CLOCK_REALTIME) + 3600 * NS;
	struct twheel_arm arm = twl_arm_entry(7, 0, 3600 * NS, 0, 0, 0);
	struct twl *other = calloc(N, sizeof(*other));
	struct stuck *st = calloc(N, sizeof(*st));
	struct twheel_event ev[1] = { 0 };
	int i, n = 0, ret;

	if (geteuid())
		SKIP(goto out_free, "may not set CLOCK_REALTIME (not root)");
	ASSERT_TRUE(other && st);
	for (; n < N; n++) {
		ASSERT_EQ(0, twl_open(&other[n], O_CLOEXEC));
		ASSERT_EQ(0, tw_arm_flags(&other[n], 1, d, 0,
					  TWHEEL_ARM_REALTIME | TWHEEL_ARM_ABS |
					  TWHEEL_ARM_CANCEL_ON_SET));
		ret = stuck_start(&st[n], &other[n]);
		if (ret > 0) {
			twl_close(&other[n]);
			SKIP(goto out_close, "no userfaultfd: %s",
			     strerror(errno));
		}
		ASSERT_EQ(0, ret);
	}
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, d, 0, TWHEEL_ARM_REALTIME |
				  TWHEEL_ARM_ABS | TWHEEL_ARM_CANCEL_ON_SET));

	ASSERT_EQ(0, step(self, 1000 * MS));
	EXPECT_EQ(1, read_ev(self, ev, 1, 5000));
	EXPECT_EQ(1, ev[0].key);
	EXPECT_EQ(TWHEEL_EVENT_LAST | TWHEEL_EVENT_CANCELED, ev[0].flags);
out_close:
	for (i = 0; i < n; i++) {
		EXPECT_EQ(1, stuck_end(&st[i], &arm));
		/* The ioctl returned: the file's work came, and cancelled. */
		EXPECT_EQ(1, tw_read_n(&other[i], ev, 1, 5000));
		EXPECT_EQ(TWHEEL_EVENT_LAST | TWHEEL_EVENT_CANCELED,
			  ev[0].flags);
		twl_close(&other[i]);
	}
out_free:
	free(other);
	free(st);
}

/*
 * While a file's ioctl holds its mutex waiting for a page, a process
 * killed in another ioctl of the file, or reading its fdinfo, dies at
 * once, not when the page comes.
 */
TEST_F(clock, killed_past_a_stuck_file)
{
	struct twheel_arm arm = twl_arm_entry(7, 0, 3600 * NS, 0, 0, 0);
	struct twheel_query q;
	struct twl other;
	struct stuck st;
	pid_t pid[2];
	int i, ret, status, reaped = 0;

	ASSERT_EQ(0, twl_open(&other, O_CLOEXEC));
	ret = stuck_start(&st, &other);
	if (ret > 0)
		SKIP(goto out_close, "no userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ret);
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			if (i)
				tw_fdinfo(other.fd, "timers");
			else
				twl_query(&other, 7, &q);
			_exit(0);
		}
	}
	/* Both wait for the mutex: kill them. */
	tw_sleep_ms(200);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, kill(pid[i], SIGKILL));
	for (i = 0; i < 500 && reaped < 2; i++) {
		ret = waitpid(-1, &status, WNOHANG);
		if (ret > 0) {
			EXPECT_TRUE(WIFSIGNALED(status));
			reaped++;
		} else {
			tw_sleep_ms(10);
		}
	}
	EXPECT_EQ(2, reaped);
	EXPECT_EQ(1, stuck_end(&st, &arm));
	/* Those not dead yet die now that the page came. */
	while (reaped < 2 && waitpid(-1, &status, 0) > 0)
		reaped++;
out_close:
	twl_close(&other);
}

/*
 * A reader whose buffer must be faulted in drops the mutex for the fault;
 * if another ioctl holds it, stuck, when the fault is done, the reader
 * waits for it killably too: killed, it dies at once, and the event it
 * was to read stays queued. The reader's fault waits on its own
 * userfaultfd (the child's), served when the parent says so.
 */
static int reader_child(const struct twl *tw, int go, int faulted)
{
	void *page, *src;
	int uffd, ret;
	pthread_t th;
	long psz;
	char c;

	ret = uffd_page(&uffd, &page, &src, &psz);
	if (ret)
		return write(faulted, "n", 1) == 1 ? 0 : 1;
	errno = pthread_create(&th, NULL, reader_fn, &(struct reader){
				       tw, page });
	if (errno || uffd_faulted(uffd) || write(faulted, "f", 1) != 1 ||
	    read(go, &c, 1) != 1)
		return 1;
	uffd_serve(uffd, page, src, psz);
	pthread_join(th, NULL);
	return 0;
}

TEST_F(clock, killed_reading_past_a_stuck_file)
{
	struct twheel_arm arm = twl_arm_entry(7, 0, 3600 * NS, 0, 0, 0);
	int go[2], faulted[2], i, ret, status, reaped = 0;
	struct twheel_event ev[1];
	struct twl other;
	struct stuck st;
	pid_t pid;
	char c;

	ASSERT_EQ(0, twl_open(&other, O_CLOEXEC));
	ASSERT_EQ(0, twl_arm(&other, 1, 0, 0, 0, 0, 0));
	TW_WAIT_FOR(tw_fdinfo(other.fd, "queued") == 1);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(faulted));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(reader_child(&other, go[0], faulted[1]));
	/* A child that dies without a word is an end of file. */
	close(faulted[1]);
	faulted[1] = -1;
	ASSERT_EQ(1, read(faulted[0], &c, 1));
	if (c == 'n') {
		waitpid(pid, &status, 0);
		SKIP(goto out_close, "no userfaultfd");
	}
	/* The reader waits for its page, without the mutex: hold it. */
	ASSERT_EQ(0, stuck_start(&st, &other));
	ASSERT_EQ(1, write(go[1], "g", 1));
	tw_sleep_ms(500);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	for (i = 0; i < 500 && !reaped; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			reaped = 1;
		else
			tw_sleep_ms(10);
	}
	EXPECT_EQ(1, reaped);
	EXPECT_EQ(1, stuck_end(&st, &arm));
	if (!reaped)
		waitpid(pid, &status, 0);
	EXPECT_TRUE(WIFSIGNALED(status));
	ret = tw_read_n(&other, ev, 1, 1000);
	EXPECT_EQ(1, ret);
	EXPECT_EQ(1, ev[0].key);
out_close:
	close(go[0]);
	close(go[1]);
	close(faulted[0]);
	close(faulted[1]);
	twl_close(&other);
}

/*
 * A periodic cancel-on-set timer whose event is unread when the clock is
 * set: that event becomes the last one, with its deadline and overruns;
 * nothing is lost. A set back cancels as well.
 */
TEST_F(clock, cancel_on_set_keeps_waiting_event)
{
	__u64 d = clock_ns(CLOCK_REALTIME) + 50 * MS;
	struct twheel_event ev[1];
	struct twheel_query q;

	if (geteuid())
		SKIP(return, "may not set CLOCK_REALTIME (not root)");

	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, d, 50 * MS,
				  TWHEEL_ARM_REALTIME | TWHEEL_ARM_ABS |
				  TWHEEL_ARM_CANCEL_ON_SET));
	/* Unread for a few periods. */
	tw_sleep_ms(300);
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING | TWHEEL_STATE_QUEUED, q.state);
	ASSERT_EQ(0, step(self, -2000LL * MS));
	tw_sleep_ms(200);
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(TWHEEL_STATE_QUEUED | TWHEEL_STATE_DONE, q.state);
	ASSERT_EQ(1, read_ev(self, ev, 1, 5000));
	EXPECT_EQ(1, ev[0].key);
	EXPECT_EQ(TWHEEL_EVENT_LAST | TWHEEL_EVENT_CANCELED, ev[0].flags);
	EXPECT_EQ(q.overruns, ev[0].overruns);
	EXPECT_LE(3, ev[0].overruns);
	EXPECT_EQ(0, (ev[0].deadline_ns - d) % (50 * MS));
	EXPECT_EQ(-ENOENT, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(0, read_ev(self, ev, 1, 200));
}

/* Clock flags that do not go together: -EINVAL, nothing armed or moved. */
TEST_F(clock, clock_flags_einval)
{
	static const __u32 bad[] = {
		TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_REALTIME,
		TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_REALTIME | TWHEEL_ARM_ABS,
		TWHEEL_ARM_CANCEL_ON_SET,
		TWHEEL_ARM_CANCEL_ON_SET | TWHEEL_ARM_ABS,
		TWHEEL_ARM_CANCEL_ON_SET | TWHEEL_ARM_REALTIME,
		TWHEEL_ARM_CANCEL_ON_SET | TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_ABS,
		0x80000000U,
	};
	__u64 far = clock_ns(CLOCK_REALTIME) + 3600 * NS;
	struct twheel_arm a[2];
	__s32 status[2] = { 1, 1 };
	struct twheel_query q;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, tw_arm_flags(&self->tw, 1, far, 0, bad[i]));
		EXPECT_EQ(-ENOENT, twl_query(&self->tw, 1, &q));
	}
	/* REPLACE with bad flags leaves the timer as it was. */
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, far, 0,
				  TWHEEL_ARM_REALTIME | TWHEEL_ARM_ABS));
	EXPECT_EQ(-EINVAL, tw_arm_flags(&self->tw, 1, 10 * MS, 0,
					TWHEEL_ARM_REPLACE |
					TWHEEL_ARM_CANCEL_ON_SET));
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(far, q.deadline_ns);
	/* MODIFY names the timer's clock, and no cancel-on-set. */
	EXPECT_EQ(-EINVAL, twl_modify(&self->tw, 1, 10 * MS, 0));
	EXPECT_EQ(-EINVAL, twl_modify(&self->tw, 1, 10 * MS,
				      TWHEEL_ARM_BOOTTIME));
	EXPECT_EQ(-EINVAL, twl_modify(&self->tw, 1, far, TWHEEL_ARM_REALTIME |
				     TWHEEL_ARM_ABS |
				     TWHEEL_ARM_CANCEL_ON_SET));
	EXPECT_EQ(-EINVAL, twl_modify(&self->tw, 1, 10 * MS,
				      TWHEEL_ARM_REALTIME |
				     TWHEEL_ARM_BOOTTIME));
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(far, q.deadline_ns);
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	ASSERT_EQ(0, twl_modify(&self->tw, 1, far + NS,
				TWHEEL_ARM_REALTIME | TWHEEL_ARM_ABS));
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(far + NS, q.deadline_ns);
	EXPECT_EQ(0, twl_cancel(&self->tw, 1));
	/* In a batch: the bad entry fails alone. */
	a[0] = twl_arm_entry(1, 1, 3600 * NS, 0, 0,
			     TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_REALTIME);
	a[1] = twl_arm_entry(2, 2, 3600 * NS, 0, 0, TWHEEL_ARM_BOOTTIME);
	EXPECT_EQ(1, twl_arm_batch(&self->tw, a, 2, status));
	EXPECT_EQ(-EINVAL, status[0]);
	EXPECT_EQ(0, status[1]);
	EXPECT_EQ(-ENOENT, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(0, twl_cancel(&self->tw, 2));
}

/*
 * REPLACE may change a timer's clock: a timer of CLOCK_MONOTONIC, whose
 * kernel object has no room for a clock offset, moves to a wider one (its
 * waiting event discarded, as REPLACE does), alone and in a batch, where
 * later entries of the same key must find the moved timer; and back.
 */
TEST_F(clock, replace_changes_clock)
{
	struct twheel_event ev[2];
	struct twheel_arm a[4];
	__s32 status[4] = { 1, 1, 1, 1 };
	struct twheel_query q;
	int i;

	/* A periodic monotonic timer with an event waiting. */
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, 10 * MS, 10 * MS, 0));
	usleep(100 * 1000);
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_TRUE(q.state & TWHEEL_STATE_QUEUED);
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 1, 150 * MS, 0,
				  TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_REPLACE));
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	EXPECT_LT(clock_ns(CLOCK_BOOTTIME), q.deadline_ns);
	ASSERT_EQ(1, read_ev(self, ev, 1, 5000));
	EXPECT_EQ(1, ev[0].key);
	EXPECT_EQ(TWHEEL_EVENT_LAST, ev[0].flags);
	EXPECT_EQ(0, ev[0].overruns);
	EXPECT_EQ(q.deadline_ns, ev[0].deadline_ns);
	EXPECT_TRUE(fired_on(&ev[0], CLOCK_BOOTTIME));

	/* In a batch: a found timer and a timer the batch made move. */
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 2, 3600 * NS, 0, 0));
	a[0] = twl_arm_entry(2, 20, 3600 * NS, 0, 0,
			     TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_REPLACE);
	a[1] = twl_arm_entry(2, 21, 100 * MS, 0, 0,
			     TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_REPLACE);
	a[2] = twl_arm_entry(3, 30, 3600 * NS, 0, 0, 0);
	a[3] = twl_arm_entry(3, 31, 120 * MS, 0, 0,
			     TWHEEL_ARM_REALTIME | TWHEEL_ARM_REPLACE);
	EXPECT_EQ(4, twl_arm_batch(&self->tw, a, 4, status));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, status[i]);
	ASSERT_EQ(2, read_ev(self, ev, 2, 5000));
	key_order(ev);
	EXPECT_EQ(2, ev[0].key);
	EXPECT_EQ(21, ev[0].data);
	EXPECT_TRUE(fired_on(&ev[0], CLOCK_BOOTTIME));
	EXPECT_EQ(3, ev[1].key);
	EXPECT_EQ(31, ev[1].data);
	EXPECT_TRUE(fired_on(&ev[1], CLOCK_REALTIME));

	/* And back to CLOCK_MONOTONIC. */
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 4, 3600 * NS, 0,
				  TWHEEL_ARM_REALTIME));
	ASSERT_EQ(0, tw_arm_flags(&self->tw, 4, 50 * MS, 0,
				  TWHEEL_ARM_REPLACE));
	ASSERT_EQ(1, read_ev(self, ev, 1, 5000));
	EXPECT_EQ(4, ev[0].key);
	EXPECT_TRUE(fired_on(&ev[0], CLOCK_MONOTONIC));
}

TW_HARNESS_MAIN
