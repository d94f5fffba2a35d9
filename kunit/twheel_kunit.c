// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of twheel, the per-CPU hierarchical timing wheel.
 *
 * Copyright (C) 2026 The twheel authors
 *
 * One case per behaviour of the API in twheel.h. The pure wheel is tested
 * on virtual time by wheel_kunit.c; these cases arm real timers on the
 * wheels of twheel.ko and watch them fire, so the cases
 * wait for real time. Delays are kept to tens of milliseconds except where
 * a case needs the wheel clock to cross a 4096-tick boundary (level 2), and
 * every wait has a timeout, so that a bug fails a case instead of hanging.
 *
 * Callbacks only record what they see (time, CPU, order, return values):
 * KUnit expectations may allocate and must not run in softirq context. All
 * timers live in memory managed by the case and are shut down by
 * twheel_kunit_exit(), also when a case aborts, since a timer must not
 * outlive its memory and twheel cannot unload with timers pending.
 *
 * Lateness: twheel promises that a timer fires within one tick after its
 * deadline plus the softirq latency of its hrtimer. Under QEMU TCG with
 * KASAN and lockdep that latency is large (2000 timers over 3 s: 8..17 ms
 * at worst on an idle 2-core host), so a fire is accepted up to one tick +
 * TW_SLACK_NS (20 ms) late. A loaded host also deschedules vCPUs, for 80 ms
 * and more, which no fixed allowance covers; so each case runs a monitor,
 * a 1 ms periodic soft hrtimer on every CPU (the kind that drives the
 * wheels), and a fire is also excused as late as the monitor was around
 * it: twheel must not add more than a tick to what the kernel's own soft
 * hrtimers suffer. That does not hide misfiling: a timer in the wrong slot
 * above level 0 is at least 64 ticks late while the monitor is punctual,
 * and the order checks of twheel_test_level_boundary_deadlines() catch one
 * filed a tick off. Early is never accepted, not by a single nanosecond.
 *
 * The cases assume the default tick (tick_us=1000) or a shorter one.
 */
#include <kunit/test.h>

#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/smp.h>

#include "compat.h"
#include "twheel.h"

/* The wheel geometry of twheel.c: base-64 digits of the tick number. */
#define TW_LVL_BITS	6
#define TW_LVL_DEPTH	8
#define TW_GRAN(n)	(1ULL << ((n) * TW_LVL_BITS))

/* Softirq latency allowed on top of one tick (QEMU TCG, debug kernel). */
#define TW_SLACK_NS	(20 * NSEC_PER_MSEC)
/* Process-context callbacks (TWHEEL_SLEEPABLE) wait for a worker, too. */
#define TW_SLEEP_SLACK_NS	(100 * NSEC_PER_MSEC)

/* How far around a fire the monitors' lateness is taken into account. */
#define TW_MON_MARGIN_NS	(50 * NSEC_PER_MSEC)

/* How long to wait for a timer due in a few ticks before giving up. */
#define TW_TIMEOUT_MS	2000

/* Fires whose details a probe logs. */
#define TW_LOG		8

#define TW_RANDOM_TIMERS	2000
#define TW_RANDOM_SPREAD_NS	(3ULL * NSEC_PER_SEC)

struct tw_ctx;

/**
 * struct tw_probe - a timer that records its fires
 * @timer:	the timer under test
 * @ctx:	the case it belongs to
 * @started:	completed by the first fire, when the callback begins
 * @done:	completed by the callback when it is done with its job
 * @go:		set by the case to let a waiting callback go on
 * @sleepable:	the timer is %TWHEEL_SLEEPABLE: hold on by sleeping
 * @rearm:	tw_gate_fn() re-arms the timer on its first fire
 * @fires:	callbacks run so far
 * @cpu:	CPU of the last callback
 * @seq:	position of the last callback among all of the case's
 * @ret:	what an API call made by the callback returned
 * @want:	the fire after which @done completes (1 if zero)
 * @deadline:	the deadline asked for, CLOCK_MONOTONIC ns
 * @fire_ns:	ktime_get() when the last callback began
 * @end_ns:	ktime_get() when the last callback was about to return
 * @hold_ns:	how long the callback spins or sleeps
 * @delay_ns:	delay for an arming done on another CPU (tw_mod_ipi())
 * @fired:	twheel_fired_deadline() of the first TW_LOG fires
 * @overruns:	twheel_overruns() of the first TW_LOG fires
 * @left:	twheel_fires_left() of the first TW_LOG fires
 * @rets:	return values of API calls made by the first TW_LOG fires
 */
struct tw_probe {
	struct twheel_timer	timer;
	struct tw_ctx		*ctx;
	struct completion	started;
	struct completion	done;
	bool			go;
	bool			sleepable;
	bool			rearm;
	atomic_t		fires;
	int			cpu;
	int			seq;
	int			ret;
	unsigned int		want;
	u64			deadline;
	u64			fire_ns;
	u64			end_ns;
	u64			hold_ns;
	u64			delay_ns;
	u64			fired[TW_LOG];
	u32			overruns[TW_LOG];
	u32			left[TW_LOG];
	int			rets[TW_LOG];
};

/* A lean timer for the cases that arm thousands. */
struct tw_mini {
	struct twheel_timer	timer;
	struct tw_ctx		*ctx;
	u64			deadline;	/* the deadline asked for */
	u64			due;		/* it, or the arming if later */
	u64			fire_ns;
	u32			fires;
};

#define TW_MAX_SETS	4

/* The lateness monitor: a 1 ms soft hrtimer per CPU, 10 ms buckets. */
#define TW_MON_PERIOD_NS	NSEC_PER_MSEC
#define TW_MON_BUCKET_NS	(10 * NSEC_PER_MSEC)
#define TW_MON_BUCKETS		2048

/**
 * struct tw_monitor - one CPU's lateness monitor
 * @hrtimer:	periodic, pinned, soft: like a wheel's hrtimer
 * @start:	CLOCK_MONOTONIC ns of bucket 0
 * @late_us:	worst lateness of a fire, by bucket of the fire's time
 */
struct tw_monitor {
	struct hrtimer	hrtimer;
	u64		start;
	u32		late_us[TW_MON_BUCKETS];
};

/**
 * struct tw_ctx - per-case state, test->priv
 * @test:	the case
 * @seq:	callbacks run so far, for ordering
 * @remaining:	tw_mini timers still to fire
 * @all_done:	completed when @remaining reaches zero
 * @sets:	probe arrays to shut down when the case ends
 * @nr_sets:	entries in @sets
 * @mini:	tw_mini array (kvcalloc'ed), shut down and freed at the end
 * @nr_mini:	entries in @mini
 * @early:	sum of every CPU's twheel_stats.early when the case began
 * @offline_cpu: a CPU the case took offline, -1 if none
 * @mon:	lateness monitors, indexed by CPU; NULL entries not running
 */
struct tw_ctx {
	struct kunit		*test;
	atomic_t		seq;
	atomic_t		remaining;
	struct completion	all_done;
	struct {
		struct tw_probe	*p;
		unsigned int	n;
	} sets[TW_MAX_SETS];
	unsigned int		nr_sets;
	struct tw_mini		*mini;
	unsigned int		nr_mini;
	u64			early;
	int			offline_cpu;
	struct tw_monitor	**mon;
};

/* ---- helpers ---- */

static u64 tw_tick(void)
{
	return twheel_tick_ns();
}

/* The tick a ns deadline belongs to, as twheel files it. */
static u64 tw_ns_to_tick(u64 ns)
{
	return div64_u64(ns + tw_tick() - 1, tw_tick());
}

/* The tick now, as the wheel clock counts it. */
static u64 tw_now_tick(void)
{
	return div64_u64(ktime_get(), tw_tick());
}

static void tw_sleep_ms(unsigned int ms)
{
	usleep_range(ms * USEC_PER_MSEC, ms * USEC_PER_MSEC + 500);
}

/* Sleep until CLOCK_MONOTONIC has reached @ns. */
static void tw_sleep_until(u64 ns)
{
	s64 left;

	while ((left = ns - ktime_get()) > 0)
		usleep_range(div_u64(left, NSEC_PER_USEC) + 1,
			     div_u64(left, NSEC_PER_USEC) + 200);
}

static bool tw_wait(struct completion *c, unsigned int ms)
{
	return wait_for_completion_timeout(c, msecs_to_jiffies(ms));
}

static u64 tw_early_sum(void)
{
	struct twheel_stats st;
	unsigned int cpu;
	u64 sum = 0;

	for_each_possible_cpu(cpu)
		if (!twheel_cpu_stats(cpu, &st))
			sum += st.early;
	return sum;
}

static void tw_stats(struct kunit *test, unsigned int cpu,
		     struct twheel_stats *st)
{
	KUNIT_ASSERT_EQ(test, twheel_cpu_stats(cpu, st), 0);
}

/* The CPU most cases use, and another online one or -1. */
static unsigned int tw_home_cpu(void)
{
	return cpumask_first(cpu_online_mask);
}

static int tw_other_cpu(void)
{
	unsigned int cpu = cpumask_next(tw_home_cpu(), cpu_online_mask);

	return cpu < nr_cpu_ids ? cpu : -1;
}

/*
 * Wait until the wheel clock is at least @margin ticks before the next
 * multiple of @gran; return the tick then. Cases use it to place deadlines
 * just after a boundary without the clock crossing another one meanwhile.
 */
static u64 tw_clear_of(u64 gran, u64 margin)
{
	for (;;) {
		u64 now = tw_now_tick();
		u64 next = round_up(now + 1, gran);

		if (next - now >= margin)
			return now;
		tw_sleep_until((next + 2) * tw_tick());
	}
}

/* Record a fire of @p; returns its number, from 1. */
static int tw_record(struct tw_probe *p)
{
	u64 now = ktime_get();
	int n = atomic_read(&p->fires) + 1;

	p->fire_ns = now;
	/* Softirq, or a per-CPU worker: the callback stays on its CPU. */
	p->cpu = raw_smp_processor_id();
	p->seq = atomic_inc_return(&p->ctx->seq) - 1;
	if (n <= TW_LOG) {
		p->fired[n - 1] = twheel_fired_deadline(&p->timer);
		p->overruns[n - 1] = twheel_overruns(&p->timer);
		p->left[n - 1] = twheel_fires_left(&p->timer);
	}
	/* Published last: a case polling @fires then reads the rest. */
	atomic_set_release(&p->fires, n);
	if (n == 1)
		complete(&p->started);
	return n;
}

static void tw_finish(struct tw_probe *p, int n)
{
	p->end_ns = ktime_get();
	if (n == max(p->want, 1U))
		complete(&p->done);
}

/* Records the fire; the plain callback. */
static void tw_probe_fn(struct twheel_timer *t)
{
	struct tw_probe *p = container_of(t, struct tw_probe, timer);

	tw_finish(p, tw_record(p));
}

/* Spins for @hold_ns (softirq) or sleeps for it (TWHEEL_SLEEPABLE). */
static void tw_hold_fn(struct twheel_timer *t)
{
	struct tw_probe *p = container_of(t, struct tw_probe, timer);
	int n = tw_record(p);
	u64 end = p->fire_ns + p->hold_ns;

	if (p->sleepable)
		tw_sleep_until(end);
	else
		while (ktime_get() < end)
			cpu_relax();
	tw_finish(p, n);
}

static void tw_pause(const struct tw_probe *p)
{
	if (p->sleepable)
		usleep_range(500, 1000);
	else
		cpu_relax();
}

/*
 * Holds on (spinning in softirq, sleeping if TWHEEL_SLEEPABLE) until the
 * case sets @go, 2 s at most, then @hold_ns more; then, on its first fire,
 * re-arms itself 1 ms later if @rearm. The case knows the callback is
 * running from @started until it sets @go, whatever the scheduling.
 */
static void tw_gate_fn(struct twheel_timer *t)
{
	struct tw_probe *p = container_of(t, struct tw_probe, timer);
	int n = tw_record(p);
	u64 end = p->fire_ns + 2ULL * NSEC_PER_SEC;

	while (!READ_ONCE(p->go) && ktime_get() < end)
		tw_pause(p);
	end = ktime_get() + p->hold_ns;
	while (ktime_get() < end)
		tw_pause(p);
	if (p->rearm && n == 1)
		p->rets[0] = twheel_mod(t, NSEC_PER_MSEC, TWHEEL_REL);
	tw_finish(p, n);
}

/* Re-arms itself 2 ticks later until the @want-th fire. */
static void tw_rearm_fn(struct twheel_timer *t)
{
	struct tw_probe *p = container_of(t, struct tw_probe, timer);
	int n = tw_record(p);

	if (n < p->want && n <= TW_LOG) {
		p->deadline = ktime_get() + 2 * tw_tick();
		p->rets[n - 1] = twheel_add(t, p->deadline, TWHEEL_ABS);
	}
	tw_finish(p, n);
}

/* Cancels itself on its first fire. */
static void tw_self_cancel_fn(struct twheel_timer *t)
{
	struct tw_probe *p = container_of(t, struct tw_probe, timer);
	int n = tw_record(p);

	if (n == 1)
		p->ret = twheel_cancel(t);
	tw_finish(p, n);
}

/* Re-arms itself 10 ms later, then cancels itself. */
static void tw_rearm_cancel_fn(struct twheel_timer *t)
{
	struct tw_probe *p = container_of(t, struct tw_probe, timer);
	int n = tw_record(p);

	if (n == 1) {
		p->rets[0] = twheel_add(t, 10 * NSEC_PER_MSEC, TWHEEL_REL);
		p->ret = twheel_cancel(t);
	}
	tw_finish(p, n);
}

/*
 * TWHEEL_SLEEPABLE: waits for @go, gives twheel_shutdown_sync() 100 ms to
 * mark the timer, then tries to re-arm itself.
 */
static void tw_shutdown_rearm_fn(struct twheel_timer *t)
{
	struct tw_probe *p = container_of(t, struct tw_probe, timer);
	int n = tw_record(p);
	u64 give_up = p->fire_ns + 2ULL * NSEC_PER_SEC;

	while (!READ_ONCE(p->go) && ktime_get() < give_up)
		tw_sleep_ms(1);
	tw_sleep_ms(100);
	p->ret = twheel_mod(t, 10 * NSEC_PER_MSEC, TWHEEL_REL);
	tw_finish(p, n);
}

/* Re-arms @p from another CPU: smp_call_function_single() callback. */
static void tw_mod_ipi(void *info)
{
	struct tw_probe *p = info;

	p->deadline = ktime_get() + p->delay_ns;
	p->ret = twheel_mod(&p->timer, p->deadline, TWHEEL_ABS);
}

static void tw_mini_fn(struct twheel_timer *t)
{
	struct tw_mini *m = container_of(t, struct tw_mini, timer);

	m->fire_ns = ktime_get();
	m->fires++;
	if (atomic_dec_and_test(&m->ctx->remaining))
		complete(&m->ctx->all_done);
}

/* @n probes with @fn and @flags, shut down by twheel_kunit_exit(). */
static struct tw_probe *tw_probes(struct kunit *test, unsigned int n,
				  twheel_fn_t fn, u32 flags)
{
	struct tw_ctx *ctx = test->priv;
	struct tw_probe *p;
	unsigned int i;

	KUNIT_ASSERT_LT(test, ctx->nr_sets, TW_MAX_SETS);
	p = kunit_kcalloc(test, n, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	for (i = 0; i < n; i++) {
		twheel_timer_init(&p[i].timer, fn, flags);
		p[i].ctx = ctx;
		p[i].sleepable = flags & TWHEEL_SLEEPABLE;
		init_completion(&p[i].started);
		init_completion(&p[i].done);
	}
	ctx->sets[ctx->nr_sets].p = p;
	ctx->sets[ctx->nr_sets].n = n;
	ctx->nr_sets++;
	return p;
}

/* Arm @p on @cpu for the absolute deadline @ns. */
static int tw_arm_on(struct tw_probe *p, u64 ns, unsigned int cpu)
{
	p->deadline = ns;
	return twheel_add_on(&p->timer, ns, TWHEEL_ABS, cpu);
}

/* Arm @p on @cpu @ns from now. */
static int tw_arm_in(struct tw_probe *p, u64 ns, unsigned int cpu)
{
	return tw_arm_on(p, ktime_get() + ns, cpu);
}

static enum hrtimer_restart tw_mon_fn(struct hrtimer *hrtimer)
{
	struct tw_monitor *mon = container_of(hrtimer, struct tw_monitor,
					      hrtimer);
	u64 now = ktime_get(), due = hrtimer_get_expires(hrtimer);
	u64 b = div64_u64(now - mon->start, TW_MON_BUCKET_NS);
	u32 late = div_u64(now - due, NSEC_PER_USEC);

	/* Only this hrtimer writes @late_us; cases read it racily. */
	if (now > due && b < TW_MON_BUCKETS && late > mon->late_us[b])
		WRITE_ONCE(mon->late_us[b], late);
	hrtimer_forward(hrtimer, now, TW_MON_PERIOD_NS);
	return HRTIMER_RESTART;
}

/* Runs on the monitor's CPU: a pinned hrtimer is queued where started. */
static void tw_mon_start(void *info)
{
	struct tw_monitor *mon = info;

	hrtimer_start(&mon->hrtimer, ns_to_ktime(mon->start),
		      HRTIMER_MODE_ABS_PINNED_SOFT);
}

static void tw_mon_start_all(struct tw_ctx *ctx)
{
	u64 start = ktime_get();
	unsigned int cpu;

	ctx->mon = kcalloc(nr_cpu_ids, sizeof(*ctx->mon), GFP_KERNEL);
	if (!ctx->mon)
		return;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct tw_monitor *mon = kzalloc(sizeof(*mon), GFP_KERNEL);

		if (!mon)
			break;
		mon->start = start;
		hrtimer_setup(&mon->hrtimer, tw_mon_fn, CLOCK_MONOTONIC,
			      HRTIMER_MODE_ABS_PINNED_SOFT);
		ctx->mon[cpu] = mon;
		smp_call_function_single(cpu, tw_mon_start, mon, 1);
	}
	cpus_read_unlock();
}

static void tw_mon_stop_all(struct tw_ctx *ctx)
{
	unsigned int cpu;

	if (!ctx->mon)
		return;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		if (!ctx->mon[cpu])
			continue;
		hrtimer_cancel(&ctx->mon[cpu]->hrtimer);
		kfree(ctx->mon[cpu]);
	}
	kfree(ctx->mon);
	ctx->mon = NULL;
}

/*
 * How late the monitors were, at worst, from @from until 10 ms after @to:
 * a stall that held back a fire at @to also held back a monitor fire.
 */
static u64 tw_mon_late_ns(struct tw_ctx *ctx, u64 from, u64 to)
{
	u64 worst = 0, b, first, last;
	unsigned int cpu;

	if (!ctx->mon)
		return 0;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		struct tw_monitor *mon = ctx->mon[cpu];

		if (!mon || to < mon->start)
			continue;
		first = from > mon->start ?
			div64_u64(from - mon->start, TW_MON_BUCKET_NS) : 0;
		last = div64_u64(to - mon->start, TW_MON_BUCKET_NS) + 1;
		for (b = first; b <= last && b < TW_MON_BUCKETS; b++)
			worst = max_t(u64, worst, READ_ONCE(mon->late_us[b]));
	}
	return worst * NSEC_PER_USEC;
}

/*
 * The latest a timer due at @due may fire at @fire_ns: a tick, @slack and
 * whatever the kernel's soft hrtimers suffered meanwhile, give or take
 * TW_MON_MARGIN_NS: a burst of callbacks delays a monitor fire after it.
 */
static u64 tw_late_bound(struct tw_ctx *ctx, u64 due, u64 fire_ns, u64 slack)
{
	u64 from = due > TW_MON_MARGIN_NS ? due - TW_MON_MARGIN_NS : 0;

	return tw_tick() + slack +
	       tw_mon_late_ns(ctx, from, fire_ns + TW_MON_MARGIN_NS);
}

/* Never early, and late by at most tw_late_bound(). */
static void tw_expect_timely(struct kunit *test, const struct tw_probe *p,
			     u64 slack)
{
	s64 late = p->fire_ns - p->deadline;
	u64 bound = tw_late_bound(p->ctx, p->deadline, p->fire_ns, slack);

	KUNIT_EXPECT_GE_MSG(test, late, 0, "fired %lld ns early", -late);
	KUNIT_EXPECT_LE_MSG(test, late, (s64)bound,
			    "fired %lld ns late, more than %llu", late, bound);
}

/* twheel_cancel() until the callback is no longer running; returns it. */
static int tw_cancel_idle(struct tw_probe *p)
{
	u64 give_up = ktime_get() + 2ULL * NSEC_PER_SEC;
	int ret;

	while ((ret = twheel_cancel(&p->timer)) == -EBUSY &&
	       ktime_get() < give_up)
		tw_sleep_ms(1);
	return ret;
}

/* Poll a CPU's hrtimer_armed for up to @ms; true once it equals @want. */
static bool tw_hrtimer_becomes(unsigned int cpu, bool want, unsigned int ms)
{
	u64 give_up = ktime_get() + (u64)ms * NSEC_PER_MSEC;
	struct twheel_stats st;

	for (;;) {
		if (!twheel_cpu_stats(cpu, &st) && st.hrtimer_armed == want)
			return true;
		if (ktime_get() > give_up)
			return false;
		tw_sleep_ms(1);
	}
}

/*
 * The level by the design's definition: the lowest level n at which
 * @tick's granule of level n + 1 is @clk's or the next one. Written level
 * by level, independently of wheel.c's fls64() arithmetic (which
 * wheel_kunit.c tests directly).
 */
static unsigned int tw_ref_lvl(u64 tick, u64 clk)
{
	unsigned int lvl;

	for (lvl = 0; lvl < TW_LVL_DEPTH - 1; lvl++)
		if (tick / TW_GRAN(lvl + 1) <= clk / TW_GRAN(lvl + 1) + 1)
			break;
	return lvl;
}

/* ---- firing ---- */

static void twheel_test_cascade(struct kunit *test)
{
	unsigned int cpu = tw_home_cpu(), i;
	struct twheel_stats before, armed, after;
	struct tw_probe *p;
	u64 now, b64, b;
	u64 ticks[4];

	/*
	 * With clk = now, the 64 boundary b64 after the next one and the
	 * next 4096 boundary b, at least 300 ticks away, all four start on
	 * level 1 (in @clk's 4096-tick block or the next, not in its 64-tick
	 * block or the next) and move to level 0 by their deadlines:
	 *
	 *   p0: b64 + 5
	 *   p1: b               p1 and p2 share a level-1 slot
	 *   p2: b + 1
	 *   p3: b + 3 * 64 + 7
	 */
	now = tw_clear_of(4096, 300);
	b64 = round_up(now + 1, 64) + 64;
	b = round_up(now + 1, 4096);
	ticks[0] = b64 + 5;
	ticks[1] = b;
	ticks[2] = b + 1;
	ticks[3] = b + 3 * 64 + 7;

	p = tw_probes(test, 4, tw_probe_fn, TWHEEL_PINNED);
	tw_stats(test, cpu, &before);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, tw_arm_on(&p[i], ticks[i] * tw_tick(), cpu), 0);
	tw_stats(test, cpu, &armed);
	/*
	 * On level 1; or those of the next 4096-tick block on level 2, if
	 * the wheel's clock lagged a block behind: it is forwarded to the
	 * time of an arm only while no event of the wheel is due (seen once
	 * in a CI run on a loaded host).
	 */
	KUNIT_EXPECT_EQ(test, armed.level_pending[1] + armed.level_pending[2] -
			before.level_pending[1] - before.level_pending[2], 4);

	for (i = 0; i < 4; i++) {
		KUNIT_ASSERT_TRUE_MSG(test, tw_wait(&p[i].done, 6000),
				      "timer %u did not fire", i);
		tw_expect_timely(test, &p[i], TW_SLACK_NS);
		KUNIT_EXPECT_EQ(test, p[i].seq, i);
		KUNIT_EXPECT_EQ(test, p[i].cpu, cpu);
	}
	tw_stats(test, cpu, &after);
	KUNIT_EXPECT_GE(test, after.cascaded - before.cascaded, 4);
	for (i = 0; i < TWHEEL_STATS_LEVELS; i++)
		KUNIT_EXPECT_EQ(test, after.level_pending[i],
				before.level_pending[i]);
}

static void twheel_test_level_boundary_deadlines(struct kunit *test)
{
	unsigned int cpu = tw_home_cpu(), i;
	struct tw_probe *p;
	u64 t = tw_tick(), b;
	u64 ns[7];
	/* Arming order is scrambled; the firing order is by tick, then FIFO. */
	static const unsigned int order[7] = { 4, 2, 3, 1, 6, 0, 5 };

	/*
	 * b is a 64-tick boundary: level 0 wraps from slot 63 to slot 0
	 * there, and deadlines in the block after it start on level 1.
	 *
	 *   ns[0] = (b - 1) t      last slot of the current block
	 *   ns[1] = b t - 1        rounds up to tick b
	 *   ns[2] = b t            exactly tick b, armed after ns[1]
	 *   ns[3] = b t + 1        rounds up to tick b + 1
	 *   ns[4] = (b + 2) t
	 *   ns[5] = (b + 63) t     last slot of the next block
	 *   ns[6] = (b + 64) t     first slot of the block after
	 */
	b = round_up(tw_clear_of(64, 20) + 1, 64);
	ns[0] = (b - 1) * t;
	ns[1] = b * t - 1;
	ns[2] = b * t;
	ns[3] = b * t + 1;
	ns[4] = (b + 2) * t;
	ns[5] = (b + 63) * t;
	ns[6] = (b + 64) * t;

	p = tw_probes(test, 7, tw_probe_fn, TWHEEL_PINNED);
	/* ns[1] before ns[2]: the same tick fires in arming order. */
	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[1], ns[1], cpu), 0);
	for (i = 0; i < 7; i++)
		if (order[i] != 1)
			KUNIT_ASSERT_EQ(test, tw_arm_on(&p[order[i]],
							ns[order[i]], cpu), 0);
	for (i = 0; i < 7; i++) {
		KUNIT_ASSERT_TRUE_MSG(test, tw_wait(&p[i].done, TW_TIMEOUT_MS),
				      "timer %u did not fire", i);
		tw_expect_timely(test, &p[i], TW_SLACK_NS);
		KUNIT_EXPECT_EQ_MSG(test, p[i].seq, i, "timer %u", i);
		/* Never before the deadline, though maybe before its tick's end. */
		KUNIT_EXPECT_GE(test, p[i].fire_ns, ns[i]);
	}
}

static void twheel_test_random_delays(struct kunit *test)
{
	struct tw_ctx *ctx = test->priv;
	unsigned int n = TW_RANDOM_TIMERS, i, cpus = 0, early = 0, late = 0;
	unsigned int *online, cpu;
	unsigned int worst_i = 0;
	s64 worst = 0;
	struct rnd_state rnd;
	u64 t = tw_tick(), seed = get_random_u64(), early_before, start, armed;
	u64 bound;

	online = kunit_kcalloc(test, nr_cpu_ids, sizeof(*online), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, online);
	for_each_online_cpu(cpu)
		online[cpus++] = cpu;
	ctx->mini = kvcalloc(n, sizeof(*ctx->mini), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->mini);
	ctx->nr_mini = n;
	atomic_set(&ctx->remaining, n);
	prandom_seed_state(&rnd, seed);
	kunit_info(test, "seed %#llx, %u timers on %u CPUs\n", seed, n, cpus);
	early_before = tw_early_sum();
	start = ktime_get();

	for (i = 0; i < n; i++) {
		struct tw_mini *m = ctx->mini + i;
		u32 r = prandom_u32_state(&rnd);
		u64 now = ktime_get(), now_tick = div64_u64(now, t);
		enum twheel_mode mode = TWHEEL_ABS;
		s64 arg;
		int ret;

		/*
		 * Let the timers armed so far fire meanwhile: a busy case
		 * thread delays ksoftirqd on its CPU by a scheduler slice.
		 */
		if (i && !(i % 64))
			usleep_range(500, 1000);
		twheel_timer_init(&m->timer, tw_mini_fn, 0);
		m->ctx = ctx;
		switch (i % 8) {
		case 0:	/* ns-random delay, relative */
			arg = div_u64((u64)r * TW_RANDOM_SPREAD_NS, U32_MAX);
			m->deadline = now + arg;
			mode = TWHEEL_REL;
			break;
		case 1:	/* ns-random deadline, absolute */
			m->deadline = now + div_u64((u64)r * TW_RANDOM_SPREAD_NS,
						    U32_MAX);
			break;
		case 2:	/* on a multiple of 64 ticks */
			m->deadline = (round_up(now_tick + 1, 64) +
				       64 * (r % 40)) * t;
			break;
		case 3:	/* one ns either side of a multiple of 64 ticks */
			m->deadline = (round_up(now_tick + 1, 64) +
				       64 * (r % 40)) * t + (r & 1 ? 1 : -1);
			break;
		case 4:	/* a relative delay of 64 k ticks */
			arg = 64 * (1 + r % 40) * t;
			m->deadline = now + arg;
			mode = TWHEEL_REL;
			break;
		case 5:	/* the next multiple of 4096 ticks, and +- 1 ns */
			m->deadline = round_up(now_tick + 1, 4096) * t +
				      (s64)(r % 3) - 1;
			break;
		case 6:	/* 0..3 ticks, relative */
			arg = r % (3 * t + 1);
			m->deadline = now + arg;
			mode = TWHEEL_REL;
			break;
		default: /* up to 10 ms in the past: fires at once */
			m->deadline = now - min_t(u64, now, r % (10 * NSEC_PER_MSEC));
			break;
		}
		if (mode == TWHEEL_ABS)
			arg = m->deadline;
		/* A REL deadline is counted from twheel's own ktime_get(). */
		m->due = max_t(u64, m->deadline, ktime_get());
		if (i % (cpus + 1) == cpus)
			ret = twheel_add(&m->timer, arg, mode);
		else
			ret = twheel_add_on(&m->timer, arg, mode,
					    online[i % (cpus + 1)]);
		if (ret) {
			KUNIT_FAIL(test, "timer %u: add returned %d", i, ret);
			if (atomic_dec_and_test(&ctx->remaining))
				complete(&ctx->all_done);
		}
	}
	armed = ktime_get();

	KUNIT_ASSERT_TRUE_MSG(test,
			      tw_wait(&ctx->all_done, 4200 + 3000 + 10000),
			      "%d timers did not fire",
			      atomic_read(&ctx->remaining));
	for (i = 0; i < n; i++) {
		struct tw_mini *m = ctx->mini + i;
		s64 d = m->fire_ns - m->deadline;

		if (m->fires != 1 && m->fires)
			KUNIT_FAIL(test, "timer %u fired %u times", i, m->fires);
		if (!m->fires)
			continue;
		if (d < 0 && !early++)
			KUNIT_FAIL(test, "timer %u (kind %u) fired %lld ns early",
				   i, i % 8, -d);
		d = m->fire_ns - m->due;
		if (d > worst) {
			worst = d;
			worst_i = i;
		}
		bound = tw_late_bound(ctx, m->due, m->fire_ns, TW_SLACK_NS);
		if (d > (s64)bound && !late++)
			KUNIT_FAIL(test, "timer %u (kind %u) fired %lld ns late, more than %llu",
				   i, i % 8, d, bound);
	}
	KUNIT_EXPECT_EQ(test, early, 0);
	KUNIT_EXPECT_EQ(test, late, 0);
	KUNIT_EXPECT_EQ(test, tw_early_sum(), early_before);
	kunit_info(test, "armed in %llu us; worst lateness %lld us (timer %u, kind %u, due at +%lld us); soft hrtimers then: %llu us\n",
		   div_u64(armed - start, NSEC_PER_USEC), div_s64(worst, 1000),
		   worst_i, worst_i % 8,
		   div_s64(ctx->mini[worst_i].due - start, 1000),
		   div_u64(tw_mon_late_ns(ctx, ctx->mini[worst_i].due,
					  ctx->mini[worst_i].fire_ns),
			   NSEC_PER_USEC));
}

static void twheel_test_fifo_equal_deadlines(struct kunit *test)
{
	unsigned int cpu = tw_home_cpu(), i;
	struct tw_probe *p;
	u64 t = tw_tick(), now, b, d;

	/*
	 * Six timers for the same tick d = b + 3 * 64 + 40 (b a 4096
	 * boundary), armed as the clock approaches, so they are filed on two
	 * levels at three times and meet in one level-0 slot:
	 *
	 *   now:      p0 (d t), p1 (d t - t/2, same tick): level 1, the slot
	 *             of d's granule (b's 4096-tick block is the next one)
	 *             p3 armed for d + 1000 (level 1, another slot)
	 *   b:        p2 (d t): level 1, d's slot -> [p0 p1 p2]
	 *             p3 re-armed for d t by twheel_mod -> [p0 p1 p2 p3]
	 *   b + 192:  d's level-1 slot may drain since b + 128 (its drain
	 *             tick); p4 (d t), p5 (d t - t + 1) join it behind
	 *             the others, at its tail or on level 0
	 *                                      -> [p0 p1 p2 p3 p4 p5]
	 */
	now = tw_clear_of(4096, 300);
	b = round_up(now + 1, 4096);
	d = b + 3 * 64 + 40;
	p = tw_probes(test, 6, tw_probe_fn, TWHEEL_PINNED);

	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[0], d * t, cpu), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[1], d * t - t / 2, cpu), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[3], (d + 1000) * t, cpu), 0);

	tw_sleep_until(b * t + 5 * NSEC_PER_MSEC);
	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[2], d * t, cpu), 0);
	p[3].deadline = d * t;
	KUNIT_EXPECT_EQ(test, twheel_mod(&p[3].timer, d * t, TWHEEL_ABS), 1);

	tw_sleep_until((b + 192) * t + 5 * NSEC_PER_MSEC);
	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[4], d * t, cpu), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[5], d * t - t + 1, cpu), 0);

	for (i = 0; i < 6; i++) {
		KUNIT_ASSERT_TRUE_MSG(test, tw_wait(&p[i].done, TW_TIMEOUT_MS),
				      "timer %u did not fire", i);
		KUNIT_EXPECT_EQ_MSG(test, p[i].seq, i, "timer %u", i);
		tw_expect_timely(test, &p[i], TW_SLACK_NS);
	}
}

/* ---- cancel ---- */

static void twheel_test_cancel_before_fire(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, 0);

	/* pending -> cancelled: 1, and the callback never runs. */
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 20 * NSEC_PER_MSEC, tw_home_cpu()), 0);
	KUNIT_EXPECT_TRUE(test, twheel_pending(&p->timer));
	KUNIT_EXPECT_EQ(test, twheel_cancel(&p->timer), 1);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
	/* A second cancel finds nothing. */
	KUNIT_EXPECT_EQ(test, twheel_cancel(&p->timer), 0);
	tw_sleep_ms(50);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 0);
}

static void twheel_test_cancel_while_running(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_gate_fn, TWHEEL_SLEEPABLE);

	/*
	 * A sleepable callback holds on until we let it go: cancelling it
	 * meanwhile reports -EBUSY (not pending, running), and does not wait.
	 */
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 5 * NSEC_PER_MSEC, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->started, TW_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_cancel(&p->timer), -EBUSY);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
	KUNIT_EXPECT_EQ(test, READ_ONCE(p->end_ns), 0);
	WRITE_ONCE(p->go, true);
	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&p->timer), 0);
	KUNIT_EXPECT_NE(test, p->end_ns, 0);
}

/* Expired TWHEEL_SLEEPABLE timers of @cpu waiting for its sleep work. */
static u64 tw_sleeping(unsigned int cpu)
{
	struct twheel_stats st;
	u64 filed = 0;
	unsigned int i;

	if (twheel_cpu_stats(cpu, &st))
		return 0;
	for (i = 0; i < TWHEEL_STATS_LEVELS; i++)
		filed += st.level_pending[i];
	return st.pending - filed;
}

/*
 * Expired sleepable timers wait on their CPU's sleep list while its work
 * runs another's callback, pending still: twheel_mod() takes one off and
 * files it anew (it fires once, at the new deadline), twheel_cancel()
 * takes one off (it never runs).
 */
static void twheel_test_sleep_list(struct kunit *test)
{
	struct tw_probe *g = tw_probes(test, 1, tw_gate_fn, TWHEEL_SLEEPABLE);
	struct tw_probe *p = tw_probes(test, 2, tw_probe_fn, TWHEEL_SLEEPABLE);
	unsigned int cpu = tw_home_cpu(), i;
	u64 before = tw_sleeping(cpu);

	KUNIT_ASSERT_EQ(test, tw_arm_in(g, NSEC_PER_MSEC, cpu), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&g->started, TW_TIMEOUT_MS));
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, tw_arm_in(&p[i], NSEC_PER_MSEC, cpu), 0);
	for (i = 0; i < 2000 && tw_sleeping(cpu) < before + 2; i++)
		tw_sleep_ms(1);
	KUNIT_ASSERT_EQ(test, tw_sleeping(cpu), before + 2);
	KUNIT_EXPECT_TRUE(test, twheel_pending(&p[0].timer));
	p[0].deadline = ktime_get() + 30 * NSEC_PER_MSEC;
	KUNIT_EXPECT_EQ(test, twheel_mod(&p[0].timer, p[0].deadline,
					 TWHEEL_ABS), 1);
	KUNIT_EXPECT_EQ(test, twheel_cancel(&p[1].timer), 1);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p[1].timer));
	KUNIT_EXPECT_EQ(test, tw_sleeping(cpu), before);
	WRITE_ONCE(g->go, true);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p[0].done, TW_TIMEOUT_MS));
	tw_expect_timely(test, &p[0], TW_SLEEP_SLACK_NS);
	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&g->timer), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p[0].fires), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p[1].fires), 0);
}

static void twheel_test_cancel_after_fire(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, 0);

	/* fired and returned -> cancel: 0, nothing was pending. */
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 5 * NSEC_PER_MSEC, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->done, TW_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, tw_cancel_idle(p), 0);
	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&p->timer), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 1);
}

/*
 * CPU0 (case)                       CPU1 (twheel)
 * ----                              ----
 *                                   callback starts, holds on
 * twheel_cancel()  -> -EBUSY
 * go = true                         sees go, holds on 50 ms more
 * twheel_cancel_sync()
 *   waits ...                       callback ends (end_ns)
 *   returns 0, after end_ns
 */
static void tw_cancel_sync_running(struct kunit *test, u32 flags, int cpu)
{
	struct tw_probe *p = tw_probes(test, 1, tw_gate_fn, flags);
	u64 returned;

	p->hold_ns = 50 * NSEC_PER_MSEC;
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 5 * NSEC_PER_MSEC, cpu), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->started, TW_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_cancel(&p->timer), -EBUSY);
	WRITE_ONCE(p->go, true);
	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&p->timer), 0);
	returned = ktime_get();
	KUNIT_EXPECT_NE_MSG(test, READ_ONCE(p->end_ns), 0,
			    "cancel_sync returned while the callback ran");
	KUNIT_EXPECT_LE(test, READ_ONCE(p->end_ns), returned);
	KUNIT_EXPECT_EQ(test, p->cpu, cpu);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
}

static void twheel_test_cancel_sync_softirq(struct kunit *test)
{
	int cpu = tw_other_cpu();

	/* The callback spins in softirq: it must not spin on our CPU. */
	if (cpu < 0)
		kunit_skip(test, "needs two online CPUs");
	tw_cancel_sync_running(test, 0, cpu);
}

static void twheel_test_cancel_sync_sleepable(struct kunit *test)
{
	int cpu = tw_other_cpu();

	tw_cancel_sync_running(test, TWHEEL_SLEEPABLE,
			       cpu < 0 ? tw_home_cpu() : cpu);
}

static void twheel_test_cancel_sync_rearming(struct kunit *test)
{
	int cpu = tw_other_cpu();
	struct tw_probe *p;
	unsigned int fires;

	/*
	 * The callback spins until we let it go and 50 ms more, then re-arms
	 * itself for 1 ms later, while twheel_cancel_sync() waits for it: on
	 * return the timer is neither running nor pending, and it never
	 * fires again.
	 */
	if (cpu < 0)
		kunit_skip(test, "needs two online CPUs");
	p = tw_probes(test, 1, tw_gate_fn, 0);
	p->hold_ns = 50 * NSEC_PER_MSEC;
	p->rearm = true;
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 5 * NSEC_PER_MSEC, cpu), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->started, TW_TIMEOUT_MS));
	WRITE_ONCE(p->go, true);
	KUNIT_EXPECT_GE(test, twheel_cancel_sync(&p->timer), 0);
	KUNIT_EXPECT_NE(test, READ_ONCE(p->end_ns), 0);
	KUNIT_EXPECT_EQ(test, p->rets[0], 0);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
	fires = atomic_read(&p->fires);
	tw_sleep_ms(30);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), fires);
}

/*
 * CPU0 (case)                       CPU1 (twheel)
 * ----                              ----
 *                                   periodic callback starts, holds on;
 *                                   its timer is filed for the next fire
 * twheel_try_cancel()  -> -EBUSY,
 *   still pending
 * go = true                         sees go, holds on 50 ms more
 * twheel_wait_running()
 *   waits ...                       callback ends (end_ns)
 *   returns 0, after end_ns; still pending
 * twheel_try_cancel()  -> 1
 */
static void twheel_test_try_cancel(struct kunit *test)
{
	int cpu = tw_other_cpu();
	struct tw_probe *p;
	u64 returned;

	if (cpu < 0)
		kunit_skip(test, "needs two online CPUs");
	p = tw_probes(test, 1, tw_gate_fn, 0);
	p->hold_ns = 50 * NSEC_PER_MSEC;
	KUNIT_ASSERT_EQ(test, twheel_set_period(&p->timer, 10 * NSEC_PER_SEC,
						TWHEEL_FOREVER), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 5 * NSEC_PER_MSEC, cpu), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->started, TW_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_try_cancel(&p->timer), -EBUSY);
	KUNIT_EXPECT_TRUE(test, twheel_pending(&p->timer));
	WRITE_ONCE(p->go, true);
	KUNIT_EXPECT_EQ(test, twheel_wait_running(&p->timer), 0);
	returned = ktime_get();
	KUNIT_EXPECT_NE_MSG(test, READ_ONCE(p->end_ns), 0,
			    "wait_running returned while the callback ran");
	KUNIT_EXPECT_LE(test, READ_ONCE(p->end_ns), returned);
	KUNIT_EXPECT_TRUE(test, twheel_pending(&p->timer));
	KUNIT_EXPECT_EQ(test, twheel_try_cancel(&p->timer), 1);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
	/* Idle: nothing to cancel, nothing to wait for. */
	KUNIT_EXPECT_EQ(test, twheel_try_cancel(&p->timer), 0);
	KUNIT_EXPECT_EQ(test, twheel_wait_running(&p->timer), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 1);
}

/* ---- from the callback ---- */

static void twheel_test_self_rearm(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_rearm_fn, 0);
	unsigned int i;

	/* fire 1 -> add(+2 ticks) -> fire 2 -> add -> fire 3, stop. */
	p->want = 3;
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 5 * NSEC_PER_MSEC, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->done, TW_TIMEOUT_MS));
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ_MSG(test, p->rets[i], 0, "re-arm %u", i);
	/* The last deadline is the one the last re-arm asked for. */
	KUNIT_EXPECT_GE(test, p->fire_ns, p->deadline);
	KUNIT_EXPECT_EQ(test, tw_cancel_idle(p), 0);
	tw_sleep_ms(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 3);
}

static void twheel_test_self_cancel_periodic(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_self_cancel_fn, 0);

	/*
	 * A periodic timer is pending again while its callback runs; the
	 * callback cancelling itself gets -EBUSY (it is running) and removes
	 * that next fire.
	 */
	KUNIT_ASSERT_EQ(test, twheel_set_period(&p->timer, 5 * NSEC_PER_MSEC,
						TWHEEL_FOREVER), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 5 * NSEC_PER_MSEC, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->done, TW_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, p->ret, -EBUSY);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
	tw_sleep_ms(30);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 1);
}

static void twheel_test_self_rearm_then_cancel(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_rearm_cancel_fn, 0);

	/* One-shot: the callback re-arms (0), then cancels (-EBUSY) itself. */
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 5 * NSEC_PER_MSEC, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->done, TW_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, p->rets[0], 0);
	KUNIT_EXPECT_EQ(test, p->ret, -EBUSY);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
	tw_sleep_ms(40);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 1);
}

/* ---- periodic ---- */

/* Each fire delivers the previous deadline + (1 + overruns) periods. */
static void tw_expect_no_drift(struct kunit *test, const struct tw_probe *p,
			       unsigned int n, u64 period)
{
	unsigned int i;

	KUNIT_EXPECT_EQ(test, p->fired[0] - p->overruns[0] * period,
			p->deadline);
	for (i = 1; i < min_t(unsigned int, n, TW_LOG); i++)
		KUNIT_EXPECT_EQ_MSG(test, p->fired[i] - p->fired[i - 1],
				    (1 + p->overruns[i]) * period,
				    "fire %u", i);
}

static void twheel_test_periodic_count(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, 0);
	u64 period = 10 * NSEC_PER_MSEC;
	unsigned int i, fires, deadlines;

	/*
	 * count 5: five deadlines, each delivered by a callback or folded
	 * into the next one's overruns (a guest stalled for a period), and
	 * left counts them down to 0.
	 */
	KUNIT_ASSERT_EQ(test, twheel_set_period(&p->timer, period, 5), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, period, tw_home_cpu()), 0);
	for (i = 0; i < TW_TIMEOUT_MS / 10; i++) {
		if (atomic_read(&p->fires) && !twheel_pending(&p->timer))
			break;
		tw_sleep_ms(10);
	}
	tw_sleep_ms(50);
	KUNIT_ASSERT_FALSE(test, twheel_pending(&p->timer));
	fires = atomic_read(&p->fires);
	KUNIT_ASSERT_GE(test, fires, 1U);
	for (i = 0, deadlines = 0; i < fires; i++) {
		deadlines += 1 + p->overruns[i];
		KUNIT_EXPECT_EQ(test, p->left[i], 5 - deadlines);
	}
	KUNIT_EXPECT_EQ(test, deadlines, 5U);
	tw_expect_no_drift(test, p, fires, period);
}

static void twheel_test_periodic_forever(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, 0);
	u64 period = 5 * NSEC_PER_MSEC;
	unsigned int i, fires;

	/* TWHEEL_FOREVER: fires until cancelled, pending between fires. */
	p->want = 6;
	KUNIT_ASSERT_EQ(test, twheel_set_period(&p->timer, period,
						TWHEEL_FOREVER), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, period, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->done, TW_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&p->timer), 1);
	fires = atomic_read(&p->fires);
	KUNIT_EXPECT_GE(test, fires, 6);
	for (i = 0; i < 6; i++)
		KUNIT_EXPECT_EQ(test, p->left[i], TWHEEL_FOREVER);
	tw_expect_no_drift(test, p, 6, period);
	tw_sleep_ms(30);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), fires);
}

/*
 * twheel_pending() of a periodic timer firing every tick on the other CPU,
 * read here all the while: the re-arm files it again before the lock is
 * dropped, and a TWHEEL_SLEEPABLE one goes to the sleep list likewise, so
 * that it reads as pending from one fire to the next.
 */
static void tw_pending_throughout(struct kunit *test, u32 flags)
{
	int cpu = tw_other_cpu();
	unsigned long reads = 0, misses = 0;
	struct tw_probe *p;
	u64 end;

	if (cpu < 0)
		kunit_skip(test, "needs two online CPUs");
	p = tw_probes(test, 1, tw_probe_fn, flags);
	KUNIT_ASSERT_EQ(test, twheel_set_period(&p->timer, tw_tick(),
						TWHEEL_FOREVER), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, tw_tick(), cpu), 0);
	end = ktime_get() + TW_TIMEOUT_MS * NSEC_PER_MSEC;
	while (atomic_read(&p->fires) < 100) {
		misses += !twheel_pending(&p->timer);
		if (++reads % 1024)
			continue;
		if (ktime_get() > end)
			break;
		cond_resched();
	}
	/* A stalled guest folds deadlines into overruns: fewer fires. */
	KUNIT_EXPECT_GE(test, atomic_read(&p->fires), 10);
	KUNIT_EXPECT_EQ_MSG(test, misses, 0, "not pending in %lu of %lu reads",
			    misses, reads);
	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&p->timer), 1);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
}

static void twheel_test_pending_periodic(struct kunit *test)
{
	tw_pending_throughout(test, 0);
}

static void twheel_test_pending_sleepable(struct kunit *test)
{
	tw_pending_throughout(test, TWHEEL_SLEEPABLE);
}

static void twheel_test_periodic_overruns(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_hold_fn, TWHEEL_SLEEPABLE);
	u64 period = 10 * NSEC_PER_MSEC;
	unsigned int i, fires, delivered = 0;

	/*
	 * period 10 ms, count 5, the callback sleeps 35 ms: the second fire
	 * comes at least 25 ms after its deadline and delivers the latest
	 * deadline passed, counting the ones before as overruns, which use up
	 * the count: the fires deliver exactly the 5 deadlines, the last one
	 * d0+40 at the latest, in 2 or 3 callbacks.
	 *
	 *   d0      d0+10   d0+20   d0+30   d0+35   d0+40
	 *   fire 1 ....sleeping.............| fire 2 delivers d0+30
	 */
	p->want = 2;
	p->hold_ns = 35 * NSEC_PER_MSEC;
	KUNIT_ASSERT_EQ(test, twheel_set_period(&p->timer, period, 5), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, period, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->done, TW_TIMEOUT_MS));
	tw_sleep_ms(100);
	fires = atomic_read(&p->fires);
	KUNIT_ASSERT_GE(test, fires, 2);
	KUNIT_ASSERT_LE(test, fires, 3);
	KUNIT_EXPECT_GE(test, p->overruns[1], 2);
	for (i = 0; i < fires; i++)
		delivered += 1 + p->overruns[i];
	KUNIT_EXPECT_EQ(test, delivered, 5);
	KUNIT_EXPECT_EQ(test, p->left[fires - 1], 0);
	KUNIT_EXPECT_EQ(test, p->fired[fires - 1], p->deadline + 4 * period);
	tw_expect_no_drift(test, p, fires, period);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
	/* After the last fire, the deadline it delivered, overruns or not. */
	KUNIT_EXPECT_EQ(test, twheel_expires(&p->timer), p->fired[fires - 1]);
}

/* Wait for @p to have fired @n times and to be idle. */
static bool tw_wait_idle(struct tw_probe *p, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < TW_TIMEOUT_MS / 10; i++) {
		if (atomic_read(&p->fires) >= n && !twheel_pending(&p->timer))
			return true;
		tw_sleep_ms(10);
	}
	return false;
}

static void twheel_test_periodic_past_ktime_max(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, 0);
	u64 first = ktime_get() + 5 * NSEC_PER_MSEC;

	/*
	 * A period whose next deadline would pass KTIME_MAX: the first fire
	 * is the last, even of a count forever, and the timer is a one-shot
	 * again, not a periodic one that never fires.
	 */
	KUNIT_ASSERT_EQ(test, twheel_set_period(&p->timer, KTIME_MAX - first + 1,
						TWHEEL_FOREVER), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_on(p, first, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait_idle(p, 1));
	KUNIT_EXPECT_EQ(test, p->left[0], 0);
	KUNIT_EXPECT_EQ(test, twheel_fires_left(&p->timer), 0);
	KUNIT_EXPECT_EQ(test, twheel_expires(&p->timer), first);
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 5 * NSEC_PER_MSEC, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait_idle(p, 2));
	tw_sleep_ms(30);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 2);
}

static void twheel_test_periodic_then_once(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, 0);
	u64 period = 5 * NSEC_PER_MSEC;
	unsigned int fires;

	/*
	 * A periodic timer whose count has run out fires once when armed
	 * again, and so does one whose period is taken away while it is
	 * pending: both are one-shot again (TWHEEL_F_PERIODIC follows @left).
	 */
	KUNIT_ASSERT_EQ(test, twheel_set_period(&p->timer, period, 1), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, period, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait_idle(p, 1));
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, period, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait_idle(p, 2));
	tw_sleep_ms(30);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 2);
	KUNIT_EXPECT_EQ(test, p->left[1], 0);
	KUNIT_EXPECT_EQ(test, p->overruns[1], 0);

	KUNIT_ASSERT_EQ(test, twheel_set_period(&p->timer, period,
						TWHEEL_FOREVER), 0);
	reinit_completion(&p->done);
	p->want = 4;
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, period, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->done, TW_TIMEOUT_MS));
	KUNIT_ASSERT_EQ(test, twheel_set_period(&p->timer, 0, 0), 0);
	fires = atomic_read(&p->fires);
	/* The fire pending, after one that may be on its way to tw_record(). */
	KUNIT_ASSERT_TRUE(test, tw_wait_idle(p, fires));
	tw_sleep_ms(30);
	KUNIT_EXPECT_LE(test, atomic_read(&p->fires), fires + 2);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
}

static void twheel_test_set_period_invalid(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, 0);

	KUNIT_EXPECT_EQ(test, twheel_set_period(&p->timer, tw_tick() - 1, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, twheel_set_period(&p->timer, tw_tick(), 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, twheel_set_period(&p->timer, tw_tick(), 1), 0);
	/* Back to one-shot: the count is ignored. */
	KUNIT_EXPECT_EQ(test, twheel_set_period(&p->timer, 0, 0), 0);
}

/* ---- slack ---- */

/*
 * twheel_set_slack(): read back as a power of two ticks, refused above
 * KTIME_MAX, applied at once to a pending timer (filed again, still
 * pending) and kept by twheel_mod(); both fire within their slack. A slack
 * taken away from a pending timer files it at its deadline again: one due
 * a tick past a grid point of 1024 ticks, which the grid put at the next
 * point, fires on time.
 */
static void twheel_test_slack_set(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 3, tw_probe_fn, 0);
	u64 slack = 16 * tw_tick(), now = ktime_get(), grid, deadline;
	unsigned int i;

	KUNIT_EXPECT_EQ(test, twheel_slack(&p[0].timer), 0);
	KUNIT_EXPECT_EQ(test, twheel_set_slack(&p[0].timer, 2 * tw_tick() - 1), 0);
	KUNIT_EXPECT_EQ(test, twheel_slack(&p[0].timer), 0);
	KUNIT_EXPECT_EQ(test, twheel_set_slack(&p[0].timer, 3 * tw_tick()), 0);
	KUNIT_EXPECT_EQ(test, twheel_slack(&p[0].timer), 2 * tw_tick());
	KUNIT_EXPECT_EQ(test, twheel_set_slack(&p[0].timer, (u64)KTIME_MAX + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, twheel_slack(&p[0].timer), 2 * tw_tick());

	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[0], now + 30 * NSEC_PER_MSEC,
					tw_home_cpu()), 0);
	KUNIT_EXPECT_EQ(test, twheel_set_slack(&p[0].timer, slack), 0);
	KUNIT_EXPECT_TRUE(test, twheel_pending(&p[0].timer));
	KUNIT_EXPECT_EQ(test, twheel_slack(&p[0].timer), slack);
	KUNIT_EXPECT_EQ(test, twheel_set_slack(&p[1].timer, slack), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[1], now + 500 * NSEC_PER_MSEC,
					tw_home_cpu()), 0);
	p[1].deadline = now + 40 * NSEC_PER_MSEC;
	KUNIT_EXPECT_EQ(test, twheel_mod(&p[1].timer, p[1].deadline,
					 TWHEEL_ABS), 1);
	KUNIT_EXPECT_EQ(test, twheel_slack(&p[1].timer), slack);
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_TRUE(test, tw_wait(&p[i].done, TW_TIMEOUT_MS));
		tw_expect_timely(test, &p[i], TW_SLACK_NS + slack);
	}

	grid = 1024 * tw_tick();
	KUNIT_EXPECT_EQ(test, twheel_set_slack(&p[2].timer, grid), 0);
	deadline = (div64_u64(ktime_get() + 100 * NSEC_PER_MSEC, grid) + 1) *
		   grid + tw_tick();
	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[2], deadline, tw_home_cpu()), 0);
	KUNIT_EXPECT_EQ(test, twheel_set_slack(&p[2].timer, 0), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p[2].done, TW_TIMEOUT_MS));
	tw_expect_timely(test, &p[2], TW_SLACK_NS);
}

/* A periodic timer with slack: its count, no drift, the last fire timely. */
static void twheel_test_slack_periodic(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, 0);
	u64 period = 20 * NSEC_PER_MSEC + 123, slack = 8 * tw_tick();
	s64 late;

	p->want = 5;
	KUNIT_ASSERT_EQ(test, twheel_set_slack(&p->timer, slack), 0);
	KUNIT_ASSERT_EQ(test, twheel_set_period(&p->timer, period, 5), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, period, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->done, TW_TIMEOUT_MS));
	tw_sleep_ms(50);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 5);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
	tw_expect_no_drift(test, p, 5, period);
	late = p->fire_ns - p->fired[4];
	KUNIT_EXPECT_GE(test, late, 0);
	KUNIT_EXPECT_LE(test, late, (s64)tw_late_bound(p->ctx, p->fired[4],
						       p->fire_ns,
						       TW_SLACK_NS + slack));
	KUNIT_EXPECT_EQ(test, twheel_slack(&p->timer), slack);
}

/* ---- modify ---- */

static void twheel_test_mod_idle(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, 0);

	/* not pending -> mod arms it and returns 0 */
	p->deadline = ktime_get() + 10 * NSEC_PER_MSEC;
	KUNIT_EXPECT_EQ(test, twheel_mod(&p->timer, p->deadline, TWHEEL_ABS), 0);
	KUNIT_EXPECT_TRUE(test, twheel_pending(&p->timer));
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->done, TW_TIMEOUT_MS));
	tw_expect_timely(test, p, TW_SLACK_NS);
}

static void twheel_test_mod_pending(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 2, tw_probe_fn, 0);
	u64 now = ktime_get();

	/*
	 * p0: 500 ms -> mod to 20 ms (earlier), p1: 20 ms -> mod to 60 ms
	 * (later); each returns 1 and fires once, at its new deadline.
	 */
	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[0], now + 500 * NSEC_PER_MSEC,
					tw_home_cpu()), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[1], now + 20 * NSEC_PER_MSEC,
					tw_home_cpu()), 0);
	p[0].deadline = now + 20 * NSEC_PER_MSEC;
	p[1].deadline = now + 60 * NSEC_PER_MSEC;
	KUNIT_EXPECT_EQ(test, twheel_mod(&p[0].timer, p[0].deadline,
					 TWHEEL_ABS), 1);
	KUNIT_EXPECT_EQ(test, twheel_mod(&p[1].timer, p[1].deadline,
					 TWHEEL_ABS), 1);
	KUNIT_EXPECT_EQ(test, twheel_expires(&p[1].timer), p[1].deadline);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p[0].done, TW_TIMEOUT_MS));
	KUNIT_ASSERT_TRUE(test, tw_wait(&p[1].done, TW_TIMEOUT_MS));
	tw_expect_timely(test, &p[0], TW_SLACK_NS);
	tw_expect_timely(test, &p[1], TW_SLACK_NS);
	KUNIT_EXPECT_EQ(test, p[0].seq, 0);
	tw_sleep_ms(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&p[1].fires), 1);
}

static void twheel_test_reduce_only_earlier(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 2, tw_probe_fn, 0);
	u64 now = ktime_get(), far = now + 300 * NSEC_PER_MSEC;

	/* pending at 300 ms: reduce to 600 ms leaves it, to 30 ms moves it */
	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[0], far, tw_home_cpu()), 0);
	KUNIT_EXPECT_EQ(test, twheel_reduce(&p[0].timer,
					    now + 600 * NSEC_PER_MSEC,
					    TWHEEL_ABS), 1);
	KUNIT_EXPECT_EQ(test, twheel_expires(&p[0].timer), far);
	/* Equal is not earlier either. */
	KUNIT_EXPECT_EQ(test, twheel_reduce(&p[0].timer, far, TWHEEL_ABS), 1);
	KUNIT_EXPECT_EQ(test, twheel_expires(&p[0].timer), far);
	p[0].deadline = now + 30 * NSEC_PER_MSEC;
	KUNIT_EXPECT_EQ(test, twheel_reduce(&p[0].timer, p[0].deadline,
					    TWHEEL_ABS), 1);
	KUNIT_EXPECT_EQ(test, twheel_expires(&p[0].timer), p[0].deadline);
	/* not pending: reduce arms it, returns 0 */
	p[1].deadline = now + 30 * NSEC_PER_MSEC;
	KUNIT_EXPECT_EQ(test, twheel_reduce(&p[1].timer, p[1].deadline,
					    TWHEEL_ABS), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p[0].done, TW_TIMEOUT_MS));
	KUNIT_ASSERT_TRUE(test, tw_wait(&p[1].done, TW_TIMEOUT_MS));
	tw_expect_timely(test, &p[0], TW_SLACK_NS);
	tw_expect_timely(test, &p[1], TW_SLACK_NS);
}

/* ---- shutdown, errors ---- */

static void twheel_test_shutdown(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, 0);
	u64 ms = NSEC_PER_MSEC;

	/* pending -> shutdown_sync: 1; then every arming: -ESHUTDOWN */
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 100 * ms, tw_home_cpu()), 0);
	KUNIT_EXPECT_EQ(test, twheel_shutdown_sync(&p->timer), 1);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
	KUNIT_EXPECT_EQ(test, twheel_add(&p->timer, ms, TWHEEL_REL), -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, twheel_add_on(&p->timer, ms, TWHEEL_REL,
					    tw_home_cpu()), -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, twheel_mod(&p->timer, ms, TWHEEL_REL), -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, twheel_reduce(&p->timer, ms, TWHEEL_REL),
			-ESHUTDOWN);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
	KUNIT_EXPECT_EQ(test, twheel_shutdown_sync(&p->timer), 0);
	/* Re-initialized, it works again. */
	twheel_timer_init(&p->timer, tw_probe_fn, 0);
	KUNIT_EXPECT_EQ(test, twheel_add(&p->timer, 100 * ms, TWHEEL_REL), 0);
	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&p->timer), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 0);
}

static void twheel_test_shutdown_refuses_callback_rearm(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_shutdown_rearm_fn,
				       TWHEEL_SLEEPABLE);

	/*
	 * case                         callback (process context)
	 * arm 5 ms                     starts, waits for p->go
	 * p->go = true
	 * shutdown_sync() waits ...    100 ms later: twheel_mod(self)
	 *                              -> -ESHUTDOWN, returns
	 * ... returns 0
	 */
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 5 * NSEC_PER_MSEC, tw_home_cpu()), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->started, TW_TIMEOUT_MS));
	WRITE_ONCE(p->go, true);
	KUNIT_EXPECT_EQ(test, twheel_shutdown_sync(&p->timer), 0);
	KUNIT_EXPECT_NE(test, READ_ONCE(p->end_ns), 0);
	KUNIT_EXPECT_EQ(test, p->ret, -ESHUTDOWN);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
	tw_sleep_ms(30);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 1);
}

/*
 * twheel_shutdown_bulk() of 70 timers (three holds' worth), on two wheels
 * in runs of five, every seventh idle, one sleepable whose callback runs:
 * it counts the pending ones, waits for the callback, and refuses every
 * later arming, the callback's own included.
 */
static void twheel_test_shutdown_bulk(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 70, tw_probe_fn, 0);
	struct tw_probe *s = tw_probes(test, 1, tw_shutdown_rearm_fn,
				       TWHEEL_SLEEPABLE);
	int other = tw_other_cpu();
	struct twheel_timer **ts;
	unsigned int i, cpu, pending = 0;

	ts = kunit_kcalloc(test, 71, sizeof(*ts), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ts);
	for (i = 0; i < 70; i++) {
		ts[i] = &p[i].timer;
		if (!(i % 7))
			continue;
		cpu = (i / 5) % 2 && other >= 0 ? other : tw_home_cpu();
		KUNIT_ASSERT_EQ(test, tw_arm_in(&p[i], NSEC_PER_SEC, cpu), 0);
		pending++;
	}
	/* The running one in the middle of the second hold. */
	memmove(ts + 41, ts + 40, 30 * sizeof(*ts));
	ts[40] = &s->timer;
	KUNIT_ASSERT_EQ(test, tw_arm_in(s, 5 * NSEC_PER_MSEC, tw_home_cpu()),
			0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&s->started, TW_TIMEOUT_MS));
	WRITE_ONCE(s->go, true);

	KUNIT_EXPECT_EQ(test, twheel_shutdown_bulk(ts, 71), pending);
	KUNIT_EXPECT_NE(test, READ_ONCE(s->end_ns), 0);
	KUNIT_EXPECT_EQ(test, s->ret, -ESHUTDOWN);
	for (i = 0; i < 71; i++) {
		KUNIT_EXPECT_FALSE(test, twheel_pending(ts[i]));
		KUNIT_EXPECT_EQ(test, twheel_add(ts[i], NSEC_PER_MSEC,
						 TWHEEL_REL), -ESHUTDOWN);
	}
	for (i = 0; i < 70; i++)
		KUNIT_EXPECT_EQ(test, atomic_read(&p[i].fires), 0);
	KUNIT_EXPECT_EQ(test, twheel_shutdown_bulk(ts, 71), 0);
}

static void twheel_test_erange(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 2, tw_probe_fn, TWHEEL_PINNED);
	unsigned int cpu = tw_home_cpu();
	struct twheel_stats before, armed;
	unsigned int lvl;
	u64 far;

	/* now + KTIME_MAX is past KTIME_MAX: refused, nothing armed. */
	KUNIT_EXPECT_EQ(test, twheel_add(&p[0].timer, KTIME_MAX, TWHEEL_REL),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, twheel_add(&p[0].timer,
					 KTIME_MAX - ktime_get() + NSEC_PER_SEC,
					 TWHEEL_REL), -ERANGE);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p[0].timer));
	/* Negative and unknown arguments: -EINVAL. */
	KUNIT_EXPECT_EQ(test, twheel_add(&p[0].timer, -1, TWHEEL_REL), -EINVAL);
	KUNIT_EXPECT_EQ(test, twheel_add(&p[0].timer, 1,
					 (enum twheel_mode)(TWHEEL_ABS + 1)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, twheel_add_on(&p[0].timer, NSEC_PER_SEC,
					    TWHEEL_REL, nr_cpu_ids), -EINVAL);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p[0].timer));

	/* KTIME_MAX itself is fine: a high level takes it (7 at 1 ms). */
	lvl = tw_ref_lvl(tw_ns_to_tick(KTIME_MAX), tw_now_tick());
	tw_stats(test, cpu, &before);
	KUNIT_EXPECT_EQ(test, twheel_add_on(&p[0].timer, KTIME_MAX, TWHEEL_ABS,
					    cpu), 0);
	tw_stats(test, cpu, &armed);
	KUNIT_EXPECT_EQ(test, armed.level_pending[lvl] -
			before.level_pending[lvl], 1);
	KUNIT_EXPECT_EQ(test, twheel_expires(&p[0].timer), KTIME_MAX);

	/* A refused twheel_mod() leaves the pending timer as it was. */
	far = ktime_get() + 10ULL * NSEC_PER_SEC;
	KUNIT_ASSERT_EQ(test, tw_arm_on(&p[1], far, cpu), 0);
	KUNIT_EXPECT_EQ(test, twheel_mod(&p[1].timer, KTIME_MAX, TWHEEL_REL),
			-ERANGE);
	KUNIT_EXPECT_TRUE(test, twheel_pending(&p[1].timer));
	KUNIT_EXPECT_EQ(test, twheel_expires(&p[1].timer), far);

	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&p[0].timer), 1);
	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&p[1].timer), 1);
}

static void twheel_test_add_pending_eexist(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, 0);
	u64 expires;

	/* pending -> add: -EEXIST, deadline unchanged */
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 200 * NSEC_PER_MSEC, tw_home_cpu()), 0);
	expires = twheel_expires(&p->timer);
	KUNIT_EXPECT_EQ(test, twheel_add(&p->timer, NSEC_PER_MSEC, TWHEEL_REL),
			-EEXIST);
	KUNIT_EXPECT_EQ(test, twheel_add_on(&p->timer, NSEC_PER_MSEC,
					    TWHEEL_REL, tw_home_cpu()), -EEXIST);
	KUNIT_EXPECT_EQ(test, twheel_expires(&p->timer), expires);
	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&p->timer), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 0);
}

static void twheel_test_remaining(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, 0);
	u64 delay = 200 * NSEC_PER_MSEC, t0, t1;
	s64 left;

	KUNIT_EXPECT_EQ(test, twheel_remaining(&p->timer), -ENOENT);
	t0 = ktime_get();
	KUNIT_ASSERT_EQ(test, twheel_add(&p->timer, delay, TWHEEL_REL), 0);
	left = twheel_remaining(&p->timer);
	t1 = ktime_get();
	/* The deadline is between t0 + delay and t1 + delay. */
	KUNIT_EXPECT_LE(test, left, (s64)delay);
	KUNIT_EXPECT_GE(test, left, (s64)(delay - (t1 - t0)));
	KUNIT_EXPECT_EQ(test, twheel_cancel(&p->timer), 1);
	KUNIT_EXPECT_EQ(test, twheel_remaining(&p->timer), -ENOENT);
}

/* ---- wheel state, CPUs ---- */

static void twheel_test_idle_wheel_hrtimer(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 2, tw_probe_fn, TWHEEL_PINNED);
	unsigned int cpu = tw_home_cpu();
	struct twheel_stats st;

	tw_stats(test, cpu, &st);
	if (st.pending)
		kunit_skip(test, "CPU %u's wheel holds %llu foreign timers",
			   cpu, st.pending);
	KUNIT_EXPECT_TRUE(test, tw_hrtimer_becomes(cpu, false, 500));

	/* one timer: armed; it fires, the wheel is empty: not armed */
	KUNIT_ASSERT_EQ(test, tw_arm_in(&p[0], 100 * NSEC_PER_MSEC, cpu), 0);
	KUNIT_EXPECT_TRUE(test, tw_hrtimer_becomes(cpu, true, 50));
	KUNIT_ASSERT_TRUE(test, tw_wait(&p[0].done, TW_TIMEOUT_MS));
	KUNIT_EXPECT_TRUE_MSG(test, tw_hrtimer_becomes(cpu, false, 500),
			      "hrtimer still armed after the last fire");

	/* one far timer: armed; cancelled, the wheel is empty: not armed */
	KUNIT_ASSERT_EQ(test, tw_arm_in(&p[1], 2ULL * NSEC_PER_SEC, cpu), 0);
	KUNIT_EXPECT_TRUE(test, tw_hrtimer_becomes(cpu, true, 500));
	KUNIT_EXPECT_EQ(test, twheel_cancel(&p[1].timer), 1);
	KUNIT_EXPECT_TRUE_MSG(test, tw_hrtimer_becomes(cpu, false, 500),
			      "hrtimer still armed after the last cancel");
	tw_stats(test, cpu, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
}

static void twheel_test_add_on_cpu(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 2 * nr_cpu_ids, tw_probe_fn, 0);
	struct tw_probe *s = p + nr_cpu_ids;
	unsigned int cpu;

	/* Each online CPU: a softirq and a sleepable callback run there. */
	for_each_online_cpu(cpu) {
		twheel_timer_init(&s[cpu].timer, tw_probe_fn, TWHEEL_SLEEPABLE);
		KUNIT_ASSERT_EQ(test, tw_arm_in(&p[cpu], 10 * NSEC_PER_MSEC,
						cpu), 0);
		KUNIT_ASSERT_EQ(test, tw_arm_in(&s[cpu], 10 * NSEC_PER_MSEC,
						cpu), 0);
	}
	for_each_online_cpu(cpu) {
		KUNIT_ASSERT_TRUE(test, tw_wait(&p[cpu].done, TW_TIMEOUT_MS));
		KUNIT_ASSERT_TRUE(test, tw_wait(&s[cpu].done, TW_TIMEOUT_MS));
		KUNIT_EXPECT_EQ(test, p[cpu].cpu, cpu);
		KUNIT_EXPECT_EQ(test, s[cpu].cpu, cpu);
		tw_expect_timely(test, &p[cpu], TW_SLACK_NS);
		tw_expect_timely(test, &s[cpu], TW_SLEEP_SLACK_NS);
	}
}

/*
 * A deadline of 0, long past, fires at once on every CPU's idle wheel,
 * armed from another CPU too: the kick's IPI programs the hrtimer for it.
 */
static void twheel_test_add_on_deadline_zero(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, nr_cpu_ids, tw_probe_fn, 0);
	unsigned int cpu;

	for_each_online_cpu(cpu)
		KUNIT_ASSERT_EQ(test, tw_arm_on(&p[cpu], 0, cpu), 0);
	for_each_online_cpu(cpu) {
		KUNIT_ASSERT_TRUE(test, tw_wait(&p[cpu].done, TW_TIMEOUT_MS));
		KUNIT_EXPECT_EQ(test, p[cpu].cpu, cpu);
	}
}

static void twheel_test_rearm_from_other_cpu(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, TWHEEL_PINNED);
	struct tw_probe *u = tw_probes(test, 1, tw_probe_fn, 0);
	struct tw_probe *q = tw_probes(test, 1, tw_probe_fn, TWHEEL_PINNED);
	unsigned int home = tw_home_cpu(), mine = READ_ONCE(q->timer.cpu);
	int other = tw_other_cpu();

	/*
	 * Both armed on home, then twheel_mod() from other (an IPI):
	 * the TWHEEL_PINNED one stays on home, the other one follows.
	 * q, TWHEEL_PINNED, first armed from a CPU other than the one
	 * that initialized it, stays on that one.
	 */
	if (other < 0)
		kunit_skip(test, "needs two online CPUs");
	q->delay_ns = 10 * NSEC_PER_MSEC;
	KUNIT_ASSERT_EQ(test, smp_call_function_single(mine == home ? other :
						       home, tw_mod_ipi, q, 1),
			0);
	KUNIT_EXPECT_EQ(test, q->ret, 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&q->done, TW_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, q->cpu, mine);
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, NSEC_PER_SEC, home), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(u, NSEC_PER_SEC, home), 0);
	p->delay_ns = 10 * NSEC_PER_MSEC;
	u->delay_ns = 10 * NSEC_PER_MSEC;
	KUNIT_ASSERT_EQ(test, smp_call_function_single(other, tw_mod_ipi, p, 1),
			0);
	KUNIT_ASSERT_EQ(test, smp_call_function_single(other, tw_mod_ipi, u, 1),
			0);
	KUNIT_EXPECT_EQ(test, p->ret, 1);
	KUNIT_EXPECT_EQ(test, u->ret, 1);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->done, TW_TIMEOUT_MS));
	KUNIT_ASSERT_TRUE(test, tw_wait(&u->done, TW_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, p->cpu, home);
	KUNIT_EXPECT_EQ(test, u->cpu, other);
	tw_expect_timely(test, p, TW_SLACK_NS);
	tw_expect_timely(test, u, TW_SLACK_NS);
}

/* The CPU a hotplug case takes down and up; skips the case without one. */
static int tw_hotplug_cpu(struct kunit *test)
{
	int cpu = cpumask_last(cpu_online_mask);

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU))
		kunit_skip(test, "needs CONFIG_HOTPLUG_CPU");
	if (num_online_cpus() < 2 || cpu == tw_home_cpu())
		kunit_skip(test, "needs two online CPUs");
	return cpu;
}

static void twheel_test_cpu_hotplug(struct kunit *test)
{
	struct tw_ctx *ctx = test->priv;
	struct tw_probe *p, *s, *per, *pin, *back, *one[4];
	u64 ms = NSEC_PER_MSEC, offline_ns;
	struct twheel_stats st;
	unsigned int fires, i;
	int cpu, ret;

	cpu = tw_hotplug_cpu(test);

	/*
	 * On cpu: p[0] 500 ms, p[1] 900 ms (level 1), s sleepable 500 ms,
	 * per periodic 20 ms forever, pin TWHEEL_PINNED 500 ms. cpu goes
	 * offline: they all move to a live CPU, stay pending and fire there,
	 * never early. cpu comes back: a timer added on it runs there.
	 */
	p = tw_probes(test, 3, tw_probe_fn, 0);
	back = p + 2;
	s = tw_probes(test, 1, tw_probe_fn, TWHEEL_SLEEPABLE);
	per = tw_probes(test, 2, tw_probe_fn, 0);
	pin = per + 1;
	twheel_timer_init(&pin->timer, tw_probe_fn, TWHEEL_PINNED);
	KUNIT_ASSERT_EQ(test, twheel_set_period(&per->timer, 20 * ms,
						TWHEEL_FOREVER), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(&p[0], 500 * ms, cpu), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(&p[1], 900 * ms, cpu), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(s, 500 * ms, cpu), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(per, 20 * ms, cpu), 0);
	KUNIT_ASSERT_EQ(test, tw_arm_in(pin, 500 * ms, cpu), 0);

	ret = remove_cpu(cpu);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "remove_cpu(%d)", cpu);
	ctx->offline_cpu = cpu;
	offline_ns = ktime_get();
	tw_stats(test, cpu, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_FALSE_MSG(test, st.hrtimer_armed,
			       "the dead CPU's empty wheel keeps its hrtimer");

	one[0] = &p[0];
	one[1] = &p[1];
	one[2] = s;
	one[3] = pin;
	for (i = 0; i < ARRAY_SIZE(one); i++) {
		KUNIT_ASSERT_TRUE_MSG(test, tw_wait(&one[i]->done, 3000),
				      "timer %u lost by the offline CPU", i);
		KUNIT_EXPECT_GE(test, one[i]->fire_ns, one[i]->deadline);
		/* Those due after the move: as timely as ever, elsewhere. */
		if (one[i]->deadline > offline_ns) {
			tw_expect_timely(test, one[i], one[i] == s ?
					 TW_SLEEP_SLACK_NS : TW_SLACK_NS);
			KUNIT_EXPECT_NE(test, one[i]->cpu, cpu);
		}
	}
	/* The periodic one goes on firing on its new CPU. */
	fires = atomic_read(&per->fires);
	tw_sleep_ms(100);
	KUNIT_EXPECT_GT(test, atomic_read(&per->fires), fires);
	KUNIT_EXPECT_NE(test, READ_ONCE(per->cpu), cpu);

	ret = add_cpu(cpu);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "add_cpu(%d)", cpu);
	ctx->offline_cpu = -1;
	KUNIT_ASSERT_EQ(test, tw_arm_in(back, 20 * ms, cpu), 0);
	KUNIT_ASSERT_TRUE(test, tw_wait(&back->done, TW_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, back->cpu, cpu);
	tw_expect_timely(test, back, TW_SLACK_NS);
	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&per->timer), 1);
}

static void twheel_test_cpu_offline_hrtimer(struct kunit *test)
{
	struct tw_ctx *ctx = test->priv;
	struct twheel_stats st;
	struct tw_probe *p;
	int cpu, ret;

	cpu = tw_hotplug_cpu(test);

	/*
	 * The only timer of cpu is 10 s away: its hrtimer waits for the
	 * level 2 cascade, over a second ahead. cpu goes offline and hands
	 * the timer over: its wheel is empty, so its hrtimer must be idle
	 * (not left queued, to fire on some other CPU for nothing), and
	 * stays so when cpu comes back.
	 */
	p = tw_probes(test, 1, tw_probe_fn, 0);
	tw_clear_of(4096, 1500);
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 10ULL * NSEC_PER_SEC, cpu), 0);
	KUNIT_EXPECT_TRUE(test, tw_hrtimer_becomes(cpu, true, 100));

	ret = remove_cpu(cpu);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "remove_cpu(%d)", cpu);
	ctx->offline_cpu = cpu;
	tw_stats(test, cpu, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_FALSE_MSG(test, st.hrtimer_armed,
			       "the dead CPU's empty wheel keeps its hrtimer");
	KUNIT_EXPECT_TRUE(test, twheel_pending(&p->timer));

	ret = add_cpu(cpu);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "add_cpu(%d)", cpu);
	ctx->offline_cpu = -1;
	tw_stats(test, cpu, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);
	KUNIT_EXPECT_FALSE_MSG(test, st.hrtimer_armed,
			       "the revived CPU's empty wheel has its hrtimer");
	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&p->timer), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 0);
}

/* ---- suite ---- */

/*
 * A kthread that takes a CPU offline, so that the case can race the
 * hotplug operation; tw_hotplug_wait() collects its result.
 */
struct tw_hotplug {
	struct completion	done;
	int			cpu;
	bool			up;
	int			ret;
};

static int tw_hotplug_fn(void *data)
{
	struct tw_hotplug *h = data;

	h->ret = h->up ? add_cpu(h->cpu) : remove_cpu(h->cpu);
	complete(&h->done);
	return 0;
}

static void tw_hotplug_start(struct kunit *test, struct tw_hotplug *h,
			     int cpu, bool up)
{
	struct task_struct *task;

	init_completion(&h->done);
	h->cpu = cpu;
	h->up = up;
	task = kthread_run(tw_hotplug_fn, h, "tw_hotplug");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
}

static int tw_hotplug_wait(struct tw_hotplug *h)
{
	wait_for_completion(&h->done);
	return h->ret;
}

#define TW_HP_TIMERS	20000

/*
 * Arming a CPU while it comes up: every timer armed on it with
 * twheel_add_on() fires, whether it was armed before the CPU ran (then it
 * goes to the arming CPU), or after (then the CPU's own hrtimer runs it).
 */
static void twheel_test_hotplug_add_on_coming_up(struct kunit *test)
{
	struct tw_ctx *ctx = test->priv;
	unsigned int i, armed = 0, round;
	struct tw_hotplug h;
	int cpu;

	cpu = tw_hotplug_cpu(test);

	ctx->mini = kvcalloc(TW_HP_TIMERS, sizeof(*ctx->mini), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->mini);
	ctx->nr_mini = TW_HP_TIMERS;
	for (i = 0; i < TW_HP_TIMERS; i++) {
		twheel_timer_init(&ctx->mini[i].timer, tw_mini_fn, 0);
		ctx->mini[i].ctx = ctx;
	}
	atomic_set(&ctx->remaining, TW_HP_TIMERS);

	/* Arm 1-4 ms ahead, as fast as we can, while cpu goes down and up. */
	for (round = 0; round < 4 && armed < TW_HP_TIMERS; round++) {
		bool up = round & 1;

		if (!up)
			ctx->offline_cpu = cpu;
		tw_hotplug_start(test, &h, cpu, up);
		while (!completion_done(&h.done) && armed < TW_HP_TIMERS) {
			struct tw_mini *m = &ctx->mini[armed++];

			m->deadline = ktime_get() + (1 + armed % 4) * NSEC_PER_MSEC;
			KUNIT_ASSERT_EQ(test, twheel_add_on(&m->timer, m->deadline,
							    TWHEEL_ABS, cpu), 0);
			if (!(armed % 64))
				cond_resched();
		}
		KUNIT_ASSERT_EQ(test, tw_hotplug_wait(&h), 0);
		if (up)
			ctx->offline_cpu = -1;
	}
	/* The ones never armed count as done. */
	for (i = armed; i < TW_HP_TIMERS; i++)
		atomic_dec(&ctx->remaining);
	if (atomic_read(&ctx->remaining))
		wait_for_completion_timeout(&ctx->all_done, 3 * HZ);
	kunit_info(test, "%u timers armed on CPU %d while it went down and up",
		   armed, cpu);
	for (i = 0; i < armed; i++) {
		struct tw_mini *m = &ctx->mini[i];

		if (!m->fires || m->fire_ns < m->deadline) {
			KUNIT_FAIL(test, "timer %u of %u: %u fires, %lld ns after its deadline",
				   i, armed, m->fires,
				   m->fires ? (s64)(m->fire_ns - m->deadline) : -1LL);
			break;
		}
	}
}

#define TW_BACKLOG_TIMERS	100000

/*
 * A CPU goes down in the middle of a backlog, which its hrtimer's slices
 * and its runner are working off: the slice in progress ends, the timers
 * left move to a live CPU, and every one fires there once, none early.
 */
static void twheel_test_hotplug_backlog(struct kunit *test)
{
	struct tw_ctx *ctx = test->priv;
	struct twheel_stats st0, st;
	unsigned int i, left;
	u64 deadline;
	int cpu, ret;

	cpu = tw_hotplug_cpu(test);
	tw_stats(test, cpu, &st0);

	ctx->mini = kvcalloc(TW_BACKLOG_TIMERS, sizeof(*ctx->mini), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->mini);
	ctx->nr_mini = TW_BACKLOG_TIMERS;
	atomic_set(&ctx->remaining, TW_BACKLOG_TIMERS);
	/* Time to arm on a debug kernel; a burst begun meanwhile does too. */
	deadline = ktime_get() + 2 * NSEC_PER_SEC;
	for (i = 0; i < TW_BACKLOG_TIMERS; i++) {
		struct tw_mini *m = &ctx->mini[i];

		twheel_timer_init(&m->timer, tw_mini_fn, 0);
		m->ctx = ctx;
		m->deadline = deadline;
		KUNIT_ASSERT_EQ(test, twheel_add_on(&m->timer, deadline,
						    TWHEEL_ABS, cpu), 0);
		if (!(i % 64))
			cond_resched();
	}

	/* Take the CPU down once the burst has begun. */
	for (i = 0; atomic_read(&ctx->remaining) == TW_BACKLOG_TIMERS; i++) {
		KUNIT_ASSERT_LT_MSG(test, i, 100000, "no timer fired");
		usleep_range(100, 200);
	}
	ret = remove_cpu(cpu);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "remove_cpu(%d)", cpu);
	ctx->offline_cpu = cpu;
	left = atomic_read(&ctx->remaining);
	tw_stats(test, cpu, &st);
	KUNIT_EXPECT_EQ(test, st.pending, 0);

	KUNIT_EXPECT_TRUE_MSG(test, wait_for_completion_timeout(&ctx->all_done,
								30 * HZ),
			      "%d of %u timers lost", atomic_read(&ctx->remaining),
			      TW_BACKLOG_TIMERS);
	kunit_info(test, "CPU %d went down with %u of %u timers left, after %llu slices of its runner",
		   cpu, left, TW_BACKLOG_TIMERS, st.slices - st0.slices);
	for (i = 0; i < TW_BACKLOG_TIMERS; i++) {
		struct tw_mini *m = &ctx->mini[i];

		if (m->fires != 1 || m->fire_ns < m->deadline) {
			KUNIT_FAIL(test, "timer %u: %u fires, %lld ns after its deadline",
				   i, m->fires, (s64)(m->fire_ns - m->deadline));
			break;
		}
	}
	ret = add_cpu(cpu);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "add_cpu(%d)", cpu);
	ctx->offline_cpu = -1;
}

/* Sleeps, then re-arms its timer for the next tick, until told to stop. */
static void tw_rearm_tick_fn(struct twheel_timer *t)
{
	struct tw_probe *p = container_of(t, struct tw_probe, timer);

	WRITE_ONCE(p->fire_ns, ktime_get());
	atomic_inc(&p->fires);
	usleep_range(500, 1000);
	if (!READ_ONCE(p->go))
		p->ret = twheel_mod(t, tw_tick(), TWHEEL_REL);
	WRITE_ONCE(p->end_ns, ktime_get());
}

/*
 * twheel_cancel_sync() while the timer's CPU goes down: on return the
 * callback is not running, even though the callback re-arms the timer and
 * the CPU's timers move elsewhere meanwhile.
 */
static void twheel_test_hotplug_cancel_sync(struct kunit *test)
{
	struct tw_ctx *ctx = test->priv;
	struct tw_hotplug h;
	struct tw_probe *p;
	unsigned int round;
	int cpu;

	cpu = tw_hotplug_cpu(test);

	p = tw_probes(test, 1, tw_rearm_tick_fn, TWHEEL_SLEEPABLE);
	for (round = 0; round < 8; round++) {
		u64 returned;

		WRITE_ONCE(p->go, false);
		atomic_set(&p->fires, 0);
		KUNIT_ASSERT_EQ(test, twheel_add_on(&p->timer, tw_tick(),
						    TWHEEL_REL, cpu), 0);
		while (!atomic_read(&p->fires))
			tw_sleep_ms(1);
		ctx->offline_cpu = cpu;
		tw_hotplug_start(test, &h, cpu, false);
		/* Land somewhere in the hotplug operation: 0..7 ms into it. */
		tw_sleep_ms(round);
		WRITE_ONCE(p->go, true);
		KUNIT_EXPECT_GE(test, twheel_cancel_sync(&p->timer), 0);
		returned = ktime_get();
		KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
		KUNIT_EXPECT_LE_MSG(test, READ_ONCE(p->fire_ns), returned,
				    "a callback began after twheel_cancel_sync() returned");
		KUNIT_EXPECT_LE_MSG(test, READ_ONCE(p->fire_ns),
				    READ_ONCE(p->end_ns),
				    "round %u: the callback still ran after twheel_cancel_sync() returned",
				    round);
		KUNIT_ASSERT_EQ(test, tw_hotplug_wait(&h), 0);
		tw_hotplug_start(test, &h, cpu, true);
		KUNIT_ASSERT_EQ(test, tw_hotplug_wait(&h), 0);
		ctx->offline_cpu = -1;
	}
}

/* twheel_mod_pending() re-arms a pending timer only. */
static void twheel_test_mod_pending_only(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 1, tw_probe_fn, 0);
	u64 ms = NSEC_PER_MSEC;

	/* not pending: nothing happens */
	KUNIT_EXPECT_EQ(test, twheel_mod_pending(&p->timer, 10 * ms,
						 TWHEEL_REL), 0);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
	/* pending: moved */
	KUNIT_ASSERT_EQ(test, tw_arm_in(p, 500 * ms, tw_home_cpu()), 0);
	p->deadline = ktime_get() + 20 * ms;
	KUNIT_EXPECT_EQ(test, twheel_mod_pending(&p->timer, p->deadline,
						 TWHEEL_ABS), 1);
	KUNIT_EXPECT_EQ(test, twheel_expires(&p->timer), p->deadline);
	KUNIT_ASSERT_TRUE(test, tw_wait(&p->done, TW_TIMEOUT_MS));
	tw_expect_timely(test, p, TW_SLACK_NS);
	/* fired: not pending any more, so not re-armed */
	KUNIT_EXPECT_EQ(test, twheel_mod_pending(&p->timer, 10 * ms,
						 TWHEEL_REL), 0);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p->timer));
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 1);
}

#define TW_BATCH_TIMERS	100

/* A batch timer; the case's log of batches is in struct tw_batch_log. */
struct tw_batched {
	struct twheel_timer	timer;
	unsigned int		id;
	u32			fires;
};

static struct tw_batch_log {
	atomic_t		calls;
	atomic_t		fired;
	unsigned int		order[TW_BATCH_TIMERS];
	unsigned int		max_n;
	u64			hold_ns;
	u64			end_ns;
	struct completion	started;
	struct completion	done;
} tw_blog;

static void tw_batch_fn(struct twheel_timer **timers, unsigned int n)
{
	unsigned int i, at;
	u64 end;

	complete(&tw_blog.started);
	atomic_inc(&tw_blog.calls);
	tw_blog.max_n = max(tw_blog.max_n, n);
	for (i = 0; i < n; i++) {
		struct tw_batched *b = container_of(timers[i], struct tw_batched,
						    timer);

		b->fires++;
		at = atomic_inc_return(&tw_blog.fired) - 1;
		if (at < TW_BATCH_TIMERS)
			tw_blog.order[at] = b->id;
	}
	end = ktime_get() + tw_blog.hold_ns;
	while (ktime_get() < end)
		cpu_relax();
	WRITE_ONCE(tw_blog.end_ns, ktime_get());
	if (atomic_read(&tw_blog.fired) >= TW_BATCH_TIMERS)
		complete(&tw_blog.done);
}

static struct tw_batched *tw_batch_setup(struct kunit *test, u64 hold_ns)
{
	struct tw_batched *b;
	unsigned int i;

	memset(&tw_blog, 0, sizeof(tw_blog));
	init_completion(&tw_blog.started);
	init_completion(&tw_blog.done);
	tw_blog.hold_ns = hold_ns;
	b = kunit_kcalloc(test, TW_BATCH_TIMERS, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b);
	for (i = 0; i < TW_BATCH_TIMERS; i++) {
		twheel_timer_init_batch(&b[i].timer, tw_batch_fn, 0);
		b[i].id = i;
	}
	return b;
}

static void tw_batch_teardown(struct tw_batched *b)
{
	unsigned int i;

	for (i = 0; i < TW_BATCH_TIMERS; i++)
		twheel_shutdown_sync(&b[i].timer);
}

/* Arm the timers of @b with one deadline; all must fire, once. */
static void tw_batch_fire(struct kunit *test, struct tw_batched *b)
{
	u64 deadline = ktime_get() + 20 * NSEC_PER_MSEC;
	unsigned int i;

	for (i = 0; i < TW_BATCH_TIMERS; i++)
		KUNIT_ASSERT_EQ(test, twheel_add_on(&b[i].timer, deadline,
						    TWHEEL_ABS, tw_home_cpu()), 0);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&tw_blog.done,
							    msecs_to_jiffies(TW_TIMEOUT_MS)));
	tw_sleep_ms(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&tw_blog.fired), TW_BATCH_TIMERS);
}

/*
 * 100 batch timers with one deadline: they come in batches of at most
 * TWHEEL_BATCH_MAX, every timer once, in arming order.
 */
static void twheel_test_batch_order(struct kunit *test)
{
	struct tw_batched *b = tw_batch_setup(test, 0);
	unsigned int i;

	tw_batch_fire(test, b);
	KUNIT_EXPECT_LE(test, tw_blog.max_n, TWHEEL_BATCH_MAX);
	KUNIT_EXPECT_GT(test, tw_blog.max_n, 1);
	KUNIT_EXPECT_GE(test, atomic_read(&tw_blog.calls),
			DIV_ROUND_UP(TW_BATCH_TIMERS, TWHEEL_BATCH_MAX));
	for (i = 0; i < TW_BATCH_TIMERS; i++) {
		KUNIT_EXPECT_EQ(test, b[i].fires, 1);
		KUNIT_EXPECT_EQ_MSG(test, tw_blog.order[i], i, "fire %u", i);
	}
	tw_batch_teardown(b);
}

/*
 * Timers of one batch callback initialized at two places are two lockdep
 * classes: under lockdep they never share a batch, which runs as the lock
 * of its first timer's class; without it they do.
 */
static void twheel_test_batch_classes(struct kunit *test)
{
	struct tw_batched *b = tw_batch_setup(test, 0);
	unsigned int i;

	/* Even ids from tw_batch_setup()'s place, odd ones from here. */
	for (i = 1; i < TW_BATCH_TIMERS; i += 2)
		twheel_timer_init_batch(&b[i].timer, tw_batch_fn, 0);
	tw_batch_fire(test, b);
	if (IS_ENABLED(CONFIG_LOCKDEP))
		KUNIT_EXPECT_EQ(test, tw_blog.max_n, 1);
	else
		KUNIT_EXPECT_GT(test, tw_blog.max_n, 1);
	for (i = 0; i < TW_BATCH_TIMERS; i++)
		KUNIT_EXPECT_EQ_MSG(test, tw_blog.order[i], i, "fire %u", i);
	tw_batch_teardown(b);
}

/* twheel_cancel_sync() of a timer in a running batch waits for the batch. */
static void twheel_test_batch_cancel_sync(struct kunit *test)
{
	struct tw_batched *b = tw_batch_setup(test, 30 * NSEC_PER_MSEC);
	u64 deadline = ktime_get() + 10 * NSEC_PER_MSEC, returned;
	int other = tw_other_cpu();
	unsigned int i;

	if (other < 0)
		kunit_skip(test, "needs two online CPUs");
	/* The batch spins on the other CPU while this one cancels. */
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, twheel_add_on(&b[i].timer, deadline,
						    TWHEEL_ABS, other), 0);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&tw_blog.started,
							    msecs_to_jiffies(TW_TIMEOUT_MS)));
	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&b[3].timer), 0);
	returned = ktime_get();
	KUNIT_EXPECT_NE(test, READ_ONCE(tw_blog.end_ns), 0);
	KUNIT_EXPECT_LE(test, READ_ONCE(tw_blog.end_ns), returned);
	tw_batch_teardown(b);
}

/*
 * twheel_add_bulk() of 100 batch timers with one deadline: all armed, on
 * this CPU, fired once each in array order; ten of them were last on the
 * other CPU's wheel, which the bulk hold does not cover, and are armed on
 * their own in their turn, without breaking the order.
 */
static void twheel_test_add_bulk(struct kunit *test)
{
	struct tw_batched *b = tw_batch_setup(test, 0);
	struct twheel_timer **timers;
	unsigned int i, home = tw_home_cpu();
	int *ret, other = tw_other_cpu();
	struct twheel_stats st0, st1, st2;
	ktime_t *expires;
	u64 deadline;

	timers = kunit_kcalloc(test, TW_BATCH_TIMERS, sizeof(*timers),
			       GFP_KERNEL);
	expires = kunit_kcalloc(test, TW_BATCH_TIMERS, sizeof(*expires),
				GFP_KERNEL);
	ret = kunit_kcalloc(test, TW_BATCH_TIMERS, sizeof(*ret), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, timers);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, expires);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ret);

	/* b[i], i % 10 == 3: last on the other CPU's wheel */
	for (i = 3; other >= 0 && i < TW_BATCH_TIMERS; i += 10) {
		KUNIT_ASSERT_EQ(test, twheel_add_on(&b[i].timer, KTIME_MAX,
						    TWHEEL_ABS, other), 0);
		KUNIT_ASSERT_EQ(test, twheel_cancel(&b[i].timer), 1);
	}
	/*
	 * Far enough ahead that none fires before the checks below, even on
	 * a vCPU the host stalls for tens of milliseconds (seen under TCG).
	 */
	deadline = ktime_get() + 200 * NSEC_PER_MSEC;
	for (i = 0; i < TW_BATCH_TIMERS; i++) {
		timers[i] = &b[i].timer;
		expires[i] = deadline;
		ret[i] = 1;
	}
	/* The case runs on the home CPU (twheel_kunit_init()). */
	tw_stats(test, home, &st0);
	KUNIT_EXPECT_EQ(test, twheel_add_bulk(timers, expires, TW_BATCH_TIMERS,
					      TWHEEL_ABS, ret), TW_BATCH_TIMERS);
	tw_stats(test, home, &st1);
	KUNIT_EXPECT_EQ(test, st1.pending - st0.pending, TW_BATCH_TIMERS);
	for (i = 0; i < TW_BATCH_TIMERS; i++) {
		KUNIT_EXPECT_EQ_MSG(test, ret[i], 0, "timer %u", i);
		KUNIT_EXPECT_TRUE(test, twheel_pending(&b[i].timer));
		KUNIT_EXPECT_EQ(test, twheel_expires(&b[i].timer), deadline);
	}
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&tw_blog.done,
							    msecs_to_jiffies(TW_TIMEOUT_MS)));
	tw_sleep_ms(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&tw_blog.fired), TW_BATCH_TIMERS);
	for (i = 0; i < TW_BATCH_TIMERS; i++) {
		KUNIT_EXPECT_EQ(test, b[i].fires, 1);
		KUNIT_EXPECT_EQ_MSG(test, tw_blog.order[i], i, "fire %u", i);
	}
	/* Derived counters: fires from the histogram, pending from the wheel. */
	tw_stats(test, home, &st2);
	KUNIT_EXPECT_EQ(test, st2.fired - st1.fired, TW_BATCH_TIMERS);
	KUNIT_EXPECT_EQ(test, st2.pending, st0.pending);
	tw_batch_teardown(b);
}

/*
 * twheel_add_bulk() with a bad timer between good ones: each gets what
 * twheel_add() would return, nothing changes for the failed ones, and the
 * others are armed.
 */
static void twheel_test_add_bulk_errors(struct kunit *test)
{
	struct tw_probe *p = tw_probes(test, 6, tw_probe_fn, 0);
	struct twheel_timer *timers[6];
	ktime_t expires[6];
	int ret[6], i;
	u64 was;

	/* p0 pending, p1 shut down, p2 past KTIME_MAX, p4 negative */
	KUNIT_ASSERT_EQ(test, tw_arm_in(&p[0], 500 * NSEC_PER_MSEC,
					tw_home_cpu()), 0);
	was = twheel_expires(&p[0].timer);
	KUNIT_ASSERT_EQ(test, twheel_shutdown_sync(&p[1].timer), 0);
	for (i = 0; i < 6; i++) {
		timers[i] = &p[i].timer;
		expires[i] = 10 * NSEC_PER_MSEC;
	}
	expires[2] = KTIME_MAX;
	expires[4] = -1;
	KUNIT_EXPECT_EQ(test, twheel_add_bulk(timers, expires, 6, TWHEEL_REL,
					      ret), 2);
	p[3].deadline = twheel_expires(&p[3].timer);
	p[5].deadline = twheel_expires(&p[5].timer);
	/* One reading of the clock for both. */
	KUNIT_EXPECT_EQ(test, p[3].deadline, p[5].deadline);
	KUNIT_EXPECT_EQ(test, ret[0], -EEXIST);
	KUNIT_EXPECT_EQ(test, ret[1], -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, ret[2], -ERANGE);
	KUNIT_EXPECT_EQ(test, ret[3], 0);
	KUNIT_EXPECT_EQ(test, ret[4], -EINVAL);
	KUNIT_EXPECT_EQ(test, ret[5], 0);
	KUNIT_EXPECT_EQ(test, twheel_expires(&p[0].timer), was);
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p[1].timer));
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p[2].timer));
	KUNIT_EXPECT_FALSE(test, twheel_pending(&p[4].timer));
	KUNIT_ASSERT_TRUE(test, tw_wait(&p[3].done, TW_TIMEOUT_MS));
	KUNIT_ASSERT_TRUE(test, tw_wait(&p[5].done, TW_TIMEOUT_MS));
	tw_expect_timely(test, &p[3], TW_SLACK_NS);
	tw_expect_timely(test, &p[5], TW_SLACK_NS);
	KUNIT_EXPECT_EQ(test, twheel_cancel_sync(&p[0].timer), 1);
	for (i = 0; i < 6; i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&p[i].fires),
				    i == 3 || i == 5, "timer %d", i);
}

static int twheel_kunit_init(struct kunit *test)
{
	struct tw_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);

	if (!ctx)
		return -ENOMEM;
	ctx->test = test;
	ctx->offline_cpu = -1;
	init_completion(&ctx->all_done);
	ctx->early = tw_early_sum();
	test->priv = ctx;
	/*
	 * Callbacks that hold on spin in softirq on the other CPU: keep the
	 * case off it, or it waits there until the callback gives up.
	 */
	set_cpus_allowed_ptr(current, cpumask_of(tw_home_cpu()));
	tw_mon_start_all(ctx);
	return 0;
}

/* Runs also when a case aborted: no timer may outlive its memory. */
static void twheel_kunit_exit(struct kunit *test)
{
	struct tw_ctx *ctx = test->priv;
	unsigned int i, j;

	for (i = 0; i < ctx->nr_sets; i++) {
		for (j = 0; j < ctx->sets[i].n; j++) {
			struct tw_probe *p = ctx->sets[i].p + j;

			WRITE_ONCE(p->go, true);
			twheel_shutdown_sync(&p->timer);
		}
	}
	for (i = 0; i < ctx->nr_mini; i++)
		twheel_shutdown_sync(&ctx->mini[i].timer);
	kvfree(ctx->mini);
	if (ctx->offline_cpu >= 0)
		KUNIT_EXPECT_EQ(test, add_cpu(ctx->offline_cpu), 0);
	tw_mon_stop_all(ctx);
	/* twheel counts a fire before its deadline: never, in any case. */
	KUNIT_EXPECT_EQ(test, tw_early_sum(), ctx->early);
}

static struct kunit_case twheel_test_cases[] = {
	KUNIT_CASE(twheel_test_mod_pending_only),
	KUNIT_CASE(twheel_test_batch_order),
	KUNIT_CASE(twheel_test_batch_classes),
	KUNIT_CASE(twheel_test_batch_cancel_sync),
	KUNIT_CASE(twheel_test_add_bulk),
	KUNIT_CASE(twheel_test_add_bulk_errors),
	KUNIT_CASE_SLOW(twheel_test_cascade),
	KUNIT_CASE(twheel_test_level_boundary_deadlines),
	KUNIT_CASE_SLOW(twheel_test_random_delays),
	KUNIT_CASE_SLOW(twheel_test_fifo_equal_deadlines),
	KUNIT_CASE(twheel_test_cancel_before_fire),
	KUNIT_CASE(twheel_test_cancel_while_running),
	KUNIT_CASE(twheel_test_sleep_list),
	KUNIT_CASE(twheel_test_cancel_after_fire),
	KUNIT_CASE(twheel_test_cancel_sync_softirq),
	KUNIT_CASE(twheel_test_cancel_sync_sleepable),
	KUNIT_CASE(twheel_test_cancel_sync_rearming),
	KUNIT_CASE(twheel_test_try_cancel),
	KUNIT_CASE(twheel_test_self_rearm),
	KUNIT_CASE(twheel_test_self_cancel_periodic),
	KUNIT_CASE(twheel_test_self_rearm_then_cancel),
	KUNIT_CASE(twheel_test_periodic_count),
	KUNIT_CASE(twheel_test_periodic_forever),
	KUNIT_CASE(twheel_test_pending_periodic),
	KUNIT_CASE(twheel_test_pending_sleepable),
	KUNIT_CASE(twheel_test_periodic_overruns),
	KUNIT_CASE(twheel_test_periodic_past_ktime_max),
	KUNIT_CASE(twheel_test_periodic_then_once),
	KUNIT_CASE(twheel_test_set_period_invalid),
	KUNIT_CASE(twheel_test_slack_set),
	KUNIT_CASE(twheel_test_slack_periodic),
	KUNIT_CASE(twheel_test_mod_idle),
	KUNIT_CASE(twheel_test_mod_pending),
	KUNIT_CASE(twheel_test_reduce_only_earlier),
	KUNIT_CASE(twheel_test_shutdown),
	KUNIT_CASE(twheel_test_shutdown_refuses_callback_rearm),
	KUNIT_CASE(twheel_test_shutdown_bulk),
	KUNIT_CASE(twheel_test_erange),
	KUNIT_CASE(twheel_test_add_pending_eexist),
	KUNIT_CASE(twheel_test_remaining),
	KUNIT_CASE(twheel_test_idle_wheel_hrtimer),
	KUNIT_CASE(twheel_test_add_on_cpu),
	KUNIT_CASE(twheel_test_add_on_deadline_zero),
	KUNIT_CASE(twheel_test_rearm_from_other_cpu),
	KUNIT_CASE_SLOW(twheel_test_cpu_hotplug),
	KUNIT_CASE_SLOW(twheel_test_cpu_offline_hrtimer),
	KUNIT_CASE_SLOW(twheel_test_hotplug_add_on_coming_up),
	KUNIT_CASE_SLOW(twheel_test_hotplug_backlog),
	KUNIT_CASE_SLOW(twheel_test_hotplug_cancel_sync),
	{}
};

static struct kunit_suite twheel_test_suite = {
	.name = "twheel",
	.init = twheel_kunit_init,
	.exit = twheel_kunit_exit,
	.test_cases = twheel_test_cases,
};

kunit_test_suite(twheel_test_suite);

MODULE_AUTHOR("The twheel authors");
MODULE_DESCRIPTION("KUnit tests of twheel");
MODULE_LICENSE("GPL");
