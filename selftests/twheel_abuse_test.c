// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel under abuse: files closed while their timers fire, failed
 * allocations on every arm and open path (fault injection), an
 * unprivileged user against the limits and against other files, a flood
 * of one-tick timers against a busy loop, and the overflow edges of the
 * UAPI. Each test prints what it counted.
 *
 * Environment: TWHEEL_CLOSE_MS (close_while_firing, default 3000),
 * TWHEEL_FLOOD_TIMERS (flood_cannot_starve, default 2000) and
 * TWHEEL_LOAD_TIMERS (load: 0 by default, which skips it; make stress
 * sets 1000000).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest_harness.h"

#define NOBODY		65534
#define BATCH		4096

static unsigned long env_ul(const char *name, unsigned long def)
{
	const char *s = getenv(name);

	return s ? strtoul(s, NULL, 0) : def;
}

static __u64 rnd(__u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* Arm @n timers, keys @first.., each @delay from now, with @period. */
static long arm_n(const struct twl *tw, __u64 first, __u32 n, __u64 delay,
		  __u64 period)
{
	static struct twheel_arm a[BATCH];
	static __s32 status[BATCH];
	long armed = 0, ret;
	__u32 i, chunk;

	while (n) {
		chunk = n < BATCH ? n : BATCH;
		for (i = 0; i < chunk; i++)
			a[i] = twl_arm_entry(first++, 0, delay, period, 0, 0);
		ret = twl_arm_batch(tw, a, chunk, status);
		if (ret < 0)
			return ret;
		armed += ret;
		n -= chunk;
	}
	return armed;
}

/* Timers pending on all wheels (debugfs twheel/stats), or -1. */
static long long wheel_pending(void)
{
	long long sum = -1, v;
	unsigned int cpu;

	for (cpu = 0; (v = tw_wheel_stat(cpu, "pending")) >= 0; cpu++)
		sum = (sum < 0 ? 0 : sum) + v;
	return sum;
}

/* Arm a timer due now on @tw and read its event: the file works. */
static int works(const struct twl *tw, __u64 key)
{
	struct twheel_event ev;

	if (twl_arm(tw, key, key, 0, 0, 0, 0))
		return 0;
	return tw_read_n(tw, &ev, 1, 5000) == 1 && ev.key == key;
}

static int drop_to_nobody(void)
{
	return setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY) ||
	       getuid() != NOBODY;
}

/* ---- close while firing ---- */

#define CWF_FILES	32
#define CWF_TIMERS	16
#define CWF_THREADS	4

struct cwf {
	int slot[CWF_FILES];
	__u64 end, tick_ns;
	unsigned long closes, timers, events;
};

/*
 * A file with timers, as a bare fd: the slots swap fds atomically, and
 * the threads read and close them behind one another's backs.
 */
static int cwf_open(struct cwf *c)
{
	struct twheel_arm a[CWF_TIMERS];
	__s32 status[CWF_TIMERS];
	struct twl tw;
	int i;
	long r;

	if (twl_open(&tw, O_NONBLOCK | O_CLOEXEC))
		return -1;
	/* Periodic, one tick apart (tick_ns is at most 1 ms by default). */
	for (i = 0; i < CWF_TIMERS; i++)
		a[i] = twl_arm_entry(i, tw.fd, i * 100000ULL, c->tick_ns, 0, 0);
	r = twl_arm_batch(&tw, a, CWF_TIMERS, status);
	if (r > 0)
		__atomic_add_fetch(&c->timers, r, __ATOMIC_RELAXED);
	return tw.fd;
}

static void *cwf_thread(void *arg)
{
	struct cwf *c = arg;
	__u64 s = (uintptr_t)&s ^ tw_now();
	struct twheel_event ev[8];
	int fd, none;
	unsigned int i;
	ssize_t r;

	while (tw_now() < c->end) {
		i = rnd(&s) % CWF_FILES;
		fd = __atomic_exchange_n(&c->slot[i], -1, __ATOMIC_RELAXED);
		if (fd >= 0) {
			if (rnd(&s) % 2) {
				r = read(fd, ev, sizeof(ev));
				if (r > 0)
					__atomic_add_fetch(&c->events,
							   r / sizeof(ev[0]),
							   __ATOMIC_RELAXED);
			}
			if (rnd(&s) % 2)
				usleep(rnd(&s) % 3000);
			close(fd);
			__atomic_add_fetch(&c->closes, 1, __ATOMIC_RELAXED);
		}
		fd = cwf_open(c);
		none = -1;
		if (fd >= 0 &&
		    !__atomic_compare_exchange_n(&c->slot[i], &none, fd, false,
						 __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			close(fd);
	}
	return NULL;
}

FIXTURE(abuse) {
	struct twl tw;
};

FIXTURE_SETUP(abuse)
{
	ASSERT_EQ(0, twl_open(&self->tw, O_CLOEXEC));
}

FIXTURE_TEARDOWN(abuse)
{
	twl_close(&self->tw);
}

/* Files with periodic one-tick timers, closed at random moments. */
TEST_F_TIMEOUT(abuse, close_while_firing, 600)
{
	struct cwf *c = calloc(1, sizeof(*c));
	pthread_t th[CWF_THREADS];
	long long before = wheel_pending(), after;
	int i;

	ASSERT_NE(NULL, c);
	c->tick_ns = self->tw.version.tick_ns;
	for (i = 0; i < CWF_FILES; i++)
		c->slot[i] = cwf_open(c);
	c->end = tw_now() + env_ul("TWHEEL_CLOSE_MS", 3000) * MS;
	for (i = 0; i < CWF_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, cwf_thread, c));
	for (i = 0; i < CWF_THREADS; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < CWF_FILES; i++)
		if (c->slot[i] >= 0)
			close(c->slot[i]);
	after = wheel_pending();
	TH_LOG("%lu files closed with 1-tick timers firing, %lu timers armed",
	       c->closes, c->timers);
	TH_LOG("%lu events read; wheel pending %lld before, %lld after",
	       c->events, before, after);
	EXPECT_LT(100UL, c->closes);
	EXPECT_EQ(before, after);
	EXPECT_TRUE(works(&self->tw, 1));
	free(c);
}

/* ---- fault injection: /proc/thread-self/fail-nth ---- */

struct fi {
	int nth;		/* /proc/thread-self/fail-nth */
	char old_wait[8];
	unsigned long injected;
};

static void fi_knob(const char *path, const char *val, char *old, size_t len)
{
	int fd = open(path, O_RDWR);
	ssize_t r;

	if (fd < 0)
		return;
	if (old) {
		r = read(fd, old, len - 1);
		old[r > 0 ? r : 0] = 0;
	}
	if (write(fd, val, strlen(val)) < 0)
		perror(path);
	close(fd);
}

/* 0 if fault injection by fail-nth works here, else the reason to skip. */
static const char *fi_setup(struct fi *f)
{
	memset(f, 0, sizeof(*f));
	if (access("/proc/self/fail-nth", F_OK))
		return "no /proc/self/fail-nth (CONFIG_FAULT_INJECTION off)";
	if (access("/sys/kernel/debug/failslab", F_OK))
		return "no failslab in debugfs (CONFIG_FAILSLAB off)";
	f->nth = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (f->nth < 0)
		return "cannot open /proc/thread-self/fail-nth";
	/* GFP_KERNEL allocations too; no stack dumps on the console. */
	fi_knob("/sys/kernel/debug/failslab/ignore-gfp-wait", "N",
		f->old_wait, sizeof(f->old_wait));
	fi_knob("/sys/kernel/debug/failslab/verbose", "0", NULL, 0);
	fi_knob("/sys/kernel/debug/fail_usercopy/verbose", "0", NULL, 0);
	return NULL;
}

static void fi_teardown(struct fi *f)
{
	if (f->old_wait[0])
		fi_knob("/sys/kernel/debug/failslab/ignore-gfp-wait",
			f->old_wait, NULL, 0);
	close(f->nth);
}

/* Fail the @n-th fault site (allocation or user copy) of this thread. */
static void fi_arm(struct fi *f, int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", n);

	if (pwrite(f->nth, buf, len, 0) != len)
		perror("fail-nth");
}

/* Was the fault injected since fi_arm()? Disarms it either way. */
static int fi_injected(struct fi *f)
{
	char buf[16] = "";
	int injected;

	injected = pread(f->nth, buf, sizeof(buf) - 1, 0) > 0 && buf[0] == '0';
	if (pwrite(f->nth, "0", 1, 0) != 1)
		perror("fail-nth");
	f->injected += injected;
	return injected;
}

/*
 * Arm one timer with the n-th fault failed, n = 1, 2, ... until the arm
 * succeeds without a fault. A failed arm returns -ENOMEM (an allocation) or
 * -EFAULT (a user copy), and leaves no timer behind; the file keeps
 * working. 64 timers are armed first each time, so that the arm also grows
 * the hash table, an allocation that may fail without failing the arm.
 */
TEST_F(abuse, fault_arm)
{
	struct twheel_query q;
	const char *why;
	struct fi f;
	long long timers;
	int n, ret, inj, nomem = 0;

	why = fi_setup(&f);
	if (why)
		SKIP(return, "%s", why);
	for (n = 1; n < 100; n++) {
		/* 64 timers in the smallest table: the next one grows it. */
		twl_cancel_all(&self->tw);
		ASSERT_EQ(64, arm_n(&self->tw, 0, 64, 60000 * MS, 0));
		timers = tw_fdinfo(self->tw.fd, "timers");
		fi_arm(&f, n);
		ret = twl_arm(&self->tw, 1000, 0, 60000 * MS, 0, 0, 0);
		inj = fi_injected(&f);
		if (!inj) {
			EXPECT_EQ(0, ret);
			break;
		}
		if (ret) {
			EXPECT_TRUE(ret == -ENOMEM || ret == -EFAULT);
			nomem += ret == -ENOMEM;
			EXPECT_EQ(-ENOENT, twl_query(&self->tw, 1000, &q));
			EXPECT_EQ(timers, tw_fdinfo(self->tw.fd, "timers"));
		} else {
			/* An optional allocation failed: the timer is there. */
			EXPECT_EQ(0, twl_cancel(&self->tw, 1000));
		}
		EXPECT_TRUE(works(&self->tw, 2000 + n));
	}
	fi_teardown(&f);
	TH_LOG("arm: %lu faults injected (%d -ENOMEM), succeeded at n=%d",
	       f.injected, nomem, n);
	EXPECT_LT(0, nomem);
	EXPECT_EQ(65, twl_cancel_all(&self->tw));
}

/*
 * A batch of 8 with the n-th fault failed: an entry that fails, fails
 * alone, with -ENOMEM or -EFAULT, the others are armed, and the count
 * returned is right; a failed header copy fails the whole batch and arms
 * nothing. The batch absorbs most single faults: its chunk's objects come
 * from one bulk allocation, and single allocations take over when that
 * fails, as entries go one by one when the chunk's buffer cannot be had;
 * the key table keeps its size when a larger one cannot be had.
 */
TEST_F(abuse, fault_arm_batch)
{
	struct twheel_arm a[8];
	__s32 status[8];
	struct twheel_query q;
	unsigned long entry_faults = 0;
	long long timers;
	const char *why;
	struct fi f;
	long ret;
	int n, i, inj, ok;

	why = fi_setup(&f);
	if (why)
		SKIP(return, "%s", why);
	for (i = 0; i < 8; i++)
		a[i] = twl_arm_entry(1000 + i, 0, 60000 * MS, 0, 0, 0);
	for (n = 1; n < 200; n++) {
		/* The fifth entry grows the hash table. */
		twl_cancel_all(&self->tw);
		ASSERT_EQ(60, arm_n(&self->tw, 0, 60, 60000 * MS, 0));
		timers = tw_fdinfo(self->tw.fd, "timers");
		fi_arm(&f, n);
		ret = twl_arm_batch(&self->tw, a, 8, status);
		inj = fi_injected(&f);
		if (!inj) {
			EXPECT_EQ(8, ret);
			break;
		}
		if (ret < 0) {
			EXPECT_EQ(-EFAULT, ret);
			EXPECT_EQ(timers, tw_fdinfo(self->tw.fd, "timers"));
			continue;
		}
		for (i = 0, ok = 0; i < 8; i++) {
			if (!status[i]) {
				ok++;
				EXPECT_EQ(0, twl_query(&self->tw, 1000 + i, &q));
				continue;
			}
			entry_faults++;
			EXPECT_TRUE(status[i] == -ENOMEM || status[i] == -EFAULT);
			EXPECT_EQ(-ENOENT, twl_query(&self->tw, 1000 + i, &q));
		}
		EXPECT_EQ(ok, ret);
		EXPECT_EQ(timers + ret, tw_fdinfo(self->tw.fd, "timers"));
		for (i = 0; i < 8; i++)
			twl_cancel(&self->tw, 1000 + i);
		EXPECT_TRUE(works(&self->tw, 2000 + n));
	}
	fi_teardown(&f);
	TH_LOG("batch: %lu faults injected, %lu entries failed alone, succeeded at n=%d",
	       f.injected, entry_faults, n);
	EXPECT_LT(0UL, f.injected);
}

/*
 * open() with the n-th fault failed, with no other file of this user
 * open (so that the per-user record is allocated too): -ENOMEM (or
 * -EFAULT for a failed copy of the path), and the device keeps working.
 */
TEST_F(abuse, fault_open)
{
	const char *why;
	struct fi f;
	int n, fd, inj, err, nomem = 0;

	why = fi_setup(&f);
	if (why)
		SKIP(return, "%s", why);
	/* open() alone under fault injection: no twl_open() handshake. */
	twl_close(&self->tw);
	for (n = 1; n < 200; n++) {
		fi_arm(&f, n);
		fd = open(TW_DEV, O_RDWR | O_CLOEXEC);
		err = errno;
		inj = fi_injected(&f);
		if (fd >= 0)
			close(fd);
		if (!inj) {
			EXPECT_LE(0, fd);
			break;
		}
		/* -EFAULT: a failed copy of the path, in the VFS. */
		if (fd < 0) {
			EXPECT_TRUE(err == ENOMEM || err == EFAULT);
			nomem += err == ENOMEM;
		}
	}
	fi_teardown(&f);
	TH_LOG("open: %lu faults injected (%d -ENOMEM), succeeded at n=%d",
	       f.injected, nomem, n);
	ASSERT_EQ(0, twl_open(&self->tw, O_CLOEXEC));
	EXPECT_TRUE(works(&self->tw, 1));
	EXPECT_LT(0, nomem);
}

/* ---- an unprivileged user ---- */

struct unpriv {
	int dropped, param_write, armed, enospc_arm, enospc_file2;
	int enospc_batch, other_cancel, other_query, other_read;
	int proc_open, cancel_all;
};

/*
 * As nobody, with max_user_timers lowered to 40: 40 timers and no more,
 * over two files; the limit cannot be raised; another user's file and
 * its timers cannot be reached.
 */
TEST_F(abuse, unprivileged_limits)
{
	struct unpriv *u = mmap(NULL, sizeof(*u), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct twheel_arm a[4];
	__s32 status[4] = { 0 };
	struct twheel_event ev;
	struct twheel_query q;
	struct twl tw1, tw2;
	unsigned long old;
	char path[64];
	int i, st;
	pid_t pid, parent = getpid();

	ASSERT_NE(MAP_FAILED, u);
	if (getuid())
		SKIP(return, "needs root to become nobody");
	ASSERT_EQ(0, twl_arm(&self->tw, 0x7777, 0, 2000 * MS, 0, 0, 0));
	if (tw_param_read("max_user_timers", &old) ||
	    tw_param_write("max_user_timers", 40))
		SKIP(return, "cannot set max_user_timers");
	pid = fork();
	if (pid < 0)
		tw_param_write("max_user_timers", old);
	ASSERT_LE(0, pid);
	if (!pid) {
		/* The number of root's file, for /proc/<parent>/fd/. */
		int root_fd = self->tw.fd;

		twl_close(&self->tw);
		u->dropped = !drop_to_nobody();
		if (!u->dropped)
			_exit(1);
		u->param_write = tw_param_write("max_user_timers", 1 << 30);
		twl_open(&tw1, O_NONBLOCK);
		twl_open(&tw2, O_NONBLOCK);
		for (i = 0; i < 41; i++) {
			int r = twl_arm(&tw1, i, 0, 60000 * MS, 0, 0, 0);

			u->armed += !r;
			u->enospc_arm += r == -ENOSPC;
		}
		u->enospc_file2 = twl_arm(&tw2, 1, 0, 0, 0, 0, 0);
		for (i = 0; i < 4; i++)
			a[i] = twl_arm_entry(100 + i, 0, 0, 0, 0, 0);
		if (twl_arm_batch(&tw2, a, 4, status) == 0)
			for (i = 0; i < 4; i++)
				u->enospc_batch += status[i] == -ENOSPC;
		/* root's timer 0x7777 is on root's file only. */
		u->other_cancel = twl_cancel(&tw1, 0x7777);
		u->other_query = twl_query(&tw2, 0x7777, &q);
		u->other_read = twl_read(&tw2, &ev, 1);
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", parent, root_fd);
		i = open(path, O_RDWR);
		u->proc_open = i < 0 ? -errno : 0;
		u->cancel_all = twl_cancel_all(&tw1);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	tw_param_write("max_user_timers", old);
	TH_LOG("nobody: %d armed, %d -ENOSPC (+file 2: %d, batch: %d of 4)",
	       u->armed, u->enospc_arm, u->enospc_file2, u->enospc_batch);
	TH_LOG("param write %d; other file: cancel %d, query %d, read %d, /proc open %d",
	       u->param_write, u->other_cancel, u->other_query, u->other_read,
	       u->proc_open);
	ASSERT_TRUE(u->dropped);
	EXPECT_NE(0, u->param_write);
	EXPECT_EQ(40, u->armed);
	EXPECT_EQ(1, u->enospc_arm);
	EXPECT_EQ(-ENOSPC, u->enospc_file2);
	EXPECT_EQ(4, u->enospc_batch);
	EXPECT_EQ(-ENOENT, u->other_cancel);
	EXPECT_EQ(-ENOENT, u->other_query);
	EXPECT_EQ(-EAGAIN, u->other_read);
	EXPECT_TRUE(u->proc_open == -EACCES || u->proc_open == -EPERM);
	EXPECT_EQ(40, u->cancel_all);
	/* root's timer is untouched and fires. */
	ASSERT_EQ(0, twl_query(&self->tw, 0x7777, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	ASSERT_EQ(1, tw_read_n(&self->tw, &ev, 1, 5000));
	EXPECT_EQ(0x7777ULL, ev.key);
	munmap(u, sizeof(*u));
}

/* ---- a flood of one-tick timers against a busy loop ---- */

struct spin {
	double base_rate, flood_rate, base_cpu, flood_cpu;
	long long fired;
	long armed;
	int dropped;
};

static __u64 thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Spin for @ms; returns loop iterations per ms, *@cpu the CPU share. */
static double spin(unsigned int ms, double *cpu)
{
	__u64 t0 = tw_now(), c0 = thread_cpu_ns(), t = t0, iters = 0;
	__u64 x = 0;
	int i;

	while (t - t0 < ms * MS) {
		for (i = 0; i < 1000; i++) {
			x += i;
			__asm__ __volatile__("" : "+r" (x));
		}
		iters++;
		t = tw_now();
	}
	*cpu = (double)(thread_cpu_ns() - c0) / (t - t0);
	return iters / ((double)(t - t0) / MS);
}

/*
 * nobody arms TWHEEL_FLOOD_TIMERS periodic timers of one tick on CPU 0
 * and spins there: the loop must keep a tenth of the progress it makes
 * without them, a twentieth on a kernel with lock debugging. Each timer
 * fires at most once per wheel run, and a run spends at most half a tick in
 * callbacks at a time (Documentation/twheel.rst, "Bounded work"); the
 * task's CPU time includes the softirqs that interrupt it (Debian has no
 * CONFIG_IRQ_TIME_ACCOUNTING), so its progress is what is checked. Under
 * TCG the loop kept 24-60% on Debian's kernels and, while a work item
 * rather than a SCHED_IDLE thread went on with a backlog, 9-20% on the
 * debug kernel (22-34% since), whose lockdep and KASAN make each
 * interrupt and fire several times dearer.
 */
TEST_F_TIMEOUT(abuse, flood_cannot_starve, 300)
{
	struct spin *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned long n = env_ul("TWHEEL_FLOOD_TIMERS", 2000);
	struct twl tw;
	long long f0;
	int st;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, r);
	if (getuid())
		SKIP(return, "needs root to become nobody");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		tw_pin(0);
		r->dropped = !drop_to_nobody();
		r->base_rate = spin(1000, &r->base_cpu);
		twl_open(&tw, 0);
		r->armed = arm_n(&tw, 0, n, 0, self->tw.version.tick_ns);
		usleep(200000);
		f0 = tw_fdinfo(tw.fd, "fired");
		r->flood_rate = spin(2000, &r->flood_cpu);
		r->fired = tw_fdinfo(tw.fd, "fired") - f0;
		twl_close(&tw);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	TH_LOG("%ld one-tick timers as nobody on CPU 0: %lld fires in 2 s (%lld per tick)",
	       r->armed, r->fired,
	       r->fired * (long long)self->tw.version.tick_ns / (2000 * (long long)MS));
	TH_LOG("busy loop %.0f -> %.0f iterations/ms (%.0f%%), CPU share %.0f%% -> %.0f%%",
	       r->base_rate, r->flood_rate, 100 * r->flood_rate / r->base_rate,
	       100 * r->base_cpu, 100 * r->flood_cpu);
	ASSERT_TRUE(r->dropped);
	EXPECT_EQ((long)n, r->armed);
	EXPECT_LT(0, r->fired);
	EXPECT_LE(r->base_rate / (access("/proc/lockdep", F_OK) ? 10 : 20),
		  r->flood_rate);
	munmap(r, sizeof(*r));
}

/* ---- overflow edges ---- */

/* Deadlines at and past KTIME_MAX, relative and absolute. */
TEST_F(abuse, overflow_expiry)
{
	struct twheel_query q;
	__u64 now = tw_now();

	EXPECT_EQ(-ERANGE, twl_arm(&self->tw, 1, 0, UINT64_MAX, 0, 0, 0));
	EXPECT_EQ(-ERANGE, twl_arm(&self->tw, 1, 0, UINT64_MAX, 0, 0, TWHEEL_ARM_ABS));
	EXPECT_EQ(-ERANGE, twl_arm(&self->tw, 1, 0, (__u64)INT64_MAX + 1, 0, 0,
				   TWHEEL_ARM_ABS));
	EXPECT_EQ(-ERANGE, twl_arm(&self->tw, 1, 0, INT64_MAX - now / 2, 0, 0, 0));
	/* Relative, just inside: accepted, due at most at KTIME_MAX. */
	EXPECT_EQ(0, twl_arm(&self->tw, 1, 0, INT64_MAX - now - 1000 * MS, 0, 0, 0));
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	EXPECT_GE((__u64)INT64_MAX, q.deadline_ns);
	/* Absolute KTIME_MAX exactly: accepted. */
	EXPECT_EQ(0, twl_arm(&self->tw, 2, 0, INT64_MAX, 0, 0, TWHEEL_ARM_ABS));
	ASSERT_EQ(0, twl_query(&self->tw, 2, &q));
	EXPECT_EQ((__u64)INT64_MAX, q.deadline_ns);
	EXPECT_EQ(-ERANGE, twl_modify(&self->tw, 1, UINT64_MAX, TWHEEL_ARM_ABS));
	EXPECT_EQ(0, twl_modify(&self->tw, 1, INT64_MAX, TWHEEL_ARM_ABS));
	EXPECT_EQ(-ERANGE, twl_modify(&self->tw, 1, UINT64_MAX - 1, 0));
	EXPECT_EQ(2, twl_cancel_all(&self->tw));
}

/* Absolute deadlines in the past fire at once and report that deadline. */
TEST_F(abuse, overflow_past)
{
	__u64 past[] = { 0, 1, tw_now() - 1000 * MS, tw_now() - 1 };
	struct twheel_event ev[4];
	int i, got;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, twl_arm(&self->tw, i, 0, past[i], 0, 0, TWHEEL_ARM_ABS));
	got = tw_read_n(&self->tw, ev, 4, 5000);
	ASSERT_EQ(4, got);
	for (i = 0; i < got; i++) {
		EXPECT_EQ(past[ev[i].key], ev[i].deadline_ns);
		EXPECT_LE(ev[i].deadline_ns, ev[i].fire_ns);
		EXPECT_EQ(TWHEEL_EVENT_LAST, ev[i].flags);
		EXPECT_EQ(0U, ev[i].overruns);
	}
	EXPECT_EQ(0, tw_fdinfo(self->tw.fd, "timers"));
}

/*
 * A period that takes the next deadline past KTIME_MAX (or past U64_MAX)
 * ends the timer after its first fire; one that lands on KTIME_MAX
 * exactly keeps it pending there.
 */
TEST_F(abuse, overflow_period)
{
	__u64 now = tw_now();
	struct twheel_event ev[2];
	struct twheel_query q;
	int i;

	ASSERT_EQ(0, twl_arm(&self->tw, 1, 0, now, INT64_MAX, 0, TWHEEL_ARM_ABS));
	ASSERT_EQ(0, twl_arm(&self->tw, 2, 0, now, UINT64_MAX, 0, TWHEEL_ARM_ABS));
	ASSERT_EQ(2, tw_read_n(&self->tw, ev, 2, 5000));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(now, ev[i].deadline_ns);
		EXPECT_EQ(TWHEEL_EVENT_LAST, ev[i].flags);
	}
	EXPECT_EQ(-ENOENT, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(-ENOENT, twl_query(&self->tw, 2, &q));
	EXPECT_TRUE(tw_quiet_for(&self->tw, 50));

	ASSERT_EQ(0, twl_arm(&self->tw, 3, 0, now, INT64_MAX - now, 0,
			     TWHEEL_ARM_ABS));
	ASSERT_EQ(1, tw_read_n(&self->tw, ev, 1, 5000));
	EXPECT_EQ(0U, ev[0].flags);
	ASSERT_EQ(0, twl_query(&self->tw, 3, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	EXPECT_EQ((__u64)INT64_MAX, q.deadline_ns);
	EXPECT_EQ(1, twl_cancel_all(&self->tw));
}

/*
 * Repeat counts at the top of the range: U32_MAX - 1 is a count (it goes
 * down), U32_MAX is TWHEEL_COUNT_FOREVER; a count used up among the
 * overruns of a late first fire delivers exactly its last deadline.
 */
TEST_F(abuse, overflow_count)
{
	__u64 tick = self->tw.version.tick_ns, now = tw_now();
	struct twheel_event ev;
	struct twheel_query q;

	ASSERT_EQ(0, twl_arm(&self->tw, 1, 0, 0, tick, UINT32_MAX - 1, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 2, 0, 0, tick, UINT32_MAX, 0));
	tw_sleep_ms(20);
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_GT(UINT32_MAX - 2, q.fires_left);
	EXPECT_LT(UINT32_MAX - 1000, q.fires_left);
	ASSERT_EQ(0, twl_query(&self->tw, 2, &q));
	EXPECT_EQ(TWHEEL_COUNT_FOREVER, q.fires_left);
	EXPECT_EQ(2, twl_cancel_all(&self->tw));

	/* Due 1000 periods ago, 5 fires: one event, the 5th deadline. */
	ASSERT_EQ(0, twl_arm(&self->tw, 3, 0, now - 1000 * tick, tick, 5,
			     TWHEEL_ARM_ABS));
	ASSERT_EQ(1, tw_read_n(&self->tw, &ev, 1, 5000));
	EXPECT_EQ(now - 1000 * tick + 4 * tick, ev.deadline_ns);
	EXPECT_EQ(4U, ev.overruns);
	EXPECT_EQ(TWHEEL_EVENT_LAST, ev.flags);
	EXPECT_EQ(-ENOENT, twl_query(&self->tw, 3, &q));
	EXPECT_TRUE(tw_quiet_for(&self->tw, 20));
}

/* ---- load: stress only ---- */

struct load {
	struct twl tw;
	int cpu;
	__u64 first, n, base, spread;
	unsigned char *seen;
	__u32 *late_us;
	__u64 got, early, wrong, dup, late_n;
	struct twheel_arm a[BATCH];
	__s32 status[BATCH];
	struct twheel_event ev[BATCH];
};

static void *load_thread(void *arg)
{
	struct load *l = arg;
	struct twheel_event *ev = l->ev;
	__u64 k, i;
	long r;

	tw_pin(l->cpu);
	/* Deadlines spread over the window, in a scrambled order. */
	for (i = 0; i < l->n; i += BATCH) {
		__u32 j, chunk = l->n - i < BATCH ? l->n - i : BATCH;

		for (j = 0; j < chunk; j++) {
			k = l->first + i + j;
			l->a[j] = twl_arm_entry(k, ~k,
						l->base + (k * 7919) % l->spread,
						0, 0, TWHEEL_ARM_ABS);
		}
		if (twl_arm_batch(&l->tw, l->a, chunk, l->status) != chunk)
			return NULL;
	}
	while (l->got < l->n) {
		if (twl_wait(&l->tw, 20000) <= 0)
			break;
		r = twl_read(&l->tw, ev, BATCH);
		if (r <= 0)
			break;
		for (i = 0; i < (__u64)r; i++) {
			k = ev[i].key - l->first;
			if (k >= l->n || ev[i].data != ~ev[i].key ||
			    ev[i].deadline_ns != l->base + (ev[i].key * 7919) % l->spread) {
				l->wrong++;
				continue;
			}
			if (l->seen[k]++) {
				l->dup++;
				continue;
			}
			if (ev[i].fire_ns < ev[i].deadline_ns) {
				l->early++;
				continue;
			}
			l->late_us[l->late_n++] =
				(ev[i].fire_ns - ev[i].deadline_ns) / 1000;
		}
		l->got += r;
	}
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* TWHEEL_LOAD_TIMERS one-shot timers over 2 CPUs firing for 60 s. */
TEST_F_TIMEOUT(abuse, load, 1800)
{
	__u64 n = env_ul("TWHEEL_LOAD_TIMERS", 0), t0;
	static struct load l[2];
	pthread_t th[2];
	__u32 *late;
	__u64 got = 0, early = 0, wrong = 0, dup = 0, nl = 0;
	unsigned long limits[2];
	int i, raised;

	if (!n)
		SKIP(return, "TWHEEL_LOAD_TIMERS not set (make stress sets it)");
	/* The default limits scale with memory: raise them if need be. */
	raised = !tw_limits_raise(n, limits);
	late = calloc(n, sizeof(*late));
	ASSERT_NE(NULL, late);
	t0 = tw_now();
	for (i = 0; i < 2; i++) {
		l[i] = (struct load){
			.cpu = i,
			.first = i * (n / 2), .n = i ? n - n / 2 : n / 2,
			/* Room to arm them all first (slow under TCG). */
			.base = t0 + 30000 * MS, .spread = 60000 * MS,
			.seen = calloc(n, 1), .late_us = late + i * (n / 2),
		};
		ASSERT_EQ(0, twl_open(&l[i].tw, O_CLOEXEC));
		ASSERT_NE(NULL, l[i].seen);
		ASSERT_EQ(0, pthread_create(&th[i], NULL, load_thread, &l[i]));
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		got += l[i].got;
		early += l[i].early;
		wrong += l[i].wrong;
		dup += l[i].dup;
		nl += l[i].late_n;
		twl_close(&l[i].tw);
		free(l[i].seen);
	}
	/* The two halves of late[] are contiguous up to late_n of each. */
	memmove(late + l[0].late_n, late + n / 2, l[1].late_n * sizeof(*late));
	qsort(late, nl, sizeof(*late), cmp_u32);
	TH_LOG("%llu timers on 2 CPUs over 60 s: %llu events, %llu lost, %llu early",
	       (unsigned long long)n, (unsigned long long)got,
	       (unsigned long long)(n - (got - dup - wrong)),
	       (unsigned long long)early);
	TH_LOG("%llu duplicate, %llu wrong; lateness p50 %u us, p99 %u us, max %u us",
	       (unsigned long long)dup, (unsigned long long)wrong,
	       nl ? late[nl / 2] : 0, nl ? late[nl * 99 / 100] : 0,
	       nl ? late[nl - 1] : 0);
	EXPECT_EQ(n, got);
	EXPECT_EQ(0ULL, early);
	EXPECT_EQ(0ULL, dup);
	EXPECT_EQ(0ULL, wrong);
	EXPECT_EQ(n, nl);
	free(late);
	if (raised)
		tw_limits_restore(limits);
}

int main(int argc, char **argv)
{
	tw_require_device();
	return test_harness_run(argc, argv);
}
