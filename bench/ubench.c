// SPDX-License-Identifier: GPL-2.0
/*
 * ubench - userspace timer benchmarks, run as root inside the test VM
 *
 * Copyright (C) 2026 The twheel authors
 *
 * Prints one "RESULT {json}" line per measurement; bench/report.py reads
 * them next to the kernel module's. For N timers (default 10000,100000):
 *
 *  uarm      timers armed per second from one thread, and kernel memory per
 *            timer (slab objects of /proc/slabinfo plus VmallocUsed, before
 *            and after): timerfd_create + timerfd_settime, timer_create +
 *            timer_settime (SIGEV_NONE; capped at -p seconds), and
 *            /dev/twheel, one TWHEEL_IOC_ARM per timer and TWHEEL_IOC_ARM_BATCH
 *            of 1024, on a file with an event ring of TW_RING slots (the
 *            README's idiom), and io_uring: one IORING_OP_TIMEOUT SQE per
 *            timer (relative), submitted 4096 at a time (liburing).
 *            twheel's memory also counts the pages of its key table and its
 *            ring, as its fdinfo reports them: neither is a slab object nor
 *            vmalloc'ed (a table beyond the largest kmalloc cache comes
 *            from the page allocator unless vmalloc had to step in)
 *  ufree     timers torn down per second, all N pending, after each uarm
 *            run: closing the /dev/twheel file, closing the timerfds,
 *            timer_delete() of the POSIX timers (not io_uring: its ring
 *            cancels its timeouts in a work item after the exit returns)
 *  udeliver  events delivered per second when N timers come due at one
 *            instant, counted from that instant, how late the first one
 *            arrives in userspace (first_late_ns) and how late the last one
 *            (last_late_ns): epoll over N timerfds (each event read from its
 *            fd), read() batches from one /dev/twheel fd, the same fd's
 *            event ring (reaped without system calls, poll() when empty),
 *            and io_uring timeouts reaped from its completion queue
 *
 * Delays are random within 1 s..1 h for the arming runs, so nothing fires
 * while memory is measured.
 *
 * Every measurement runs -r times (9 by default), the facilities taking
 * turns in an order that rotates from round to round, so that a busy
 * stretch of the host hits them alike; report.py takes the medians and
 * their min-max spread.
 *
 * Then, in -R rounds (3 by default), for loads too heavy for nine:
 *
 *  udeliver  -b N (1M by default, 0: none) due at one instant, as above,
 *            without epoll+timerfd (1M timerfds: 1M files and ~730 MB)
 *  ukeyed    -k N (1M by default, 0: none) keyed timers on one
 *            /dev/twheel file due over 10 s, reaped from the ring: the
 *            lateness of their events, p50, p99 and max; twice, reaped
 *            on the CPU that armed them (same_cpu) and on another one
 *            (other_cpu)
 *
 * -a and -d choose the arming and delivery runs, as a sum of bits (all by
 * default): arming 1 timerfd, 2 POSIX timers, 4 /dev/twheel single,
 * 8 /dev/twheel batch, 16 io_uring; delivery 1 epoll+timerfd, 2 /dev/twheel
 * read(), 4 its ring, 8 io_uring (-b runs the last three).
 *
 * Usage: ubench [-n N[,N...]] [-p POSIX_CAP_SECONDS] [-r ROUNDS] [-b N]
 *               [-k N] [-R ROUNDS] [-a MASK] [-d MASK]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <twheel/libtwheel.h>
#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

#define USAGE		"usage: ubench [-n N,...] [-p SECONDS] [-r ROUNDS] [-b N] [-k N] [-R ROUNDS] [-a MASK] [-d MASK]\n"
#define MAX_N		8
#define BATCH		1024
#define NSEC_PER_SEC	1000000000ULL
#define HOUR_NS		(3600 * NSEC_PER_SEC)

static unsigned int posix_cap_s = 20;
static unsigned int arm_mask = ~0U, deliver_mask = ~0U;
static unsigned int rounds = 9;
static unsigned int heavy_rounds = 3;

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static struct timespec ns_to_ts(__u64 ns)
{
	struct timespec ts = { ns / NSEC_PER_SEC, ns % NSEC_PER_SEC };

	return ts;
}

/* xorshift64*: reproducible delays without libc state. */
static __u64 rnd_state = 0x9e3779b97f4a7c15ULL;

static __u64 rnd_delay(__u64 lo, __u64 hi)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return lo + (rnd_state * 2685821657736338717ULL) % (hi - lo);
}

static void die(const char *what)
{
	fprintf(stderr, "ubench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- RESULT lines ---- */

static char json[1024];
static size_t json_len;

static void jadd(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(json + json_len, sizeof(json) - json_len, fmt, ap);
	va_end(ap);
	if (n > 0)
		json_len += n;
	if (json_len >= sizeof(json))
		json_len = sizeof(json) - 1;
}

static unsigned int cur_round;

static void jbegin(const char *kind)
{
	json_len = 0;
	jadd("\"kind\":\"%s\",\"round\":%u", kind, cur_round);
}

static void jstr(const char *key, const char *val)
{
	jadd(",\"%s\":\"%s\"", key, val);
}

static void jnum(const char *key, double val)
{
	jadd(",\"%s\":%.1f", key, val);
}

static void jint(const char *key, long long val)
{
	jadd(",\"%s\":%lld", key, val);
}

static void jend(void)
{
	printf("RESULT {%s}\n", json);
	fflush(stdout);
}

/* ---- kernel memory ---- */

/**
 * struct kmem - kernel memory in use
 * @obj_b:	bytes of allocated slab objects (/proc/slabinfo active_objs
 *		times objsize, all caches); exact where Slab pages are not,
 *		since freed objects keep their slab pages for reuse
 * @slab_kb:	Slab of /proc/meminfo
 * @vmalloc_kb:	VmallocUsed of /proc/meminfo
 */
struct kmem {
	double	obj_b;
	long	slab_kb;
	long	vmalloc_kb;
};

static double slab_objects(void)
{
	unsigned long active, total, size;
	char line[512], name[64];
	double sum = 0;
	FILE *f;

	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lu %lu %lu", name, &active, &total,
			   &size) == 4)
			sum += (double)active * size;
	fclose(f);
	return sum;
}

static struct kmem kmem_now(void)
{
	struct kmem m = { slab_objects(), -1, -1 };
	char line[256];
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (!f)
		return m;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Slab: %ld kB", &m.slab_kb) == 1)
			continue;
		if (sscanf(line, "VmallocUsed: %ld kB", &m.vmalloc_kb) == 1)
			continue;
	}
	fclose(f);
	return m;
}

/*
 * Bytes per timer of kernel memory growth since @before: slab objects plus
 * vmalloc plus @pages bytes that neither counts ("mem_b"), and the Slab
 * pages of meminfo for reference.
 */
static void jkmem_pages(struct kmem before, unsigned int n, double pages)
{
	struct kmem after = kmem_now();
	double obj = after.obj_b - before.obj_b;
	double vm = (after.vmalloc_kb - before.vmalloc_kb) * 1024.0;

	if (!n)
		return;
	jnum("mem_b", (obj + vm + pages) / n);
	jnum("slab_obj_b", obj / n);
	jnum("vmalloc_b", vm / n);
	jnum("slab_pages_b", (after.slab_kb - before.slab_kb) * 1024.0 / n);
}

static void jkmem(struct kmem before, unsigned int n)
{
	jkmem_pages(before, n, 0);
}

/* Let RCU-deferred frees of the last run finish before the next measures. */
static void settle(void)
{
	usleep(500 * 1000);
}

static void jrate(unsigned int n, __u64 t0, __u64 t1)
{
	jnum("per_s", t1 > t0 ? n * (double)NSEC_PER_SEC / (t1 - t0) : 0);
}

/* The "ufree" record of @fac: @n pending timers torn down from @t0 to now. */
static void jfree(const char *fac, unsigned int n, __u64 t0)
{
	__u64 t1 = now_ns();

	jbegin("ufree");
	jstr("fac", fac);
	jint("n", n);
	jrate(n, t0, t1);
	jend();
}

/* Raise twheel-dev's limit @name to at least @n, if it is lower. */
static void tw_limit(const char *name, unsigned int n)
{
	char path[96];
	unsigned int cur;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/twheel_dev/parameters/%s",
		 name);
	f = fopen(path, "r+");
	if (!f)
		return;
	if (fscanf(f, "%u", &cur) == 1 && cur < n) {
		rewind(f);
		fprintf(f, "%u\n", n);
	}
	fclose(f);
}

/*
 * Room for @n timerfds and @n POSIX timers (each holds a sigqueue), and
 * for @tw timers on one /dev/twheel file.
 */
static void raise_limits(unsigned int n, unsigned int tw)
{
	struct rlimit rl = { n + 1024, n + 1024 };

	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit(RLIMIT_NOFILE)");
	if (setrlimit(RLIMIT_SIGPENDING, &rl))
		die("setrlimit(RLIMIT_SIGPENDING)");
	tw_limit("max_user_timers", tw);
	tw_limit("max_timers", tw);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die("calloc");
	return p;
}

/* ---- timerfd ---- */

static void tfd_set(int fd, __u64 ns, int flags)
{
	struct itimerspec its = { .it_value = ns_to_ts(ns) };

	if (timerfd_settime(fd, flags, &its, NULL))
		die("timerfd_settime");
}

static int tfd_new(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);

	if (fd < 0)
		die("timerfd_create");
	return fd;
}

static void close_all(int *fds, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

static void arm_timerfd(unsigned int n)
{
	int *fds = xcalloc(n, sizeof(*fds));
	struct kmem before = kmem_now();
	__u64 t0, t1;
	unsigned int i;

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		fds[i] = tfd_new();
		tfd_set(fds[i], rnd_delay(NSEC_PER_SEC, HOUR_NS), 0);
	}
	t1 = now_ns();
	jbegin("uarm");
	jstr("fac", "timerfd");
	jint("n", n);
	jrate(n, t0, t1);
	jkmem(before, n);
	jend();
	t0 = now_ns();
	close_all(fds, n);
	jfree("timerfd", n, t0);
	free(fds);
	settle();
}

/* ---- POSIX timers ---- */

static void arm_posix(unsigned int n)
{
	struct sigevent sev = { .sigev_notify = SIGEV_NONE };
	timer_t *ids = xcalloc(n, sizeof(*ids));
	struct kmem before = kmem_now();
	__u64 t0, t1, cap = posix_cap_s * NSEC_PER_SEC;
	unsigned int i;
	int err = 0;

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		struct itimerspec its = {
			.it_value = ns_to_ts(rnd_delay(NSEC_PER_SEC, HOUR_NS)),
		};

		if (timer_create(CLOCK_MONOTONIC, &sev, &ids[i])) {
			err = errno;
			break;
		}
		if (timer_settime(ids[i], 0, &its, NULL))
			die("timer_settime");
		if (!(i % 1024) && now_ns() - t0 > cap) {
			i++;
			break;
		}
	}
	t1 = now_ns();
	jbegin("uarm");
	jstr("fac", "posix");
	jint("n", n);
	jint("armed", i);
	if (err)
		jstr("error", strerror(err));
	jrate(i, t0, t1);
	jkmem(before, i);
	jend();
	n = i;
	t0 = now_ns();
	while (i--)
		timer_delete(ids[i]);
	jfree("posix", n, t0);
	free(ids);
	settle();
}

/* ---- epoll over timerfds: N due at one instant ---- */

struct deliver {
	__u64 deadline;
	__u64 first;
	__u64 last;
	unsigned int got;
};

static void deliver_report(const char *fac, unsigned int n, struct deliver *d)
{
	jbegin("udeliver");
	jstr("fac", fac);
	jint("n", n);
	jint("got", d->got);
	jrate(d->got, d->deadline, d->last);
	jint("first_late_ns", (long long)(d->first - d->deadline));
	jint("last_late_ns", (long long)(d->last - d->deadline));
	jint("span_ns", d->last - d->first);
	jend();
}

static void epoll_drain(int ep, int *fds, unsigned int n, struct deliver *d)
{
	struct epoll_event ev[1024];
	__u64 ticks;
	int i, got;

	while (d->got < n) {
		got = epoll_wait(ep, ev, 1024, 60 * 1000);
		if (got <= 0)
			break;
		if (!d->first)
			d->first = now_ns();
		for (i = 0; i < got; i++)
			if (read(fds[ev[i].data.u32], &ticks, sizeof(ticks)) ==
			    sizeof(ticks))
				d->got++;
	}
	d->last = now_ns();
}

static void deliver_epoll(unsigned int n)
{
	int *fds = xcalloc(n, sizeof(*fds)), ep;
	struct deliver d = { 0 };
	unsigned int i;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1");
	for (i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

		fds[i] = tfd_new();
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev))
			die("epoll_ctl");
	}
	d.deadline = now_ns() + NSEC_PER_SEC / 2 + n * 20000ULL;
	for (i = 0; i < n; i++)
		tfd_set(fds[i], d.deadline, TFD_TIMER_ABSTIME);
	if (now_ns() >= d.deadline)
		fprintf(stderr, "ubench: epoll: arming took past the deadline\n");
	epoll_drain(ep, fds, n, &d);
	deliver_report("epoll_timerfd", n, &d);
	close(ep);
	close_all(fds, n);
	free(fds);
	settle();
}

/* ---- /dev/twheel ---- */

/* A fresh timer set; -1 (and a "skip" result) without the device. */
static int tw_open(struct twl *tw)
{
	int ret = twl_open(tw, O_CLOEXEC);

	if (ret) {
		jbegin("skip");
		jstr("what", "/dev/twheel");
		jstr("why", strerror(-ret));
		jend();
		return -1;
	}
	return 0;
}

/* Arm @n timers, @batch per ioctl (0: TWHEEL_IOC_ARM each); -1 on error. */
static int tw_arm_n(struct twl *tw, unsigned int n, unsigned int batch,
		    __u64 deadline)
{
	static struct twheel_arm a[BATCH];
	static __s32 status[BATCH];
	__u32 flags = deadline ? TWHEEL_ARM_ABS : 0;
	unsigned int i, j, count;

	for (i = 0; i < n; i += count) {
		count = batch ? (n - i < batch ? n - i : batch) : 1;
		for (j = 0; j < count; j++) {
			__u64 expiry = deadline;

			if (!expiry)
				expiry = rnd_delay(NSEC_PER_SEC, HOUR_NS);
			a[j] = twl_arm_entry(i + j, ~(__u64)(i + j), expiry,
					     0, 0, flags);
		}
		if (!batch && twl_ioctl(tw, TWHEEL_IOC_ARM, &a[0]))
			return -1;
		if (batch && twl_arm_batch(tw, a, count, status) != count)
			return -1;
	}
	return 0;
}

/* The largest kmalloc cache (SLUB: two pages); larger comes in pages. */
#define KMALLOC_MAX_CACHE	8192

/*
 * Bytes of @tw's key table and ring that are not slab objects and not in
 * VmallocUsed, which grew by @vm_b: the ring's pages always, the table's
 * when it is too large for a kmalloc cache and was not vmalloc'ed.
 */
static double tw_pages(const struct twl *tw, double vm_b)
{
	double table = 0, ring = 0;
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", tw->fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "table_bytes: %lf", &table) == 1)
			continue;
		if (sscanf(line, "ring_bytes: %lf", &ring) == 1)
			continue;
	}
	fclose(f);
	jnum("table_bytes", table);
	jnum("ring_bytes", ring);
	if (table <= KMALLOC_MAX_CACHE || vm_b >= table)
		table = 0;
	return table + ring;
}

/* The ring of the arming runs: the README's idiom. */
#define TW_RING		4096

static void arm_twheel(unsigned int n, unsigned int batch)
{
	struct kmem before = kmem_now();
	struct twl tw;
	__u64 t0, t1;

	if (tw_open(&tw))
		return;
	if (twl_ring_setup(&tw, TW_RING))
		die("twheel ring setup");
	t0 = now_ns();
	if (tw_arm_n(&tw, n, batch, 0))
		die("twheel arm");
	t1 = now_ns();
	jbegin("uarm");
	jstr("fac", batch ? "twheel_batch" : "twheel_ioctl");
	jint("n", n);
	if (batch)
		jint("batch", batch);
	jrate(n, t0, t1);
	jkmem_pages(before, n, tw_pages(&tw, (kmem_now().vmalloc_kb -
					       before.vmalloc_kb) * 1024.0));
	jend();
	t0 = now_ns();
	twl_close(&tw);
	jfree(batch ? "twheel_batch" : "twheel_ioctl", n, t0);
	settle();
}

/*
 * Take events until @n arrived, from the ring if @tw has one, else with
 * read() (blocking: it waits as long as events are missing); a minute
 * without one ends a wait on the ring.
 */
static void tw_drain(struct twl *tw, unsigned int n, struct deliver *d)
{
	static struct twheel_event ev[BATCH];
	long got;

	while (d->got < n) {
		if (tw->map)
			got = twl_ring_reap(tw, ev, BATCH);
		else
			got = twl_read(tw, ev, BATCH);
		if (got < 0)
			break;
		if (!got) {
			if (twl_wait(tw, 60 * 1000) != 1)
				break;
			continue;
		}
		if (!d->first)
			d->first = now_ns();
		d->got += got;
	}
	d->last = now_ns();
}

/* The smallest power of two >= @n, at most TWHEEL_RING_ENTRIES_MAX. */
static __u32 ring_entries(unsigned int n)
{
	__u32 e = 1;

	while (e < n && e < TWHEEL_RING_ENTRIES_MAX)
		e <<= 1;
	return e;
}

static void deliver_twheel(unsigned int n, int ring)
{
	struct deliver d = { 0 };
	struct twl tw;

	if (tw_open(&tw))
		return;
	if (ring && twl_ring_setup(&tw, ring_entries(n)))
		die("twheel ring setup");
	d.deadline = now_ns() + NSEC_PER_SEC / 2 + n * 20000ULL;
	if (tw_arm_n(&tw, n, BATCH, d.deadline))
		die("twheel arm");
	if (now_ns() >= d.deadline)
		fprintf(stderr, "ubench: twheel: arming took past the deadline\n");
	tw_drain(&tw, n, &d);
	deliver_report(ring ? "twheel_ring" : "twheel_read", n, &d);
	twl_close(&tw);
	settle();
}

/* ---- keyed timers due over 10 s: lateness under a flood ---- */

#define FLOOD_SPAN_NS	(10 * NSEC_PER_SEC)

static int cmp_s64(const void *a, const void *b)
{
	__s64 x = *(const __s64 *)a, y = *(const __s64 *)b;

	return x < y ? -1 : x > y;
}

/* Sort @v and add its p50, p99 and max as @prefix "p50_ns" etc. */
static void jpct(const char *prefix, __s64 *v, unsigned int n)
{
	char key[32];

	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_s64);
	snprintf(key, sizeof(key), "%sp50_ns", prefix);
	jint(key, v[n / 2]);
	snprintf(key, sizeof(key), "%sp99_ns", prefix);
	jint(key, v[(__u64)n * 99 / 100]);
	snprintf(key, sizeof(key), "%smax_ns", prefix);
	jint(key, v[n - 1]);
}

/* Run the calling thread on @cpu only, or on @mask if @cpu < 0. */
static void pin(int cpu, const cpu_set_t *mask)
{
	cpu_set_t one;

	if (cpu >= 0) {
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		mask = &one;
	}
	if (sched_setaffinity(0, sizeof(*mask), mask))
		die("sched_setaffinity");
}

/*
 * @n keyed timers on one file, absolute deadlines spread at random over
 * FLOOD_SPAN_NS, the first a second after arming is expected to end; the
 * events are reaped from the ring. Lateness is the event's fire_ns minus
 * its deadline_ns (what twheel_bench's "flood" range measures for the
 * kernel's facilities under the same load) and, as a user sees it, the
 * time of the reap minus the deadline. Of the events over 10 ticks late,
 * it counts those due in the first 1/16 of a level-2 slot's span (4096
 * ticks): the ones that wait for the cascade of their slot. (Deadlines
 * are taken as host times: ubench runs in the initial time namespace.)
 *
 * The timers are armed from one CPU, so they all fire there; the events
 * are reaped on that CPU (@same_cpu, case "same_cpu") or on another one
 * ("other_cpu"), whose reaper each batch of fires must wake with an IPI.
 */
static void keyed_flood(unsigned int n, bool same_cpu)
{
	static struct twheel_arm a[BATCH];
	static struct twheel_event ev[BATCH];
	static __s32 status[BATCH];
	__s64 *fire = xcalloc(n, sizeof(*fire)), *user = xcalloc(n, sizeof(*user));
	unsigned int i, j, count, got = 0, early = 0, late = 0, at_start = 0;
	int cpu = sched_getcpu();
	__u64 start, now, tick;
	cpu_set_t all;
	struct twl tw;
	long r;

	if (sched_getaffinity(0, sizeof(all), &all))
		die("sched_getaffinity");
	pin(cpu, NULL);
	if (tw_open(&tw))
		goto out_free;
	if (twl_ring_setup(&tw, 65536))
		die("twheel ring setup");
	tick = tw.version.tick_ns;
	start = now_ns() + NSEC_PER_SEC + n * 10000ULL;
	for (i = 0; i < n; i += count) {
		count = n - i < BATCH ? n - i : BATCH;
		for (j = 0; j < count; j++)
			a[j] = twl_arm_entry(i + j, 0,
					     start + rnd_delay(0, FLOOD_SPAN_NS),
					     0, 0, TWHEEL_ARM_ABS);
		if (twl_arm_batch(&tw, a, count, status) != count)
			die("twheel arm");
	}
	if (now_ns() >= start)
		fprintf(stderr, "ubench: keyed: arming took past the first deadline\n");
	if (!same_cpu)
		pin((cpu + 1) % sysconf(_SC_NPROCESSORS_ONLN), NULL);
	while (got < n) {
		r = twl_ring_reap(&tw, ev, BATCH);
		if (!r) {
			if (twl_wait(&tw, 60 * 1000) != 1)
				break;
			continue;
		}
		now = now_ns();
		for (j = 0; j < r; j++, got++) {
			fire[got] = ev[j].fire_ns - ev[j].deadline_ns;
			user[got] = now - ev[j].deadline_ns;
			early += fire[got] < 0;
			if (fire[got] <= (__s64)(10 * tick))
				continue;
			late++;
			at_start += (ev[j].deadline_ns + tick - 1) / tick %
				    4096 < 256;
		}
	}
	jbegin("ukeyed");
	jstr("fac", "twheel_ring");
	jstr("case", same_cpu ? "same_cpu" : "other_cpu");
	jint("n", n);
	jint("span_ns", FLOOD_SPAN_NS);
	jint("got", got);
	jint("early", early);
	jint("late_10_ticks", late);
	jint("late_at_span_start", at_start);
	jpct("", fire, got);
	jpct("user_", user, got);
	jend();
	twl_close(&tw);
	settle();
out_free:
	pin(-1, &all);
	free(user);
	free(fire);
}

/* ---- io_uring timeouts ---- */

#ifdef HAVE_LIBURING
/* SQEs per submission; the CQ is sized for a burst, overflow beyond. */
#define URING_SQ	4096
#define URING_CQ	65536

static int uring_init(struct io_uring *ring)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP,
		.cq_entries = URING_CQ,
	};
	int ret = io_uring_queue_init_params(URING_SQ, ring, &p);

	if (ret) {
		jbegin("skip");
		jstr("what", "io_uring");
		jstr("why", strerror(-ret));
		jend();
	}
	return ret;
}

/*
 * Queue @n IORING_OP_TIMEOUTs: each at @deadline, absolute
 * (IORING_TIMEOUT_ABS, CLOCK_MONOTONIC), so that all are due at that
 * instant, however long their submission takes; or, if @deadline is 0,
 * at a random delay, relative, as an application arms timeouts. Submit
 * them URING_SQ at a time; the kernel copies each timespec at submission.
 */
static int uring_arm_n(struct io_uring *ring, unsigned int n, __u64 deadline)
{
	static struct __kernel_timespec ts[URING_SQ];
	unsigned int i = 0, j;

	while (i < n) {
		for (j = 0; j < URING_SQ && i < n; j++, i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
			__u64 t = deadline ?: rnd_delay(NSEC_PER_SEC, HOUR_NS);

			if (!sqe)
				return -1;
			ts[j].tv_sec = t / NSEC_PER_SEC;
			ts[j].tv_nsec = t % NSEC_PER_SEC;
			io_uring_prep_timeout(sqe, &ts[j], 0,
					      deadline ? IORING_TIMEOUT_ABS : 0);
			io_uring_sqe_set_data64(sqe, i);
		}
		if (io_uring_submit(ring) != (int)j)
			return -1;
	}
	return 0;
}

/* The next power of two pages from @bytes: the page allocator's order. */
static double pow2_pages(size_t bytes)
{
	size_t pages = 1, page = sysconf(_SC_PAGESIZE);

	while (pages * page < bytes)
		pages *= 2;
	return pages * (double)page;
}

/*
 * Bytes of @ring's rings and SQE array, which come from the page allocator
 * (6.1's io_mem_alloc(): a power of two pages each), neither slab objects
 * nor in VmallocUsed: the counterpart of twheel's ring in tw_pages().
 */
static double uring_pages(const struct io_uring *ring)
{
	size_t rings = ring->sq.ring_sz > ring->cq.ring_sz ?
		       ring->sq.ring_sz : ring->cq.ring_sz;

	return pow2_pages(rings) +
	       pow2_pages(ring->sq.ring_entries * sizeof(struct io_uring_sqe));
}

static void arm_uring(unsigned int n)
{
	struct kmem before = kmem_now();
	struct io_uring ring;
	__u64 t0, t1;
	double rings;

	if (uring_init(&ring))
		return;
	t0 = now_ns();
	if (uring_arm_n(&ring, n, 0))
		die("io_uring arm");
	t1 = now_ns();
	rings = uring_pages(&ring);
	jbegin("uarm");
	jstr("fac", "io_uring");
	jint("n", n);
	jint("batch", URING_SQ);
	jrate(n, t0, t1);
	jnum("ring_bytes", rings);
	jkmem_pages(before, n, rings);
	jend();
	/* Exit cancels the pending timeouts. */
	io_uring_queue_exit(&ring);
	settle();
}

/* Reap completions until @n timeouts fired (-ETIME each). */
static void uring_drain(struct io_uring *ring, unsigned int n,
			struct deliver *d)
{
	struct __kernel_timespec wait = { .tv_sec = 60 };
	struct io_uring_cqe *cqe;
	unsigned int head, seen;

	while (d->got < n) {
		if (io_uring_wait_cqe_timeout(ring, &cqe, &wait))
			break;
		seen = 0;
		io_uring_for_each_cqe(ring, head, cqe) {
			if (cqe->res == -ETIME)
				d->got++;
			seen++;
		}
		io_uring_cq_advance(ring, seen);
		if (!d->first)
			d->first = now_ns();
	}
	d->last = now_ns();
}

static void deliver_uring(unsigned int n)
{
	struct deliver d = { 0 };
	struct io_uring ring;

	if (uring_init(&ring))
		return;
	d.deadline = now_ns() + NSEC_PER_SEC / 2 + n * 20000ULL;
	if (uring_arm_n(&ring, n, d.deadline))
		die("io_uring arm");
	if (now_ns() >= d.deadline)
		fprintf(stderr, "ubench: io_uring: arming took past the deadline\n");
	uring_drain(&ring, n, &d);
	deliver_report("io_uring", n, &d);
	io_uring_queue_exit(&ring);
	settle();
}
#else
static void arm_uring(unsigned int n)
{
	jbegin("skip");
	jstr("what", "io_uring");
	jstr("why", "built without liburing");
	jend();
}

static void deliver_uring(unsigned int n)
{
}
#endif

/* ---- environment ---- */

static void env(void)
{
	char cs[64] = "unknown";
	FILE *f;

	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  "r");
	if (f) {
		if (fscanf(f, "%63s", cs) != 1)
			strcpy(cs, "unknown");
		fclose(f);
	}
	jbegin("uenv");
	jstr("clocksource", cs);
	jint("cpus", sysconf(_SC_NPROCESSORS_ONLN));
	jend();
}

static int parse_list(char *s, unsigned int *out)
{
	int n = 0;
	char *tok;

	for (tok = strtok(s, ","); tok && n < MAX_N; tok = strtok(NULL, ","))
		if (atoi(tok) > 0)
			out[n++] = atoi(tok);
	return n;
}

/* Arming run @which of ARM_RUNS; main() rotates their order by round. */
#define ARM_RUNS	5
static void arm_one(unsigned int which, unsigned int n)
{
	if (!(arm_mask & 1U << which))
		return;
	switch (which) {
	case 0:
		arm_timerfd(n);
		break;
	case 1:
		arm_posix(n);
		break;
	case 2:
		arm_twheel(n, 0);
		break;
	case 3:
		arm_twheel(n, BATCH);
		break;
	default:
		arm_uring(n);
		break;
	}
}

/* Delivery run @which of DELIVER_RUNS, rotated likewise. */
#define DELIVER_RUNS	4
static void deliver_one(unsigned int which, unsigned int n)
{
	if (!(deliver_mask & 1U << which))
		return;
	switch (which) {
	case 0:
		deliver_epoll(n);
		break;
	case 1:
		deliver_twheel(n, 0);
		break;
	case 2:
		deliver_twheel(n, 1);
		break;
	default:
		deliver_uring(n);
		break;
	}
}

/* The heavy runs of a round: -b's delivery without epoll, then -k's. */
static void heavy_round(unsigned int big, unsigned int keyed)
{
	unsigned int f;

	for (f = 0; big && f < DELIVER_RUNS - 1; f++)
		deliver_one(1 + (cur_round + f) % (DELIVER_RUNS - 1), big);
	/* Both reapers in each round, taking turns at going first. */
	for (f = 0; keyed && f < 2; f++) {
		bool same_cpu = (cur_round + f) % 2;

		if (same_cpu || sysconf(_SC_NPROCESSORS_ONLN) > 1)
			keyed_flood(keyed, same_cpu);
	}
}

int main(int argc, char **argv)
{
	unsigned int ns[MAX_N] = { 10000, 100000 }, max, tw_max, f;
	unsigned int big = 1000000, keyed = 1000000;
	int count = 2, opt, i;

	while ((opt = getopt(argc, argv, "n:p:r:b:k:R:a:d:")) != -1) {
		if (opt == 'n')
			count = parse_list(optarg, ns);
		else if (opt == 'p')
			posix_cap_s = atoi(optarg);
		else if (opt == 'r' && atoi(optarg) > 0)
			rounds = atoi(optarg);
		else if (opt == 'b')
			big = atoi(optarg);
		else if (opt == 'k')
			keyed = atoi(optarg);
		else if (opt == 'R')
			heavy_rounds = atoi(optarg);
		else if (opt == 'a')
			arm_mask = strtoul(optarg, NULL, 0);
		else if (opt == 'd')
			deliver_mask = strtoul(optarg, NULL, 0);
		else
			return fputs(USAGE, stderr), 2;
	}
	max = 0;
	for (i = 0; i < count; i++)
		max = ns[i] > max ? ns[i] : max;
	tw_max = max > big ? max : big;
	raise_limits(max, tw_max > keyed ? tw_max : keyed);
	env();
	for (i = 0; i < count; i++) {
		for (cur_round = 0; cur_round < rounds; cur_round++) {
			for (f = 0; f < ARM_RUNS; f++)
				arm_one((cur_round + f) % ARM_RUNS, ns[i]);
			for (f = 0; f < DELIVER_RUNS; f++)
				deliver_one((cur_round + f) % DELIVER_RUNS,
					    ns[i]);
		}
	}
	for (cur_round = 0; cur_round < heavy_rounds; cur_round++)
		heavy_round(big, keyed);
	return 0;
}
