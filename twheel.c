// SPDX-License-Identifier: GPL-2.0
/*
 * twheel - a per-CPU hierarchical timing wheel with tick precision
 *
 * Copyright (C) 2026 The twheel authors
 *
 * The kernel's timer wheel (kernel/time/timer.c) trades precision for speed:
 * a timer is filed once, in a bucket whose width grows with its delay, and
 * fires at the end of that bucket, up to 12.5% late. hrtimers are exact but
 * cost a red-black tree insertion each. twheel sits between the two: O(1)
 * add, modify and cancel like the wheel, and every timer fires within one
 * tick after its deadline and never before it, like a coarse hrtimer.
 *
 * Geometry
 * --------
 *
 * Time is counted in ticks of CLOCK_MONOTONIC (the tick_us module parameter,
 * 1 ms by default, 100 us at the least). A deadline of D ns belongs to tick
 * E = DIV_ROUND_UP(D, tick). The wheel has LVL_DEPTH levels of LVL_SIZE
 * slots; a slot at level n spans LVL_GRAN(n) ticks. A timer is filed by
 * comparing E with the wheel clock @clk (the first tick not yet processed),
 * both read as base-64 numbers: the timer goes to the level of the highest
 * digit in which E and @clk differ, in the slot given by E's digit there.
 *
 * Level 0 therefore holds the timers due in the current 64-tick block,
 * level 1 those due later in the current 4096-tick block, and so on. The
 * slots are absolute, not relative to @clk, so a level never wraps: every
 * occupied slot of level n > 0 lies after @clk's own digit at that level.
 * When @clk enters a slot's span, the slot is cascaded: its timers are filed
 * again, each one at a lower level. A timer reaches level 0 before it fires
 * and fires at its exact tick; it is cascaded at most once per level it
 * starts above 0.
 *
 * With the default 1 ms tick:
 *
 * Level  Slot width   Deadlines held (relative to clk, at most)
 *  0        1 ms          64 ms
 *  1       64 ms        4.1 s
 *  2      4.1 s         4.4 min
 *  3      4.4 min       4.7 h
 *  4      4.7 h        12.4 days
 *  5     12.4 days      2.2 years
 *  6      2.2 years     139 years
 *  7      139 years     8900 years (beyond KTIME_MAX: 292 years)
 *
 * A delay d lands on level floor(log64(d)) or the one above it (when the
 * deadline is in a later block than @clk at that level). Eight levels cover
 * every deadline up to KTIME_MAX for any tick of 100 us or more, so there is
 * no overflow list and no circle counter: deadlines past KTIME_MAX are
 * refused with -ERANGE.
 *
 * Wakeups
 * -------
 *
 * Each CPU's wheel is driven by a pinned soft hrtimer programmed to the next
 * event: the first occupied slot of level 0, or the start of the first
 * occupied slot of a higher level (a cascade). Both are found from one u64
 * occupancy bitmap per level, so an idle wheel never wakes up and a sparse
 * one wakes only when there is work. Cancelling a timer does not reprogram
 * the hrtimer (the next wakeup may find nothing to do); cancelling the last
 * one does.
 *
 * Accuracy
 * --------
 *
 * The hrtimer fires at or after E * tick >= D, and only timers of ticks up
 * to the current one are run, so no timer fires early. A timer fires late by
 * less than one tick plus the softirq latency of the hrtimer, unless more
 * callbacks are due at once than half a tick can run (see RUN_BATCH): the
 * rest follow, in order, at the next ticks. Timers with the same tick fire
 * in the order they were armed: slots are FIFO lists and cascading keeps
 * their order, and two timers with the same tick are always filed in the
 * same slot because filing depends only on E and @clk.
 *
 * Callbacks run in softirq context (from the hrtimer), or in process context
 * on a per-CPU work item for TWHEEL_SLEEPABLE timers. As with timer_list,
 * twheel does not touch a timer once its callback has started, so the
 * callback may free it. A periodic timer is therefore re-armed just before
 * its callback runs: a fire delivers the latest of its deadlines that has
 * passed, counts the earlier ones it stands for as overruns, and files the
 * timer one period after the delivered deadline (no drift).
 *
 * Locking
 * -------
 *
 * Each wheel (struct twheel_base) has a raw spinlock taken with interrupts
 * off; every field of the base and every field of a timer except @function
 * is written under the lock of the base the timer belongs to (timer->cpu).
 * lock_timer_base() finds and locks that base and retries when a timer is
 * being moved (TWHEEL_F_MIGRATING). The lock is dropped around callbacks;
 * the base records the running timers (@running, one per context)
 * and a timer re-armed while it runs stays on that base, so that its
 * callbacks never run concurrently. Two bases are only locked together when
 * a dead CPU's timers are moved, the dead base nested inside the live one.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/smp.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "twheel.h"

#define CREATE_TRACE_POINTS
#include "twheel_trace.h"

/* Slots per level and levels: base-64 digits of the tick number. */
#define LVL_BITS	6
#define LVL_SIZE	BIT(LVL_BITS)
#define LVL_MASK	(LVL_SIZE - 1)
#define LVL_DEPTH	8
#define WHEEL_SIZE	(LVL_SIZE * LVL_DEPTH)

/* Level n: its slots start at LVL_OFFS(n) and each spans LVL_GRAN(n) ticks. */
#define LVL_SHIFT(n)	((n) * LVL_BITS)
#define LVL_GRAN(n)	(1ULL << LVL_SHIFT(n))
#define LVL_OFFS(n)	((n) * LVL_SIZE)

/* timer->idx of an expired TWHEEL_SLEEPABLE timer waiting for its worker. */
#define IDX_SLEEP	WHEEL_SIZE

/*
 * Bounded work: a run of the hrtimer stops calling callbacks once it has
 * spent half a tick (checked every RUN_BATCH timers) and goes on at the
 * next tick, so that the wheel's softirq never takes more than about half
 * of a CPU and tasks, RCU and other softirqs get the rest.
 */
#define RUN_BATCH	16

/* The tick bounds; eight levels reach KTIME_MAX from the smallest tick. */
#define TICK_MIN_US	100
#define TICK_MAX_US	USEC_PER_SEC

/* twheel's state bits in timer->flags, above the TWHEEL_INIT_FLAGS. */
#define TWHEEL_F_SHUTDOWN	0x00010000U	/* refuse all further arming */
#define TWHEEL_F_MIGRATING	0x00020000U	/* moving between bases */

/* __twheel_mod() options */
#define MOD_ADD		BIT(0)	/* fail with -EBUSY if pending */
#define MOD_REDUCE	BIT(1)	/* only ever move the deadline earlier */
#define MOD_ON_CPU	BIT(2)	/* move to the given CPU */

/* The contexts a base runs callbacks in: its hrtimer's softirq, its work. */
enum { RUN_SOFTIRQ, RUN_WORK, RUN_CONTEXTS };

/**
 * struct twheel_running - a callback in progress
 * @timer:	its timer, NULL if none
 * @at:		the time its slot ran, see twheel_fire_time()
 */
struct twheel_running {
	struct twheel_timer	*timer;
	u64			at;
};

/**
 * struct twheel_base - one CPU's wheel
 * @lock:		protects the base and the timers on it
 * @clk:		first tick not yet processed; pending ticks are >= @clk
 * @next_expiry:	tick the hrtimer is programmed for, U64_MAX for none
 * @cpu:		the CPU this base belongs to
 * @online:		false once @cpu is dead and its timers moved away
 * @in_run:		the hrtimer callback is processing the wheel
 * @kick_queued:	@kick is in flight to reprogram the hrtimer
 * @hrtimer:		drives the wheel; pinned to @cpu, soft (softirq)
 * @kick:		IPI that reprograms @hrtimer from another CPU
 * @work:		runs expired TWHEEL_SLEEPABLE timers
 * @expired:		expired timers the hrtimer has yet to run, FIFO
 * @sleep_list:		expired TWHEEL_SLEEPABLE timers, FIFO
 * @running:		the callbacks in progress, from the hrtimer and from @work
 * @waiters:		twheel_cancel_sync() callers waiting on this base
 * @stats:		counters for twheel_cpu_stats()
 * @pending_map:	occupied slots, one u64 per level
 * @vectors:		the slots, FIFO lists of timers
 */
struct twheel_base {
	raw_spinlock_t		lock;
	u64			clk;
	u64			next_expiry;
	unsigned int		cpu;
	bool			online;
	bool			in_run;
	bool			kick_queued;
	struct hrtimer		hrtimer;
	call_single_data_t	kick;
	struct work_struct	work;
	struct list_head	expired;
	struct list_head	sleep_list;
	struct twheel_running	running[RUN_CONTEXTS];
	unsigned int		waiters;
	struct twheel_stats	stats;
	u64			pending_map[LVL_DEPTH];
	struct list_head	vectors[WHEEL_SIZE];
} ____cacheline_aligned;

/* Dynamic: a wheel is larger than the per-CPU area reserved for modules. */
static struct twheel_base __percpu *twheel_bases;
static DECLARE_WAIT_QUEUE_HEAD(twheel_sync_wait);
static struct workqueue_struct *twheel_wq;
static enum cpuhp_state twheel_hp_state;
static struct dentry *twheel_debugfs;

static unsigned int tick_us = 1000;
module_param(tick_us, uint, 0444);
MODULE_PARM_DESC(tick_us, "Wheel tick in microseconds (100..1000000, default 1000)");

/* tick_us in nanoseconds; fixed at load. */
static u32 tick_ns __read_mostly;

/* The tick a deadline belongs to: the first tick boundary at or after it. */
static u64 ns_to_tick(u64 ns)
{
	return div_u64(ns + tick_ns - 1, tick_ns);
}

static u64 tick_now(void)
{
	return div_u64(ktime_get(), tick_ns);
}

static ktime_t tick_to_ktime(u64 tick)
{
	if (tick > div_u64(KTIME_MAX, tick_ns))
		return KTIME_MAX;
	return tick * tick_ns;
}

/**
 * twheel_calc_idx - the slot of a timer due at @tick on a wheel at @clk
 * @tick:	the timer's tick, >= @clk
 * @clk:	the wheel clock
 * @event:	where to store the tick at which the slot needs processing:
 *		@tick itself on level 0, the start of the slot's span above
 *
 * Return: the slot index, LVL_OFFS(level) + slot.
 */
unsigned int twheel_calc_idx(u64 tick, u64 clk, u64 *event)
{
	unsigned int lvl = 0;

	if (tick != clk)
		lvl = (fls64(tick ^ clk) - 1) / LVL_BITS;
	*event = tick & ~(LVL_GRAN(lvl) - 1);
	return LVL_OFFS(lvl) + ((tick >> LVL_SHIFT(lvl)) & LVL_MASK);
}

#if IS_ENABLED(CONFIG_KUNIT)
EXPORT_SYMBOL_NS_GPL(twheel_calc_idx, TWHEEL_KUNIT_NS);
#endif

/*
 * The next tick at which the wheel has work: the first occupied slot of
 * level 0, or the start of the first occupied slot above it, or @clk itself
 * when a slot that @clk has just entered still waits to be cascaded.
 */
static u64 twheel_next_event(struct twheel_base *base)
{
	u64 clk = base->clk, next = U64_MAX;
	unsigned int lvl;

	lockdep_assert_held(&base->lock);

	for (lvl = 0; lvl < LVL_DEPTH; lvl++) {
		u64 map = base->pending_map[lvl];
		unsigned int pos = (clk >> LVL_SHIFT(lvl)) & LVL_MASK;
		u64 event;

		if (!map)
			continue;
		/* Nothing is filed before @clk's own digit: see the essay. */
		WARN_ON_ONCE(map & (BIT_ULL(pos) - 1));
		event = clk & ~(LVL_GRAN(lvl + 1) - 1);
		event |= (u64)__ffs64(map) << LVL_SHIFT(lvl);
		next = min(next, max(event, clk));
	}
	return next;
}

/* The IPI handler of base->kick: program the hrtimer on its own CPU. */
static void twheel_kick_fn(void *info)
{
	struct twheel_base *base = info;

	raw_spin_lock(&base->lock);
	base->kick_queued = false;
	if (base->next_expiry != U64_MAX && !base->in_run)
		hrtimer_start(&base->hrtimer, tick_to_ktime(base->next_expiry),
			      HRTIMER_MODE_ABS_PINNED_SOFT);
	raw_spin_unlock(&base->lock);
}

/* Program the base's hrtimer for base->next_expiry, on the base's CPU. */
static void twheel_program(struct twheel_base *base)
{
	lockdep_assert_held(&base->lock);

	if (base->next_expiry == U64_MAX)
		return;
	if (base->cpu == smp_processor_id()) {
		hrtimer_start(&base->hrtimer, tick_to_ktime(base->next_expiry),
			      HRTIMER_MODE_ABS_PINNED_SOFT);
	} else if (!base->kick_queued) {
		base->kick_queued = true;
		if (smp_call_function_single_async(base->cpu, &base->kick))
			base->kick_queued = false;
	}
}

/* File @timer in its slot; returns the tick at which the slot is due. */
static u64 twheel_place(struct twheel_base *base, struct twheel_timer *timer)
{
	u64 tick = max(ns_to_tick(timer->expires), base->clk);
	unsigned int idx;
	u64 event;

	idx = twheel_calc_idx(tick, base->clk, &event);
	list_add_tail(&timer->entry, base->vectors + idx);
	base->pending_map[idx / LVL_SIZE] |= BIT_ULL(idx % LVL_SIZE);
	base->stats.level_pending[idx / LVL_SIZE]++;
	timer->idx = idx;
	return event;
}

static void twheel_enqueue(struct twheel_base *base, struct twheel_timer *timer)
{
	u64 event;

	lockdep_assert_held(&base->lock);

	event = twheel_place(base, timer);
	trace_twheel_arm(timer, timer->idx / LVL_SIZE);
	base->stats.pending++;
	if (event < base->next_expiry) {
		base->next_expiry = event;
		if (!base->in_run)
			twheel_program(base);
	}
}

/* Take @timer off its list, leaving it pending to twheel_pending(). */
static void twheel_unlink(struct twheel_base *base, struct twheel_timer *timer)
{
	struct list_head *entry = &timer->entry;
	unsigned int idx = timer->idx;

	lockdep_assert_held(&base->lock);

	if (idx < WHEEL_SIZE) {
		/* The last timer of a slot clears its bit; an expired list has none. */
		if (entry->next == entry->prev &&
		    entry->next == base->vectors + idx)
			base->pending_map[idx / LVL_SIZE] &= ~BIT_ULL(idx % LVL_SIZE);
		base->stats.level_pending[idx / LVL_SIZE]--;
	}
	__list_del_entry(entry);
	base->stats.pending--;
}

static void twheel_detach(struct twheel_base *base, struct twheel_timer *timer)
{
	twheel_unlink(base, timer);
	WRITE_ONCE(timer->entry.next, NULL);
}

/* Returns 1 if @timer was pending and is no longer, 0 if it was not. */
static int twheel_detach_if_pending(struct twheel_base *base,
				    struct twheel_timer *timer)
{
	if (!twheel_pending(timer))
		return 0;
	twheel_detach(base, timer);
	trace_twheel_cancel(timer);
	base->stats.cancelled++;
	/* The wheel is empty: stop its hrtimer rather than wake for nothing. */
	if (!base->stats.pending && !base->in_run) {
		base->next_expiry = U64_MAX;
		hrtimer_try_to_cancel(&base->hrtimer);
	}
	return 1;
}

static struct twheel_base *lock_timer_base(struct twheel_timer *timer,
					   unsigned long *flags)
	__acquires(&base->lock)
{
	for (;;) {
		unsigned int cpu = READ_ONCE(timer->cpu);
		struct twheel_base *base = per_cpu_ptr(twheel_bases, cpu);

		if (!(READ_ONCE(timer->flags) & TWHEEL_F_MIGRATING)) {
			raw_spin_lock_irqsave(&base->lock, *flags);
			if (timer->cpu == cpu &&
			    !(timer->flags & TWHEEL_F_MIGRATING))
				return base;
			raw_spin_unlock_irqrestore(&base->lock, *flags);
		}
		cpu_relax();
	}
}

/*
 * Move an idle @timer from @base, locked, to @new_base; returns with the
 * new base locked. Lockers of the timer spin on TWHEEL_F_MIGRATING meanwhile.
 */
static struct twheel_base *twheel_switch_base(struct twheel_base *base,
					      struct twheel_base *new_base,
					      struct twheel_timer *timer)
	__releases(&base->lock) __acquires(&new_base->lock)
{
	WRITE_ONCE(timer->flags, timer->flags | TWHEEL_F_MIGRATING);
	raw_spin_unlock(&base->lock);
	raw_spin_lock(&new_base->lock);
	/* Lost a race with CPU death: take the current CPU, which is alive. */
	if (!new_base->online) {
		raw_spin_unlock(&new_base->lock);
		new_base = this_cpu_ptr(twheel_bases);
		raw_spin_lock(&new_base->lock);
	}
	WRITE_ONCE(timer->cpu, new_base->cpu);
	WRITE_ONCE(timer->flags, timer->flags & ~TWHEEL_F_MIGRATING);
	return new_base;
}

static void twheel_account_lateness(struct twheel_base *base,
				    struct twheel_timer *timer, u64 now)
{
	unsigned int bucket = 0;
	u64 ticks;

	trace_twheel_fire(timer, now);
	base->stats.fired++;
	if (unlikely(now < timer->fired)) {
		base->stats.early++;
		return;
	}
	ticks = div_u64(now - timer->fired, tick_ns);
	if (ticks)
		bucket = min_t(unsigned int, ilog2(ticks) + 1,
			       TWHEEL_LATE_BUCKETS - 1);
	base->stats.lateness[bucket]++;
}

/*
 * Account a fire of @timer, detached: the deadline it delivers, its
 * overruns, and for a periodic timer the re-arm one period later.
 */
static void twheel_account_fire(struct twheel_base *base,
				struct twheel_timer *timer, u64 now)
{
	u64 missed = 0, next;

	timer->fired = timer->expires;
	if (timer->period && timer->left) {
		if (timer->left != TWHEEL_FOREVER)
			timer->left--;
		/* Deliver the latest deadline passed; count the ones before. */
		if (now > timer->expires) {
			missed = div64_u64(now - timer->expires, timer->period);
			timer->fired += missed * timer->period;
		}
		if (timer->left &&
		    !check_add_overflow(timer->fired, timer->period, &next) &&
		    next <= KTIME_MAX) {
			timer->expires = next;
			twheel_enqueue(base, timer);
		}
	}
	timer->overruns = min_t(u64, missed, U32_MAX);
	twheel_account_lateness(base, timer, now);
}

/*
 * Run the callback of an expired, detached @timer at time @now in context
 * @ctx (RUN_SOFTIRQ or RUN_WORK). Called and returns with @base->lock held,
 * interrupts off; drops it around the callback, after which @timer is not
 * touched.
 */
static void twheel_fire(struct twheel_base *base, struct twheel_timer *timer,
			unsigned int ctx, u64 now)
	__must_hold(&base->lock)
{
	struct twheel_running *running = &base->running[ctx];
	twheel_fn_t fn = timer->function;

	twheel_account_fire(base, timer, now);
	running->at = now;
	WRITE_ONCE(running->timer, timer);
	raw_spin_unlock_irq(&base->lock);

	fn(timer);

	raw_spin_lock_irq(&base->lock);
	WRITE_ONCE(running->timer, NULL);
	if (base->waiters) {
		raw_spin_unlock_irq(&base->lock);
		wake_up_all(&twheel_sync_wait);
		raw_spin_lock_irq(&base->lock);
	}
}

/*
 * Run or hand over the expired timers, in FIFO order, until they are done
 * (returns true) or the run has used up its budget (returns false).
 */
static bool twheel_expire(struct twheel_base *base, u64 budget_end)
	__must_hold(&base->lock)
{
	/* One clock read per batch: callbacks see it as their fire time. */
	u64 now = ktime_get();
	bool queue_work = false;
	unsigned int n = 0;

	while (!list_empty(&base->expired)) {
		struct twheel_timer *timer;

		if (!(++n % RUN_BATCH)) {
			now = ktime_get();
			if (now > budget_end)
				break;
		}
		timer = list_first_entry(&base->expired, struct twheel_timer,
					 entry);
		twheel_detach(base, timer);
		if (timer->flags & TWHEEL_SLEEPABLE) {
			list_add_tail(&timer->entry, &base->sleep_list);
			timer->idx = IDX_SLEEP;
			base->stats.pending++;
			queue_work = true;
			continue;
		}
		twheel_fire(base, timer, RUN_SOFTIRQ, now);
	}
	if (queue_work)
		queue_work_on(base->cpu, twheel_wq, &base->work);
	return list_empty(&base->expired);
}

/* @clk has entered the span of slots at higher levels: file their timers lower. */
static void twheel_cascade(struct twheel_base *base)
{
	unsigned int lvl;

	for (lvl = LVL_DEPTH - 1; lvl > 0; lvl--) {
		unsigned int slot = (base->clk >> LVL_SHIFT(lvl)) & LVL_MASK;
		struct twheel_timer *timer, *tmp;
		unsigned int count = 0;
		LIST_HEAD(list);

		if (!(base->pending_map[lvl] & BIT_ULL(slot)))
			continue;
		base->pending_map[lvl] &= ~BIT_ULL(slot);
		list_splice_init(base->vectors + LVL_OFFS(lvl) + slot, &list);
		list_for_each_entry_safe(timer, tmp, &list, entry) {
			twheel_place(base, timer);
			count++;
		}
		base->stats.level_pending[lvl] -= count;
		base->stats.cascaded += count;
		trace_twheel_cascade(base->cpu, lvl, slot, count);
	}
}

/*
 * Process the events of the wheel up to and including tick @now, within
 * the run's budget: the expired timers left over are run first next time.
 */
static void twheel_run(struct twheel_base *base, u64 now)
	__must_hold(&base->lock)
{
	u64 next, budget_end = ktime_get() + tick_ns / 2;

	if (!twheel_expire(base, budget_end))
		return;
	while ((next = twheel_next_event(base)) <= now) {
		unsigned int slot = next & LVL_MASK;

		base->clk = next;
		twheel_cascade(base);
		if (base->pending_map[0] & BIT_ULL(slot)) {
			base->pending_map[0] &= ~BIT_ULL(slot);
			list_splice_tail_init(base->vectors + slot,
					      &base->expired);
		}
		/* Timers armed from the callbacks go no earlier than the next tick. */
		base->clk = next + 1;
		if (!twheel_expire(base, budget_end))
			return;
	}
	base->clk = max(base->clk, now);
}

static enum hrtimer_restart twheel_hrtimer_fn(struct hrtimer *hrtimer)
{
	struct twheel_base *base = container_of(hrtimer, struct twheel_base,
						hrtimer);

	raw_spin_lock_irq(&base->lock);
	base->stats.wakeups++;
	base->in_run = true;
	twheel_run(base, tick_now());
	base->in_run = false;
	if (list_empty(&base->expired)) {
		base->next_expiry = twheel_next_event(base);
		twheel_program(base);
	} else {
		/*
		 * Over budget: leave the CPU to others until the next tick.
		 * Work is due at @clk already, so twheel_forward() must not
		 * move the clock past it meanwhile.
		 */
		base->next_expiry = base->clk;
		hrtimer_start(&base->hrtimer, tick_to_ktime(tick_now() + 1),
			      HRTIMER_MODE_ABS_PINNED_SOFT);
	}
	raw_spin_unlock_irq(&base->lock);
	return HRTIMER_NORESTART;
}

/* Run the expired TWHEEL_SLEEPABLE timers of a base, in process context. */
static void twheel_work_fn(struct work_struct *work)
{
	struct twheel_base *base = container_of(work, struct twheel_base, work);

	raw_spin_lock_irq(&base->lock);
	while (!list_empty(&base->sleep_list)) {
		struct twheel_timer *timer;

		timer = list_first_entry(&base->sleep_list, struct twheel_timer,
					 entry);
		twheel_detach(base, timer);
		twheel_fire(base, timer, RUN_WORK, ktime_get());
		raw_spin_unlock_irq(&base->lock);
		cond_resched();
		raw_spin_lock_irq(&base->lock);
	}
	raw_spin_unlock_irq(&base->lock);
}

static bool twheel_running(struct twheel_base *base,
			   const struct twheel_timer *timer)
{
	lockdep_assert_held(&base->lock);

	return base->running[RUN_SOFTIRQ].timer == timer ||
	       base->running[RUN_WORK].timer == timer;
}

/*
 * The base a (re-)armed timer goes to: the requested CPU, else the current
 * one for an idle unpinned timer, else the base it is on. A running timer
 * stays where it is so that its callbacks are serialized. Bases of dead CPUs
 * are never chosen.
 */
static struct twheel_base *twheel_target(struct twheel_base *base,
					 struct twheel_timer *timer,
					 unsigned int opts, unsigned int cpu)
{
	if (!twheel_running(base, timer)) {
		if (opts & MOD_ON_CPU)
			base = per_cpu_ptr(twheel_bases, cpu);
		else if (!(timer->flags & TWHEEL_PINNED))
			base = this_cpu_ptr(twheel_bases);
	}
	/* Read without the lock: a base only goes offline with its CPU dead. */
	if (!READ_ONCE(base->online))
		base = this_cpu_ptr(twheel_bases);
	return base;
}

/* Move the wheel clock up to tick @now when nothing is due in between. */
static void twheel_forward(struct twheel_base *base, u64 now)
{
	if (!base->in_run && base->clk < now && base->next_expiry > now)
		base->clk = now;
}

static int __twheel_mod(struct twheel_timer *timer, u64 expires, u64 now,
			unsigned int opts, unsigned int cpu)
{
	struct twheel_base *base, *new_base;
	unsigned long flags;
	int ret;

	base = lock_timer_base(timer, &flags);
	if (timer->flags & TWHEEL_F_SHUTDOWN) {
		ret = -ESHUTDOWN;
		goto out_unlock;
	}
	ret = twheel_pending(timer);
	if (ret && (opts & MOD_ADD)) {
		ret = -EBUSY;
		goto out_unlock;
	}
	if (ret && (opts & MOD_REDUCE) && timer->expires <= expires)
		goto out_unlock;
	if (ret)
		twheel_detach(base, timer);
	timer->expires = expires;

	new_base = twheel_target(base, timer, opts, cpu);
	if (new_base != base)
		base = twheel_switch_base(base, new_base, timer);
	twheel_forward(base, div_u64(now, tick_ns));
	twheel_enqueue(base, timer);
out_unlock:
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return ret;
}

/* Turn @expires into an absolute deadline; -ERANGE past KTIME_MAX. */
static int twheel_abs(ktime_t expires, enum twheel_mode mode, u64 now,
		      u64 *abs)
{
	if (expires < 0 || mode > TWHEEL_ABS)
		return -EINVAL;
	if (mode == TWHEEL_ABS) {
		*abs = expires;
		return 0;
	}
	if (check_add_overflow(now, (u64)expires, abs) || *abs > KTIME_MAX)
		return -ERANGE;
	return 0;
}

static int twheel_mod_opts(struct twheel_timer *timer, ktime_t expires,
			   enum twheel_mode mode, unsigned int opts,
			   unsigned int cpu)
{
	u64 abs, now;
	int ret;

	if (WARN_ONCE(!timer->function, "twheel: timer %p not initialized\n",
		      timer))
		return -EINVAL;
	/*
	 * A relative deadline needs the exact time, or it could fire early.
	 * An absolute one only forwards the wheel clock, for which a lower
	 * bound that costs no clocksource read will do.
	 */
	now = mode == TWHEEL_REL ? ktime_get() : ktime_get_coarse();
	ret = twheel_abs(expires, mode, now, &abs);
	if (ret)
		return ret;
	return __twheel_mod(timer, abs, now, opts, cpu);
}

/**
 * twheel_timer_init - initialize a timer before its first use
 * @timer:	the timer, usually embedded in the caller's object
 * @function:	the callback; it receives @timer (use container_of())
 * @flags:	%TWHEEL_PINNED: once added, the timer stays on its CPU (else
 *		every arming of an idle timer moves it to the current CPU);
 *		%TWHEEL_SLEEPABLE: @function runs in process context on a
 *		workqueue and may sleep (else it runs in softirq context)
 *
 * twheel does not touch the timer once @function has started, so
 * @function may free it (a periodic one after twheel_cancel()); elsewhere,
 * free a timer after twheel_cancel_sync() or twheel_shutdown_sync(). Unknown
 * @flags are ignored with a warning. @timer must not be pending.
 */
void twheel_timer_init(struct twheel_timer *timer, twheel_fn_t function,
		       u32 flags)
{
	WARN_ONCE(flags & ~TWHEEL_INIT_FLAGS, "twheel: unknown flags %#x\n",
		  flags & ~TWHEEL_INIT_FLAGS);
	memset(timer, 0, sizeof(*timer));
	timer->function = function;
	timer->flags = flags & TWHEEL_INIT_FLAGS;
	timer->cpu = raw_smp_processor_id();
}
EXPORT_SYMBOL_GPL(twheel_timer_init);

/**
 * twheel_add - arm an idle timer
 * @timer:	an initialized timer that is not pending
 * @expires:	the deadline, read as @mode says
 * @mode:	%TWHEEL_REL (ns from now) or %TWHEEL_ABS (CLOCK_MONOTONIC ns)
 *
 * The timer fires on the current CPU's wheel (or its own CPU's if it is
 * %TWHEEL_PINNED) within one tick after the deadline, never before it. A
 * deadline in the past fires at once. Any context; may be called from the
 * timer's own callback.
 *
 * Return:
 * * 0		- armed
 * * -EBUSY	- @timer is already pending; nothing changed
 * * -ERANGE	- the deadline is beyond KTIME_MAX
 * * -EINVAL	- negative @expires, unknown @mode or uninitialized @timer
 * * -ESHUTDOWN	- @timer was shut down with twheel_shutdown_sync()
 */
int twheel_add(struct twheel_timer *timer, ktime_t expires,
	       enum twheel_mode mode)
{
	return twheel_mod_opts(timer, expires, mode, MOD_ADD, 0);
}
EXPORT_SYMBOL_GPL(twheel_add);

/**
 * twheel_add_on - arm an idle timer on a given CPU's wheel
 * @timer:	an initialized timer that is not pending
 * @expires:	the deadline, read as @mode says
 * @mode:	%TWHEEL_REL or %TWHEEL_ABS
 * @cpu:	the CPU whose wheel fires the timer
 *
 * As twheel_add(), but the callback runs on @cpu (while @cpu is online: a
 * CPU going offline hands its timers to an online one). A running timer
 * stays on the CPU it runs on. Any context.
 *
 * Return: as twheel_add(); -EINVAL also for a CPU that is not possible.
 */
int twheel_add_on(struct twheel_timer *timer, ktime_t expires,
		  enum twheel_mode mode, unsigned int cpu)
{
	if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return -EINVAL;
	return twheel_mod_opts(timer, expires, mode, MOD_ADD | MOD_ON_CPU, cpu);
}
EXPORT_SYMBOL_GPL(twheel_add_on);

/**
 * twheel_mod - arm a timer, pending or not, for a new deadline
 * @timer:	an initialized timer
 * @expires:	the deadline, read as @mode says
 * @mode:	%TWHEEL_REL or %TWHEEL_ABS
 *
 * Equivalent to twheel_cancel() followed by twheel_add(), but atomic and
 * O(1). Re-arming a periodic timer from its own callback replaces the
 * periodic re-arm of that fire. Any context.
 *
 * Return: 1 if @timer was pending, 0 if it was not; or -ERANGE, -EINVAL,
 * -ESHUTDOWN as for twheel_add(), in which case nothing changed.
 */
int twheel_mod(struct twheel_timer *timer, ktime_t expires,
	       enum twheel_mode mode)
{
	return twheel_mod_opts(timer, expires, mode, 0, 0);
}
EXPORT_SYMBOL_GPL(twheel_mod);

/**
 * twheel_reduce - move a timer's deadline earlier, never later
 * @timer:	an initialized timer
 * @expires:	the deadline, read as @mode says
 * @mode:	%TWHEEL_REL or %TWHEEL_ABS
 *
 * A pending timer whose deadline is already at or before @expires is left
 * alone; otherwise this is twheel_mod(). Any context.
 *
 * Return: as twheel_mod().
 */
int twheel_reduce(struct twheel_timer *timer, ktime_t expires,
		  enum twheel_mode mode)
{
	return twheel_mod_opts(timer, expires, mode, MOD_REDUCE, 0);
}
EXPORT_SYMBOL_GPL(twheel_reduce);

/**
 * twheel_set_period - make a timer periodic, or one-shot again
 * @timer:	an initialized timer
 * @period_ns:	time between deadlines, at least one tick; 0 for one-shot
 * @count:	number of callbacks still to run, at least 1, or
 *		%TWHEEL_FOREVER
 *
 * Takes effect at the timer's next fire: each fire re-arms the timer at the
 * delivered deadline plus @period_ns, until @count callbacks have run.
 * When a fire comes late by whole periods, it delivers the latest deadline
 * that has passed, and twheel_overruns() counts the earlier ones, which do
 * not use up @count: missed deadlines never run one after another. A
 * periodic timer is pending again while its callback runs; the callback
 * stops it with twheel_cancel() or re-arms it with twheel_mod(). Any
 * context.
 *
 * Return: 0, or -EINVAL for a period below one tick or a zero @count.
 */
int twheel_set_period(struct twheel_timer *timer, u64 period_ns, u32 count)
{
	struct twheel_base *base;
	unsigned long flags;

	if (period_ns && (period_ns < tick_ns || !count))
		return -EINVAL;

	base = lock_timer_base(timer, &flags);
	timer->period = period_ns;
	timer->left = period_ns ? count : 0;
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return 0;
}
EXPORT_SYMBOL_GPL(twheel_set_period);

/**
 * twheel_cancel - deactivate a timer without waiting
 * @timer:	an initialized timer
 *
 * Removes a pending timer, a periodic one included. Does not wait for a
 * running callback: see twheel_cancel_sync(). Any context, including the
 * timer's own callback.
 *
 * Return:
 * * 1		- @timer was pending and is now cancelled
 * * 0		- @timer was not pending
 * * -EBUSY	- the callback is running right now (a periodic timer's
 *		  next fire, pending meanwhile, has still been cancelled)
 */
int twheel_cancel(struct twheel_timer *timer)
{
	struct twheel_base *base;
	unsigned long flags;
	int ret;

	base = lock_timer_base(timer, &flags);
	ret = twheel_detach_if_pending(base, timer);
	if (twheel_running(base, timer))
		ret = -EBUSY;
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(twheel_cancel);

/*
 * Cancel @timer; if its callback is running, return its base (with our
 * waiter counted) in *@wait. With @shutdown, refuse every later arming.
 */
static int twheel_cancel_or_wait(struct twheel_timer *timer, bool shutdown,
				 struct twheel_base **wait)
{
	struct twheel_base *base;
	unsigned long flags;
	int ret;

	*wait = NULL;
	base = lock_timer_base(timer, &flags);
	if (shutdown)
		timer->flags |= TWHEEL_F_SHUTDOWN;
	ret = twheel_detach_if_pending(base, timer);
	if (WARN_ON_ONCE(base->running[RUN_WORK].timer == timer &&
			 current_work() == &base->work)) {
		/* Waiting for ourselves would never end. */
		ret = -EDEADLK;
	} else if (twheel_running(base, timer)) {
		base->waiters++;
		*wait = base;
	}
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return ret;
}

static bool twheel_done_running(struct twheel_base *base,
				struct twheel_timer *timer)
{
	/* Lockless: twheel_fire() clears these before it wakes us. */
	return READ_ONCE(base->running[RUN_SOFTIRQ].timer) != timer &&
	       READ_ONCE(base->running[RUN_WORK].timer) != timer;
}

static int __twheel_cancel_sync(struct twheel_timer *timer, bool shutdown)
{
	struct twheel_base *base;
	int ret = 0, r;

	might_sleep();
	do {
		r = twheel_cancel_or_wait(timer, shutdown, &base);
		if (r < 0)
			return r;
		ret |= r;
		if (base) {
			wait_event(twheel_sync_wait,
				   twheel_done_running(base, timer));
			raw_spin_lock_irq(&base->lock);
			base->waiters--;
			raw_spin_unlock_irq(&base->lock);
		}
	} while (base);
	return ret;
}

/**
 * twheel_cancel_sync - deactivate a timer and wait for its callback
 * @timer:	an initialized timer
 *
 * On return @timer is not pending and its callback is not running, even if
 * the callback re-armed the timer meanwhile. The caller must keep others
 * from re-arming it.
 *
 * Context: process context; may sleep. Must not be called from the timer's
 * own callback, nor while holding a lock that the callback takes::
 *
 *   CPU0                             CPU1
 *   ----                             ----
 *   mutex_lock(&m);
 *                                    <callback>
 *   twheel_cancel_sync(t);             mutex_lock(&m);  <- waits for CPU0
 *   <- waits for the callback
 *
 * Return: 1 if @timer was pending, 0 if it was not; -EDEADLK (with a
 * warning) when called from @timer's own sleepable callback.
 */
int twheel_cancel_sync(struct twheel_timer *timer)
{
	return __twheel_cancel_sync(timer, false);
}
EXPORT_SYMBOL_GPL(twheel_cancel_sync);

/**
 * twheel_shutdown_sync - cancel a timer for good, for teardown
 * @timer:	an initialized timer
 *
 * As twheel_cancel_sync(), and every later twheel_add(), twheel_mod() or
 * twheel_reduce() of @timer, including one from its running callback, fails
 * with -ESHUTDOWN. Re-initialize the timer to use it again.
 *
 * Context: process context; may sleep. See twheel_cancel_sync().
 *
 * Return: as twheel_cancel_sync().
 */
int twheel_shutdown_sync(struct twheel_timer *timer)
{
	return __twheel_cancel_sync(timer, true);
}
EXPORT_SYMBOL_GPL(twheel_shutdown_sync);

/**
 * twheel_remaining - time left until a timer's deadline
 * @timer:	an initialized timer
 *
 * Any context.
 *
 * Return: nanoseconds until the deadline (0 if it has passed) of a pending
 * timer, or -ENOENT if @timer is not pending.
 */
s64 twheel_remaining(struct twheel_timer *timer)
{
	struct twheel_base *base;
	unsigned long flags;
	s64 ret = -ENOENT;

	base = lock_timer_base(timer, &flags);
	if (twheel_pending(timer))
		ret = max_t(s64, timer->expires - ktime_get(), 0);
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(twheel_remaining);

/**
 * twheel_fire_time - when the wheel fired the running callback's timer
 * @timer:	the timer whose callback is running, called from that callback
 *
 * The wheel reads the clock once for all the timers of a slot, as it
 * starts to run them: that time, at or after twheel_fired_deadline(), is the
 * fire time twheel accounts lateness with (debugfs, tracepoints). It saves
 * a callback that reports when it fired a clocksource read of its own.
 *
 * Return: the fire time in CLOCK_MONOTONIC nanoseconds, or the current
 * time if @timer's callback is not running on its wheel (it was moved).
 */
u64 twheel_fire_time(const struct twheel_timer *timer)
{
	struct twheel_base *base = per_cpu_ptr(twheel_bases, READ_ONCE(timer->cpu));
	unsigned int ctx;

	/* Our own callback's entry: stable until the callback returns. */
	for (ctx = 0; ctx < RUN_CONTEXTS; ctx++)
		if (READ_ONCE(base->running[ctx].timer) == timer)
			return base->running[ctx].at;
	return ktime_get();
}
EXPORT_SYMBOL_GPL(twheel_fire_time);

/**
 * twheel_tick_ns - the length of a wheel tick
 *
 * Return: the tick in nanoseconds, as set by the tick_us module parameter:
 * the precision of every twheel timer.
 */
u64 twheel_tick_ns(void)
{
	return tick_ns;
}
EXPORT_SYMBOL_GPL(twheel_tick_ns);

/**
 * twheel_cpu_stats - a snapshot of one CPU's wheel
 * @cpu:	a possible CPU
 * @stats:	where to store the counters
 *
 * Any context.
 *
 * Return: 0, or -EINVAL if @cpu is not a possible CPU.
 */
int twheel_cpu_stats(unsigned int cpu, struct twheel_stats *stats)
{
	struct twheel_base *base;
	unsigned long flags;

	if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return -EINVAL;
	base = per_cpu_ptr(twheel_bases, cpu);
	raw_spin_lock_irqsave(&base->lock, flags);
	*stats = base->stats;
	stats->hrtimer_armed = hrtimer_active(&base->hrtimer);
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return 0;
}
EXPORT_SYMBOL_GPL(twheel_cpu_stats);

/*
 * debugfs twheel/stats: one block of lines per possible CPU. Lateness is
 * counted in buckets of ticks: <1, 1, 2-3, 4-7, ..., 64 and more.
 */
static void twheel_show_u32s(struct seq_file *m, const char *name,
			     const u32 *v, unsigned int n)
{
	unsigned int i;

	seq_printf(m, " %s=", name);
	for (i = 0; i < n; i++)
		seq_printf(m, "%s%u", i ? "," : "", v[i]);
}

static int twheel_stats_show(struct seq_file *m, void *v)
{
	struct twheel_stats st;
	unsigned int cpu, i;

	seq_printf(m, "tick_ns %u\n", tick_ns);
	for_each_possible_cpu(cpu) {
		twheel_cpu_stats(cpu, &st);
		seq_printf(m, "cpu%u pending=%llu fired=%llu cascaded=%llu cancelled=%llu wakeups=%llu early=%llu hrtimer=%d\n",
			   cpu, st.pending, st.fired, st.cascaded, st.cancelled,
			   st.wakeups, st.early, st.hrtimer_armed);
		seq_printf(m, "cpu%u", cpu);
		twheel_show_u32s(m, "levels", st.level_pending,
				 TWHEEL_STATS_LEVELS);
		seq_puts(m, " lateness=");
		for (i = 0; i < TWHEEL_LATE_BUCKETS; i++)
			seq_printf(m, "%s%llu", i ? "," : "", st.lateness[i]);
		seq_putc(m, '\n');
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(twheel_stats);

static int twheel_cpu_prepare(unsigned int cpu)
{
	struct twheel_base *base = per_cpu_ptr(twheel_bases, cpu);

	raw_spin_lock_irq(&base->lock);
	base->clk = tick_now();
	base->next_expiry = U64_MAX;
	WRITE_ONCE(base->online, true);
	raw_spin_unlock_irq(&base->lock);
	return 0;
}

/* Move the timers of @head, on a dead CPU's @old, to @new; still pending. */
static void twheel_move_list(struct twheel_base *old, struct twheel_base *new,
			     struct list_head *head)
{
	while (!list_empty(head)) {
		struct twheel_timer *timer;

		timer = list_first_entry(head, struct twheel_timer, entry);
		twheel_unlink(old, timer);
		WRITE_ONCE(timer->cpu, new->cpu);
		twheel_enqueue(new, timer);
	}
}

/* @cpu is dead: move its timers, expired ones first, to this CPU. */
static int twheel_cpu_dead(unsigned int cpu)
{
	struct twheel_base *old = per_cpu_ptr(twheel_bases, cpu);
	struct twheel_base *new;
	unsigned int idx;

	new = get_cpu_ptr(twheel_bases);
	raw_spin_lock_irq(&new->lock);
	raw_spin_lock_nested(&old->lock, SINGLE_DEPTH_NESTING);
	WRITE_ONCE(old->online, false);
	twheel_forward(new, tick_now());
	twheel_move_list(old, new, &old->expired);
	twheel_move_list(old, new, &old->sleep_list);
	for (idx = 0; idx < WHEEL_SIZE; idx++)
		twheel_move_list(old, new, old->vectors + idx);
	old->next_expiry = U64_MAX;
	raw_spin_unlock(&old->lock);
	raw_spin_unlock_irq(&new->lock);
	put_cpu_ptr(twheel_bases);
	/*
	 * hrtimers_cpu_dying() has moved the dead CPU's hrtimer, still queued
	 * for the old next event, to a live CPU, where it would run this empty
	 * wheel for nothing, or, once @cpu is back, run its timers on the
	 * wrong CPU. Nothing re-arms it now: twheel_program() of a dead base
	 * only kicks the dead CPU, which fails. Wait for a running callback
	 * (it takes old->lock, hence outside it).
	 */
	hrtimer_cancel(&old->hrtimer);
	return 0;
}

static void twheel_base_init(struct twheel_base *base, unsigned int cpu)
{
	unsigned int idx;

	raw_spin_lock_init(&base->lock);
	base->cpu = cpu;
	base->next_expiry = U64_MAX;
	for (idx = 0; idx < WHEEL_SIZE; idx++)
		INIT_LIST_HEAD(base->vectors + idx);
	INIT_LIST_HEAD(&base->expired);
	INIT_LIST_HEAD(&base->sleep_list);
	hrtimer_setup(&base->hrtimer, twheel_hrtimer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_PINNED_SOFT);
	INIT_CSD(&base->kick, twheel_kick_fn, base);
	INIT_WORK(&base->work, twheel_work_fn);
}

static void twheel_base_stop(struct twheel_base *base)
{
	hrtimer_cancel(&base->hrtimer);
	cancel_work_sync(&base->work);
	/* A kick clears the flag under the lock; synchronize_rcu() does the rest. */
	while (READ_ONCE(base->kick_queued))
		cpu_relax();
	WARN(base->stats.pending, "twheel: %llu timers left on CPU %u\n",
	     base->stats.pending, base->cpu);
}

static int __init twheel_init(void)
{
	unsigned int cpu;
	int ret;

	if (tick_us < TICK_MIN_US || tick_us > TICK_MAX_US) {
		pr_err("tick_us=%u is outside %u..%lu\n", tick_us,
		       TICK_MIN_US, TICK_MAX_US);
		return -EINVAL;
	}
	tick_ns = tick_us * NSEC_PER_USEC;
	/* The top level must reach KTIME_MAX: see the level table. */
	BUILD_BUG_ON(LVL_SHIFT(LVL_DEPTH) < 64 - ilog2(TICK_MIN_US * NSEC_PER_USEC));

	twheel_bases = alloc_percpu(struct twheel_base);
	if (!twheel_bases)
		return -ENOMEM;
	twheel_wq = alloc_workqueue("twheel", 0, 0);
	if (!twheel_wq) {
		ret = -ENOMEM;
		goto out_free_bases;
	}
	for_each_possible_cpu(cpu)
		twheel_base_init(per_cpu_ptr(twheel_bases, cpu), cpu);

	ret = cpuhp_setup_state(CPUHP_BP_PREPARE_DYN, "twheel:prepare",
				twheel_cpu_prepare, twheel_cpu_dead);
	if (ret < 0)
		goto out_destroy_wq;
	twheel_hp_state = ret;
	twheel_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("stats", 0444, twheel_debugfs, NULL,
			    &twheel_stats_fops);
	pr_info("tick %u us, %u levels of %lu slots per CPU\n", tick_us,
		LVL_DEPTH, LVL_SIZE);
	return 0;

out_destroy_wq:
	destroy_workqueue(twheel_wq);
out_free_bases:
	free_percpu(twheel_bases);
	return ret;
}

static void __exit twheel_exit(void)
{
	unsigned int cpu;

	debugfs_remove_recursive(twheel_debugfs);
	cpuhp_remove_state_nocalls(twheel_hp_state);
	for_each_possible_cpu(cpu)
		twheel_base_stop(per_cpu_ptr(twheel_bases, cpu));
	/* An IPI handler runs with interrupts off, so this waits for it. */
	synchronize_rcu();
	destroy_workqueue(twheel_wq);
	free_percpu(twheel_bases);
}

module_init(twheel_init);
module_exit(twheel_exit);

MODULE_AUTHOR("The twheel authors");
MODULE_DESCRIPTION("Per-CPU hierarchical timing wheel with tick precision");
MODULE_LICENSE("GPL");
