// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel selftests: per-timer slack (twheel_arm.slack_ns).
 *
 * - slack_query_*: the slack in use is the one asked for, rounded down to a
 *   power of two ticks; MODIFY keeps it, REPLACE sets it anew.
 * - slack_window_*: timers with slack fire inside [deadline, deadline +
 *   slack + tick + margin] (TWHEEL_SLACK_MS, 20 ms, is the margin for a
 *   host under load), never early, and share fires; a periodic timer's
 *   deadlines do not drift.
 * - slack_size_ver0: a 48-byte struct twheel_arm (and batch entries of that
 *   size) is still accepted: no slack.
 * - slack_bad_*: a slack above KTIME_MAX is -EINVAL and arms nothing.
 *
 * Each test arms a sentinel timer first; the teardown checks that it still
 * fires, with the right key and data: no bad input loses another timer.
 */
#include <assert.h>

#include "twheel_test.h"
#include "kselftest_harness.h"

#define SENTINEL	0x5e5e5e5eULL
#define KTIME_MAX_NS	((__u64)INT64_MAX)

FIXTURE(slack) {
	struct twl tw;
};

FIXTURE_SETUP(slack)
{
	ASSERT_EQ(0, twl_open(&self->tw, O_CLOEXEC));
	ASSERT_TRUE(self->tw.version.features & TWHEEL_FEATURE_SLACK);
	ASSERT_EQ(0, twl_arm(&self->tw, SENTINEL, ~SENTINEL, 100 * MS, 0, 0, 0));
}

FIXTURE_TEARDOWN(slack)
{
	struct twheel_event ev[1] = { 0 };

	EXPECT_EQ(1, tw_read_n(&self->tw, ev, 1, 5000));
	EXPECT_EQ(SENTINEL, ev[0].key);
	EXPECT_EQ(~SENTINEL, ev[0].data);
	EXPECT_TRUE(tw_late_ok(&ev[0], self->tw.version.tick_ns));
	twl_close(&self->tw);
}

/* twl_arm() with a slack: the entry goes in through twl_ioctl(). */
static int arm_slack(const struct twl *tw, __u64 key, __u64 delay,
		     __u64 period, __u32 count, __u64 slack, __u32 flags)
{
	struct twheel_arm a = twl_arm_entry(key, key, delay, period, count,
					    flags);

	a.slack_ns = slack;
	return twl_ioctl(tw, TWHEEL_IOC_ARM, &a);
}

/* The slack the wheel uses for @slack: a power of two ticks, or 0. */
static __u64 slack_used(__u64 tick, __u64 slack)
{
	__u64 g = tick;

	if (slack < 2 * tick)
		return 0;
	while (g * 2 <= slack && g * 2 > g)
		g *= 2;
	return g;
}

static __u64 query_slack(struct __test_metadata *_metadata,
			 const struct twl *tw, __u64 key)
{
	struct twheel_query q;

	EXPECT_EQ(0, twl_query(tw, key, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state & TWHEEL_STATE_PENDING);
	return q.slack_ns;
}

/* Every fire inside its window: never early, at most slack + tick + margin late. */
static int in_window(const struct twheel_event *ev, __u64 slack, __u64 tick)
{
	if (ev->fire_ns >= ev->deadline_ns &&
	    ev->fire_ns - ev->deadline_ns <= slack + tick + tw_slack_ns())
		return 1;
	fprintf(stderr, "# key %llu: fired %lld us after deadline %llu, slack %llu us\n",
		ev->key, (long long)(ev->fire_ns - ev->deadline_ns) / 1000,
		ev->deadline_ns, slack / 1000);
	return 0;
}

TEST_F(slack, slack_query_rounds_down)
{
	const __u64 tick = self->tw.version.tick_ns;
	const __u64 asks[] = { 0, 1, tick, 2 * tick - 1, 2 * tick, 3 * tick,
			       100 * MS, 1000 * MS + 1, 3600000 * MS };
	const unsigned int n = ARRAY_SIZE(asks);
	unsigned int i;
	__u64 big;

	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, arm_slack(&self->tw, 1 + i, 10000000 * MS, 0, 0,
				       asks[i], 0));
		EXPECT_EQ(slack_used(tick, asks[i]),
			  query_slack(_metadata, &self->tw, 1 + i));
	}
	/* The largest slack is capped: still a power of two ticks. */
	ASSERT_EQ(0, arm_slack(&self->tw, n + 1, 10000000 * MS, 0, 0,
			       KTIME_MAX_NS, 0));
	big = query_slack(_metadata, &self->tw, n + 1);
	EXPECT_LE(slack_used(tick, 3600000 * MS), big);
	EXPECT_LE(big, KTIME_MAX_NS);
	EXPECT_EQ(big, slack_used(tick, big));
	EXPECT_EQ(n + 1, twl_cancel_all(&self->tw) - 1);
	ASSERT_EQ(0, twl_arm(&self->tw, SENTINEL, ~SENTINEL, 10 * MS, 0, 0, 0));
}

TEST_F(slack, slack_query_modify_keeps_replace_sets)
{
	struct twheel_modify m = { .size = sizeof(m), .key = 1,
				   .flags = TWHEEL_MODIFY_PERIOD,
				   .expiry_ns = 20000 * MS,
				   .period_ns = 1000 * MS };

	ASSERT_EQ(0, arm_slack(&self->tw, 1, 10000 * MS, 0, 0, 100 * MS, 0));
	EXPECT_EQ(slack_used(self->tw.version.tick_ns, 100 * MS),
		  query_slack(_metadata, &self->tw, 1));
	ASSERT_EQ(0, twl_modify(&self->tw, 1, 20000 * MS, 0));
	EXPECT_EQ(slack_used(self->tw.version.tick_ns, 100 * MS),
		  query_slack(_metadata, &self->tw, 1));
	/* A new period too: twl_modify() only moves the deadline. */
	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_MODIFY, &m));
	EXPECT_EQ(slack_used(self->tw.version.tick_ns, 100 * MS),
		  query_slack(_metadata, &self->tw, 1));
	/* REPLACE takes the new struct's slack, none here. */
	ASSERT_EQ(0, arm_slack(&self->tw, 1, 10000 * MS, 0, 0, 0,
			       TWHEEL_ARM_REPLACE));
	EXPECT_EQ(0, query_slack(_metadata, &self->tw, 1));
	ASSERT_EQ(0, arm_slack(&self->tw, 1, 10000 * MS, 0, 0, 40 * MS,
			       TWHEEL_ARM_REPLACE));
	EXPECT_EQ(slack_used(self->tw.version.tick_ns, 40 * MS),
		  query_slack(_metadata, &self->tw, 1));
	EXPECT_EQ(0, twl_cancel(&self->tw, 1));
}

#define WINDOW_N	200

/*
 * WINDOW_N timers due over half a second, each with a slack of 20 to 300
 * ms: each fires in its window, and they share far fewer fire times than
 * they have deadlines.
 */
TEST_F(slack, slack_window_one_shots)
{
	static struct twheel_event ev[WINDOW_N + 1];
	static __u64 slack[WINDOW_N + 1], fires[WINDOW_N];
	unsigned int i, j, n = 0, distinct = 0, seed = 7;

	for (i = 1; i <= WINDOW_N; i++) {
		seed = seed * 1103515245 + 12345;
		slack[i] = (20 + (seed >> 8) % 281) * MS;
		ASSERT_EQ(0, arm_slack(&self->tw, i, 50 * MS + (seed >> 4) % (500 * MS),
				       0, 0, slack[i], 0));
	}
	/* The sentinel is among them. */
	ASSERT_EQ(WINDOW_N + 1, tw_read_n(&self->tw, ev, WINDOW_N + 1, 5000));
	for (i = 0; i < WINDOW_N + 1; i++) {
		if (ev[i].key == SENTINEL)
			continue;
		ASSERT_LE(1, ev[i].key);
		ASSERT_GE(WINDOW_N, ev[i].key);
		EXPECT_TRUE(in_window(&ev[i], slack[ev[i].key], self->tw.version.tick_ns));
		for (j = 0; j < n && fires[j] != ev[i].fire_ns; j++)
			;
		distinct += j == n;
		if (j == n)
			fires[n++] = ev[i].fire_ns;
	}
	TH_LOG("%d timers fired at %u distinct times", WINDOW_N, distinct);
	EXPECT_GT(WINDOW_N / 2, distinct);
	ASSERT_EQ(0, twl_arm(&self->tw, SENTINEL, ~SENTINEL, 10 * MS, 0, 0, 0));
}

/* A periodic timer with slack: every fire in its window, no drift. */
TEST_F(slack, slack_window_periodic)
{
	const __u64 period = 30 * MS + 1234, sl = 20 * MS;
	struct twheel_event ev[1];
	__u64 first = 0, fires = 0;
	int i, sentinel = 0;

	ASSERT_EQ(0, arm_slack(&self->tw, 1, 40 * MS, period, 10, sl, 0));
	for (i = 0; fires < 10 && i < 20; i++) {
		ASSERT_EQ(1, tw_read_n(&self->tw, ev, 1, 5000));
		if (ev[0].key == SENTINEL) {
			sentinel = 1;
			continue;
		}
		EXPECT_EQ(1, ev[0].key);
		EXPECT_TRUE(in_window(ev, sl, self->tw.version.tick_ns));
		if (!first)
			first = ev[0].deadline_ns - ev[0].overruns * period;
		fires += 1 + ev[0].overruns;
		EXPECT_EQ(first + (fires - 1) * period, ev[0].deadline_ns);
	}
	EXPECT_EQ(10, fires);
	EXPECT_TRUE(ev[0].flags & TWHEEL_EVENT_LAST);
	/* Else the sentinel's event is still to come. */
	if (sentinel)
		ASSERT_EQ(0, twl_arm(&self->tw, SENTINEL, ~SENTINEL, 10 * MS, 0, 0, 0));
}

/* A client built before slack_ns: 48-byte structs, no slack. */
TEST_F(slack, slack_size_ver0)
{
	struct twheel_arm a = twl_arm_entry(1, 1, 10000 * MS, 0, 0, 0), e[2];
	__u8 buf[2 * TWHEEL_ARM_SIZE_VER0];
	__s32 status[2] = { 7, 7 };
	struct twheel_arm_batch ab = {
		.size = sizeof(ab), .entries = (__u64)(uintptr_t)buf,
		.status = (__u64)(uintptr_t)status, .count = 2,
		.entry_size = TWHEEL_ARM_SIZE_VER0,
	};
	int i;

	/* The bytes after a VER0 struct are not the kernel's to read. */
	a.size = TWHEEL_ARM_SIZE_VER0;
	a.slack_ns = 100 * MS;
	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &a));
	EXPECT_EQ(0, query_slack(_metadata, &self->tw, 1));
	/* Batch entries of both sizes. */
	for (i = 0; i < 2; i++) {
		e[i] = twl_arm_entry(2 + i, 0, 10000 * MS, 0, 0, 0);
		e[i].size = TWHEEL_ARM_SIZE_VER0;
		memcpy(buf + i * TWHEEL_ARM_SIZE_VER0, &e[i], TWHEEL_ARM_SIZE_VER0);
	}
	EXPECT_EQ(2, twl_ioctl(&self->tw, TWHEEL_IOC_ARM_BATCH, &ab));
	EXPECT_EQ(0, status[0]);
	EXPECT_EQ(0, status[1]);
	EXPECT_EQ(0, query_slack(_metadata, &self->tw, 3));
	for (i = 0; i < 2; i++) {
		e[i] = twl_arm_entry(4 + i, 0, 10000 * MS, 0, 0, 0);
		e[i].slack_ns = 100 * MS;
	}
	EXPECT_EQ(2, twl_arm_batch(&self->tw, e, 2, status));
	EXPECT_EQ(slack_used(self->tw.version.tick_ns, 100 * MS),
		  query_slack(_metadata, &self->tw, 5));
	EXPECT_EQ(5, twl_cancel_all(&self->tw) - 1);
	ASSERT_EQ(0, twl_arm(&self->tw, SENTINEL, ~SENTINEL, 10 * MS, 0, 0, 0));
}

/* A slack above KTIME_MAX: -EINVAL, nothing armed, other timers fire. */
TEST_F(slack, slack_bad_value)
{
	struct twheel_arm e[3] = { twl_arm_entry(2, 0, 10 * MS, 0, 0, 0),
				   twl_arm_entry(3, 0, 10 * MS, 0, 0, 0),
				   twl_arm_entry(4, 0, 10 * MS, 0, 0, 0) };
	__s32 status[3] = { 7, 7, 7 };
	struct twheel_event ev[3];
	int i;

	EXPECT_EQ(-EINVAL, arm_slack(&self->tw, 1, 10 * MS, 0, 0,
				     KTIME_MAX_NS + 1, 0));
	EXPECT_EQ(-EINVAL, arm_slack(&self->tw, 1, 10 * MS, 0, 0, ~0ULL, 0));
	EXPECT_EQ(-ENOENT, twl_cancel(&self->tw, 1));
	e[1].slack_ns = ~0ULL;
	e[2].slack_ns = 30 * MS;
	EXPECT_EQ(2, twl_arm_batch(&self->tw, e, 3, status));
	EXPECT_EQ(0, status[0]);
	EXPECT_EQ(-EINVAL, status[1]);
	EXPECT_EQ(0, status[2]);
	EXPECT_EQ(-ENOENT, twl_cancel(&self->tw, 3));
	/* Keys 2, 4 and the sentinel fire. */
	ASSERT_EQ(3, tw_read_n(&self->tw, ev, 3, 5000));
	for (i = 0; i < 3; i++) {
		EXPECT_TRUE(ev[i].key == 2 || ev[i].key == 4 ||
			    ev[i].key == SENTINEL);
		EXPECT_TRUE(in_window(&ev[i], ev[i].key == 4 ? 30 * MS : 0,
				      self->tw.version.tick_ns));
	}
	ASSERT_EQ(0, twl_arm(&self->tw, SENTINEL, ~SENTINEL, 10 * MS, 0, 0, 0));
}

TW_HARNESS_MAIN
