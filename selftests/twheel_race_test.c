// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel's MODIFY against fires on another CPU.
 *
 * Timers are armed from CPU 1 (so they fire on CPU 1's wheel) and
 * modified from CPU 0 right around their deadlines. Every event is then
 * checked against the contract of TWHEEL_IOC_MODIFY: a MODIFY that
 * returned 0 replaced the fire, so the timer's only event is for the new
 * deadline; one that failed with -ENOENT came too late, so the only event
 * is for the old deadline. For periodic timers modified with a new period
 * and count, the deadlines delivered are the old ones that came before
 * the MODIFY, then exactly the new count of new ones, on the new grid.
 *
 * Environment: TWHEEL_RACE_MS (how long each case races, default 2000).
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <sched.h>

#include "twheel_test.h"
#include "kselftest_harness.h"

#define KEYS		256
#define BATCH		KEYS
#define MAX_EVENTS	64

struct race_key {
	__u64	old_deadline;
	__u64	new_deadline;
	int	modify_ret;		/* 0 or -errno of the MODIFY */
	int	nev;
	__u64	ev_deadline[MAX_EVENTS];
	__u32	ev_overruns[MAX_EVENTS];
};

static unsigned long env_ul(const char *name, unsigned long def)
{
	const char *s = getenv(name);

	return s ? strtoul(s, NULL, 0) : def;
}

/* Arm KEYS timers from CPU 1, 3 ms ahead, 10 us apart. */
static int arm_on_cpu1(const struct twl *tw, struct race_key *k,
		       __u64 period, __u32 count)
{
	static struct twheel_arm a[BATCH];
	static __s32 status[BATCH];
	__u64 start;
	int i, ret;

	if (tw_pin(1))
		return -1;
	start = tw_now() + 3 * MS;
	for (i = 0; i < KEYS; i++) {
		k[i].old_deadline = start + i * 10000ULL;
		a[i] = twl_arm_entry(i, 0, k[i].old_deadline, period, count,
				     TWHEEL_ARM_ABS);
	}
	ret = twl_arm_batch(tw, a, KEYS, status) == KEYS ? 0 : -1;
	return tw_pin(0) ? -1 : ret;
}

/* Modify each key from CPU 0 as its old deadline comes. */
static void modify_all(const struct twl *tw, struct race_key *k, __u64 period,
		       __u32 count)
{
	struct twheel_modify m = {
		.size = sizeof(m), .flags = TWHEEL_ARM_ABS,
	};
	int i;

	if (period)
		m.flags |= TWHEEL_MODIFY_PERIOD;
	for (i = 0; i < KEYS; i++) {
		while (tw_now() + 20000 < k[i].old_deadline)
			;
		m.key = i;
		m.expiry_ns = tw_now() + 5 * MS + i * 1000ULL;
		m.period_ns = period;
		m.count = count;
		k[i].new_deadline = m.expiry_ns;
		/* With a new period and count: twl_modify() moves only. */
		k[i].modify_ret = twl_ioctl(tw, TWHEEL_IOC_MODIFY, &m);
	}
}

/* Read events until @quiet_ms pass without one. */
static void collect(const struct twl *tw, struct race_key *k, int quiet_ms)
{
	struct twheel_event ev[64];
	long n, i;

	while (!tw_quiet_for(tw, quiet_ms)) {
		n = twl_read(tw, ev, ARRAY_SIZE(ev));
		for (i = 0; i < n; i++) {
			struct race_key *rk = &k[ev[i].key];

			if (rk->nev < MAX_EVENTS) {
				rk->ev_deadline[rk->nev] = ev[i].deadline_ns;
				rk->ev_overruns[rk->nev] = ev[i].overruns;
			}
			rk->nev++;
		}
	}
}

/* One-shot: exactly one event, for the deadline MODIFY's result names. */
static int check_oneshot(struct race_key *rk, int key, unsigned long *won)
{
	__u64 want = rk->modify_ret ? rk->old_deadline : rk->new_deadline;

	if (rk->modify_ret && rk->modify_ret != -ENOENT) {
		printf("# key %d: MODIFY failed with %d\n", key, rk->modify_ret);
		return 0;
	}
	*won += !rk->modify_ret;
	if (rk->nev == 1 && rk->ev_deadline[0] == want)
		return 1;
	printf("# key %d: MODIFY %d, %d events, first for %llu, want %llu\n",
	       key, rk->modify_ret, rk->nev,
	       rk->nev ? rk->ev_deadline[0] : 0ULL, want);
	return 0;
}

/*
 * Periodic: the deadlines delivered (an event stands for 1 + overruns of
 * them; unread events fold into one) are the old ones that came before
 * the MODIFY, then, if it succeeded, exactly @c2 new ones: the last event
 * is for the last deadline of the count that was in force, no deadline
 * lies before the first, and they never go back.
 */
static int check_periodic(struct race_key *rk, int key, __u64 p1, __u32 c1,
			  __u64 p2, __u32 c2)
{
	__u64 last, total = 0, prev = 0;
	int i;

	if (rk->nev < 1 || rk->nev > MAX_EVENTS)
		goto bad;
	for (i = 0; i < rk->nev; i++) {
		if (rk->ev_deadline[i] < rk->old_deadline ||
		    rk->ev_deadline[i] < prev)
			goto bad;
		prev = rk->ev_deadline[i];
		total += 1 + rk->ev_overruns[i];
	}
	last = rk->ev_deadline[rk->nev - 1];
	if (rk->modify_ret == -ENOENT && total == c1 &&
	    last == rk->old_deadline + (c1 - 1) * p1)
		return 1;
	if (!rk->modify_ret && total >= c2 && total < c2 + c1 &&
	    last == rk->new_deadline + (c2 - 1) * p2)
		return 1;
bad:
	printf("# key %d: MODIFY %d, %d events, %llu deadlines, last %llu (old %llu, new %llu)\n",
	       key, rk->modify_ret, rk->nev, total, prev, rk->old_deadline,
	       rk->new_deadline);
	return 0;
}

FIXTURE(race) {
	struct twl tw;
	struct race_key *k;
};

FIXTURE_SETUP(race)
{
	ASSERT_EQ(0, twl_open(&self->tw, O_CLOEXEC | O_NONBLOCK));
	self->k = calloc(KEYS, sizeof(*self->k));
	ASSERT_NE(NULL, self->k);
}

FIXTURE_TEARDOWN(race)
{
	twl_close(&self->tw);
	free(self->k);
}

TEST_F_TIMEOUT(race, modify_race_oneshot, 120)
{
	__u64 end = tw_now() + env_ul("TWHEEL_RACE_MS", 2000) * MS;
	unsigned long rounds = 0, won = 0, bad = 0;
	int i;

	/* Here, not in the setup, whose SKIP() would not stop the test. */
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	while (tw_now() < end) {
		memset(self->k, 0, KEYS * sizeof(*self->k));
		ASSERT_EQ(0, arm_on_cpu1(&self->tw, self->k, 0, 0));
		modify_all(&self->tw, self->k, 0, 0);
		collect(&self->tw, self->k, 50);
		for (i = 0; i < KEYS; i++)
			bad += !check_oneshot(&self->k[i], i, &won);
		rounds++;
	}
	TH_LOG("%lu rounds of %d timers: %lu MODIFYs replaced the fire, %lu came too late",
	       rounds, KEYS, won, rounds * KEYS - won);
	EXPECT_EQ(0, bad);
}

TEST_F_TIMEOUT(race, modify_race_periodic, 120)
{
	__u64 end = tw_now() + env_ul("TWHEEL_RACE_MS", 2000) * MS;
	const __u64 p1 = 2 * MS, p2 = 3 * MS;
	const __u32 c1 = 3, c2 = 4;
	unsigned long rounds = 0, bad = 0;
	int i;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs two CPUs");
	while (tw_now() < end) {
		memset(self->k, 0, KEYS * sizeof(*self->k));
		ASSERT_EQ(0, arm_on_cpu1(&self->tw, self->k, p1, c1));
		modify_all(&self->tw, self->k, p2, c2);
		collect(&self->tw, self->k, 50);
		for (i = 0; i < KEYS; i++)
			bad += !check_periodic(&self->k[i], i, p1, c1, p2, c2);
		rounds++;
	}
	TH_LOG("%lu rounds of %d periodic timers modified while firing",
	       rounds, KEYS);
	EXPECT_EQ(0, bad);
}

TW_HARNESS_MAIN
