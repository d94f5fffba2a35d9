// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel under load: what a burst of timers costs the other tasks of
 * the CPU whose wheel holds them.
 *
 * An unprivileged process arms N timers on CPU 0 (so they go to CPU 0's
 * wheel), with one deadline ("one_slot") or with deadlines spread over a
 * second ("spread"), 1.5 s or more ahead (after all the arming), so that
 * they cascade down from a higher level. A task pinned to CPU 0 spins
 * reading the clock and keeps its longest gap, first for a quiet second
 * before the process starts (the control), then from before the deadline
 * until the last event has been read on CPU 1. The wheel's longest lock
 * hold (interrupts off) comes from debugfs twheel/irqoff; its control is a
 * second of holds of bounded work on the same wheel before the burst
 * (irqoff_control()).
 *
 * Each case prints RESULT records for the benchmark's report:
 *   {"kind": "irqoff", "case": ..., "n": ..., "max_ns": ..., "holds": ...,
 *    "long_holds": ... (holds over a tenth of a tick), "control_ns": ...,
 *    "control_holds": ..., "control_long_holds": ..., "hist": [...],
 *    "control_hist": [...] (holds by length: under 1 us, 1-2 us, 2-4 us,
 *    ...), "tick_ns": ...}
 *   {"kind": "pinned_gap", "case": ..., "n": ..., "max_ns": ...,
 *    "control_ns": ..., "last_late_ns": ..., "tick_ns": ...}
 * and checks bounds loose enough for a loaded QEMU TCG host, whose vCPUs
 * lose their host CPU for milliseconds: twheel must not take the CPU for
 * more than 100 ticks or four times the quiet gap plus 2 ticks, whichever
 * is more, at once (the stalls this catches lasted a second), nor hold a
 * wheel's lock for more than 20 ticks or the quiet gap (but not on the
 * KCSAN kernel: see pinned_task); the numbers that matter are the
 * benchmark's.
 *
 * On a guest of one vCPU (make bench's second boot, under QEMU's -icount
 * shift=0: its clock counts the instructions run, 1 ns each) the same runs
 * measure the work itself, without the host's preemption of the vCPU: the
 * records carry "what": "icount", and the events are read only once the
 * last timer has fired, as a reader there would compete with the pinned
 * task for the one CPU; the task itself looks for the last fire, as a
 * client that woke to look would take the CPU from it too.
 * Environment: TWHEEL_LOAD_N (timers per case, default 50000;
 * make stress and make bench set more), TWHEEL_LOAD_FILES (files they are
 * spread over, default 1), TWHEEL_LOAD_ROUND (the round number printed).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest_harness.h"

#define NOBODY		65534
#define BATCH		4096
#define IRQOFF		"/sys/kernel/debug/twheel/irqoff"
#define MAX_FILES	16
#define IRQOFF_BUCKETS	16

/* What the pinned task does with its gaps. */
enum phase {
	CONTROL,	/* keeps the longest in control_ns */
	ARMING,		/* none: the client competes for the CPU */
	MEASURE,	/* keeps the longest in max_ns */
	STOP,		/* exits */
};

/* Shared by the test, the spinner and the unprivileged client. */
struct gap {
	int	phase;		/* enum phase */
	__u64	control_ns;
	__u64	max_ns;
	__u64	deadline;
	__u64	last;		/* last event read, 0 if not all */
	int	err;		/* the client's errno, if it failed */
	/* On one CPU: the client's files, which the spinner watches. */
	pid_t	client;
	int	nfds;
	int	fds[MAX_FILES];
	__u64	per_fd;		/* timers on each */
};

/*
 * The processes share struct gap: every access is a relaxed atomic one,
 * but to the client's files, which fences order before MEASURE.
 */
#define GET(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define SET(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static unsigned long env_ul(const char *name, unsigned long def)
{
	const char *s = getenv(name);

	return s ? strtoul(s, NULL, 0) : def;
}

static __u64 max_u64(__u64 a, __u64 b)
{
	return a > b ? a : b;
}

/*
 * Every child dies with the test: killed at its timeout, it must not leave
 * a task spinning on CPU 0 or a client holding millions of timers (and the
 * modules). The client calls it after dropping its credentials, which
 * clears the setting.
 */
static void die_with_test(pid_t test)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != test)
		_exit(1);
}

/* Has every timer of the client fired? */
static bool client_all_fired(const struct gap *g)
{
	int i;

	for (i = 0; i < g->nfds; i++)
		if (tw_fdinfo_of(g->client, g->fds[i], "fired") <
		    (long long)g->per_fd)
			return false;
	return true;
}

/*
 * The pinned task: spins on CPU 0 and keeps its longest gap per phase. On
 * a guest of one CPU (@done >= 0) it also watches the client's files, every
 * 10 ms, its own look not counted as a gap, and ends the measurement when
 * every timer has fired: one byte on @done, which the client waits for
 * without waking (a client that polled would take the CPU from the task
 * itself); none if they have not two minutes after their deadline.
 */
static void spin_on_cpu0(struct gap *g, pid_t test, int done)
{
	__u64 last = tw_now(), now, d, look = 0;

	die_with_test(test);
	if (tw_pin(0))
		_exit(1);
	while (GET(g->phase) != STOP) {
		now = tw_now();
		d = now - last;
		last = now;
		if (GET(g->phase) == CONTROL && d > GET(g->control_ns))
			SET(g->control_ns, d);
		else if (GET(g->phase) == MEASURE && d > GET(g->max_ns))
			SET(g->max_ns, d);
		if (done < 0 || GET(g->phase) != MEASURE || now < look)
			continue;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* the files */
		if (client_all_fired(g)) {
			SET(g->phase, STOP);
			_exit(write(done, "x", 1) != 1);
		}
		if (now > GET(g->deadline) + 120000 * MS)
			_exit(1);
		look = now + 10 * MS;
		last = tw_now();
	}
	_exit(0);
}

static int irqoff_write(const char *v)
{
	int fd = open(IRQOFF, O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, v, strlen(v)) < 0 ? -1 : 0;
	close(fd);
	return ret;
}

/* debugfs twheel/irqoff's line @name, or -1. */
static long long irqoff_read(const char *name)
{
	FILE *f = fopen(IRQOFF, "r");
	long long v = -1, x;
	char line[128], key[32];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%31s %lld", key, &x) == 2 && !strcmp(key, name))
			v = x;
	fclose(f);
	return v;
}

/*
 * debugfs twheel/irqoff's "hist" line into @hist: the holds by length, in
 * IRQOFF_BUCKETS buckets (under 1 us, 1-2 us, 2-4 us, ...); -1 if missing.
 */
static int irqoff_hist(long long hist[IRQOFF_BUCKETS])
{
	FILE *f = fopen(IRQOFF, "r");
	char line[512];
	int ret = -1;

	if (!f)
		return -1;
	while (ret && fgets(line, sizeof(line), f)) {
		char *p = line + 4;
		int i, used;

		if (strncmp(line, "hist", 4))
			continue;
		for (i = 0; i < IRQOFF_BUCKETS; i++, p += used)
			if (sscanf(p, " %lld%n", &hist[i], &used) != 1)
				break;
		ret = i == IRQOFF_BUCKETS ? 0 : -1;
	}
	fclose(f);
	return ret;
}

/* What twheel/irqoff says of the holds since it was last written 1. */
struct holds {
	long long	max_ns;
	long long	n;
	long long	long_n;			/* over a tenth of a tick */
	long long	hist[IRQOFF_BUCKETS];
	int		hist_ret;		/* irqoff_hist()'s */
};

static void holds_read(struct holds *h)
{
	h->max_ns = irqoff_read("max_ns");
	h->n = irqoff_read("holds");
	h->long_n = irqoff_read("long");
	h->hist_ret = irqoff_hist(h->hist);
}

static void print_hist(const char *name, const long long hist[IRQOFF_BUCKETS])
{
	int i;

	printf("\"%s\": [", name);
	for (i = 0; i < IRQOFF_BUCKETS; i++)
		printf("%s%lld", i ? ", " : "", hist[i]);
	printf("], ");
}

/*
 * The interrupts-off control, for a second: arm and cancel a timer on CPU
 * 0's wheel next to a pending one, both an hour away, so that every lock
 * hold does O(1) work and none reprograms the hrtimer. What the longest of
 * these holds lasts is what the host adds to a bounded one.
 */
static void irqoff_control(pid_t test)
{
	__u64 end = tw_now() + 1000 * MS;
	struct twl tw;

	die_with_test(test);
	if (twl_open(&tw, O_CLOEXEC) || tw_pin(0) ||
	    twl_arm(&tw, 0, 0, 3600000 * MS, 0, 0, 0))
		_exit(1);
	while (tw_now() < end)
		if (twl_arm(&tw, 1, 0, 3600000 * MS, 0, 0, 0) ||
		    twl_cancel(&tw, 1))
			_exit(1);
	_exit(0);
}

/* Arm @n timers on @tw, keys from @key, at @deadline + i * @spread / @n. */
static int arm_burst(const struct twl *tw, __u64 key, __u32 n,
		     __u64 deadline, __u64 spread)
{
	static struct twheel_arm a[BATCH];
	static __s32 status[BATCH];
	__u32 i, chunk, done = 0;
	long ret;

	while (done < n) {
		chunk = n - done < BATCH ? n - done : BATCH;
		for (i = 0; i < chunk; i++, done++)
			a[i] = twl_arm_entry(key + done, 0,
					     deadline + spread * done / n,
					     0, 0, TWHEEL_ARM_ABS);
		ret = twl_arm_batch(tw, a, chunk, status);
		if (ret != chunk) {
			errno = ret < 0 ? -ret : ENOSPC;
			return -1;
		}
	}
	return 0;
}

/* Read @n events from @tws; returns when the last one came, or 0. */
static __u64 read_all(const struct twl *tws, int nfds, unsigned long n)
{
	static struct twheel_event ev[1024];
	unsigned long got = 0;
	__u64 give_up = tw_now() + 120000 * MS;
	int i;

	while (got < n && tw_now() < give_up) {
		for (i = 0; i < nfds; i++) {
			long r = twl_read(&tws[i], ev, ARRAY_SIZE(ev));

			if (r > 0)
				got += r;
		}
	}
	return got == n ? tw_now() : 0;
}

/* A guest of one vCPU: make bench's second boot, make vm-icount-check. */
static bool one_cpu(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN) == 1;
}

FIXTURE(load) {
	struct twheel_version v;
};

FIXTURE_VARIANT(load) {
	const char *name;
	__u64 spread_ns;
};

FIXTURE_VARIANT_ADD(load, one_slot) {
	.name = "one_slot",
	.spread_ns = 0,
};

FIXTURE_VARIANT_ADD(load, spread) {
	.name = "spread",
	.spread_ns = 1000 * MS,
};

FIXTURE_SETUP(load)
{
	struct twl tw;

	ASSERT_EQ(0, twl_open(&tw, O_CLOEXEC));
	self->v = tw.version;
	twl_close(&tw);
}

FIXTURE_TEARDOWN(load)
{
}

/*
 * The unprivileged client: arms its timers from CPU 0, then reads every
 * event on CPU 1, switching the spinner to measuring on the way. On a guest
 * of one CPU it waits for the spinner to see the last fire, then reads.
 */
static void client(struct gap *g, unsigned long n, int nfds, __u64 spread,
		   pid_t test, int done)
{
	char x;
	struct twl tws[MAX_FILES];
	__u64 deadline;
	int i, ret;

	if (tw_pin(0) || (!getuid() && (setgroups(0, NULL) || setgid(NOBODY) ||
					setuid(NOBODY))))
		goto out_err;
	die_with_test(test);
	for (i = 0; i < nfds; i++) {
		ret = twl_open(&tws[i], O_CLOEXEC | O_NONBLOCK);
		if (ret) {
			errno = -ret;
			goto out_err;
		}
	}
	/* Time a first batch: the deadline must come after all the arming. */
	deadline = tw_now();
	if (arm_burst(&tws[0], 0, BATCH, deadline + 600000 * MS, 0))
		goto out_err;
	ret = twl_cancel_all(&tws[0]);
	if (ret < 0) {
		errno = -ret;
		goto out_err;
	}
	deadline += 1500 * MS + 3 * (tw_now() - deadline) * (n / BATCH);
	SET(g->deadline, deadline);
	for (i = 0; i < nfds; i++) {
		if (arm_burst(&tws[i], 0, n / nfds, deadline, spread))
			goto out_err;
		g->fds[i] = tws[i].fd;
	}
	g->client = getpid();
	g->nfds = nfds;
	g->per_fd = n / nfds;
	__atomic_thread_fence(__ATOMIC_RELEASE);	/* before MEASURE */
	if (tw_pin(!one_cpu()))
		goto out_err;
	while (tw_now() < deadline - 100 * MS)
		tw_sleep_ms(10);
	SET(g->phase, MEASURE);
	/* On one CPU, the spinner says when the last timer has fired. */
	if (done >= 0 && read(done, &x, 1) != 1) {
		errno = ETIMEDOUT;
		goto out_err;
	}
	SET(g->last, read_all(tws, nfds, n / nfds * nfds));
	_exit(0);
out_err:
	SET(g->err, errno);
	_exit(1);
}

TEST_F_TIMEOUT(load, pinned_task, 900)
{
	unsigned long n = env_ul("TWHEEL_LOAD_N", 50000);
	unsigned long round = env_ul("TWHEEL_LOAD_ROUND", 0);
	int nfds = env_ul("TWHEEL_LOAD_FILES", 1), status, spun;
	__u64 tick = self->v.tick_ns;
	bool icount = one_cpu();
	/* The records' "what": instructions on the guest of one vCPU. */
	const char *what = icount ? "\"what\": \"icount\", " : "";
	unsigned long old[2];
	pid_t test = getpid(), spinner, cl;
	struct holds burst, control;
	int done[2] = { -1, -1 };
	__u64 quiet;
	struct gap *g;

	ASSERT_LE(nfds, MAX_FILES);
	ASSERT_EQ(0, tw_limits_raise(n + 2 * BATCH, old));
	g = mmap(NULL, sizeof(*g), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, g);
	irqoff_write("1");
	cl = fork();
	ASSERT_LE(0, cl);
	if (!cl)
		irqoff_control(test);
	waitpid(cl, &status, 0);
	ASSERT_EQ(0, status) TH_LOG("the interrupts-off control failed");
	holds_read(&control);
	if (icount)
		ASSERT_EQ(0, pipe(done));
	irqoff_write("1");
	spinner = fork();
	ASSERT_LE(0, spinner);
	if (!spinner) {
		if (icount)
			close(done[0]);
		spin_on_cpu0(g, test, done[1]);
	}
	if (icount)
		close(done[1]);
	tw_sleep_ms(1000);			/* the quiet second */
	SET(g->phase, ARMING);
	cl = fork();
	ASSERT_LE(0, cl);
	if (!cl)
		client(g, n, nfds, variant->spread_ns, test, done[0]);
	if (icount)
		close(done[0]);
	waitpid(cl, &status, 0);
	tw_sleep_ms(100);
	SET(g->phase, STOP);
	waitpid(spinner, &spun, 0);
	holds_read(&burst);
	irqoff_write("0");
	tw_limits_restore(old);

	ASSERT_EQ(0, status) TH_LOG("client: %s", strerror(GET(g->err)));
	ASSERT_EQ(0, spun) TH_LOG("the pinned task failed");
	ASSERT_NE(0, GET(g->last)) TH_LOG("not every event arrived");
	ASSERT_EQ(0, burst.hist_ret | control.hist_ret) TH_LOG("no irqoff hist");
	/* One JSON record per line, printed in parts. */
	printf("# RESULT {\"kind\": \"irqoff\", %s\"case\": \"%s\", ", what,
	       variant->name);
	printf("\"round\": %lu, ", round);
	printf("\"n\": %lu, \"max_ns\": %lld, \"holds\": %lld, ", n,
	       burst.max_ns, burst.n);
	printf("\"long_holds\": %lld, \"control_ns\": %lld, ", burst.long_n,
	       control.max_ns);
	printf("\"control_holds\": %lld, \"control_long_holds\": %lld, ",
	       control.n, control.long_n);
	print_hist("hist", burst.hist);
	print_hist("control_hist", control.hist);
	printf("\"tick_ns\": %llu}\n", tick);
	printf("# RESULT {\"kind\": \"pinned_gap\", %s\"case\": \"%s\", ",
	       what, variant->name);
	printf("\"round\": %lu, ", round);
	printf("\"n\": %lu, \"max_ns\": %llu, \"control_ns\": %llu, ",
	       n, GET(g->max_ns), GET(g->control_ns));
	/* On one CPU the events are read after the measurement. */
	if (!icount)
		printf("\"last_late_ns\": %llu, ",
		       GET(g->last) - GET(g->deadline) - variant->spread_ns);
	printf("\"tick_ns\": %llu}\n", tick);
	/* The harness ends the test with _exit(): flush for a file or pipe. */
	fflush(stdout);
	/*
	 * In instructions, where the host's preemption does not count, the
	 * bounds are the design's: a tenth of a tick with interrupts off, two
	 * ticks of the pinned task's CPU at once. With the host's clock they
	 * allow what the quiet second saw: a loaded host deschedules vCPUs for
	 * milliseconds, lock holders included. KCSAN stalls an access that
	 * sets one of its watchpoints for up to 80 us, the wheel's lock held
	 * if it is: on that kernel the case reports its numbers and checks
	 * that every event arrived, no bound.
	 */
	if (icount) {
		EXPECT_LE(burst.max_ns, tick / 10);
		EXPECT_LE(GET(g->max_ns), 2 * tick);
	} else if (!tw_on_kernel("kcsan")) {
		quiet = GET(g->control_ns);
		EXPECT_LE(GET(g->max_ns),
			  max_u64(100 * tick, 4 * quiet + 2 * tick));
		if (burst.max_ns >= 0)
			EXPECT_LE(burst.max_ns, max_u64(20 * tick, quiet));
	}
	munmap(g, sizeof(*g));
}

/*
 * A backlog on a CPU that has nothing else to run goes on in the CPU's
 * runner at once, not half a tick per tick in the hrtimer's slices: a
 * burst longer than the hrtimer's run on an idle CPU (4 ticks), armed on
 * CPU 1 and read on CPU 0, is drained by slices of CPU 1's runner. (A
 * reader on CPU 1 would keep it busy: read() takes events more slowly
 * than the wheel fires them.)
 */
FIXTURE(idle_cpu) {
};

FIXTURE_SETUP(idle_cpu)
{
}

FIXTURE_TEARDOWN(idle_cpu)
{
}

/* The debug kernel takes well over the default 30 s. */
TEST_F_TIMEOUT(idle_cpu, runs_backlog, 300)
{
	static struct twheel_event ev[1024];
	unsigned long n = 100000, got = 0, old[2];
	long long slices, deferred;
	__u64 deadline, give_up;
	struct twl tw;
	long r;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	slices = tw_wheel_stat(1, "slices");
	if (slices < 0)
		SKIP(return, "no debugfs twheel/stats");
	ASSERT_EQ(0, tw_limits_raise(n + BATCH, old));
	ASSERT_EQ(0, tw_pin(1));
	ASSERT_EQ(0, twl_open(&tw, O_CLOEXEC));
	/* Time a first batch: the deadline must come after all the arming. */
	deadline = tw_now();
	ASSERT_EQ(0, arm_burst(&tw, 0, BATCH, deadline + 600000 * MS, 0));
	ASSERT_LE(0, twl_cancel_all(&tw));
	deadline += 200 * MS + 3 * (tw_now() - deadline) * (n / BATCH);
	ASSERT_EQ(0, arm_burst(&tw, 0, n, deadline, 0));
	ASSERT_GT(deadline, tw_now()) TH_LOG("arming took past the deadline");
	deferred = tw_wheel_stat(1, "deferred");
	ASSERT_EQ(0, tw_pin(0));
	give_up = deadline + 60000 * MS;
	while (got < n && tw_now() < give_up) {
		r = twl_read(&tw, ev, ARRAY_SIZE(ev));
		ASSERT_LT(0, r) TH_LOG("read: %s", strerror(-r));
		got += r;
	}
	twl_close(&tw);
	tw_limits_restore(old);
	ASSERT_EQ(n, got);
	slices = tw_wheel_stat(1, "slices") - slices;
	deferred = tw_wheel_stat(1, "deferred") - deferred;
	TH_LOG("%lu events, the last %llu us late: runner slices %lld, backlogs %lld",
	       n, (tw_now() - deadline) / 1000, slices, deferred);
	EXPECT_LT(0, deferred) TH_LOG("the burst took a single slice");
	EXPECT_LT(0, slices);
}

TW_HARNESS_MAIN
