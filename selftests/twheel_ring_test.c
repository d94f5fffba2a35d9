// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel selftests: the event ring, through libtwheel.h.
 *
 * - setup_*: sizes refused, one ring per file, what the ring excludes
 *   (read(), another event size, private mappings).
 * - fire_reap: events arrive in the ring, keys are free once they are in.
 * - wraparound: indexes wrap many times round a small ring.
 * - full_nothing_lost: a ring far too small: the overflow flag and count,
 *   every timer delivered exactly once, periodic fires coalesced.
 * - reader_exits: a child reaps half the ring and dies; the parent reaps
 *   the rest, none twice.
 * - shared_reapers: threads reap one ring by compare-and-swap.
 * - fork_dup: the ring is the file's: a dup() sets it up, a forked child
 *   arms on it, the parent reaps.
 * - munmap_*: unmapping while timers fire loses nothing; a ring still
 *   mapped after close() keeps receiving.
 *
 * Built 64-bit, and as twheel_ring_test32 with -m32 where the compiler can.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <sys/wait.h>

#include <twheel/libtwheel.h>

#include "twheel_test.h"
#include "kselftest_harness.h"

/* Reap until @n events arrived or @ms passed without one; count them. */
static int reap_n(struct twl *tw, struct twheel_event *ev, int n, int ms)
{
	int got = 0;

	while (got < n) {
		int r = twl_ring_reap(tw, ev + got, n - got);

		if (r) {
			got += r;
			continue;
		}
		if (twl_wait(tw, ms) <= 0)
			break;
	}
	return got;
}

/* Each key of 0..n-1 exactly once in @ev? */
static int keys_once(const struct twheel_event *ev, int n)
{
	char *seen = calloc(n, 1);
	int i, ok = 1;

	for (i = 0; i < n && ok; i++) {
		if (ev[i].key >= (__u64)n || seen[ev[i].key]++)
			ok = 0;
	}
	free(seen);
	return ok;
}

FIXTURE(ring) {
	struct twl tw;
};

FIXTURE_SETUP(ring)
{
	ASSERT_EQ(0, twl_open(&self->tw, O_CLOEXEC));
	ASSERT_TRUE(twl_has(&self->tw, TWHEEL_FEATURE_RING));
}

FIXTURE_TEARDOWN(ring)
{
	twl_close(&self->tw);
}

TEST_F(ring, setup_sizes)
{
	struct twheel_ring_setup rs = { .size = sizeof(rs) };
	static const __u32 bad[] = { 0, 3, 100, TWHEEL_RING_ENTRIES_MAX * 2 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		rs.entries = bad[i];
		EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_RING_SETUP,
					    &rs));
	}
	rs.entries = 8;
	rs.flags = 0x80000000;
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_RING_SETUP, &rs));
	/* No ring yet: nothing to map or flush. */
	EXPECT_TRUE(mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->tw.fd, 0) ==
		    MAP_FAILED);
	EXPECT_EQ(-EINVAL, twl_ring_flush(&self->tw));

	ASSERT_EQ(0, twl_ring_setup(&self->tw, 8));
	EXPECT_EQ(7, self->tw.mask);
	EXPECT_EQ(sizeof(struct twheel_event), self->tw.esize);
	EXPECT_EQ(-EBUSY, twl_ring_setup(&self->tw, 8));
	EXPECT_EQ(0, tw_fdinfo(self->tw.fd, "ring_overflow"));
	EXPECT_EQ(8, tw_fdinfo(self->tw.fd, "ring_entries"));
}

TEST_F(ring, setup_excludes)
{
	struct twheel_version v = self->tw.version;
	struct twheel_event ev;
	const __u32 *tail;
	void *p;

	ASSERT_EQ(0, twl_ring_setup(&self->tw, 16));
	/* One way of delivery per file. */
	EXPECT_EQ(-1, read(self->tw.fd, &ev, sizeof(ev)));
	EXPECT_EQ(EBUSY, errno);
	/* The records keep their size; asking for the same one is fine. */
	v.want_event_size = 48;
	EXPECT_EQ(-EBUSY, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, &v));
	v.want_event_size = self->tw.esize;
	EXPECT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, &v));
	/* Private mappings would not see the kernel's tail. */
	p = mmap(NULL, self->tw.map_size, PROT_READ, MAP_PRIVATE,
		 self->tw.fd, 0);
	EXPECT_TRUE(p == MAP_FAILED);
	/* Nor beyond the ring. */
	p = mmap(NULL, self->tw.map_size + 4096, PROT_READ, MAP_SHARED,
		 self->tw.fd, 0);
	EXPECT_TRUE(p == MAP_FAILED);
	/* A second shared mapping is the same ring. */
	p = mmap(NULL, self->tw.map_size, PROT_READ, MAP_SHARED,
		 self->tw.fd, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	tail = (const __u32 *)((char *)p + ((char *)self->tw.tail -
					    (char *)self->tw.map));
	ASSERT_EQ(0, twl_arm(&self->tw, 5, 0, 0, 0, 0, 0));
	TW_WAIT_FOR(__atomic_load_n(tail, __ATOMIC_ACQUIRE) == 1);
	EXPECT_EQ(1, *tail);
	munmap(p, self->tw.map_size);
}

TEST_F(ring, fire_reap)
{
	struct twheel_event ev[10];
	__u64 tick = self->tw.version.tick_ns;
	int i;

	ASSERT_EQ(0, twl_ring_setup(&self->tw, 16));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, twl_arm(&self->tw, i, 100 + i, 5 * MS, 0, 0, 0));
	ASSERT_EQ(10, reap_n(&self->tw, ev, 10, 5000));
	EXPECT_TRUE(keys_once(ev, 10));
	for (i = 0; i < 10; i++) {
		EXPECT_EQ(100 + ev[i].key, ev[i].data);
		EXPECT_EQ(TWHEEL_EVENT_LAST, ev[i].flags);
		EXPECT_TRUE(tw_late_ok(&ev[i], tick));
	}
	EXPECT_EQ(0, twl_ring_count(&self->tw));
	/* The keys are free at the next ioctl. */
	for (i = 0; i < 10; i++)
		EXPECT_EQ(0, twl_arm(&self->tw, i, 0, 1000 * MS, 0, 0, 0));
	EXPECT_EQ(10, tw_fdinfo(self->tw.fd, "timers"));
	EXPECT_EQ(10, twl_cancel_all(&self->tw));
	/* Nothing more: poll says so. */
	EXPECT_EQ(0, twl_wait(&self->tw, 50));
}

TEST_F(ring, wraparound)
{
	struct twheel_event ev[600];
	int wave, i, got = 0;

	ASSERT_EQ(0, twl_ring_setup(&self->tw, 8));
	/* 100 waves of 6 into 8 slots: the indexes wrap 75 times. */
	for (wave = 0; wave < 100; wave++) {
		for (i = 0; i < 6; i++)
			ASSERT_EQ(0, twl_arm(&self->tw, wave * 6 + i, 0,
					     0, 0, 0, 0));
		got += reap_n(&self->tw, ev + got, (wave + 1) * 6 - got, 5000);
		ASSERT_EQ((wave + 1) * 6, got);
	}
	EXPECT_TRUE(keys_once(ev, 600));
	EXPECT_EQ(600, *self->tw.tail);
	EXPECT_EQ(0, *self->tw.overflow);
}

TEST_F(ring, full_nothing_lost)
{
	enum { N = 300 };
	struct twheel_event *ev = calloc(N + 64, sizeof(*ev));
	__u32 overruns = 0;
	int i, got, periodic = 0;
	__u64 key;

	ASSERT_TRUE(!!ev);
	ASSERT_EQ(0, twl_ring_setup(&self->tw, 16));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, twl_arm(&self->tw, i, 0, 2 * MS, 0, 0, 0));
	/* And one that keeps firing while the ring is full, 10 times. */
	ASSERT_EQ(0, twl_arm(&self->tw, 1000000, 0, 2 * MS,
			     self->tw.version.tick_ns * 2, 10, 0));
	/* Every fire came: 300 one-shots and the periodic timer's 10. */
	TW_WAIT_FOR(tw_fdinfo(self->tw.fd, "fired") == N + 10);
	EXPECT_EQ(16, twl_ring_count(&self->tw));
	EXPECT_EQ(TWHEEL_RING_OVERFLOW, *self->tw.flags);
	EXPECT_LE(N - 16, *self->tw.overflow);
	EXPECT_LE(N - 16, tw_fdinfo(self->tw.fd, "queued"));
	/* Reaping makes room; the reaper lets the backlog in. */
	got = 0;
	for (i = 0; i < 1000 && got < N + 64; i++) {
		int r = twl_ring_reap(&self->tw, ev + got, N + 64 - got);

		if (!r)
			break;
		got += r;
	}
	for (i = 0; i < got; i++) {
		key = ev[i].key;
		if (key == 1000000) {
			periodic++;
			overruns += ev[i].overruns;
		}
	}
	EXPECT_EQ(N, got - periodic);
	/* The periodic timer's fires are all there, some folded. */
	EXPECT_LE(1, periodic);
	EXPECT_EQ(10, periodic + overruns);
	EXPECT_EQ(0, *self->tw.flags);
	EXPECT_EQ(0, tw_fdinfo(self->tw.fd, "queued"));
	free(ev);
}

/*
 * Events that waited for read() when the ring was set up and do not fit
 * are its backlog like any other: flagged and counted, so that a reaper
 * that never polls lets them in.
 */
TEST_F(ring, setup_over_waiting_events)
{
	struct twheel_event ev[20];
	int i, got = 0;

	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, twl_arm(&self->tw, i, 0, 0, 0, 0, 0));
	TW_WAIT_FOR(tw_fdinfo(self->tw.fd, "queued") >= 20);
	ASSERT_EQ(20, tw_fdinfo(self->tw.fd, "queued"));
	ASSERT_EQ(0, twl_ring_setup(&self->tw, 8));
	EXPECT_EQ(8, twl_ring_count(&self->tw));
	EXPECT_EQ(TWHEEL_RING_OVERFLOW, *self->tw.flags);
	EXPECT_EQ(12, *self->tw.overflow);
	EXPECT_EQ(12, tw_fdinfo(self->tw.fd, "queued"));
	/* Reaping alone, no poll(): the flag lets the rest in. */
	for (i = 0; i < 10 && got < 20; i++)
		got += twl_ring_reap(&self->tw, ev + got, 20 - got);
	EXPECT_EQ(20, got);
	EXPECT_TRUE(keys_once(ev, got));
	EXPECT_EQ(0, *self->tw.flags);
}

TEST_F(ring, reader_exits)
{
	enum { N = 50 };
	struct twheel_event ev[N];
	int i, got, status;
	pid_t pid;

	ASSERT_EQ(0, twl_ring_setup(&self->tw, 64));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, twl_arm(&self->tw, i, 0, 1 * MS, 0, 0, 0));
	TW_WAIT_FOR(twl_ring_count(&self->tw) == N);
	ASSERT_EQ(N, twl_ring_count(&self->tw));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Reap 20 of them, publish, and die without closing. */
		_exit(twl_ring_reap(&self->tw, ev, 20) == 20 ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	got = reap_n(&self->tw, ev + 20, N - 20, 100);
	EXPECT_EQ(N - 20, got);
	EXPECT_EQ(0, twl_ring_count(&self->tw));
	/* The child's 20 are gone; the rest are the others, once each. */
	for (i = 20; i < N; i++) {
		EXPECT_GT(N, (int)ev[i].key);
		for (int j = 20; j < i; j++)
			EXPECT_NE(ev[j].key, ev[i].key);
	}
	EXPECT_EQ(N, *self->tw.head);
}

struct reaper {
	struct twl *tw;
	int *seen;
	int n;
	int got;
	int *stop;
};

static void *reaper_fn(void *arg)
{
	struct reaper *r = arg;
	struct twheel_event ev;

	while (!__atomic_load_n(r->stop, __ATOMIC_RELAXED)) {
		if (!twl_ring_reap_shared(r->tw, &ev)) {
			twl_wait(r->tw, 10);
			continue;
		}
		if (ev.key < (__u64)r->n)
			__atomic_add_fetch(&r->seen[ev.key], 1, __ATOMIC_RELAXED);
		r->got++;
	}
	return NULL;
}

TEST_F(ring, shared_reapers)
{
	enum { N = 2000, T = 4 };
	struct twheel_arm *arms = calloc(N, sizeof(*arms));
	struct reaper r[T];
	pthread_t th[T];
	int stop = 0;
	int *seen = calloc(N, sizeof(int));
	int i, total = 0, once = 0;

	ASSERT_TRUE(!!arms);
	ASSERT_TRUE(!!seen);
	ASSERT_EQ(0, twl_ring_setup(&self->tw, 64));
	for (i = 0; i < T; i++) {
		r[i] = (struct reaper){ &self->tw, seen, N, 0, &stop };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, reaper_fn, &r[i]));
	}
	/* Spread over 200 ms, so that the ring fills and drains. */
	for (i = 0; i < N; i++)
		arms[i] = twl_arm_entry(i, 0, (i % 200) * MS, 0, 0, 0);
	EXPECT_EQ(N, twl_arm_batch(&self->tw, arms, N, NULL));
	for (i = 0; i < 500 && total < N; i++) {
		int j;

		tw_sleep_ms(20);
		for (total = 0, j = 0; j < N; j++)
			total += __atomic_load_n(&seen[j], __ATOMIC_RELAXED);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < T; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < N; i++)
		once += seen[i] == 1;
	EXPECT_EQ(N, once);
	EXPECT_EQ(N, r[0].got + r[1].got + r[2].got + r[3].got);
	free(arms);
	free(seen);
}

TEST_F(ring, fork_dup)
{
	struct twheel_event ev[40];
	struct twl dup_tw = self->tw;
	int status;
	pid_t pid;

	/* Set up through a dup(): the ring is the file's. */
	dup_tw.fd = dup(self->tw.fd);
	ASSERT_LE(0, dup_tw.fd);
	ASSERT_EQ(0, twl_ring_setup(&dup_tw, 64));
	self->tw.map = NULL;
	EXPECT_EQ(-EBUSY, twl_ring_setup(&self->tw, 64));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int i, ok = 1;

		/* The child arms on the shared file through its copy. */
		for (i = 0; i < 20; i++)
			ok &= !twl_arm(&dup_tw, i, 1, 1 * MS, 0, 0, 0);
		_exit(ok ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	/* The parent reaps them through its own mapping. */
	for (int i = 20; i < 40; i++)
		ASSERT_EQ(0, twl_arm(&self->tw, i, 2, 1 * MS, 0, 0, 0));
	EXPECT_EQ(40, reap_n(&dup_tw, ev, 40, 5000));
	EXPECT_TRUE(keys_once(ev, 40));
	twl_close(&dup_tw);
}

/*
 * TWHEEL_RING_ATTACH tells the layout of the file's ring to another
 * mapping: in a process that had neither the ring nor its mapping at
 * fork(), and a second one in this process through a dup().
 */
TEST_F(ring, attach)
{
	struct twheel_ring_setup rs = {
		.size = sizeof(rs), .flags = TWHEEL_RING_ATTACH,
	};
	struct twheel_event ev[20];
	int go[2], status, i;
	struct twl b;
	pid_t pid;

	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_RING_SETUP, &rs));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct twl c;
		char x;

		/* Dies with the test, if it fails before the write. */
		close(go[1]);
		_exit(!(read(go[0], &x, 1) == 1 &&
			!twl_from_fd(&c, self->tw.fd) && !twl_ring_attach(&c) &&
			reap_n(&c, ev, 20, 5000) == 20 && keys_once(ev, 20)));
	}
	ASSERT_EQ(0, twl_ring_setup(&self->tw, 32));
	rs.entries = 32;
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_RING_SETUP, &rs));
	rs.entries = 0;
	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_RING_SETUP, &rs));
	EXPECT_EQ(32, rs.entries);
	EXPECT_EQ(self->tw.esize, rs.event_size);
	EXPECT_EQ(self->tw.map_size, rs.mmap_size);
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, twl_arm(&self->tw, i, 0, 1 * MS, 0, 0, 0));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
	/* The child reaped them: the head moved for every mapping. */
	EXPECT_EQ(0, twl_ring_count(&self->tw));

	ASSERT_EQ(0, twl_from_fd(&b, dup(self->tw.fd)));
	ASSERT_EQ(0, twl_ring_attach(&b));
	EXPECT_TRUE(self->tw.map != b.map);
	EXPECT_EQ(self->tw.mask, b.mask);
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, twl_arm(&self->tw, i, 0, 1 * MS, 0, 0, 0));
	EXPECT_EQ(20, reap_n(&b, ev, 20, 5000));
	EXPECT_TRUE(keys_once(ev, 20));
	EXPECT_EQ(0, twl_ring_count(&self->tw));
	twl_close(&b);
	close(go[0]);
	close(go[1]);
}

TEST_F(ring, munmap_while_firing)
{
	enum { N = 1000 };
	struct twheel_arm *arms = calloc(N, sizeof(*arms));
	struct twheel_event *ev = calloc(N, sizeof(*ev));
	int i, got;

	ASSERT_TRUE(!!arms);
	ASSERT_TRUE(!!ev);
	ASSERT_EQ(0, twl_ring_setup(&self->tw, 2048));
	for (i = 0; i < N; i++)
		arms[i] = twl_arm_entry(i, 0, (i % 50) * MS, 0, 0, 0);
	EXPECT_EQ(N, twl_arm_batch(&self->tw, arms, N, NULL));
	/* Away while they fire; the kernel writes on. */
	ASSERT_EQ(0, munmap(self->tw.map, self->tw.map_size));
	self->tw.map = NULL;
	tw_sleep_ms(200);
	/* Map it again: all there. */
	ASSERT_EQ(0, twl_ring_attach(&self->tw));
	got = reap_n(&self->tw, ev, N, 2000);
	EXPECT_EQ(N, got);
	EXPECT_TRUE(keys_once(ev, N));
	free(arms);
	free(ev);
}

TEST_F(ring, mapped_after_close)
{
	struct twheel_event ev[20];
	int i;

	ASSERT_EQ(0, twl_ring_setup(&self->tw, 32));
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, twl_arm(&self->tw, i, 0, 50 * MS, 0, 0, 0));
	/* The mapping holds the file: the timers live on and fire. */
	close(self->tw.fd);
	TW_WAIT_FOR(twl_ring_count(&self->tw) == 20);
	EXPECT_EQ(20, twl_ring_count(&self->tw));
	EXPECT_EQ(20, twl_ring_reap(&self->tw, ev, 20));
	EXPECT_TRUE(keys_once(ev, 20));
	/* The last unmap is the last close. */
	self->tw.fd = -1;
}

TEST_F(ring, larger_records)
{
	struct twheel_version v = self->tw.version;
	const unsigned char *rec;
	int i;

	v.want_event_size = 64;
	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, &v));
	ASSERT_EQ(0, twl_ring_setup(&self->tw, 4));
	EXPECT_EQ(64, self->tw.esize);
	for (i = 0; i < 6; i++)
		ASSERT_EQ(0, twl_arm(&self->tw, i, 7, 0, 0, 0, 0));
	TW_WAIT_FOR(tw_fdinfo(self->tw.fd, "queued") == 2);
	ASSERT_EQ(4, twl_ring_count(&self->tw));
	for (i = 0; i < 4; i++) {
		rec = (const unsigned char *)twl_ring_event(&self->tw, i);
		EXPECT_EQ(7, ((const struct twheel_event *)rec)->data);
		for (unsigned int b = sizeof(struct twheel_event); b < 64; b++)
			EXPECT_EQ(0, rec[b]);
	}
	/* The backlog comes in after the head moves, on a flush. */
	__atomic_store_n(self->tw.head, 4, __ATOMIC_RELEASE);
	EXPECT_EQ(2, twl_ring_flush(&self->tw));
	EXPECT_EQ(2, twl_ring_count(&self->tw));
}

TEST_F(ring, garbage_head)
{
	struct twheel_event ev[8];

	ASSERT_EQ(0, twl_ring_setup(&self->tw, 8));
	/* A head ahead of the tail: the kernel treats the ring as full. */
	*self->tw.head = 1000;
	ASSERT_EQ(0, twl_arm(&self->tw, 1, 0, 0, 0, 0, 0));
	TW_WAIT_FOR(tw_fdinfo(self->tw.fd, "queued") == 1);
	EXPECT_EQ(0, *self->tw.tail);
	EXPECT_EQ(1, tw_fdinfo(self->tw.fd, "queued"));
	/* Fixed, the event comes in. */
	*self->tw.head = 0;
	EXPECT_EQ(1, twl_ring_flush(&self->tw));
	EXPECT_EQ(1, twl_ring_reap(&self->tw, ev, 8));
	EXPECT_EQ(1, ev[0].key);
}

TEST_F(ring, backlog_cancelled)
{
	ASSERT_EQ(0, twl_ring_setup(&self->tw, 1));
	ASSERT_EQ(0, twl_arm(&self->tw, 1, 0, 0, 0, 0, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 2, 0, 0, 0, 0, 0));
	TW_WAIT_FOR(tw_fdinfo(self->tw.fd, "queued") == 1);
	EXPECT_EQ(1, twl_ring_count(&self->tw));
	EXPECT_EQ(TWHEEL_RING_OVERFLOW, *self->tw.flags);
	/* The waiting event goes with its timer, and so does the flag. */
	EXPECT_EQ(0, twl_cancel(&self->tw, twl_ring_event(&self->tw, 0)->key
					   == 1 ? 2 : 1));
	EXPECT_EQ(0, *self->tw.flags);
	EXPECT_EQ(0, tw_fdinfo(self->tw.fd, "queued"));
	EXPECT_EQ(1, *self->tw.overflow);
}

/*
 * A fire on its way when its timer is cancelled or replaced goes with the
 * timer's unread event: periodic timers that never end, replaced and
 * cancelled while they fire, leave no event flagged LAST in the ring.
 */
TEST_F_TIMEOUT(ring, cancel_drops_fire_on_its_way, 120)
{
	enum { K = 64, ROUNDS = 1000 };
	struct twheel_arm arms[K];
	struct twheel_event ev[256];
	int i, r, n, last = 0;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two online CPUs");
	ASSERT_EQ(0, twl_ring_setup(&self->tw, 4096));
	/* Each stop from the other CPU than the one the timers fire on. */
	for (r = 0; r < ROUNDS; r++) {
		ASSERT_EQ(0, tw_pin(0));
		for (i = 0; i < K; i++)
			arms[i] = twl_arm_entry(i, r, MS, MS, 0, 0);
		ASSERT_EQ(K, twl_arm_batch(&self->tw, arms, K, NULL));
		tw_sleep_ms(1);
		ASSERT_EQ(0, tw_pin(1));
		for (i = 0; i < K; i++)
			arms[i].flags = TWHEEL_ARM_REPLACE;
		ASSERT_EQ(K, twl_arm_batch(&self->tw, arms, K, NULL));
		tw_sleep_ms(1);
		ASSERT_EQ(0, tw_pin(0));
		ASSERT_EQ(K, twl_cancel_all(&self->tw));
		while ((n = twl_ring_reap(&self->tw, ev, 256)) > 0)
			for (i = 0; i < n; i++)
				last += !!(ev[i].flags & TWHEEL_EVENT_LAST);
	}
	EXPECT_EQ(0, last);
}

/*
 * read() copies with page faults disabled and faults the buffer in without
 * the file's mutex: a buffer never touched yet reads whole; one that ends
 * in an inaccessible page gives a short read, the rest stays queued.
 */
TEST_F(ring, read_faults_in)
{
	struct twheel_arm *arms = calloc(200, sizeof(*arms));
	char *buf;
	int i;

	ASSERT_TRUE(!!arms);
	for (i = 0; i < 200; i++)
		arms[i] = twl_arm_entry(i, 0, 0, 0, 0, 0);
	ASSERT_EQ(64, twl_arm_batch(&self->tw, arms, 64, NULL));
	tw_sleep_ms(100);
	buf = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(buf != MAP_FAILED);
	EXPECT_EQ(64 * sizeof(struct twheel_event),
		  read(self->tw.fd, buf, 64 * sizeof(struct twheel_event)));
	EXPECT_TRUE(keys_once((struct twheel_event *)buf, 64));

	for (i = 0; i < 200; i++)
		arms[i].key += 1000;
	ASSERT_EQ(200, twl_arm_batch(&self->tw, arms, 200, NULL));
	tw_sleep_ms(100);
	ASSERT_EQ(0, mprotect(buf + 4096, 4096, PROT_NONE));
	EXPECT_EQ(2 * sizeof(struct twheel_event),
		  read(self->tw.fd, buf + 4096 - 2 * sizeof(struct twheel_event),
		       200 * sizeof(struct twheel_event)));
	EXPECT_EQ(198, tw_fdinfo(self->tw.fd, "queued"));
	munmap(buf, 2 * 4096);
	free(arms);
}

TW_HARNESS_MAIN
