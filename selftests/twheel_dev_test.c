// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel selftests: arming, firing, reading, periodic timers, cancel,
 * modify, query, replace, batches, poll/epoll, overruns, sharing.
 */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest_harness.h"

FIXTURE(dev) {
	struct twl tw;
};

FIXTURE_SETUP(dev)
{
	ASSERT_EQ(0, twl_open(&self->tw, O_CLOEXEC));
}

FIXTURE_TEARDOWN(dev)
{
	twl_close(&self->tw);
}

TEST_F(dev, version)
{
	const struct twheel_version *v = &self->tw.version;

	EXPECT_EQ(TWHEEL_API, v->api);
	EXPECT_EQ(sizeof(struct twheel_event), v->event_size);
	EXPECT_LT(0, v->tick_ns);
	EXPECT_EQ(v->tick_ns, v->min_period_ns);
	EXPECT_LT(0, v->max_timers);
	EXPECT_NE(0, v->features & TWHEEL_FEATURE_BATCH);
	TH_LOG("tick %llu ns, %u timers per file, %u per user",
	       (unsigned long long)v->tick_ns, v->max_timers,
	       v->max_user_timers);
}

/* One-shot: key, data, deadline and kernel lateness; then the key is free. */
TEST_F(dev, arm_fire_read)
{
	struct twheel_event ev;
	struct twheel_query q;
	__u64 before, after;

	before = tw_now();
	ASSERT_EQ(0, twl_arm(&self->tw, 42, 0xdeadbeef, 20 * MS, 0, 0, 0));
	after = tw_now();
	ASSERT_EQ(1, twl_read(&self->tw, &ev, 1));
	EXPECT_LE(ev.deadline_ns, tw_now());
	EXPECT_EQ(42, ev.key);
	EXPECT_EQ(0xdeadbeef, ev.data);
	EXPECT_LE(before + 20 * MS, ev.deadline_ns);
	EXPECT_GE(after + 20 * MS, ev.deadline_ns);
	EXPECT_TRUE(tw_late_ok(&ev, self->tw.version.tick_ns));
	EXPECT_EQ(0, ev.overruns);
	EXPECT_EQ(TWHEEL_EVENT_LAST, ev.flags);
	TH_LOG("late %llu us", (unsigned long long)(ev.fire_ns - ev.deadline_ns) / 1000);
	EXPECT_EQ(-ENOENT, twl_query(&self->tw, 42, &q));
	EXPECT_EQ(0, twl_arm(&self->tw, 42, 1, 0, 0, 0, 0));
}

TEST_F(dev, absolute_deadline)
{
	__u64 deadline = tw_now() + 30 * MS;
	struct twheel_event ev;

	ASSERT_EQ(0, twl_arm(&self->tw, 1, 2, deadline, 0, 0, TWHEEL_ARM_ABS));
	ASSERT_EQ(1, tw_read_n(&self->tw, &ev, 1, 5000));
	EXPECT_EQ(deadline, ev.deadline_ns);
	EXPECT_TRUE(tw_late_ok(&ev, self->tw.version.tick_ns));
}

TEST_F(dev, past_deadline_fires_at_once)
{
	struct twheel_event ev;

	ASSERT_EQ(0, twl_arm(&self->tw, 1, 2, 1, 0, 0, TWHEEL_ARM_ABS));
	ASSERT_EQ(1, tw_read_n(&self->tw, &ev, 1, 5000));
	EXPECT_EQ(1, ev.key);
	EXPECT_LE(ev.deadline_ns, ev.fire_ns);
}

/* Periodic with count N: N expiries in all, the last one flagged. */
TEST_F(dev, periodic_count)
{
	const __u64 tick = self->tw.version.tick_ns;
	const __u64 period = 10 * MS > tick ? 10 * MS : tick;
	struct twheel_event ev[8];
	unsigned int expiries = 0, events = 0, last = 0;
	__u64 prev = 0;
	int i, n;

	ASSERT_EQ(0, twl_arm(&self->tw, 7, 70, period, period, 5, 0));
	while (!last && (n = tw_read_n(&self->tw, ev, 1, 5000)) > 0) {
		for (i = 0; i < n; i++) {
			EXPECT_EQ(7, ev[i].key);
			EXPECT_EQ(70, ev[i].data);
			EXPECT_TRUE(tw_late_ok(&ev[i], self->tw.version.tick_ns));
			EXPECT_LT(prev, ev[i].deadline_ns);
			prev = ev[i].deadline_ns;
			expiries += 1 + ev[i].overruns;
			events++;
			last = ev[i].flags & TWHEEL_EVENT_LAST;
			if (!last)
				EXPECT_LT(expiries, 5);
		}
	}
	EXPECT_TRUE(last);
	EXPECT_EQ(5, expiries);
	TH_LOG("%u events for 5 expiries", events);
	EXPECT_TRUE(tw_quiet_for(&self->tw, 50));
	EXPECT_EQ(0, twl_arm(&self->tw, 7, 0, 0, 0, 0, 0));
}

TEST_F(dev, cancel_before_fire)
{
	struct twheel_query q;

	ASSERT_EQ(0, twl_arm(&self->tw, 3, 0, 50 * MS, 0, 0, 0));
	ASSERT_EQ(0, twl_cancel(&self->tw, 3));
	EXPECT_EQ(-ENOENT, twl_cancel(&self->tw, 3));
	EXPECT_EQ(-ENOENT, twl_query(&self->tw, 3, &q));
	EXPECT_TRUE(tw_quiet_for(&self->tw, 150));
}

/* Cancelling a fired timer whose event is unread discards the event. */
TEST_F(dev, cancel_discards_event)
{
	ASSERT_EQ(0, twl_arm(&self->tw, 3, 0, 0, 0, 0, 0));
	ASSERT_FALSE(tw_quiet_for(&self->tw, 5000));
	ASSERT_EQ(0, twl_cancel(&self->tw, 3));
	EXPECT_TRUE(tw_quiet_for(&self->tw, 0));
	EXPECT_EQ(0, tw_fdinfo(self->tw.fd, "queued"));
}

TEST_F(dev, modify_moves_fire)
{
	struct twheel_event ev;
	struct twheel_query q;
	__u64 deadline;

	/* Earlier: 10 s becomes 30 ms. */
	ASSERT_EQ(0, twl_arm(&self->tw, 9, 0, 10000 * MS, 0, 0, 0));
	deadline = tw_now() + 30 * MS;
	ASSERT_EQ(0, twl_modify(&self->tw, 9, deadline, TWHEEL_ARM_ABS));
	ASSERT_EQ(1, tw_read_n(&self->tw, &ev, 1, 5000));
	EXPECT_EQ(deadline, ev.deadline_ns);
	EXPECT_TRUE(tw_late_ok(&ev, self->tw.version.tick_ns));

	/* Later: 200 ms becomes 10 s. */
	ASSERT_EQ(0, twl_arm(&self->tw, 9, 0, 200 * MS, 0, 0, 0));
	ASSERT_EQ(0, twl_modify(&self->tw, 9, 10000 * MS, 0));
	EXPECT_TRUE(tw_quiet_for(&self->tw, 400));
	ASSERT_EQ(0, twl_query(&self->tw, 9, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	EXPECT_LT(9000 * MS, q.remaining_ns);
}

TEST_F(dev, modify_period)
{
	struct twheel_modify m = {
		.size = sizeof(m), .key = 4, .flags = TWHEEL_MODIFY_PERIOD,
		.expiry_ns = 20 * MS, .period_ns = self->tw.version.tick_ns * 5,
		.count = 3,
	};
	struct twheel_event ev[3];
	unsigned int expiries = 0;
	int i, n;

	ASSERT_EQ(0, twl_arm(&self->tw, 4, 0, 10000 * MS, 0, 0, 0));
	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_MODIFY, &m));
	n = tw_read_n(&self->tw, ev, 3, 5000);
	for (i = 0; i < n; i++)
		expiries += 1 + ev[i].overruns;
	ASSERT_LT(0, n);
	EXPECT_EQ(3, expiries);
	EXPECT_EQ(TWHEEL_EVENT_LAST, ev[n - 1].flags);
}

/* A fired one-shot cannot be moved: -ENOENT; its event stays readable. */
TEST_F(dev, modify_fired)
{
	struct twheel_event ev;
	struct twheel_query q;

	ASSERT_EQ(0, twl_arm(&self->tw, 5, 0, 0, 0, 0, 0));
	ASSERT_FALSE(tw_quiet_for(&self->tw, 5000));
	EXPECT_EQ(-ENOENT, twl_modify(&self->tw, 5, 10 * MS, 0));
	ASSERT_EQ(0, twl_query(&self->tw, 5, &q));
	EXPECT_EQ(TWHEEL_STATE_QUEUED | TWHEEL_STATE_DONE, q.state);
	EXPECT_EQ(0, q.fires_left);
	ASSERT_EQ(1, twl_read(&self->tw, &ev, 1));
	EXPECT_EQ(-ENOENT, twl_query(&self->tw, 5, &q));
}

TEST_F(dev, query)
{
	struct twheel_query q;
	__u64 now;

	ASSERT_EQ(0, twl_arm(&self->tw, 1, 11, 100 * MS, 0, 0, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 2, 22, 100 * MS, 100 * MS, 0, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 3, 33, 100 * MS, 100 * MS, 3, 0));
	now = tw_now();

	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	EXPECT_EQ(1, q.fires_left);
	EXPECT_EQ(11, q.data);
	EXPECT_EQ(0, q.period_ns);
	EXPECT_GE(100 * MS, q.remaining_ns);
	EXPECT_LE(now, q.deadline_ns);

	ASSERT_EQ(0, twl_query(&self->tw, 2, &q));
	EXPECT_EQ(TWHEEL_COUNT_FOREVER, q.fires_left);
	EXPECT_EQ(100 * MS, q.period_ns);
	EXPECT_EQ(22, q.data);

	ASSERT_EQ(0, twl_query(&self->tw, 3, &q));
	EXPECT_EQ(3, q.fires_left);
	EXPECT_EQ(-ENOENT, twl_query(&self->tw, 4, &q));
}

TEST_F(dev, replace_vs_eexist)
{
	struct twheel_event ev;

	ASSERT_EQ(0, twl_arm(&self->tw, 5, 1, 10000 * MS, 0, 0, 0));
	EXPECT_EQ(-EEXIST, twl_arm(&self->tw, 5, 2, 10 * MS, 0, 0, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 5, 3, 30 * MS, 0, 0, TWHEEL_ARM_REPLACE));
	ASSERT_EQ(1, tw_read_n(&self->tw, &ev, 1, 5000));
	EXPECT_EQ(5, ev.key);
	EXPECT_EQ(3, ev.data);
	EXPECT_EQ(TWHEEL_EVENT_LAST, ev.flags);
	EXPECT_TRUE(tw_quiet_for(&self->tw, 100));
	/* REPLACE of a key that does not exist simply arms it. */
	EXPECT_EQ(0, twl_arm(&self->tw, 6, 0, 10000 * MS, 0, 0, TWHEEL_ARM_REPLACE));
}

/* Replacing a fired timer discards its unread event. */
TEST_F(dev, replace_discards_event)
{
	struct twheel_query q;

	ASSERT_EQ(0, twl_arm(&self->tw, 5, 1, 0, 0, 0, 0));
	ASSERT_FALSE(tw_quiet_for(&self->tw, 5000));
	EXPECT_EQ(-EEXIST, twl_arm(&self->tw, 5, 2, 0, 0, 0, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 5, 2, 10000 * MS, 0, 0, TWHEEL_ARM_REPLACE));
	EXPECT_TRUE(tw_quiet_for(&self->tw, 0));
	ASSERT_EQ(0, twl_query(&self->tw, 5, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	EXPECT_EQ(2, q.data);
}

/* One bad entry in the middle of a batch hides none of the others. */
TEST_F(dev, batch_bad_entry)
{
	struct twheel_arm a[5];
	__s32 status[5];
	struct twheel_event ev[3];
	int i, seen = 0;

	for (i = 0; i < 5; i++)
		a[i] = twl_arm_entry(100 + i, i, 20 * MS, 0, 0, 0);
	a[2].flags = 0x80000000;	/* unknown flag */
	a[3].key = 100;			/* duplicate of a[0] */
	memset(status, 0x55, sizeof(status));
	ASSERT_EQ(3, twl_arm_batch(&self->tw, a, 5, status));
	EXPECT_EQ(0, status[0]);
	EXPECT_EQ(0, status[1]);
	EXPECT_EQ(-EINVAL, status[2]);
	EXPECT_EQ(-EEXIST, status[3]);
	EXPECT_EQ(0, status[4]);
	ASSERT_EQ(3, tw_read_n(&self->tw, ev, 3, 5000));
	for (i = 0; i < 3; i++) {
		seen |= 1 << (ev[i].key - 100);
		EXPECT_EQ(ev[i].key - 100, ev[i].data);
		EXPECT_TRUE(tw_late_ok(&ev[i], self->tw.version.tick_ns));
	}
	EXPECT_EQ(0x13, seen);
	EXPECT_TRUE(tw_quiet_for(&self->tw, 50));
}

TEST_F(dev, cancel_batch)
{
	__u64 keys[3] = { 1, 999, 3 };
	__s32 status[3];
	struct twheel_event ev;

	ASSERT_EQ(0, twl_arm(&self->tw, 1, 0, 30 * MS, 0, 0, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 2, 0, 30 * MS, 0, 0, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 3, 0, 30 * MS, 0, 0, 0));
	ASSERT_EQ(2, twl_cancel_batch(&self->tw, keys, 3, status));
	EXPECT_EQ(0, status[0]);
	EXPECT_EQ(-ENOENT, status[1]);
	EXPECT_EQ(0, status[2]);
	ASSERT_EQ(1, tw_read_n(&self->tw, &ev, 1, 5000));
	EXPECT_EQ(2, ev.key);
	EXPECT_TRUE(tw_quiet_for(&self->tw, 100));
}

/*
 * CANCEL_BATCH over several of the kernel's chunks (64 keys) and bulk
 * teardowns (32 timers): 200 keys, every tenth never armed, every 50th
 * named twice (the second time: -ENOENT); a third of the timers fired
 * already, their events waiting: discarded. The timer not named fires.
 */
TEST_F(dev, cancel_batch_chunks)
{
	__u64 keys[204];
	__s32 status[204];
	struct twheel_event ev;
	unsigned int i, n = 0;
	int want = 0;

	for (i = 0; i < 200; i++) {
		if (i % 10 != 9)
			ASSERT_EQ(0, twl_arm(&self->tw, i, 0,
					     i % 3 ? 30000 * MS : 0, 0, 0, 0));
		want += i % 10 != 9;
		keys[n++] = i;
		if (!(i % 50))
			keys[n++] = i;
	}
	ASSERT_EQ(0, twl_arm(&self->tw, 1000, 0, 100 * MS, 0, 0, 0));
	tw_sleep_ms(20);
	ASSERT_EQ(want, twl_cancel_batch(&self->tw, keys, n, status));
	for (i = 0; i < n; i++) {
		bool again = i && keys[i] == keys[i - 1];

		EXPECT_EQ(keys[i] % 10 == 9 || again ? -ENOENT : 0, status[i]);
	}
	EXPECT_EQ(1, tw_fdinfo(self->tw.fd, "timers"));
	EXPECT_EQ(0, tw_fdinfo(self->tw.fd, "queued"));
	EXPECT_EQ(want, tw_fdinfo(self->tw.fd, "cancelled"));
	ASSERT_EQ(1, tw_read_n(&self->tw, &ev, 1, 5000));
	EXPECT_EQ(1000, ev.key);
	EXPECT_TRUE(tw_quiet_for(&self->tw, 100));
}

TEST_F(dev, cancel_all)
{
	int i;

	for (i = 0; i < 100; i++)
		ASSERT_EQ(0, twl_arm(&self->tw, i, 0, (i % 2) ? 0 : 40 * MS,
				     0, 0, 0));
	tw_sleep_ms(20);
	EXPECT_EQ(100, tw_fdinfo(self->tw.fd, "timers"));
	EXPECT_EQ(100, twl_cancel_all(&self->tw));
	EXPECT_EQ(0, tw_fdinfo(self->tw.fd, "timers"));
	EXPECT_EQ(0, tw_fdinfo(self->tw.fd, "queued"));
	EXPECT_TRUE(tw_quiet_for(&self->tw, 100));
	EXPECT_EQ(0, twl_cancel_all(&self->tw));
}

TEST_F(dev, fdinfo)
{
	struct twheel_event ev[2];

	ASSERT_EQ(0, twl_arm(&self->tw, 1, 0, 0, 0, 0, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 2, 0, 10000 * MS, 0, 0, 0));
	ASSERT_FALSE(tw_quiet_for(&self->tw, 5000));
	EXPECT_EQ(2, tw_fdinfo(self->tw.fd, "timers"));
	EXPECT_EQ(1, tw_fdinfo(self->tw.fd, "queued"));
	EXPECT_EQ(2, tw_fdinfo(self->tw.fd, "armed"));
	EXPECT_EQ(1, tw_fdinfo(self->tw.fd, "fired"));
	ASSERT_EQ(1, tw_read_n(&self->tw, ev, 1, 100));
	EXPECT_EQ(1, tw_fdinfo(self->tw.fd, "delivered"));
	EXPECT_EQ(1, tw_fdinfo(self->tw.fd, "timers"));
}

TEST_F(dev, nonblock_and_poll)
{
	struct pollfd p = { .fd = self->tw.fd, .events = POLLIN };
	struct twheel_event ev;
	int fl = fcntl(self->tw.fd, F_GETFL);

	ASSERT_EQ(0, fcntl(self->tw.fd, F_SETFL, fl | O_NONBLOCK));
	EXPECT_EQ(-EAGAIN, twl_read(&self->tw, &ev, 1));
	EXPECT_EQ(0, poll(&p, 1, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 1, 0, 20 * MS, 0, 0, 0));
	ASSERT_EQ(1, poll(&p, 1, 5000));
	EXPECT_EQ(POLLIN, p.revents);
	EXPECT_EQ(1, twl_read(&self->tw, &ev, 1));
	EXPECT_EQ(-EAGAIN, twl_read(&self->tw, &ev, 1));
	EXPECT_EQ(0, poll(&p, 1, 0));
}

TEST_F(dev, epoll)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLET };
	struct twheel_event ev[2];
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->tw.fd, &e));
	EXPECT_EQ(0, epoll_wait(ep, &e, 1, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 1, 0, 20 * MS, 0, 0, 0));
	ASSERT_EQ(1, epoll_wait(ep, &e, 1, 5000));
	EXPECT_EQ(EPOLLIN, e.events);
	/* Edge-triggered: a second timer is a second edge. */
	ASSERT_EQ(0, twl_arm(&self->tw, 2, 0, 20 * MS, 0, 0, 0));
	ASSERT_EQ(1, epoll_wait(ep, &e, 1, 5000));
	EXPECT_EQ(2, twl_read(&self->tw, ev, 2));
	EXPECT_EQ(0, epoll_wait(ep, &e, 1, 50));
	close(ep);
}

static void *tw_arm_later(void *arg)
{
	const struct twl *tw = arg;

	tw_sleep_ms(50);
	return (void *)(long)twl_arm(tw, 77, 0, 10 * MS, 0, 0, 0);
}

TEST_F(dev, blocking_read_wakes)
{
	struct twheel_event ev;
	pthread_t th;
	void *ret;

	ASSERT_EQ(0, pthread_create(&th, NULL, tw_arm_later, &self->tw));
	ASSERT_EQ(1, twl_read(&self->tw, &ev, 1));
	EXPECT_EQ(77, ev.key);
	ASSERT_EQ(0, pthread_join(th, &ret));
	EXPECT_EQ(NULL, ret);
}

static int restart_signals;

static void restart_handler(int sig)
{
	__atomic_add_fetch(&restart_signals, 1, __ATOMIC_RELAXED);
}

/* A batch long enough to hold the file's mutex while a read() waits. */
struct long_batch {
	const struct twl	*tw;
	struct twheel_arm	*arm;
	__s32			*status;
	__u32			n;
	long			ret;
	int			done;
};

static void *long_batch_fn(void *arg)
{
	struct long_batch *b = arg;

	b->ret = twl_arm_batch(b->tw, b->arm, b->n, b->status);
	__atomic_store_n(&b->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct blocked_read {
	const struct twl	*tw;
	struct twheel_event	ev;
	ssize_t			ret;
	int			err;
	int			done;
};

static void *blocked_read_fn(void *arg)
{
	struct blocked_read *r = arg;

	r->ret = read(r->tw->fd, &r->ev, sizeof(r->ev));
	r->err = r->ret < 0 ? errno : 0;
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A signal handled with SA_RESTART while read() waits for the file (an
 * event is ready, a long batch holds the file) restarts the read(), as
 * while it waits for an event: it returns the event, not EINTR.
 */
TEST_F(dev, read_restarts_after_signal)
{
	struct sigaction sa = { .sa_handler = restart_handler,
				.sa_flags = SA_RESTART };
	struct long_batch b = { .tw = &self->tw, .n = 100000 };
	struct blocked_read r = { .tw = &self->tw };
	pthread_t bt, rt;
	bool raced;
	__u32 i;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, twl_arm(&self->tw, 1, 0, 0, 0, 0, 0));
	TW_WAIT_FOR(tw_fdinfo(self->tw.fd, "queued") >= 1);
	ASSERT_EQ(1, tw_fdinfo(self->tw.fd, "queued"));
	b.arm = calloc(b.n, sizeof(*b.arm));
	b.status = calloc(b.n, sizeof(*b.status));
	ASSERT_TRUE(b.arm && b.status);
	for (i = 0; i < b.n; i++)
		b.arm[i] = twl_arm_entry(100 + i, 0, 3600000 * MS, 0, 0, 0);
	ASSERT_EQ(0, pthread_create(&bt, NULL, long_batch_fn, &b));
	tw_sleep_ms(20);
	ASSERT_EQ(0, pthread_create(&rt, NULL, blocked_read_fn, &r));
	tw_sleep_ms(50);
	/* The read is waiting if the batch still runs and it has not returned. */
	raced = !__atomic_load_n(&b.done, __ATOMIC_ACQUIRE) &&
		!__atomic_load_n(&r.done, __ATOMIC_ACQUIRE);
	pthread_kill(rt, SIGUSR1);
	ASSERT_EQ(0, pthread_join(bt, NULL));
	ASSERT_EQ(0, pthread_join(rt, NULL));
	signal(SIGUSR1, SIG_DFL);
	EXPECT_EQ(b.n, b.ret);
	EXPECT_EQ(sizeof(r.ev), r.ret) TH_LOG("read: %s", strerror(r.err));
	EXPECT_EQ(1, r.ev.key);
	EXPECT_EQ(1, restart_signals);
	EXPECT_EQ(b.n, twl_cancel_all(&self->tw));
	free(b.arm);
	free(b.status);
	if (!raced)
		SKIP(return, "the batch ended before the signal: nothing tested");
}

/* read() returns whole events, as many as fit; less than one is -EINVAL. */
TEST_F(dev, read_sizes)
{
	char buf[3 * sizeof(struct twheel_event) - 1];
	struct twheel_event ev[2];

	ASSERT_EQ(0, twl_arm(&self->tw, 1, 0, 0, 0, 0, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 2, 0, 0, 0, 0, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 3, 0, 0, 0, 0, 0));
	TW_WAIT_FOR(tw_fdinfo(self->tw.fd, "queued") == 3);
	ASSERT_EQ(3, tw_fdinfo(self->tw.fd, "queued"));
	EXPECT_EQ(-1, read(self->tw.fd, buf, sizeof(struct twheel_event) - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(2 * sizeof(struct twheel_event), read(self->tw.fd, buf, sizeof(buf)));
	EXPECT_EQ(sizeof(ev[0]), read(self->tw.fd, ev, sizeof(ev)));
	EXPECT_LE(1, ev[0].key);
	EXPECT_GE(3, ev[0].key);
}

/* Events of one burst all arrive; the first within one tick (+ slack). */
TEST_F(dev, burst)
{
	static struct twheel_event ev[500];
	__u64 deadline = tw_now() + 50 * MS;
	char seen[500] = {};
	int i;

	for (i = 0; i < 500; i++)
		ASSERT_EQ(0, twl_arm(&self->tw, i, i, deadline, 0, 0, TWHEEL_ARM_ABS));
	ASSERT_EQ(500, tw_read_n(&self->tw, ev, 500, 5000));
	EXPECT_TRUE(tw_late_ok(&ev[0], self->tw.version.tick_ns));
	for (i = 0; i < 500; i++) {
		ASSERT_GT(500, ev[i].key);
		EXPECT_EQ(0, seen[ev[i].key]);
		seen[ev[i].key] = 1;
		EXPECT_EQ(deadline, ev[i].deadline_ns);
		EXPECT_LE(ev[i].deadline_ns, ev[i].fire_ns);
	}
	TH_LOG("first event %llu us late, last %llu us",
	       (unsigned long long)(ev[0].fire_ns - deadline) / 1000,
	       (unsigned long long)(ev[499].fire_ns - deadline) / 1000);
}

/*
 * Overflow: a periodic timer firing every tick while nobody reads folds its
 * fires into overruns; the total is exact.
 */
TEST_F(dev, overruns_lose_nothing)
{
	const __u64 tick = self->tw.version.tick_ns;
	static struct twheel_event ev[200];
	unsigned int expiries = 0, i;
	int n;

	ASSERT_EQ(0, twl_arm(&self->tw, 8, 0, tick, tick, 200, 0));
	tw_sleep_ms(200 * tick / MS + 300);
	n = tw_read_n(&self->tw, ev, 200, 2000);
	ASSERT_LT(0, n);
	for (i = 0; i < (unsigned int)n; i++)
		expiries += 1 + ev[i].overruns;
	EXPECT_EQ(200, expiries);
	EXPECT_EQ(TWHEEL_EVENT_LAST, ev[n - 1].flags);
	TH_LOG("%d events, %u expiries", n, expiries);
	EXPECT_EQ(200 - n, tw_fdinfo(self->tw.fd, "overruns"));
}

/* A bad read buffer loses no event. */
TEST_F(dev, read_fault_keeps_event)
{
	void *bad = tw_bad_ptr();
	struct twheel_event ev;

	ASSERT_EQ(0, twl_arm(&self->tw, 12, 0, 0, 0, 0, 0));
	ASSERT_FALSE(tw_quiet_for(&self->tw, 5000));
	EXPECT_EQ(-1, read(self->tw.fd, bad, sizeof(ev)));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(1, twl_read(&self->tw, &ev, 1));
	EXPECT_EQ(12, ev.key);
}

/*
 * Read two events into a buffer whose second record runs into a page that
 * faults, at @offset bytes before the page (aligned or not): a short read
 * of the first; the second stays queued.
 */
static void read_at_page_end(struct __test_metadata *_metadata,
			     const struct twl *tw, size_t offset)
{
	const size_t esize = sizeof(struct twheel_event);
	struct twheel_event ev[2];
	char *p;

	p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, mprotect(p + 4096, 4096, PROT_NONE));
	ASSERT_EQ(0, twl_arm(tw, 1, 11, 0, 0, 0, 0));
	ASSERT_EQ(0, twl_arm(tw, 2, 22, 0, 0, 0, 0));
	TW_WAIT_FOR(tw_fdinfo(tw->fd, "queued") == 2);
	ASSERT_EQ(2, tw_fdinfo(tw->fd, "queued"));
	EXPECT_EQ(esize, read(tw->fd, p + 4096 - offset, 2 * esize));
	memcpy(&ev[0], p + 4096 - offset, esize);
	ASSERT_EQ(1, twl_read(tw, &ev[1], 1));
	EXPECT_EQ(3, ev[0].key + ev[1].key);
	EXPECT_EQ(11 * ev[0].key, ev[0].data);
	EXPECT_EQ(11 * ev[1].key, ev[1].data);
	EXPECT_EQ(TWHEEL_EVENT_LAST, ev[0].flags);
	EXPECT_EQ(TWHEEL_EVENT_LAST, ev[1].flags);
	EXPECT_LE(ev[0].deadline_ns, ev[0].fire_ns);
	munmap(p, 2 * 4096);
}

TEST_F(dev, read_to_page_end_aligned)
{
	read_at_page_end(_metadata, &self->tw, sizeof(struct twheel_event));
}

TEST_F(dev, read_to_page_end_unaligned)
{
	read_at_page_end(_metadata, &self->tw, sizeof(struct twheel_event) + 3);
}

TEST_F(dev, fork_shares_timers)
{
	struct twheel_event ev;
	int status;
	pid_t pid;

	ASSERT_EQ(0, twl_arm(&self->tw, 1, 0, 30 * MS, 0, 0, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* The child reads the parent's timer, arms one of its own. */
		if (tw_read_n(&self->tw, &ev, 1, 5000) != 1 || ev.key != 1)
			_exit(1);
		_exit(twl_arm(&self->tw, 2, 0, 10 * MS, 0, 0, 0) ? 2 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_EQ(1, tw_read_n(&self->tw, &ev, 1, 5000));
	EXPECT_EQ(2, ev.key);
	EXPECT_TRUE(tw_quiet_for(&self->tw, 50));
}

TEST_F(dev, dup_shares_timers)
{
	struct twheel_event ev;
	int fd2 = dup(self->tw.fd);

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, twl_arm(&self->tw, 1, 0, 30 * MS, 0, 0, 0));
	close(self->tw.fd);
	self->tw.fd = fd2;
	ASSERT_EQ(1, tw_read_n(&self->tw, &ev, 1, 5000));
	EXPECT_EQ(1, ev.key);
}

/* Two opens are independent sets: same key, separate timers. */
TEST_F(dev, files_independent)
{
	struct twheel_query q;
	struct twl tw2;

	ASSERT_EQ(0, twl_open(&tw2, 0));
	ASSERT_EQ(0, twl_arm(&self->tw, 1, 10, 10000 * MS, 0, 0, 0));
	ASSERT_EQ(0, twl_arm(&tw2, 1, 20, 10000 * MS, 0, 0, 0));
	ASSERT_EQ(0, twl_query(&tw2, 1, &q));
	EXPECT_EQ(20, q.data);
	twl_close(&tw2);
	ASSERT_EQ(0, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(10, q.data);
}

int main(int argc, char **argv)
{
	tw_require_device();
	return test_harness_run(argc, argv);
}
