// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_bench - twheel against timer_list and hrtimer, in one boot
 *
 * Copyright (C) 2026 The twheel authors
 *
 * Load after twheel.ko. The init function runs every benchmark, prints one
 * "twheel_bench: RESULT {json}" line per measurement to the kernel log and
 * returns 0; the module then holds nothing until it is removed.
 * bench/report.py turns the lines into bench/results/latest.{json,md}.
 *
 * For each facility - twheel, timer_list, hrtimer, and for the cost runs
 * twheel-abs too - it measures, @rounds times (9 by default):
 *
 *  cost      ns per arm, modify and cancel with N timers pending, their
 *            random delays spread over an hour. The N background timers
 *            are armed first ("fill"); each round then arms and cancels
 *            probe timers and re-arms random pending ones, so every
 *            operation sees N pending. Removing the N at the end is
 *            reported too ("drain"). The facilities use the same delays
 *            and hold their N timers at the same time.
 *  burst     callbacks per second when N timers come due at one instant,
 *            and how late the first one runs
 *  lateness  fire time minus deadline: percentiles, a histogram and the
 *            early fires, for short (1-50 ms) and long (1-5 s, several
 *            levels) delays. Each facility runs alone, in its own phase,
 *            with the round's delays, so that no callback delays another
 *            facility's. The fire time is the one the facility has: for
 *            twheel, twheel_fire_time(), the clock the wheel read once for
 *            the slot; timer_list and hrtimer have none to give, so their
 *            callbacks read the clock, each in its own phase. The
 *            "flood" range is lateness under load: @flood_n (1M) timers
 *            due over 10 s, from an origin after their arming, in the
 *            first @flood_rounds rounds; the same load as ubench's keyed
 *            timers through /dev/twheel.
 *  wakeups   runs of twheel's per-CPU hrtimer per second: idle, one timer an
 *            hour away, and N timers spread over an hour (measured once)
 *  slack     the same with slack_n timers due over an hour, each with a
 *            slack of 0, 1 and 10 % (slack_list) of its delay: the whole
 *            hour on virtual time, and a window in the guest (see
 *            tb_slack_one())
 *  size      bytes per timer
 *
 * Every round of a measurement runs every facility, the order rotating from
 * round to round, so that a slow stretch of the host (a TCG guest shares
 * it) falls on all of them alike. Each round prints its own RESULT line,
 * with "round"; bench/report.py takes the median and the min-max spread.
 *
 * In the cost runs every timer is armed the way its API means "fire in d
 * nanoseconds": twheel_add(d, TWHEEL_REL), hrtimer_start(d,
 * HRTIMER_MODE_REL_SOFT) and mod_timer(jiffies + usecs_to_jiffies(d / 1000));
 * the last one only promises whole jiffy boundaries, so it can fire early
 * against d. A relative twheel deadline costs a clocksource read per call,
 * where timer_list reads jiffies, a variable; twheel-abs is the caller that
 * keeps its own notion of now: twheel's timers, the same delays, armed and
 * modified with twheel_add(now + d, TWHEEL_ABS) where now is read once per
 * chunk of operations, inside the timed chunk, and cancelled as twheel's.
 * The lateness and burst runs arm twheel and hrtimer at absolute deadlines,
 * timer_list at jiffies + d. hrtimers are soft so that all of them run
 * their callbacks in softirq context.
 *
 * The benchmark runs with migration disabled, so all timers are armed on
 * and fire on one CPU. Clocks are read around chunks of operations, never
 * around one, and cond_resched() runs between chunks.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/timer.h>
#include <linux/utsname.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>

#include "compat.h"
#include "twheel.h"
/* The slack runs drive a private wheel on virtual time, as KUnit does. */
#include "wheel.c"

/* They only let timers fire: wheel.c's cancel and count go unused here. */
static bool wheel_del(struct wheel *w, struct twheel_timer *timer) __maybe_unused;
static u64 wheel_count(const struct wheel *w) __maybe_unused;
static void wheel_emptied(struct wheel *w) __maybe_unused;

/* Operations between two clock reads and cond_resched() calls. */
#define CHUNK		1024
#define MAX_N		8
#define MAX_ROUNDS	99
#define HOUR_NS		(3600ULL * NSEC_PER_SEC)

static char *n_list = "1000,10000,100000,1000000,10000000";
module_param(n_list, charp, 0444);
MODULE_PARM_DESC(n_list, "Pending timers for the cost runs, comma separated (skipped if memory is short)");

static char *burst_list = "10000,100000,1000000";
module_param(burst_list, charp, 0444);
MODULE_PARM_DESC(burst_list, "Timers due at one instant, comma separated");

static unsigned int burst_facs = 7;
module_param(burst_facs, uint, 0444);
MODULE_PARM_DESC(burst_facs, "Facilities of the burst runs: 1 twheel, 2 timer_list, 4 hrtimer, or a sum (default 7; 0: none)");

static unsigned int cost_facs = 15;
module_param(cost_facs, uint, 0444);
MODULE_PARM_DESC(cost_facs, "Facilities whose cost rounds run: 1 twheel, 2 timer_list, 4 hrtimer, 8 twheel-abs, or a sum (default 15; filling and draining run for all)");

static unsigned int rounds = 9;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "Rounds of every measurement, facilities interleaved");

static unsigned int probe_ops = 65536;
module_param(probe_ops, uint, 0444);
MODULE_PARM_DESC(probe_ops, "Operations of each kind per round");

static unsigned int lat_n = 1000;
module_param(lat_n, uint, 0444);
MODULE_PARM_DESC(lat_n, "Timers per lateness run of one facility");

static unsigned int sparse_n = 100;
module_param(sparse_n, uint, 0444);
MODULE_PARM_DESC(sparse_n, "Timers, one at a time, per sparse lateness run");

static unsigned int flood_n = 1000000;
module_param(flood_n, uint, 0444);
MODULE_PARM_DESC(flood_n, "Timers due over 10 s in each flood lateness run (0: none)");

static unsigned int flood_rounds = 3;
module_param(flood_rounds, uint, 0444);
MODULE_PARM_DESC(flood_rounds, "Rounds that run the flood lateness run");

static unsigned int wake_ms = 2000;
module_param(wake_ms, uint, 0444);
MODULE_PARM_DESC(wake_ms, "Sampling time of each wakeup count, ms");

static char *slack_list = "0,1,10";
module_param(slack_list, charp, 0444);
MODULE_PARM_DESC(slack_list, "Slack of the timers of the slack runs, % of each delay, comma separated");

static unsigned int slack_n = 1000000;
module_param(slack_n, uint, 0444);
MODULE_PARM_DESC(slack_n, "Timers due over an hour in the slack runs (0 skips them)");

static unsigned int slack_ms = 10000;
module_param(slack_ms, uint, 0444);
MODULE_PARM_DESC(slack_ms, "The guest's window of the slack runs, ms");

static bool slack_only;
module_param(slack_only, bool, 0444);
MODULE_PARM_DESC(slack_only, "Run the slack runs only");

static unsigned int seed = 1;
module_param(seed, uint, 0444);
MODULE_PARM_DESC(seed, "Seed of the random delays");

/*
 * FAC_TWHEEL_ABS, twheel armed with absolute deadlines, takes part in the
 * cost runs only: the lateness and burst runs arm twheel that way already.
 */
enum tb_fac {
	FAC_TWHEEL,
	FAC_TIMER_LIST,
	FAC_HRTIMER,
	FAC_TWHEEL_ABS,
	NR_FAC,
	NR_FIRE_FAC = FAC_TWHEEL_ABS,
};

enum tb_op { OP_ARM, OP_MOD, OP_CANCEL };

static const char *const fac_name[NR_FAC] = {
	[FAC_TWHEEL]		= "twheel",
	[FAC_TIMER_LIST]	= "timer_list",
	[FAC_HRTIMER]		= "hrtimer",
	[FAC_TWHEEL_ABS]	= "twheel-abs",
};

static const size_t fac_size[NR_FAC] = {
	[FAC_TWHEEL]		= sizeof(struct twheel_timer),
	[FAC_TIMER_LIST]	= sizeof(struct timer_list),
	[FAC_HRTIMER]		= sizeof(struct hrtimer),
	[FAC_TWHEEL_ABS]	= sizeof(struct twheel_timer),
};

static struct rnd_state tb_rnd;

/* A random delay in [@lo, @hi) nanoseconds. */
static u64 tb_delay(u64 lo, u64 hi)
{
	return lo + mul_u64_u32_shr(hi - lo, prandom_u32_state(&tb_rnd), 32);
}

static unsigned long tb_jiffies(u64 delay_ns)
{
	return usecs_to_jiffies(div_u64(delay_ns, NSEC_PER_USEC));
}

static int tb_cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank @pct percentile of @n sorted values. */
static s64 tb_pct(const s64 *v, unsigned int n, unsigned int pct)
{
	return v[max(DIV_ROUND_UP(n * pct, 100), 1U) - 1];
}

/* Large arrays; a failure is reported as a skipped run, not a splat. */
static void *tb_vmalloc(size_t size)
{
	return __vmalloc(size, GFP_KERNEL | __GFP_NOWARN);
}

static int tb_parse_list(const char *str, unsigned int *out, bool zero_ok)
{
	char *copy, *p, *tok;
	int n = 0, ret = 0;

	copy = kstrdup(str, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	p = copy;
	while ((tok = strsep(&p, ",")) && !ret) {
		if (!*tok)
			continue;
		if (n == MAX_N)
			ret = -E2BIG;
		else if (kstrtouint(tok, 0, &out[n]) || (!out[n] && !zero_ok))
			ret = -EINVAL;
		else
			n++;
	}
	kfree(copy);
	return ret ?: n;
}

/*
 * One RESULT line at a time: tb_jbegin(), then fields, then tb_jend(), which
 * prints it. Only the init function writes lines, so one buffer does.
 */
static struct {
	char	buf[768];
	size_t	len;
} tb_json;

static void __printf(1, 2) tb_jadd(const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	tb_json.len += vscnprintf(tb_json.buf + tb_json.len,
				  sizeof(tb_json.buf) - tb_json.len, fmt, args);
	va_end(args);
}

static void tb_jbegin(const char *kind)
{
	tb_json.len = 0;
	tb_jadd("\"kind\":\"%s\"", kind);
}

static void tb_jstr(const char *key, const char *val)
{
	tb_jadd(",\"%s\":\"%s\"", key, val);
}

static void tb_ju64(const char *key, u64 val)
{
	tb_jadd(",\"%s\":%llu", key, val);
}

static void tb_js64(const char *key, s64 val)
{
	tb_jadd(",\"%s\":%lld", key, val);
}

/* The line of round @r of a measurement: bench/report.py merges them. */
static void tb_jround(unsigned int r)
{
	tb_ju64("round", r);
}

/* @tenths / 10 with one decimal. */
static void tb_jtenths(const char *key, u64 tenths)
{
	tb_jadd(",\"%s\":%llu.%llu", key, tenths / 10, tenths % 10);
}

/* @milli / 1000 with three decimals. */
static void tb_jmilli(const char *key, u64 milli)
{
	tb_jadd(",\"%s\":%llu.%03llu", key, milli / 1000, milli % 1000);
}

static void tb_jend(void)
{
	pr_info("RESULT {%s}\n", tb_json.buf);
}

/* ---- wheel wakeups ---- */

/* The sum of every CPU's twheel stats, of the counters the benchmark reads. */
static void tb_wheel_stats(struct twheel_stats *sum)
{
	struct twheel_stats st;
	unsigned int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		if (twheel_cpu_stats(cpu, &st))
			continue;
		sum->wakeups += st.wakeups;
		sum->slices += st.slices;
		sum->deferred += st.deferred;
	}
}

static u64 tb_wheel_wakeups(void)
{
	struct twheel_stats st;

	tb_wheel_stats(&st);
	return st.wakeups;
}

static void tb_wakeups(const char *what, unsigned int n)
{
	u64 before = tb_wheel_wakeups(), delta;

	msleep(wake_ms);
	delta = tb_wheel_wakeups() - before;
	tb_jbegin("wakeups");
	tb_jstr("case", what);
	tb_ju64("n", n);
	tb_jtenths("per_s", div_u64(delta * 10 * MSEC_PER_SEC, wake_ms));
	tb_ju64("ms", wake_ms);
	tb_jend();
}

static void tb_nop_tw(struct twheel_timer *t)
{
}

static void tb_wakeups_sparse(void)
{
	struct twheel_timer t;

	tb_wakeups("idle", 0);
	twheel_timer_init(&t, tb_nop_tw, 0);
	twheel_add(&t, HOUR_NS, TWHEEL_REL);
	tb_wakeups("one_hour_away", 1);
	twheel_cancel_sync(&t);
}

/* ---- wakeups with slack: slack_n timers over an hour ---- */

/* The guest's window starts half an hour into the hour... */
#define TB_SLACK_AT	(HOUR_NS / 2)
/* ...which is this long after the slack run starts arming. */
#define TB_SLACK_LEAD	(5ULL * NSEC_PER_SEC)

/**
 * struct tb_slack - the timers of the slack runs
 * @n:		how many
 * @delay:	each one's deadline, from the start of the hour
 * @t:		the timers, on a private wheel or on twheel's
 */
struct tb_slack {
	u32			n;
	u64			*delay;
	struct twheel_timer	*t;
};

/* Timer @i's slack: @pct % of its delay. */
static u64 tb_slack_ns(const struct tb_slack *s, u32 i, unsigned int pct)
{
	return div_u64(s->delay[i] * pct, 100);
}

/* One run of a wheel at @now, as twheel_run() does it, without callbacks. */
static void tb_wheel_run(struct wheel *w, u64 now)
{
	for (;;) {
		struct twheel_timer *t = wheel_first_due(w, now);
		unsigned int budget = UINT_MAX;

		if (t)
			wheel_del_due(w, t);
		else if (wheel_advance(w, now, &budget) == WHEEL_IDLE)
			return;
	}
}

/*
 * The whole hour on virtual time: the timers on a private wheel (wheel.c,
 * the code of twheel's wheels) at time 0, each with the grid
 * twheel_set_slack() gives its slack, and the wheel run at each of its
 * events, as its hrtimer runs it. Returns the runs, the wakeups, over the
 * hour; *@win gets those in [@from, @to). Without memory, U64_MAX.
 */
static u64 tb_slack_virtual(struct tb_slack *s, unsigned int pct, u64 from,
			    u64 to, u64 *win)
{
	struct wheel *w = kvzalloc(sizeof(*w), GFP_KERNEL);
	u64 runs = 0, next;
	u32 i;

	*win = 0;
	if (!w)
		return U64_MAX;
	wheel_init(w, twheel_tick_ns(), 0);
	for (i = 0; i < s->n; i++) {
		struct twheel_timer *t = &s->t[i];

		memset(t, 0, sizeof(*t));
		t->expires = s->delay[i];
		t->slack = wheel_slack_grid(twheel_tick_ns(),
					    tb_slack_ns(s, i, pct));
		wheel_add(w, t, U64_MAX);
	}
	while ((next = wheel_next_event(w)) != U64_MAX) {
		runs++;
		*win += next >= from && next < to;
		tb_wheel_run(w, next);
		if (!(runs % CHUNK))
			cond_resched();
	}
	kvfree(w);
	return runs;
}

/*
 * The same timers on twheel's wheel of this CPU as they are half an hour
 * into the hour: those due after that, armed now at their deadlines less
 * half an hour plus TB_SLACK_LEAD, with their slack; then twheel's wakeups
 * counted over slack_ms. Returns the wakeups; *@late gets how far the
 * window started after the half hour (arming took longer than the lead).
 */
static u64 tb_slack_guest(struct tb_slack *s, unsigned int pct, u64 *late)
{
	u64 start = ktime_get() + TB_SLACK_LEAD, before, delta, now;
	u32 i;

	for (i = 0; i < s->n; i++) {
		struct twheel_timer *t = &s->t[i];

		if (s->delay[i] < TB_SLACK_AT)
			continue;
		twheel_timer_init(t, tb_nop_tw, 0);
		twheel_set_slack(t, tb_slack_ns(s, i, pct));
		twheel_add(t, start + s->delay[i] - TB_SLACK_AT, TWHEEL_ABS);
		if (!(i % CHUNK))
			cond_resched();
	}
	now = ktime_get();
	if (now < start)
		msleep(div_u64(start - now, NSEC_PER_MSEC));
	*late = ktime_get() - start;
	before = tb_wheel_wakeups();
	msleep(slack_ms);
	delta = tb_wheel_wakeups() - before;
	for (i = 0; i < s->n; i++) {
		if (s->delay[i] >= TB_SLACK_AT)
			twheel_cancel_sync(&s->t[i]);
		if (!(i % CHUNK))
			cond_resched();
	}
	return delta;
}

/*
 * Wakeups with @pct % slack. An hour cannot be waited for, so the hour is
 * counted on virtual time through the wheel's own code, and checked
 * against the guest: slack_ms of twheel's real wakeups, half an hour into
 * the same hour (the timers due after it armed with their remaining
 * time), next to the virtual count of the same window. The virtual count
 * is what the hrtimer would do on an idle CPU; in the guest, runs that
 * come late may merge.
 */
static void tb_slack_one(struct tb_slack *s, unsigned int pct)
{
	u64 guest, late, runs, win, from;
	char name[16];

	guest = tb_slack_guest(s, pct, &late);
	from = TB_SLACK_AT + late;
	runs = tb_slack_virtual(s, pct, from, from + slack_ms * NSEC_PER_MSEC,
				&win);
	tb_jbegin("wakeups_slack");
	snprintf(name, sizeof(name), "slack_%u", pct);
	tb_jstr("case", name);
	tb_ju64("n", s->n);
	tb_ju64("pct", pct);
	tb_ju64("tick_ns", twheel_tick_ns());
	if (runs != U64_MAX) {
		tb_ju64("hour_runs", runs);
		tb_jmilli("hour_per_s", div_u64(runs * 1000, 3600));
		tb_jmilli("virtual_window_per_s",
			  div_u64(win * 1000 * MSEC_PER_SEC, slack_ms));
	}
	tb_jmilli("guest_window_per_s",
		  div_u64(guest * 1000 * MSEC_PER_SEC, slack_ms));
	tb_ju64("guest_window_runs", guest);
	tb_ju64("virtual_window_runs", win);
	tb_ju64("window_ms", slack_ms);
	tb_ju64("window_at_ms", div_u64(from, NSEC_PER_MSEC));
	tb_jend();
}

static int tb_slack_all(void)
{
	unsigned int pcts[MAX_N];
	struct tb_slack s = { .n = slack_n };
	int count, i;
	u32 j;

	count = tb_parse_list(slack_list, pcts, true);
	if (count < 0)
		return count;
	if (!slack_n || !count)
		return 0;
	s.delay = tb_vmalloc(array_size(slack_n, sizeof(*s.delay)));
	s.t = tb_vmalloc(array_size(slack_n, sizeof(*s.t)));
	if (!s.delay || !s.t) {
		tb_jbegin("skip");
		tb_jstr("what", "wakeups_slack");
		tb_jstr("why", "vmalloc");
		tb_jend();
		goto out_free;
	}
	for (j = 0; j < slack_n; j++)
		s.delay[j] = tb_delay(0, HOUR_NS);
	for (i = 0; i < count; i++)
		tb_slack_one(&s, pcts[i]);
out_free:
	vfree(s.t);
	vfree(s.delay);
	return 0;
}

/* ---- cost: arm, modify, cancel with N pending ---- */

/**
 * struct tb_cost - one facility's timers for a cost run
 * @fac:	the facility
 * @n:		background timers, kept pending; indices [0, n)
 * @k:		probe timers, armed and cancelled; indices [n, n + k)
 * @timers:	@n + @k timers of the facility; twheel-abs uses twheel's
 * @delay:	per timer index, its delay in ns; a modify of step i uses
 *		@delay[n + i]
 * @jdelay:	@delay in jiffies, for timer_list
 * @midx:	the pending timer that modify step i re-arms, i < @k
 */
struct tb_cost {
	enum tb_fac	fac;
	unsigned int	n;
	unsigned int	k;
	void		*timers;
	u64		*delay;
	unsigned long	*jdelay;
	u32		*midx;
};

static void tb_nop_tl(struct timer_list *t)
{
}

static enum hrtimer_restart tb_nop_hr(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

/*
 * twheel arms with relative deadlines, twheel-abs with absolute ones from
 * one clock read per chunk, as a caller with its own notion of now would.
 */
static void tb_ops_tw(struct tb_cost *c, enum tb_op op, u32 lo, u32 hi)
{
	struct twheel_timer *t = c->timers;
	enum twheel_mode mode = TWHEEL_REL;
	u64 now = 0;
	u32 i;

	if (c->fac == FAC_TWHEEL_ABS && op != OP_CANCEL) {
		mode = TWHEEL_ABS;
		now = ktime_get_ns();
	}
	switch (op) {
	case OP_ARM:
		for (i = lo; i < hi; i++)
			twheel_add(t + i, now + c->delay[i], mode);
		break;
	case OP_MOD:
		for (i = lo; i < hi; i++)
			twheel_mod(t + c->midx[i], now + c->delay[c->n + i],
				   mode);
		break;
	case OP_CANCEL:
		for (i = lo; i < hi; i++)
			twheel_cancel(t + i);
		break;
	}
}

static void tb_ops_tl(struct tb_cost *c, enum tb_op op, u32 lo, u32 hi)
{
	struct timer_list *t = c->timers;
	u32 i;

	switch (op) {
	case OP_ARM:
		for (i = lo; i < hi; i++)
			mod_timer(t + i, jiffies + c->jdelay[i]);
		break;
	case OP_MOD:
		for (i = lo; i < hi; i++)
			mod_timer(t + c->midx[i], jiffies + c->jdelay[c->n + i]);
		break;
	case OP_CANCEL:
		for (i = lo; i < hi; i++)
			timer_delete(t + i);
		break;
	}
}

static void tb_ops_hr(struct tb_cost *c, enum tb_op op, u32 lo, u32 hi)
{
	struct hrtimer *t = c->timers;
	u32 i;

	switch (op) {
	case OP_ARM:
		for (i = lo; i < hi; i++)
			hrtimer_start(t + i, ns_to_ktime(c->delay[i]),
				      HRTIMER_MODE_REL_SOFT);
		break;
	case OP_MOD:
		for (i = lo; i < hi; i++)
			hrtimer_start(t + c->midx[i],
				      ns_to_ktime(c->delay[c->n + i]),
				      HRTIMER_MODE_REL_SOFT);
		break;
	case OP_CANCEL:
		for (i = lo; i < hi; i++)
			hrtimer_try_to_cancel(t + i);
		break;
	}
}

/* Run @op on [@lo, @hi) in chunks; returns the ns spent inside the chunks. */
static u64 tb_cost_run(struct tb_cost *c, enum tb_op op, u32 lo, u32 hi)
{
	u64 total = 0;

	while (lo < hi) {
		u32 end = min(hi, lo + CHUNK);
		u64 t0 = ktime_get_ns();

		if (c->fac == FAC_TWHEEL || c->fac == FAC_TWHEEL_ABS)
			tb_ops_tw(c, op, lo, end);
		else if (c->fac == FAC_TIMER_LIST)
			tb_ops_tl(c, op, lo, end);
		else
			tb_ops_hr(c, op, lo, end);
		total += ktime_get_ns() - t0;
		cond_resched();
		lo = end;
	}
	return total;
}

static void tb_cost_init_one(struct tb_cost *c, u32 i)
{
	struct hrtimer *hr;

	switch (c->fac) {
	case FAC_TWHEEL:
	case FAC_TWHEEL_ABS:
		twheel_timer_init((struct twheel_timer *)c->timers + i,
				  tb_nop_tw, 0);
		break;
	case FAC_TIMER_LIST:
		timer_setup((struct timer_list *)c->timers + i, tb_nop_tl, 0);
		break;
	default:
		hr = (struct hrtimer *)c->timers + i;
		hrtimer_setup(hr, tb_nop_hr, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_SOFT);
		break;
	}
}

/* Wait for any running callback, so that the timers can be freed. */
static void tb_cost_sync_one(struct tb_cost *c, u32 i)
{
	switch (c->fac) {
	case FAC_TWHEEL:
	case FAC_TWHEEL_ABS:
		twheel_cancel_sync((struct twheel_timer *)c->timers + i);
		break;
	case FAC_TIMER_LIST:
		timer_shutdown_sync((struct timer_list *)c->timers + i);
		break;
	default:
		hrtimer_cancel((struct hrtimer *)c->timers + i);
		break;
	}
}

/* Cancel and free one facility's timers. */
static void tb_cost_free(struct tb_cost *c)
{
	u32 i;

	if (!c->timers || c->fac == FAC_TWHEEL_ABS) {
		/* twheel-abs's timers are twheel's, freed with them */
		c->timers = NULL;
		return;
	}
	for (i = 0; i < c->n + c->k; i++) {
		tb_cost_sync_one(c, i);
		if (!(i % CHUNK))
			cond_resched();
	}
	vfree(c->timers);
	c->timers = NULL;
}

/**
 * struct tb_costs - the facilities' cost runs for one N
 * @c:		per facility; @c[f].timers is NULL for a facility skipped
 * @delay:	shared by the facilities, see struct tb_cost
 * @jdelay:	shared
 * @midx:	shared
 * @fill:	per facility, tenths of ns per arm while filling up to N
 * @drain:	per facility, tenths of ns per cancel while draining N
 *
 * All facilities run the same delays and modify picks. Their N timers are
 * pending together, and each round runs every facility, the order rotating
 * from round to round. twheel-abs runs on twheel's timers, so that the
 * wheel holds N, not 2N: it fills them again after twheel's drain, for its
 * own fill and drain.
 */
struct tb_costs {
	struct tb_cost	c[NR_FAC];
	u64		*delay;
	unsigned long	*jdelay;
	u32		*midx;
	u64		fill[NR_FAC];
	u64		drain[NR_FAC];
};

static void tb_costs_free(struct tb_costs *s)
{
	enum tb_fac fac;

	for (fac = 0; fac < NR_FAC; fac++)
		tb_cost_free(&s->c[fac]);
	vfree(s->delay);
	vfree(s->jdelay);
	vfree(s->midx);
	kfree(s);
}

static void tb_cost_skip(enum tb_fac fac, u32 n, const char *why)
{
	tb_jbegin("skip");
	tb_jstr("what", "cost");
	tb_jstr("fac", fac_name[fac]);
	tb_ju64("n", n);
	tb_jstr("why", why);
	tb_jend();
}

/* The shared delays and modify picks of @n + @k timers. */
static int tb_costs_delays(struct tb_costs *s, u32 n, u32 k)
{
	u32 i;

	s->delay = tb_vmalloc(array_size(n + k, sizeof(*s->delay)));
	s->jdelay = tb_vmalloc(array_size(n + k, sizeof(*s->jdelay)));
	s->midx = tb_vmalloc(array_size(k, sizeof(*s->midx)));
	if (!s->delay || !s->jdelay || !s->midx)
		return -ENOMEM;
	for (i = 0; i < n + k; i++) {
		s->delay[i] = tb_delay(NSEC_PER_MSEC, HOUR_NS);
		s->jdelay[i] = tb_jiffies(s->delay[i]);
		if (i < k)
			s->midx[i] = prandom_u32_state(&tb_rnd) % n;
		if (!(i % CHUNK))
			cond_resched();
	}
	return 0;
}

/* One facility's timers, if they fit in what is left of @budget bytes. */
static void tb_cost_alloc(struct tb_costs *s, enum tb_fac fac, u32 n, u32 k,
			  u64 *budget)
{
	struct tb_cost *c = &s->c[fac];
	u64 need = (u64)(n + k) * fac_size[fac];
	u32 i;

	*c = (struct tb_cost){ .fac = fac, .n = n, .k = k, .delay = s->delay,
			       .jdelay = s->jdelay, .midx = s->midx };
	if (fac == FAC_TWHEEL_ABS) {
		c->timers = s->c[FAC_TWHEEL].timers;
		if (!c->timers)
			tb_cost_skip(fac, n, "twheel skipped");
		return;
	}
	if (need > *budget) {
		tb_cost_skip(fac, n, "memory");
		return;
	}
	c->timers = tb_vmalloc(need);
	if (!c->timers) {
		tb_cost_skip(fac, n, "vmalloc");
		return;
	}
	*budget -= need;
	for (i = 0; i < n + k; i++) {
		tb_cost_init_one(c, i);
		if (!(i % CHUNK))
			cond_resched();
	}
}

/* Leave the guest half of its memory. */
static struct tb_costs *tb_costs_alloc(u32 n)
{
	u64 budget = (u64)totalram_pages() * PAGE_SIZE / 2;
	u32 k = min_t(u32, n, probe_ops);
	struct tb_costs *s;
	enum tb_fac fac;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return NULL;
	if (tb_costs_delays(s, n, k)) {
		for (fac = 0; fac < NR_FAC; fac++)
			tb_cost_skip(fac, n, "vmalloc");
		tb_costs_free(s);
		return NULL;
	}
	budget -= min(budget, (u64)(n + k) * 16 + k * 4);
	for (fac = 0; fac < NR_FAC; fac++)
		tb_cost_alloc(s, fac, n, k, &budget);
	return s;
}

/* Tenths of a ns per op. */
static u64 tb_per_op(u64 ns, u64 ops)
{
	return div64_u64(ns * 10, max_t(u64, ops, 1));
}

/*
 * Round @round of one facility: arm and cancel the probes, and modify
 * pending timers, each repeated until about probe_ops operations have been
 * timed; its RESULT line.
 */
static void tb_cost_round(struct tb_cost *c, unsigned int round)
{
	u32 reps = DIV_ROUND_UP(probe_ops, c->k), r;
	u64 a = 0, m = 0, x = 0;

	if (!(cost_facs & BIT(c->fac)))
		return;
	for (r = 0; r < reps; r++) {
		a += tb_cost_run(c, OP_ARM, c->n, c->n + c->k);
		x += tb_cost_run(c, OP_CANCEL, c->n, c->n + c->k);
		m += tb_cost_run(c, OP_MOD, 0, c->k);
	}
	tb_jbegin("cost");
	tb_jstr("fac", fac_name[c->fac]);
	tb_ju64("n", c->n);
	tb_jround(round);
	tb_jtenths("arm_ns", tb_per_op(a, (u64)reps * c->k));
	tb_jtenths("mod_ns", tb_per_op(m, (u64)reps * c->k));
	tb_jtenths("cancel_ns", tb_per_op(x, (u64)reps * c->k));
	tb_ju64("ops", (u64)reps * c->k);
	tb_jend();
}

/* Filling and draining N happen once per facility, not per round. */
static void tb_fill_report(struct tb_costs *s, enum tb_fac fac)
{
	tb_jbegin("fill");
	tb_jstr("fac", fac_name[fac]);
	tb_ju64("n", s->c[fac].n);
	tb_jtenths("fill_ns", s->fill[fac]);
	tb_jtenths("drain_ns", s->drain[fac]);
	tb_jend();
}

static void tb_cost_fill(struct tb_costs *s, enum tb_fac fac)
{
	struct tb_cost *c = &s->c[fac];

	if (c->timers)
		s->fill[fac] = tb_per_op(tb_cost_run(c, OP_ARM, 0, c->n), c->n);
}

static void tb_cost_drain(struct tb_costs *s, enum tb_fac fac)
{
	struct tb_cost *c = &s->c[fac];

	if (c->timers)
		s->drain[fac] = tb_per_op(tb_cost_run(c, OP_CANCEL, 0, c->n),
					  c->n);
}

static void tb_costs_measure(struct tb_costs *s)
{
	struct tb_cost *c;
	unsigned int r, i;
	enum tb_fac fac;

	/* twheel-abs fills twheel's timers after twheel's drain */
	for (fac = 0; fac < NR_FAC; fac++)
		if (fac != FAC_TWHEEL_ABS)
			tb_cost_fill(s, fac);
	if (s->c[FAC_TWHEEL].timers)
		tb_wakeups("spread_over_hour", s->c[FAC_TWHEEL].n);
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NR_FAC; i++) {
			c = &s->c[(r + i) % NR_FAC];
			if (c->timers)
				tb_cost_round(c, r);
		}
	}
	for (fac = 0; fac < NR_FAC; fac++) {
		if (fac == FAC_TWHEEL_ABS)
			tb_cost_fill(s, fac);
		tb_cost_drain(s, fac);
		if (s->c[fac].timers)
			tb_fill_report(s, fac);
	}
}

static void tb_costs(u32 n)
{
	struct tb_costs *s = tb_costs_alloc(n);

	if (!s)
		return;
	tb_costs_measure(s);
	tb_costs_free(s);
}

/* ---- fires: lateness and bursts ---- */

/**
 * struct tb_item - a timer of a lateness or burst run
 * @tw:		the timer, for twheel
 * @tl:		the timer, for timer_list
 * @hr:		the timer, for hrtimer
 * @deadline:	when it should fire, CLOCK_MONOTONIC ns
 * @fired:	when it fired (lateness runs only), 0 if it did not
 */
struct tb_item {
	union {
		struct twheel_timer	tw;
		struct timer_list	tl;
		struct hrtimer		hr;
	};
	u64	deadline;
	u64	fired;
};

/**
 * struct tb_fire_run - the run in progress; one at a time
 * @count:	callbacks run so far
 * @n:		callbacks expected
 * @stamp_all:	record every fire time (lateness), not just when the first
 *		and the last callback ran (bursts)
 * @sparse:	wake the benchmark at every callback (sparse lateness)
 * @done:	set, with @last, by the @n-th callback
 * @first:	time of the first callback
 * @last:	time of the @n-th callback
 * @wq:		the benchmark waits here for @done
 */
static struct tb_fire_run {
	atomic_t		count;
	int			n;
	bool			stamp_all;
	bool			sparse;
	bool			done;
	u64			first;
	u64			last;
	wait_queue_head_t	wq;
} tb_run;

/*
 * A callback of the run. @at is the fire time the facility gave (twheel's,
 * lateness runs only), 0 for none: the clock is read then, but only when a
 * time is recorded. A burst times its first and last callback with the
 * clock: twheel's fire time is when the slot started to run.
 */
static void tb_fire_note(struct tb_item *it, u64 at)
{
	int count = atomic_inc_return(&tb_run.count);

	if (!tb_run.stamp_all && count != 1 && count != tb_run.n)
		return;
	if (!at)
		at = ktime_get_ns();
	it->fired = at;
	if (count == 1)
		tb_run.first = at;
	if (tb_run.sparse)
		wake_up(&tb_run.wq);
	if (count == tb_run.n) {
		tb_run.last = at;
		/* Publishes @last to tb_fire_wait()'s reader. */
		smp_store_release(&tb_run.done, true);
		wake_up(&tb_run.wq);
	}
}

static void tb_fire_tw(struct twheel_timer *t)
{
	tb_fire_note(container_of(t, struct tb_item, tw),
		     tb_run.stamp_all ? twheel_fire_time(t) : 0);
}

static void tb_fire_tl(struct timer_list *t)
{
	struct tb_item *it = timer_container_of(it, t, tl);

	tb_fire_note(it, 0);
}

static enum hrtimer_restart tb_fire_hr(struct hrtimer *t)
{
	tb_fire_note(container_of(t, struct tb_item, hr), 0);
	return HRTIMER_NORESTART;
}

static void tb_item_init(enum tb_fac fac, struct tb_item *it)
{
	switch (fac) {
	case FAC_TWHEEL:
		twheel_timer_init(&it->tw, tb_fire_tw, 0);
		break;
	case FAC_TIMER_LIST:
		timer_setup(&it->tl, tb_fire_tl, 0);
		break;
	default:
		hrtimer_setup(&it->hr, tb_fire_hr, CLOCK_MONOTONIC,
			      HRTIMER_MODE_ABS_SOFT);
		break;
	}
}

/* Arm @it for it->deadline; @jexp is the jiffies value for timer_list. */
static void tb_item_arm(enum tb_fac fac, struct tb_item *it,
			unsigned long jexp)
{
	switch (fac) {
	case FAC_TWHEEL:
		twheel_add(&it->tw, it->deadline, TWHEEL_ABS);
		break;
	case FAC_TIMER_LIST:
		mod_timer(&it->tl, jexp);
		break;
	default:
		hrtimer_start(&it->hr, ns_to_ktime(it->deadline),
			      HRTIMER_MODE_ABS_SOFT);
		break;
	}
}

static void tb_item_sync(enum tb_fac fac, struct tb_item *it)
{
	switch (fac) {
	case FAC_TWHEEL:
		twheel_cancel_sync(&it->tw);
		break;
	case FAC_TIMER_LIST:
		timer_shutdown_sync(&it->tl);
		break;
	default:
		hrtimer_cancel(&it->hr);
		break;
	}
}

static struct tb_item *tb_items_alloc(enum tb_fac fac, u32 n)
{
	struct tb_item *items = vzalloc(array_size(n, sizeof(*items)));
	u32 i;

	if (!items)
		return NULL;
	for (i = 0; i < n; i++) {
		tb_item_init(fac, items + i);
		if (!(i % CHUNK))
			cond_resched();
	}
	return items;
}

/* Start a run of @n callbacks; no timer of an earlier run is pending. */
static void tb_run_reset(u32 n, bool stamp_all)
{
	atomic_set(&tb_run.count, 0);
	tb_run.n = n;
	tb_run.stamp_all = stamp_all;
	tb_run.sparse = false;
	tb_run.done = false;
	tb_run.first = 0;
	tb_run.last = 0;
}

/* Cancel every timer and wait for running callbacks: then @items may go. */
static void tb_items_stop(enum tb_fac fac, struct tb_item *items, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		tb_item_sync(fac, items + i);
		if (!(i % CHUNK))
			cond_resched();
	}
}

/* Wait until all callbacks ran or @timeout_ns passed; true if all ran. */
static bool tb_fire_wait(u64 timeout_ns)
{
	/* Pairs with tb_fire_note(): @last is valid once @done is seen. */
	return wait_event_timeout(tb_run.wq, smp_load_acquire(&tb_run.done),
				  nsecs_to_jiffies(timeout_ns) + 1);
}

/*
 * The lateness histogram: bucket 0 holds fires less than 1 us late (early
 * ones too), then five buckets a decade, [1 us, 1.585 us), [1.585 us,
 * 2.512 us), ..., up to the last, from 6.31 s on; bench/report.py knows
 * the same edges.
 */
#define TB_HIST_DECADES	7
#define TB_HIST		(TB_HIST_DECADES * 5 + 1)
static const u32 tb_hist_mant[5] = { 1000, 1585, 2512, 3981, 6310 };

static unsigned int tb_hist_bucket(s64 late)
{
	unsigned int d, m;
	s64 scale = 1;

	for (d = 0; d < TB_HIST_DECADES; d++, scale *= 10)
		for (m = 0; m < ARRAY_SIZE(tb_hist_mant); m++)
			if (late < tb_hist_mant[m] * scale)
				return d * 5 + m;
	return TB_HIST - 1;
}

static void tb_lateness_report(enum tb_fac fac, const char *range,
			       unsigned int round, struct tb_item *items,
			       u32 n, s64 *late, int in_time)
{
	u32 i, fired = 0, early = 0, hist[TB_HIST] = {};

	for (i = 0; i < n; i++) {
		if (!items[i].fired)
			continue;
		late[fired] = items[i].fired - items[i].deadline;
		early += late[fired] < 0;
		hist[tb_hist_bucket(late[fired])]++;
		fired++;
	}
	tb_jbegin("lateness");
	tb_jstr("fac", fac_name[fac]);
	tb_jstr("range", range);
	tb_jround(round);
	tb_ju64("n", n);
	tb_ju64("fired", fired);
	if (in_time >= 0)
		tb_jadd(",\"armed_in_time\":%s", in_time ? "true" : "false");
	if (fired) {
		sort(late, fired, sizeof(*late), tb_cmp_s64, NULL);
		tb_ju64("early", early);
		tb_js64("min_ns", late[0]);
		tb_js64("p50_ns", tb_pct(late, fired, 50));
		tb_js64("p99_ns", tb_pct(late, fired, 99));
		tb_js64("max_ns", late[fired - 1]);
		tb_jadd(",\"hist\":[");
		for (i = 0; i < TB_HIST; i++)
			tb_jadd("%s%u", i ? "," : "", hist[i]);
		tb_jadd("]");
	}
	tb_jend();
}

/*
 * The flood's delays count from one origin this far out, so that each
 * facility has armed its timers before the first comes due and all carry
 * the same load: counted from each timer's arming, hrtimer's, which takes
 * seconds to arm 1M (rbtree inserts) where the wheels take half of one,
 * would come due over a longer stretch, partly while it still arms.
 */
#define TB_FLOOD_ARM_NS		(5 * NSEC_PER_SEC)

/*
 * One facility alone: @n timers with the delays @delay, then the report.
 * @sparse arms them one at a time, each when the one before has fired: a
 * timer alone in its wheel slot, as most are on a quiet system. @flood
 * counts the delays from one origin, TB_FLOOD_ARM_NS out, and reports
 * whether the arming was done before the first deadline; else each delay
 * counts from its timer's arming.
 */
static int tb_lateness_phase(enum tb_fac fac, const char *range,
			     unsigned int round, const u64 *delay, u64 hi,
			     u32 n, bool sparse, bool flood, s64 *late)
{
	struct tb_item *items = tb_items_alloc(fac, n);
	u64 now, first = U64_MAX, origin = 0;
	int in_time = -1;
	u32 i;

	if (!items)
		return -ENOMEM;
	tb_run_reset(n, true);
	tb_run.sparse = sparse;
	if (flood)
		origin = ktime_get_ns() + TB_FLOOD_ARM_NS;
	for (i = 0; i < n; i++) {
		now = ktime_get_ns();
		items[i].deadline = (origin ?: now) + delay[i];
		first = min(first, items[i].deadline);
		tb_item_arm(fac, items + i,
			    jiffies + tb_jiffies(items[i].deadline - now));
		if (sparse)
			wait_event_timeout(tb_run.wq,
					   atomic_read(&tb_run.count) > i,
					   nsecs_to_jiffies(hi + NSEC_PER_SEC));
		else if (!(i % CHUNK))
			cond_resched();
	}
	if (flood)
		in_time = ktime_get_ns() < first;
	if (!sparse)
		tb_fire_wait(hi + hi / 4 + 2 * NSEC_PER_SEC +
			     (flood ? TB_FLOOD_ARM_NS : 0));
	tb_items_stop(fac, items, n);
	tb_lateness_report(fac, range, round, items, n, late, in_time);
	vfree(items);
	return 0;
}

/*
 * Round @round of a lateness run: @n delays in [@lo, @hi), then each
 * facility alone with them, in turn, the order rotating with @round;
 * @sparse and @flood as tb_lateness_phase() takes them.
 */
static int tb_lateness(const char *range, u64 lo, u64 hi, u32 n,
		       bool sparse, bool flood, unsigned int round)
{
	u64 *delay = vmalloc(array_size(n, sizeof(*delay)));
	s64 *late = vmalloc(array_size(n, sizeof(*late)));
	unsigned int i;
	int ret = -ENOMEM;

	if (!delay || !late)
		goto out_free;
	for (i = 0; i < n; i++)
		delay[i] = tb_delay(lo, hi);
	ret = 0;
	for (i = 0; i < NR_FIRE_FAC && !ret; i++)
		ret = tb_lateness_phase((round + i) % NR_FIRE_FAC, range,
					round, delay, hi, n, sparse, flood,
					late);
out_free:
	vfree(late);
	vfree(delay);
	return ret;
}

static void tb_burst_report(enum tb_fac fac, u32 n, unsigned int round,
			    u64 deadline, u64 armed, bool all,
			    const struct twheel_stats *before)
{
	struct twheel_stats after;

	u64 span = all ? tb_run.last - tb_run.first : 0;
	u64 rate = span ? div64_u64((u64)(n - 1) * NSEC_PER_SEC, span) : 0;

	tb_jbegin("burst");
	tb_jstr("fac", fac_name[fac]);
	tb_ju64("n", n);
	tb_jround(round);
	tb_ju64("fired", atomic_read(&tb_run.count));
	tb_ju64("per_s", rate);
	tb_ju64("span_ns", span);
	tb_js64("first_late_ns", tb_run.first - deadline);
	if (all)
		tb_js64("last_late_ns", tb_run.last - deadline);
	tb_jadd(",\"armed_in_time\":%s", armed < deadline ? "true" : "false");
	if (fac == FAC_TWHEEL) {
		/* How the backlog ran: see "Bounded work" in twheel.rst. */
		tb_wheel_stats(&after);
		tb_ju64("wakeups", after.wakeups - before->wakeups);
		tb_ju64("slices", after.slices - before->slices);
		tb_ju64("deferred", after.deferred - before->deferred);
	}
	tb_jend();
}

/* @n timers due at one instant, far enough ahead to arm them all first. */
static int tb_burst(enum tb_fac fac, u32 n, unsigned int round)
{
	struct twheel_stats before;
	u64 now, deadline, armed;
	struct tb_item *items;
	unsigned long jexp;
	bool all;
	u32 i;

	if (!(burst_facs & BIT(fac)))
		return 0;
	items = tb_items_alloc(fac, n);
	if (!items)
		return -ENOMEM;
	tb_run_reset(n, false);
	now = ktime_get_ns();
	deadline = now + 500 * NSEC_PER_MSEC + (u64)n * 4 * NSEC_PER_USEC;
	jexp = jiffies + tb_jiffies(deadline - now);
	for (i = 0; i < n; i++) {
		items[i].deadline = deadline;
		tb_item_arm(fac, items + i, jexp);
		if (!(i % CHUNK))
			cond_resched();
	}
	armed = ktime_get_ns();
	tb_wheel_stats(&before);
	all = tb_fire_wait(deadline - armed + 30 * NSEC_PER_SEC);
	tb_items_stop(fac, items, n);
	tb_burst_report(fac, n, round, deadline, armed, all, &before);
	vfree(items);
	return 0;
}

/* ---- the whole run ---- */

/* Tenths of a ns per ktime_get_ns(): twheel and hrtimer read it per arm. */
static u64 tb_clock_cost(void)
{
	u64 t0, sink = 0;
	unsigned int i;

	t0 = ktime_get_ns();
	for (i = 0; i < CHUNK * 16; i++)
		sink += ktime_get_ns();
	barrier_data(&sink);
	return tb_per_op(ktime_get_ns() - t0, CHUNK * 16);
}

static void tb_env(void)
{
	enum tb_fac fac;

	tb_jbegin("env");
	tb_jstr("kernel", init_utsname()->release);
	tb_ju64("tick_ns", twheel_tick_ns());
	tb_ju64("hz", HZ);
	tb_ju64("cpu", raw_smp_processor_id());
	tb_ju64("cpus", num_online_cpus());
	tb_ju64("rounds", rounds);
	tb_ju64("seed", seed);
	tb_jtenths("clock_ns", tb_clock_cost());
	tb_jend();
	for (fac = 0; fac < NR_FAC; fac++) {
		tb_jbegin("size");
		tb_jstr("fac", fac_name[fac]);
		tb_ju64("bytes", fac_size[fac]);
		tb_jend();
	}
}

static int tb_all_costs(void)
{
	unsigned int ns[MAX_N], i;
	int count;

	count = tb_parse_list(n_list, ns, false);
	if (count < 0)
		return count;
	for (i = 0; i < count; i++)
		tb_costs(ns[i]);
	return 0;
}

/*
 * Round by round, so that each round's lateness runs and bursts see the
 * same stretch of the host; the facilities take turns within each.
 */
static int tb_all_fires(void)
{
	unsigned int ns[MAX_N], r, i, f;
	int count, ret = 0;

	count = tb_parse_list(burst_list, ns, false);
	if (count < 0)
		return count;
	for (r = 0; r < rounds && !ret; r++) {
		ret = tb_lateness("short", NSEC_PER_MSEC, 50 * NSEC_PER_MSEC,
				  lat_n, false, false, r);
		if (!ret)
			ret = tb_lateness("long", NSEC_PER_SEC,
					  5 * NSEC_PER_SEC, lat_n, false, false,
					  r);
		if (!ret)
			ret = tb_lateness("sparse", NSEC_PER_MSEC,
					  50 * NSEC_PER_MSEC, sparse_n, true,
					  false, r);
		if (!ret && flood_n && r < flood_rounds)
			ret = tb_lateness("flood", NSEC_PER_SEC,
					  11 * NSEC_PER_SEC, flood_n, false,
					  true, r);
		for (i = 0; i < count && !ret; i++)
			for (f = 0; f < NR_FIRE_FAC && !ret; f++)
				ret = tb_burst((r + f) % NR_FIRE_FAC, ns[i], r);
	}
	return ret;
}

static int __init tb_init(void)
{
	u64 start = ktime_get_ns();
	int ret;

	if (!rounds || rounds > MAX_ROUNDS || !probe_ops || !lat_n ||
	    !sparse_n || !wake_ms) {
		pr_err("rounds must be 1..%u; probe_ops, lat_n, sparse_n, wake_ms > 0\n",
		       MAX_ROUNDS);
		return -EINVAL;
	}
	prandom_seed_state(&tb_rnd, seed);
	init_waitqueue_head(&tb_run.wq);

	migrate_disable();
	tb_env();
	if (slack_only) {
		ret = tb_slack_all();
		goto out;
	}
	tb_wakeups_sparse();
	ret = tb_slack_all();
	if (!ret)
		ret = tb_all_costs();
	if (!ret)
		ret = tb_all_fires();
out:
	migrate_enable();

	pr_info("%s after %llu ms\n", ret ? "failed" : "done",
		div_u64(ktime_get_ns() - start, NSEC_PER_MSEC));
	return ret;
}

static void __exit tb_exit(void)
{
}

module_init(tb_init);
module_exit(tb_exit);

MODULE_AUTHOR("The twheel authors");
MODULE_DESCRIPTION("Benchmarks of twheel against timer_list and hrtimer");
MODULE_LICENSE("GPL");
