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
 * E = DIV_ROUND_UP(D, tick). The wheel has LVL_DEPTH levels of LVL_SLOTS
 * (128) slots; a slot at level n spans LVL_GRAN(n) = 64^n ticks, and a
 * level holds two spans of the level above: the one that holds the wheel
 * clock @clk (the first tick not yet processed) and the next. A timer goes
 * to the lowest level that holds its tick E, in the slot of E's 64^n-tick
 * granule modulo 128.
 *
 * Level 0 therefore holds the timers due in @clk's 64-tick block and the
 * next one, level 1 those of @clk's 4096-tick block and the next, and so
 * on. A slot of a level n > 0 may be cascaded once @clk enters the granule
 * before its own: its timers are filed again one level lower, where the
 * next span is held. A slot whose timers must move one by one is cascaded
 * then, a whole slot width ahead, so that even a huge slot has that long
 * to finish (4.1 s at level 2) while earlier timers keep firing; a slot
 * that moves in one splice waits until its first timer may be due, or
 * until the drain tick of the slot it lands in, if that drains. Every
 * timer so reaches level 0 in time to fire at its exact tick, and is
 * cascaded at most once per level it starts above 0.
 *
 * With the default 1 ms tick:
 *
 * Level  Slot width   Deadlines held (relative to clk, at least / at most)
 *  0        1 ms         64 ms / 128 ms
 *  1       64 ms        4.1 s  / 8.2 s
 *  2      4.1 s         4.4 min / 8.7 min
 *  3      4.4 min       4.7 h  / 9.3 h
 *  4      4.7 h        12.4 days / 24.9 days
 *  5     12.4 days      2.2 years / 4.4 years
 *  6      2.2 years     139 years / 279 years
 *  7      139 years     all (KTIME_MAX is 292 years)
 *
 * A delay d lands on level floor(log64(d)) or the one below it. Eight
 * levels cover every deadline up to KTIME_MAX for any tick of 100 us or
 * more, so there is no overflow list and no circle counter: deadlines past
 * KTIME_MAX are refused with -ERANGE. The wheel of a CPU is 40 KB of slots.
 *
 * The data structure lives in wheel.c (filing, cascading, due slots, with
 * time passed in); this file is its per-CPU driver and the exported API.
 *
 * Wakeups
 * -------
 *
 * Each CPU's wheel is driven by a pinned soft hrtimer programmed to the next
 * event: the first occupied slot of level 0, or the first cascade of a
 * higher level's slot. Both are found from an occupancy bitmap per level,
 * so an idle wheel never wakes up and a sparse
 * one wakes only when there is work. Cancelling a timer does not reprogram
 * the hrtimer (the next wakeup may find nothing to do); cancelling the last
 * one does.
 *
 * Accuracy
 * --------
 *
 * A level-0 slot is due when the latest deadline filed in it has passed,
 * at or before the end of its tick E * tick >= D: no timer fires early, a
 * lone timer fires at its deadline plus the hrtimer's own latency, and
 * timers sharing a tick fire together, at the latest of their deadlines.
 * A timer fires within one tick after its deadline plus the softirq latency
 * of the hrtimer, unless more callbacks are due at once than the CPU runs
 * in that time (see "Bounded work"): then the backlog drains in order, as
 * fast as the CPU is free to run it. Timers with the same tick fire in the
 * order they were armed: slots are FIFO lists, cascading keeps their order,
 * and two timers with the same tick are always filed in the same slot.
 *
 * Slack
 * -----
 *
 * A timer given slack S (twheel_set_slack()) may fire anywhere in
 * [deadline, deadline + S], plus the tick and softirq latency above, and
 * never early. The wheel spends the slack on fewer wakeups: it files the
 * timer at its tick rounded up to a multiple of 2^s ticks, where 2^s ticks
 * is the largest power of two not above S (wheel.c, "Slack"). Power-of-two
 * grids nest, so timers of any slacks meet on the coarsest grid point that
 * all their windows hold, and the hrtimer, programmed to the next occupied
 * slot, wakes once per occupied grid point instead of once per distinct
 * deadline. The grid is kept in the timer as the exponent s, one byte, and
 * applies to every filing of the timer: a periodic timer's deadlines stay
 * exact (no drift), each one's fire is rounded anew. A slot is still due at
 * its latest deadline, so a timer alone on its grid point of level 0 fires
 * at its deadline (one filed higher may fire when its slot drains, earlier
 * in its window); slack only lets timers wait for each other. The rounding
 * is the wheel's own (wheel_timer_tick()): a timer must not change grids
 * while it is filed, so twheel_set_slack() files a pending timer again.
 *
 * Callbacks run in softirq context (from the hrtimer, or with bottom halves
 * off in the CPU's runner, see below), or in process context on a per-CPU
 * work item for TWHEEL_SLEEPABLE timers. As with timer_list, twheel does
 * not touch a timer once its callback has started, so the callback may
 * free it. A periodic timer is therefore re-armed just before its callback
 * runs: a fire delivers the latest of its deadlines that has passed (never
 * one beyond its count), counts the earlier ones it stands for as overruns,
 * which use up the count too, and files the timer one period after the
 * delivered deadline (no drift).
 *
 * Bounded work
 * ------------
 *
 * Whatever a user arms, no loop runs over an unbounded number of timers
 * with interrupts off or a lock held: the lock is held for one fire's
 * bookkeeping, or for a few dozen timers at most of a cascade (one splice
 * when a whole slot falls into one lower slot) or of hand-overs to the
 * sleep work, or of a dead CPU's migration or a twheel_add_bulk(), and
 * dropped in between. A run of the hrtimer lasts at most half a tick
 * (RUN_SLICE_DIV), unless the CPU has nothing else to run: then it goes
 * on until a task or a softirq wants the CPU, RUN_IDLE_TICKS at most. A
 * backlog left over goes on in two ways: in the CPU's runner, a
 * SCHED_IDLE thread (twheel_runner_fn()), in slices alike
 * with bottom halves off, whenever the CPU has nothing else to run: an
 * otherwise idle CPU drains a burst at full speed, and a task that wakes,
 * or is runnable, takes the CPU back after half a tick at most; and in
 * half-tick slices from the hrtimer while a task competes, at least half a
 * tick apart, the next a tick later or as soon as a level-0 slot is due
 * (twheel_run_later()), so that the task loses its CPU for about a tick at
 * a time at most (a slice of each, back to back) and keeps about half of
 * it. While the runner drains, the hrtimer only watches, RUN_WATCH_TICKS
 * out.
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
 *
 * CPU hotplug: as a CPU starts going down, twheel_cpu_offline() stops its
 * base on that CPU (no hrtimer, no work item, no slice of its runner, no
 * callback of it runs after) and twheel_cpu_dead() moves its timers to a
 * live CPU once it is dead. A CPU coming up programs its own hrtimer in
 * twheel_cpu_online(); until then, timers meant for it go to the CPU that
 * arms them.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/jump_label.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/sched/stat.h>
#include <linux/smp.h>
#include <linux/smpboot.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <uapi/linux/sched/types.h>

#include "compat.h"
#include "twheel.h"

#define CREATE_TRACE_POINTS
#include "twheel_trace.h"

#include "wheel.c"

/* timer->idx of an expired TWHEEL_SLEEPABLE timer waiting for its worker. */
#define IDX_SLEEP	WHEEL_NONE

/*
 * Bounded work. Interrupts are off only while a base's lock is held, and
 * it is held for one timer's fire bookkeeping (a batch callback's: up to
 * TWHEEL_BATCH_MAX timers), or CASCADE_BATCH timers of a migration, a
 * twheel_add_bulk() or a twheel_shutdown_bulk(). A run counts the timers
 * it fires, hands over to the sleep work or moves down a level (a cascade
 * step moves CASCADE_BATCH at most); every RUN_BATCH of them (after a
 * batch, if it had more) it drops the lock, which fires drop anyway, and
 * reads the clock, so that a hold covers fewer than RUN_BATCH timers
 * handed over or moved, then a cascade step or a batch callback's
 * bookkeeping: fewer than RUN_BATCH + TWHEEL_BATCH_MAX timers in all. It
 * yields after a slice of tick / RUN_SLICE_DIV, or, on a CPU with nothing
 * else to run, once a task or a softirq wants it after that,
 * RUN_IDLE_TICKS at the latest: see twheel_run(), twheel_hrtimer_fn() and
 * twheel_runner_fn().
 */
#define RUN_BATCH	16
#define CASCADE_BATCH	16
#define RUN_SLICE_DIV	2	/* a run slice is tick / RUN_SLICE_DIV */
#define RUN_IDLE_TICKS	4	/* the longest slice of an otherwise idle CPU */
#define RUN_WATCH_TICKS	8	/* the hrtimer's watch over the runner */
#define IRQOFF_BUCKETS	16	/* lock holds by length: 1 us to 16 ms, log2 */

/* The tick bounds; eight levels reach KTIME_MAX from the smallest tick. */
#define TICK_MIN_US	100
#define TICK_MAX_US	USEC_PER_SEC

/* twheel's state bits in timer->flags, above the TWHEEL_INIT_FLAGS. */
#define TWHEEL_F_SHUTDOWN	0x8000U	/* refuse all further arming */
#define TWHEEL_F_MIGRATING	0x4000U	/* moving between bases */
#define TWHEEL_F_PERIODIC	0x2000U	/* periodic deadlines left: @left != 0 */

/* The state bits must not overlap the flags users pass; a timer stays small. */
static_assert(!(TWHEEL_INIT_FLAGS &
		(TWHEEL_F_SHUTDOWN | TWHEEL_F_MIGRATING | TWHEEL_F_PERIODIC)));
#if BITS_PER_LONG == 64 && !defined(CONFIG_LOCKDEP)
static_assert(sizeof(struct twheel_timer) == 64);
#endif

/* __twheel_mod() options */
#define MOD_ADD		BIT(0)	/* fail with -EEXIST if pending */
#define MOD_REDUCE	BIT(1)	/* only ever move the deadline earlier */
#define MOD_ON_CPU	BIT(2)	/* move to the given CPU */
#define MOD_PENDING	BIT(3)	/* only re-arm a pending timer */
#define MOD_PERIOD	BIT(4)	/* also set the period and count */

/**
 * struct twheel_period - a period and a count for __twheel_mod()
 * @ns:		nanoseconds between deadlines, 0 for one-shot
 * @count:	deadlines to deliver, see twheel_set_period()
 */
struct twheel_period {
	u64	ns;
	u32	count;
};

/*
 * The contexts a base runs callbacks in: its run (the hrtimer's softirq or,
 * for a backlog, its runner with bottom halves off) and its sleep work.
 */
enum { RUN_SOFTIRQ, RUN_WORK, RUN_CONTEXTS };

/**
 * struct twheel_running - a callback in progress
 * @timer:	its timer, NULL if none
 * @nr_batch:	timers in @batch while a batch callback runs, else 0
 * @at:		the time its slot ran, see twheel_fire_time()
 * @batch:	the timers of a batch callback in progress
 */
struct twheel_running {
	struct twheel_timer	*timer;
	unsigned int		nr_batch;
	u64			at;
	struct twheel_timer	*batch[TWHEEL_BATCH_MAX];
};

/**
 * struct twheel_base - one CPU's wheel and what drives it
 * @lock:		protects the base and the timers on it
 * @cpu:		the CPU this base belongs to
 * @next_expiry:	time the hrtimer is programmed for, U64_MAX for none,
 *			0 while work is due (a timer due at 0 or in a slot
 *			being drained, a run deferred to the next tick, a
 *			CPU going down); never later than the wheel's next
 *			event, so that twheel_forward() and wheel_add() may
 *			trust it
 * @online:		@cpu runs this base: false from the moment the CPU
 *			starts going down until it is up again
 * @in_run:		a run owns the wheel (the hrtimer callback or the runner)
 * @backlog:		a run left work: the CPU's runner should go on with it
 *			(twheel_runner_should_run() reads it locklessly)
 * @kick_queued:	@kick is in flight to reprogram the hrtimer (read
 *			locklessly by twheel_base_stop())
 * @hrtimer:		drives the wheel; pinned to @cpu, soft (softirq)
 * @kick:		IPI that reprograms @hrtimer from another CPU
 * @sleep_work:		runs expired TWHEEL_SLEEPABLE timers
 * @sleep_list:		expired TWHEEL_SLEEPABLE timers, FIFO
 * @sleeping:		timers on @sleep_list
 * @running:		the callbacks in progress, one per context
 * @waiters:		callers of __twheel_cancel_sync() waiting on this base
 * @stats:		counters for twheel_cpu_stats()
 * @held_at:		when the lock was taken, while interrupts-off
 *			accounting is on (see twheel_held())
 * @held_hist:		holds timed, by length: see twheel_hold_bucket()
 * @forwarded:		jiffies when twheel_forward() last read the clock
 * @late:		deadline and time of the last fire, and the counter of
 *			its lateness in @stats: see twheel_late_counter()
 * @wheel:		the timing wheel
 */
struct twheel_base {
	raw_spinlock_t		lock;
	unsigned int		cpu;
	u64			next_expiry;
	bool			online;
	bool			in_run;
	bool			backlog;
	bool			kick_queued;
	struct hrtimer		hrtimer;
	call_single_data_t	kick;
	struct work_struct	sleep_work;
	struct list_head	sleep_list;
	unsigned int		sleeping;
	struct twheel_running	running[RUN_CONTEXTS];
	unsigned int		waiters;
	struct twheel_stats	stats;
	u64			held_at;
	u64			held_hist[IRQOFF_BUCKETS];
	unsigned long		forwarded;
	struct {
		u64		fired;
		u64		now;
		u64		*counter;
	} late;
	struct wheel		wheel;
} ____cacheline_aligned;

/*
 * Each CPU's base, allocated on its node: a wheel is larger than the
 * per-CPU allocator hands out at once (PCPU_MIN_UNIT_SIZE).
 */
static DEFINE_PER_CPU(struct twheel_base *, twheel_bases);
static DEFINE_PER_CPU(struct task_struct *, twheel_runners);
static DECLARE_WAIT_QUEUE_HEAD(twheel_sync_wait);
static struct workqueue_struct *twheel_wq;
static enum cpuhp_state twheel_hp_prepare, twheel_hp_online;
static struct dentry *twheel_debugfs;

static unsigned int tick_us = 1000;
module_param(tick_us, uint, 0444);
MODULE_PARM_DESC(tick_us, "Wheel tick in microseconds (100..1000000, default 1000)");

/* tick_us in nanoseconds; fixed at load. */
static u32 tick_ns __read_mostly;

/*
 * Interrupts-off accounting: while enabled through debugfs (twheel/irqoff),
 * every hold of a base's lock, during which interrupts are off, is timed
 * and the longest is kept in its stats. Off, it costs a patched-out jump.
 */
static DEFINE_STATIC_KEY_FALSE(twheel_irqoff_key);

/*
 * The bucket of a hold of @ns: 0 below 1024 ns, then one per power of two
 * (bucket b, b > 0, from 2^(b + 9) ns), the last open-ended.
 */
static unsigned int twheel_hold_bucket(u64 ns)
{
	if (ns < 1024)
		return 0;
	return min_t(unsigned int, ilog2(ns) - 9, IRQOFF_BUCKETS - 1);
}

static __always_inline void twheel_held(struct twheel_base *base)
{
	if (static_branch_unlikely(&twheel_irqoff_key))
		base->held_at = ktime_get();
}

static void twheel_irqoff_account(struct twheel_base *base)
{
	u64 held;

	if (!base->held_at)
		return;
	held = ktime_get() - base->held_at;
	base->held_at = 0;
	base->stats.irqoff_max_ns = max(base->stats.irqoff_max_ns, held);
	base->stats.irqoff_holds++;
	base->held_hist[twheel_hold_bucket(held)]++;
	if (held > tick_ns / 10)
		base->stats.irqoff_long++;
}

static __always_inline void twheel_releasing(struct twheel_base *base)
{
	if (static_branch_unlikely(&twheel_irqoff_key))
		twheel_irqoff_account(base);
}

static __always_inline void twheel_lock(struct twheel_base *base)
	__acquires(&base->lock)
{
	raw_spin_lock_irq(&base->lock);
	twheel_held(base);
}

static __always_inline void twheel_unlock(struct twheel_base *base)
	__releases(&base->lock)
{
	twheel_releasing(base);
	raw_spin_unlock_irq(&base->lock);
}

/* The IPI handler of base->kick: program the hrtimer on its own CPU. */
static void twheel_kick_fn(void *info)
{
	struct twheel_base *base = info;

	/* Interrupts are off: not twheel_lock(), but timed as it times. */
	raw_spin_lock(&base->lock);
	twheel_held(base);
	/* Pairs with the READ_ONCE() of twheel_base_stop(). */
	WRITE_ONCE(base->kick_queued, false);
	/*
	 * An enqueue lowered @next_expiry, to 0 too: a deadline of 0, a slot
	 * being drained. (A run deferred meanwhile, which also leaves 0, has
	 * its hrtimer armed: it comes a slice early.)
	 */
	if (base->next_expiry != U64_MAX && !base->in_run && base->online)
		hrtimer_start(&base->hrtimer, base->next_expiry,
			      HRTIMER_MODE_ABS_PINNED_SOFT);
	twheel_releasing(base);
	raw_spin_unlock(&base->lock);
}

/*
 * Program the base's hrtimer for base->next_expiry, on the base's CPU, or
 * stop it when nothing is left (U64_MAX) rather than wake for nothing. A
 * base whose CPU is going down is not programmed: twheel_cpu_dead() moves
 * its timers to a live one.
 */
static void twheel_program(struct twheel_base *base)
{
	lockdep_assert_held(&base->lock);

	if (base->next_expiry == U64_MAX) {
		hrtimer_try_to_cancel(&base->hrtimer);
		return;
	}
	if (!base->online)
		return;
	if (base->cpu == smp_processor_id()) {
		hrtimer_start(&base->hrtimer, base->next_expiry,
			      HRTIMER_MODE_ABS_PINNED_SOFT);
	} else if (!base->kick_queued) {
		WRITE_ONCE(base->kick_queued, true);
		if (smp_call_function_single_async(base->cpu, &base->kick))
			WRITE_ONCE(base->kick_queued, false);
	}
}

static __always_inline void
twheel_enqueue(struct twheel_base *base, struct twheel_timer *timer)
{
	u64 event;

	lockdep_assert_held(&base->lock);

	event = wheel_add(&base->wheel, timer, base->next_expiry);
	trace_twheel_arm(timer, wheel_lvl(timer->idx));
	if (event < base->next_expiry) {
		base->next_expiry = event;
		if (!base->in_run)
			twheel_program(base);
	}
}

/*
 * Take @timer off the wheel or the sleep list, leaving it pending to
 * twheel_pending() (a periodic timer about to fire is filed again before
 * the lock is dropped). Returns true if that emptied its slot of the wheel.
 */
static __always_inline bool
twheel_unlink(struct twheel_base *base, struct twheel_timer *timer)
{
	lockdep_assert_held(&base->lock);

	if (timer->idx != IDX_SLEEP)
		return wheel_del(&base->wheel, timer);
	wheel_list_del(&timer->entry);
	base->sleeping--;
	return false;
}

/* Mark @timer, off every list, as not pending. */
static __always_inline void twheel_clear_pending(struct twheel_timer *timer)
{
	/* Pairs with the READ_ONCE() of twheel_pending(). */
	WRITE_ONCE(timer->entry.next, NULL);
}

/*
 * Take @timer off the wheel or the sleep list; it is not pending after.
 * Returns true if that emptied its slot of the wheel.
 */
static __always_inline bool
twheel_detach(struct twheel_base *base, struct twheel_timer *timer)
{
	bool emptied = twheel_unlink(base, timer);

	twheel_clear_pending(timer);
	return emptied;
}

/*
 * Give pending @timer the deadline @expires without taking it off the
 * wheel, if it stays in its slot (wheel_requeue()); false if it must be
 * detached and filed anew.
 */
static __always_inline bool twheel_requeue(struct twheel_base *base,
					   struct twheel_timer *timer,
					   u64 expires)
{
	lockdep_assert_held(&base->lock);

	if (timer->idx == IDX_SLEEP ||
	    !wheel_requeue(&base->wheel, timer, expires))
		return false;
	WRITE_ONCE(timer->expires, expires);
	trace_twheel_arm(timer, wheel_lvl(timer->idx));
	return true;
}

/* Timers on @base: filed on its wheel or expired on its sleep list. */
static u64 twheel_base_pending(const struct twheel_base *base)
{
	return base->sleeping + wheel_count(&base->wheel);
}

/*
 * Take a due @timer, from wheel_first_due(), off the wheel, as
 * twheel_unlink(): twheel_account_fire() or twheel_hand_over() says
 * whether it is still pending.
 */
static __always_inline void
twheel_unlink_due(struct twheel_base *base, struct twheel_timer *timer)
{
	lockdep_assert_held(&base->lock);

	wheel_del_due(&base->wheel, timer);
}

/* Returns 1 if @timer was pending and is no longer, 0 if it was not. */
static __always_inline int
twheel_detach_if_pending(struct twheel_base *base, struct twheel_timer *timer)
{
	bool emptied;

	if (!twheel_pending(timer))
		return 0;
	emptied = twheel_detach(base, timer);
	trace_twheel_cancel(timer);
	base->stats.cancelled++;
	if (emptied && !base->in_run && !twheel_base_pending(base)) {
		wheel_emptied(&base->wheel);
		base->next_expiry = U64_MAX;
		twheel_program(base);
	}
	return 1;
}

/*
 * Store @timer's flags, under its base's lock, with release: what the
 * lock's holders stored before, a move's new CPU among them, comes with
 * them to twheel_on_base().
 */
static void twheel_store_flags(struct twheel_timer *timer, u16 flags)
{
	/* Pairs with the smp_load_acquire() of twheel_on_base(). */
	smp_store_release(&timer->flags, flags);
}

/*
 * Is @timer on @base, whose lock is held, and not moving? The flags first:
 * twheel_switch_base() sets TWHEEL_F_MIGRATING under the old base's lock
 * and clears it after it stores the new CPU, so flags read clear with
 * acquire come with the CPU of the last move (the dead-CPU migration
 * stores the CPU under both bases' locks). Read the other way round, the
 * old CPU, loaded just before a move stores the new one, could pair with
 * the flag the move clears just after.
 */
static __always_inline bool twheel_on_base(const struct twheel_base *base,
					   const struct twheel_timer *timer)
{
	/* Pairs with the smp_store_release() of twheel_store_flags(). */
	return !(smp_load_acquire(&timer->flags) & TWHEEL_F_MIGRATING) &&
	       READ_ONCE(timer->cpu) == base->cpu;
}

static __always_inline struct twheel_base *
lock_timer_base(struct twheel_timer *timer, unsigned long *flags)
	__acquires(&base->lock)
{
	for (;;) {
		unsigned int cpu = READ_ONCE(timer->cpu);
		struct twheel_base *base = per_cpu(twheel_bases, cpu);

		if (!(READ_ONCE(timer->flags) & TWHEEL_F_MIGRATING)) {
			raw_spin_lock_irqsave(&base->lock, *flags);
			if (twheel_on_base(base, timer)) {
				twheel_held(base);
				return base;
			}
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
	twheel_store_flags(timer, timer->flags | TWHEEL_F_MIGRATING);
	twheel_releasing(base);
	raw_spin_unlock(&base->lock);
	raw_spin_lock(&new_base->lock);
	twheel_held(new_base);
	WRITE_ONCE(timer->cpu, new_base->cpu);
	twheel_store_flags(timer, timer->flags & ~TWHEEL_F_MIGRATING);
	return new_base;
}

/*
 * The lateness counter of a fire at @now of a timer due at @fired, kept for
 * the fires that follow with the same pair: the fires of a burst.
 */
static void twheel_late_counter(struct twheel_base *base, u64 fired, u64 now)
{
	u64 *counter = &base->stats.lateness[0];
	unsigned int bucket;

	if (unlikely(now < fired)) {
		counter = &base->stats.early;
	} else if (now - fired >= tick_ns) {
		bucket = ilog2(wheel_ns_div(&base->wheel, now - fired)) + 1;
		counter += min_t(unsigned int, bucket, TWHEEL_LATE_BUCKETS - 1);
	}
	base->late.fired = fired;
	base->late.now = now;
	base->late.counter = counter;
}

static __always_inline void
twheel_account_lateness(struct twheel_base *base, struct twheel_timer *timer,
			u64 now)
{
	trace_twheel_fire(timer, now);
	/* One test, one branch: the common case is the same pair again. */
	if ((timer->fired ^ base->late.fired) | (now ^ base->late.now))
		twheel_late_counter(base, timer->fired, now);
	(*base->late.counter)++;
}

/*
 * Keep TWHEEL_F_PERIODIC true to @timer->left != 0, under its base's lock:
 * it lets a run take a one-shot timer's fire with one test of the flags.
 * lock_timer_base() reads the flags locklessly.
 */
static void twheel_set_periodic(struct twheel_timer *timer, bool periodic)
{
	u16 flags = timer->flags & ~TWHEEL_F_PERIODIC;

	twheel_store_flags(timer, periodic ? flags | TWHEEL_F_PERIODIC : flags);
}

/*
 * Account a fire of @timer, unlinked: the deadline it delivers and, for a
 * periodic timer, the deadlines it stands for and the re-arm one period
 * after the delivered one, or, on its last fire, that it is not pending.
 * A periodic timer's count is one of deadlines: a fire that stands for
 * several uses up as many, and the last one delivered is the last of the
 * count.
 */
static void twheel_account_period(struct twheel_base *base,
				  struct twheel_timer *timer, u64 now)
{
	u64 missed = 0, next;

	/* Only a late fire divides. */
	if (now - timer->expires >= timer->period && now > timer->expires)
		missed = div64_u64(now - timer->expires, timer->period);
	if (timer->left != TWHEEL_FOREVER) {
		missed = min_t(u64, missed, timer->left - 1);
		WRITE_ONCE(timer->left, timer->left - missed - 1);
	}
	timer->fired += missed * timer->period;
	timer->overruns = min_t(u64, missed, U32_MAX);
	/* A deadline past KTIME_MAX never comes: the count ends with this. */
	if (timer->left &&
	    (check_add_overflow(timer->fired, timer->period, &next) ||
	     next > KTIME_MAX))
		WRITE_ONCE(timer->left, 0);
	if (!timer->left) {
		/* The last fire: the deadline is the one it delivers. */
		twheel_clear_pending(timer);
		twheel_set_periodic(timer, false);
		WRITE_ONCE(timer->expires, timer->fired);
		return;
	}
	WRITE_ONCE(timer->expires, next);
	twheel_enqueue(base, timer);
}

/*
 * Account a fire of @timer, unlinked (it is still pending to lockless
 * readers, see twheel_unlink()), and mark it not pending unless it is
 * filed again; @periodic is its TWHEEL_F_PERIODIC, which the fast path of
 * a run has tested already.
 */
static __always_inline void twheel_account_fire(struct twheel_base *base,
						struct twheel_timer *timer,
						u64 now, bool periodic)
{
	timer->fired = timer->expires;
	timer->overruns = 0;
	if (periodic)
		twheel_account_period(base, timer, now);
	else
		twheel_clear_pending(timer);
	twheel_account_lateness(base, timer, now);
}

/* A callback has returned: wake __twheel_cancel_sync()'s waiters. */
static void twheel_wake_waiters(struct twheel_base *base)
	__must_hold(&base->lock)
{
	if (base->waiters) {
		twheel_unlock(base);
		wake_up_all(&twheel_sync_wait);
		twheel_lock(base);
	}
}

/*
 * Read the clock for the fires that follow in context @ctx: their callbacks
 * see it as their fire time (twheel_fire_time()).
 */
static u64 twheel_run_clock(struct twheel_base *base, unsigned int ctx)
{
	u64 now = ktime_get();

	base->running[ctx].at = now;
	return now;
}

/*
 * Run the callback of an expired, unlinked @timer at time @now, read with
 * twheel_run_clock(), in context @ctx; @periodic is its TWHEEL_F_PERIODIC.
 * Called and returns with @base->lock held, interrupts off; drops it around
 * the callback, after which @timer is not touched.
 */
static __always_inline void
twheel_fire(struct twheel_base *base, struct twheel_timer *timer,
	    unsigned int ctx, u64 now, bool periodic)
	__must_hold(&base->lock)
{
	struct twheel_running *running = &base->running[ctx];
	twheel_fn_t fn = timer->function;
#ifdef CONFIG_LOCKDEP
	/* A copy: the callback may free @timer. */
	struct lockdep_map lockdep_map;

	lockdep_copy_map(&lockdep_map, &timer->lockdep_map);
#endif
	twheel_account_fire(base, timer, now, periodic);
	WRITE_ONCE(running->timer, timer);
	twheel_unlock(base);

	lock_map_acquire(&lockdep_map);
	fn(timer);
	lock_map_release(&lockdep_map);

	twheel_lock(base);
	WRITE_ONCE(running->timer, NULL);
	twheel_wake_waiters(base);
}

/*
 * May @timer join the batch of @first? Same callback, and under lockdep
 * the same class (the call site of its initialization): the batch runs as
 * the first timer's lock, against which twheel_cancel_sync() of any of
 * them is checked.
 */
static bool twheel_batch_joins(const struct twheel_timer *timer,
			       const struct twheel_timer *first)
{
	if (!timer || !(timer->flags & TWHEEL_BATCH) ||
	    timer->batch != first->batch)
		return false;
#ifdef CONFIG_LOCKDEP
	return timer->lockdep_map.key == first->lockdep_map.key;
#else
	return true;
#endif
}

/*
 * Run the batch callback of an expired, unlinked %TWHEEL_BATCH @timer and
 * of the due timers that follow it in its slot and may join it
 * (twheel_batch_joins()), up to TWHEEL_BATCH_MAX, with one hold of the
 * lock for all. Locking as for twheel_fire(). Returns how many timers it
 * fired.
 */
static unsigned int twheel_fire_batch(struct twheel_base *base,
				      struct twheel_timer *timer, u64 now)
	__must_hold(&base->lock)
{
	struct twheel_running *running = &base->running[RUN_SOFTIRQ];
	struct twheel_timer *first = timer;
	twheel_batch_fn_t fn = timer->batch;
	unsigned int n = 0;
#ifdef CONFIG_LOCKDEP
	struct lockdep_map lockdep_map;

	lockdep_copy_map(&lockdep_map, &timer->lockdep_map);
#endif
	for (;;) {
		twheel_account_fire(base, timer, now,
				    timer->flags & TWHEEL_F_PERIODIC);
		WRITE_ONCE(running->batch[n++], timer);
		if (n == TWHEEL_BATCH_MAX)
			break;
		timer = wheel_first_due(&base->wheel, now);
		if (!twheel_batch_joins(timer, first))
			break;
		twheel_unlink_due(base, timer);
	}
	WRITE_ONCE(running->nr_batch, n);
	twheel_unlock(base);

	lock_map_acquire(&lockdep_map);
	fn(running->batch, n);
	lock_map_release(&lockdep_map);

	twheel_lock(base);
	WRITE_ONCE(running->nr_batch, 0);
	twheel_wake_waiters(base);
	return n;
}

/* Hand an expired TWHEEL_SLEEPABLE @timer, unlinked, to the sleep work. */
static void twheel_hand_over(struct twheel_base *base,
			     struct twheel_timer *timer)
{
	/* Unlinked, not detached: pending throughout, no NULL in between. */
	wheel_list_add_tail(&timer->entry, &base->sleep_list);
	timer->idx = IDX_SLEEP;
	base->sleeping++;
}

/* Let interrupts in between two bounded steps of a run. */
static void twheel_relax(struct twheel_base *base)
	__must_hold(&base->lock)
{
	twheel_unlock(base);
	twheel_lock(base);
}

/*
 * Has the CPU got anything else to run, task or softirq? Asked when a run
 * that took an otherwise idle CPU (twheel_cpu_idle()) has had its half
 * tick: it goes on until the CPU has (a softirq raised meanwhile waits for
 * the run, as bottom halves are off).
 */
static bool twheel_cpu_wanted(void)
{
	return need_resched() || local_softirq_pending();
}

/*
 * Run the wheel up to the current time: cascade, and fire or hand over the
 * due timers in FIFO order. Stops at the end of a slice: half a tick, or,
 * when the CPU had nothing else to run (@idle), as soon as after that a
 * task or a softirq wants the CPU, RUN_IDLE_TICKS at most. Returns true
 * when the wheel has caught up with the clock, false when work is left.
 */
static bool twheel_run(struct twheel_base *base, bool idle)
	__must_hold(&base->lock)
{
	u64 now = twheel_run_clock(base, RUN_SOFTIRQ);
	u64 end = now + tick_ns / RUN_SLICE_DIV;
	u64 idle_end = idle ? now + RUN_IDLE_TICKS * (u64)tick_ns : end;
	bool sleepers = false, done = false;
	unsigned int n = 0;	/* timers handled or moved since the clock */

	lockdep_assert_held(&base->lock);

	for (;;) {
		unsigned int budget = CASCADE_BATCH;
		struct twheel_timer *timer;

		/* Hand-overs and cascades keep the lock: drop it now and then. */
		if (++n > RUN_BATCH) {
			n = 1;
			twheel_relax(base);
			now = twheel_run_clock(base, RUN_SOFTIRQ);
			if (now > end && (now > idle_end || twheel_cpu_wanted()))
				break;
		}
		/* Not wheel_first_due(): the compiler cannot tell it is not NULL. */
		if (!wheel_due(&base->wheel, now)) {
			enum wheel_state state;

			state = wheel_advance(&base->wheel, now, &budget);
			if (state == WHEEL_IDLE) {
				done = true;
				break;
			}
			/*
			 * The timers it moved count: a drain that ends in a
			 * due slot kept the lock, and so did one out of budget.
			 */
			n += CASCADE_BATCH - budget;
			continue;
		}
		timer = wheel_due_first(&base->wheel);
		twheel_unlink_due(base, timer);
		/* A one-shot softirq callback, the common case, in one test. */
		if (likely(!(timer->flags & (TWHEEL_SLEEPABLE | TWHEEL_BATCH |
					     TWHEEL_F_PERIODIC)))) {
			twheel_fire(base, timer, RUN_SOFTIRQ, now, false);
		} else if (timer->flags & TWHEEL_SLEEPABLE) {
			twheel_hand_over(base, timer);
			sleepers = true;
		} else if (timer->flags & TWHEEL_BATCH) {
			/* The first of them is counted already. */
			n += twheel_fire_batch(base, timer, now) - 1;
		} else {
			twheel_fire(base, timer, RUN_SOFTIRQ, now, true);
		}
	}
	if (sleepers)
		queue_work_on(base->cpu, twheel_wq, &base->sleep_work);
	return done;
}

/* A run has caught up: program the hrtimer for the next event. */
static void twheel_run_done(struct twheel_base *base)
{
	base->in_run = false;
	WRITE_ONCE(base->backlog, false);
	/* The hrtimer may still be armed for the next slice of a backlog. */
	base->next_expiry = wheel_next_event(&base->wheel);
	twheel_program(base);
}

/*
 * A run has work left: the next slice comes from the CPU's runner as soon
 * as the CPU has nothing else to run, and from the hrtimer's softirq. While
 * a task competes for the CPU, the hrtimer's next slice comes at least a
 * slice apart, so that the task keeps about half of it, and at most a tick
 * apart; earlier than a tick from now when a level-0 slot comes due: what
 * is slowed down is a backlog, mostly drains a slot width ahead of their
 * spans, not the timers due next. While nothing else wants the CPU (@idle),
 * the runner drains the backlog and the hrtimer only watches, a few ticks
 * out: each of its slices costs an interrupt and a reprogramming of the
 * clock event device (an exit in a virtual machine), and the runner calls
 * it in at the end of a slice after which a task wants the CPU
 * (twheel_runner_fn()). Work is due already: @next_expiry says so, which
 * keeps twheel_forward() and twheel_enqueue() off the hrtimer meanwhile.
 */
static void twheel_run_later(struct twheel_base *base, bool idle)
{
	u64 now = ktime_get(), at;

	lockdep_assert_held(&base->lock);

	if (idle)
		at = now + RUN_WATCH_TICKS * (u64)tick_ns;
	else
		at = clamp(wheel_next_fire(&base->wheel),
			   now + tick_ns / RUN_SLICE_DIV, now + tick_ns);
	base->in_run = false;
	base->next_expiry = 0;
	hrtimer_start(&base->hrtimer, at, HRTIMER_MODE_ABS_PINNED_SOFT);
	if (!base->backlog) {
		WRITE_ONCE(base->backlog, true);
		wake_up_process(per_cpu(twheel_runners, base->cpu));
	}
}

/*
 * Has the CPU nothing else to run? Asked by the CPU's runner, and by the
 * hrtimer's softirq, which runs on the task it interrupted: true when that
 * is the runner and no other task is runnable, or the idle task and none
 * is waking. A task that wakes just after holds the backlog up until the
 * hrtimer's watch, once.
 */
static bool twheel_cpu_idle(const struct twheel_base *base)
{
	if (is_idle_task(current))
		return !need_resched();
	return current == per_cpu(twheel_runners, base->cpu) &&
	       single_task_running();
}

/* The wheel's hrtimer: run the wheel for one slice. */
static enum hrtimer_restart twheel_hrtimer_fn(struct hrtimer *hrtimer)
{
	struct twheel_base *base = container_of(hrtimer, struct twheel_base,
						hrtimer);

	twheel_lock(base);
	if (base->in_run || !base->online)
		goto out_unlock;
	base->stats.wakeups++;
	base->in_run = true;
	if (twheel_run(base, twheel_cpu_idle(base))) {
		twheel_run_done(base);
	} else {
		base->stats.deferred++;
		twheel_run_later(base, twheel_cpu_idle(base));
	}
out_unlock:
	twheel_unlock(base);
	return HRTIMER_NORESTART;
}

static int twheel_runner_should_run(unsigned int cpu)
{
	return READ_ONCE(per_cpu(twheel_bases, cpu)->backlog);
}

/*
 * The CPU's runner: one slice of a backlog, with bottom halves off as in
 * softirq context (callbacks expect it). It runs at SCHED_IDLE, called
 * again for as long as @backlog stays set (smpboot_thread_fn()), so the
 * scheduler gives it the CPU only when no other task wants it, the way
 * __do_softirq() hands over to ksoftirqd but without taking a task's
 * share: a task that wakes, or is runnable, waits for half a tick at most.
 */
static void twheel_runner_fn(unsigned int cpu)
{
	struct twheel_base *base = per_cpu(twheel_bases, cpu);
	bool idle = true;

	local_bh_disable();
	twheel_lock(base);
	/* The hrtimer's slices may have caught up; a CPU going down stops. */
	if (!base->online || base->in_run || base->next_expiry) {
		WRITE_ONCE(base->backlog, false);
		goto out_unlock;
	}
	base->in_run = true;
	base->stats.slices++;
	if (twheel_run(base, twheel_cpu_idle(base))) {
		twheel_run_done(base);
	} else {
		idle = twheel_cpu_idle(base);
		/*
		 * Arm the hrtimer if it fired while we ran; if a task wants the
		 * CPU, leave it half a tick before the hrtimer's next slice.
		 */
		if (!hrtimer_is_queued(&base->hrtimer) || !idle)
			twheel_run_later(base, idle);
		else
			base->in_run = false;
	}
out_unlock:
	twheel_unlock(base);
	local_bh_enable();
	/*
	 * smpboot_thread_fn() calls again at once. A task that wakes preempts
	 * a SCHED_IDLE thread, but one runnable already would get the CPU only
	 * at the scheduler's next tick, several of ours at HZ=250: give it the
	 * CPU now, staying runnable for when the CPU has nothing else to run.
	 */
	if (idle)
		cond_resched();
	else
		schedule();
}

/* Runners run only when the CPU has nothing else to run. */
static void twheel_runner_setup(unsigned int cpu)
{
	struct sched_attr attr = { .sched_policy = SCHED_IDLE };

	WARN_ON_ONCE(sched_setattr_nocheck(current, &attr));
}

static struct smp_hotplug_thread twheel_runner_threads = {
	.store			= &twheel_runners,
	.thread_should_run	= twheel_runner_should_run,
	.thread_fn		= twheel_runner_fn,
	.setup			= twheel_runner_setup,
	.thread_comm		= "twheel/%u",
};

/* Run the expired TWHEEL_SLEEPABLE timers of a base, in process context. */
static void twheel_sleep_work_fn(struct work_struct *work)
{
	struct twheel_base *base = container_of(work, struct twheel_base,
						sleep_work);

	twheel_lock(base);
	while (base->online && !list_empty(&base->sleep_list)) {
		struct twheel_timer *timer;

		timer = list_first_entry(&base->sleep_list, struct twheel_timer,
					 entry);
		twheel_unlink(base, timer);
		twheel_fire(base, timer, RUN_WORK,
			    twheel_run_clock(base, RUN_WORK),
			    timer->flags & TWHEEL_F_PERIODIC);
		twheel_unlock(base);
		cond_resched();
		twheel_lock(base);
	}
	twheel_unlock(base);
}

/* Is @timer's callback in progress in @running? Lockless: see callers. */
static bool twheel_runs(const struct twheel_running *running,
			const struct twheel_timer *timer)
{
	unsigned int i, n = READ_ONCE(running->nr_batch);

	if (READ_ONCE(running->timer) == timer)
		return true;
	for (i = 0; i < n; i++)
		if (READ_ONCE(running->batch[i]) == timer)
			return true;
	return false;
}

static __always_inline bool
twheel_running(struct twheel_base *base, const struct twheel_timer *timer)
{
	lockdep_assert_held(&base->lock);

	return twheel_runs(&base->running[RUN_SOFTIRQ], timer) ||
	       twheel_runs(&base->running[RUN_WORK], timer);
}

/*
 * The base a (re-)armed timer goes to: the requested CPU, else the current
 * one for an idle unpinned timer, else the base it is on. A running timer
 * stays where it is so that its callbacks are serialized, and
 * twheel_cancel_sync() waits on the base that runs it. A base whose CPU is
 * going down is only chosen for a running timer, or from that CPU itself:
 * twheel_cpu_dead() moves its timers.
 */
static __always_inline struct twheel_base *
twheel_target(struct twheel_base *base, struct twheel_timer *timer,
	      unsigned int opts, unsigned int cpu)
{
	struct twheel_base *target = base;

	if (opts & MOD_ON_CPU)
		target = per_cpu(twheel_bases, cpu);
	else if (!(timer->flags & TWHEEL_PINNED))
		target = raw_cpu_read(twheel_bases);
	/* Racy but safe: a base going offline now is emptied after. */
	if (!READ_ONCE(target->online))
		target = raw_cpu_read(twheel_bases);
	if (target != base && twheel_running(base, timer))
		return base;
	return target;
}

/*
 * ktime_get_coarse(), out of line: the timespec64 it fills on the stack
 * would give every arming call a stack canary.
 */
static noinline u64 twheel_coarse_now(void)
{
	return ktime_get_coarse();
}

/*
 * Move the wheel clock up to @now when nothing is due by then, so that a
 * timer armed on an idle wheel is filed as low as its delay allows. A
 * caller that has not read the clock passes 0, and the coarse clock is
 * read here (any lower bound of the time will do): once per jiffy at most,
 * as it moves with jiffies.
 */
static __always_inline void
twheel_forward(struct twheel_base *base, u64 now)
{
	unsigned long j;

	if (base->in_run)
		return;
	if (!now) {
		j = READ_ONCE(jiffies);
		if (j == base->forwarded)
			return;
		base->forwarded = j;
		now = twheel_coarse_now();
	}
	if (base->next_expiry > now)
		wheel_forward(&base->wheel, now);
}

/* Is @per a period and count that twheel_set_period() accepts? */
static bool twheel_period_valid(const struct twheel_period *per)
{
	return !per->ns || (per->ns >= tick_ns && per->count);
}

/* Give @timer the period and count of @per, under its base's lock. */
static void twheel_period_set(struct twheel_timer *timer,
			      const struct twheel_period *per)
{
	/* twheel_period() reads it locklessly. */
	WRITE_ONCE(timer->period, per->ns);
	/* twheel_fires_left() reads it locklessly; 0 without a period. */
	WRITE_ONCE(timer->left, per->ns ? per->count : 0);
	twheel_set_periodic(timer, per->ns);
}

static __always_inline int
__twheel_mod(struct twheel_timer *timer, u64 expires, u64 now,
	     unsigned int opts, unsigned int cpu,
	     const struct twheel_period *per)
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
		ret = -EEXIST;
		goto out_unlock;
	}
	if (!ret && (opts & MOD_PENDING))
		goto out_unlock;
	if (ret && (opts & MOD_REDUCE) && timer->expires <= expires)
		goto out_unlock;
	if (opts & MOD_PERIOD)
		twheel_period_set(timer, per);
	new_base = twheel_target(base, timer, opts, cpu);
	if (ret && new_base == base && twheel_requeue(base, timer, expires))
		goto out_unlock;
	if (ret)
		twheel_detach(base, timer);
	WRITE_ONCE(timer->expires, expires);
	if (new_base != base)
		base = twheel_switch_base(base, new_base, timer);
	twheel_forward(base, now);
	twheel_enqueue(base, timer);
out_unlock:
	twheel_releasing(base);
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

/*
 * What every arming call does, with its options @opts. Inline into
 * twheel_add() and twheel_mod(), the hot ones, where @opts is a constant
 * that leaves out the options' tests; out of line for the others
 * (twheel_mod_any()).
 */
static __always_inline int
twheel_mod_opts(struct twheel_timer *timer, ktime_t expires,
		enum twheel_mode mode, unsigned int opts, unsigned int cpu,
		const struct twheel_period *per)
{
	u64 abs, now = 0;
	int ret;

	if (WARN_ONCE(!timer->function, "twheel: timer %p not initialized\n",
		      timer))
		return -EINVAL;
	/*
	 * A relative deadline needs the exact time, or it could fire early.
	 * An absolute one needs no clock read, or a coarse one at most (see
	 * twheel_forward()).
	 */
	if (mode == TWHEEL_REL)
		now = ktime_get();
	ret = twheel_abs(expires, mode, now, &abs);
	if (ret)
		return ret;
	return __twheel_mod(timer, abs, now, opts, cpu, per);
}

static noinline int twheel_mod_any(struct twheel_timer *timer,
				   ktime_t expires, enum twheel_mode mode,
				   unsigned int opts, unsigned int cpu,
				   const struct twheel_period *per)
{
	return twheel_mod_opts(timer, expires, mode, opts, cpu, per);
}

/**
 * __twheel_timer_init - initialize a timer: use twheel_timer_init()
 * @timer:	the timer, usually embedded in the caller's object
 * @function:	the callback; it receives @timer (use container_of())
 * @flags:	%TWHEEL_PINNED: the timer stays on its CPU, the one that
 *		ran this or that twheel_add_on() names (else every arming
 *		of an idle timer moves it to the current CPU);
 *		%TWHEEL_SLEEPABLE: @function runs in process context on a
 *		workqueue and may sleep (else it runs in softirq context);
 *		%TWHEEL_BATCH: set by twheel_timer_init_batch(), which stores
 *		the batch callback after this
 * @name:	name of the timer's lockdep class (the twheel_timer_init()
 *		argument), or NULL without CONFIG_LOCKDEP
 * @key:	the lockdep class of the call site, or NULL
 *
 * twheel does not touch the timer once @function has started, so
 * @function may free it (a periodic one after twheel_cancel()); elsewhere,
 * free a timer after twheel_cancel_sync() or twheel_shutdown_sync(). Unknown
 * @flags are ignored with a warning. @timer must not be pending.
 */
void __twheel_timer_init(struct twheel_timer *timer, twheel_fn_t function,
			 u32 flags, const char *name,
			 struct lock_class_key *key)
{
	WARN_ONCE(flags & ~TWHEEL_INIT_FLAGS, "twheel: unknown flags %#x\n",
		  flags & ~TWHEEL_INIT_FLAGS);
	/* Batches are for queueing in softirq context. */
	if (WARN_ONCE((flags & TWHEEL_BATCH) && (flags & TWHEEL_SLEEPABLE),
		      "twheel: a batch timer cannot sleep\n"))
		flags &= ~TWHEEL_SLEEPABLE;
	memset(timer, 0, sizeof(*timer));
	timer->function = function;
	timer->flags = flags & TWHEEL_INIT_FLAGS;
	timer->cpu = raw_smp_processor_id();
	lockdep_init_map(&timer->lockdep_map, name, key, 0);
}
EXPORT_SYMBOL_GPL(__twheel_timer_init);

/**
 * twheel_add - arm an idle timer
 * @timer:	an initialized timer that is not pending
 * @expires:	the deadline, read as @mode says
 * @mode:	%TWHEEL_REL (ns from now) or %TWHEEL_ABS (CLOCK_MONOTONIC ns)
 *
 * The timer fires on the current CPU's wheel (if it is %TWHEEL_PINNED, on
 * its own CPU's: the one that initialized it, or the last one
 * twheel_add_on() named; if that CPU is offline, the current one, which
 * becomes its own) within one tick after the deadline, never before it.
 * A deadline in the past fires at once. Any context; may be called from
 * the timer's own callback.
 *
 * Return:
 * * 0		- armed
 * * -EEXIST	- @timer is already pending; nothing changed
 * * -ERANGE	- the deadline is beyond KTIME_MAX
 * * -EINVAL	- negative @expires, unknown @mode or uninitialized @timer
 * * -ESHUTDOWN	- @timer was shut down with twheel_shutdown_sync()
 */
int twheel_add(struct twheel_timer *timer, ktime_t expires,
	       enum twheel_mode mode)
{
	return twheel_mod_opts(timer, expires, mode, MOD_ADD, 0, NULL);
}
EXPORT_SYMBOL_GPL(twheel_add);

/**
 * twheel_add_on - arm an idle timer on a given CPU's wheel
 * @timer:	an initialized timer that is not pending
 * @expires:	the deadline, read as @mode says
 * @mode:	%TWHEEL_REL or %TWHEEL_ABS
 * @cpu:	the CPU whose wheel fires the timer
 *
 * As twheel_add(), but the callback runs on @cpu. An offline @cpu takes
 * no timer: it goes to the current CPU's wheel instead, and if it is
 * %TWHEEL_PINNED, it is pinned there; a CPU going offline hands its
 * timers to an online one. A running timer stays on the CPU it runs on.
 * Any context.
 *
 * Return: as twheel_add(); -EINVAL also for a CPU that is not possible.
 */
int twheel_add_on(struct twheel_timer *timer, ktime_t expires,
		  enum twheel_mode mode, unsigned int cpu)
{
	if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return -EINVAL;
	return twheel_mod_any(timer, expires, mode, MOD_ADD | MOD_ON_CPU, cpu, NULL);
}
EXPORT_SYMBOL_GPL(twheel_add_on);

/*
 * File the @n timers of @timers whose @ret is 0, at the absolute deadlines
 * @abs, on the current CPU's wheel, under one hold of its lock, and
 * program its hrtimer once; set their @ret. Stops at a timer the wheel's
 * lock does not cover (timer->cpu names another wheel), left to the
 * caller. Returns the index it stopped at, @n if none.
 */
static unsigned int twheel_add_some(struct twheel_timer **timers,
				    const u64 *abs, unsigned int n, u64 now,
				    int *ret)
{
	struct twheel_base *base;
	unsigned int i;
	u64 next;

	local_irq_disable();
	base = raw_cpu_read(twheel_bases);
	raw_spin_lock(&base->lock);
	twheel_held(base);
	twheel_forward(base, now);
	next = base->next_expiry;
	for (i = 0; i < n; i++) {
		struct twheel_timer *timer = timers[i];

		if (ret[i])
			continue;
		/* Ours as lock_timer_base() sees it. */
		if (!twheel_on_base(base, timer))
			break;
		if (timer->flags & TWHEEL_F_SHUTDOWN) {
			ret[i] = -ESHUTDOWN;
			continue;
		}
		if (twheel_pending(timer)) {
			ret[i] = -EEXIST;
			continue;
		}
		WRITE_ONCE(timer->expires, abs[i]);
		next = min(next, wheel_add(&base->wheel, timer, next));
		trace_twheel_arm(timer, wheel_lvl(timer->idx));
	}
	/* As twheel_enqueue() does, once for all of them. */
	if (next < base->next_expiry) {
		base->next_expiry = next;
		if (!base->in_run)
			twheel_program(base);
	}
	twheel_releasing(base);
	raw_spin_unlock(&base->lock);
	local_irq_enable();
	return i;
}

/**
 * twheel_add_bulk - arm many idle timers on the current CPU's wheel
 * @timers:	initialized timers, not pending
 * @expires:	their deadlines, read as @mode says
 * @n:		the number of timers
 * @mode:	%TWHEEL_REL (ns from one reading of the clock for all of
 *		them) or %TWHEEL_ABS (CLOCK_MONOTONIC ns)
 * @ret:	where each timer's result goes, as twheel_add() returns it
 *
 * As twheel_add() of each timer in turn, for callers that arm many at
 * once. The timers of the current CPU's wheel (those initialized, or last
 * armed, on this CPU: a fresh timer usually is) are filed 16 at a time
 * under one hold of its lock, and its hrtimer is programmed once per hold;
 * any other timer is armed by twheel_add() on its own, in its turn, so
 * that timers with the same tick still fire in array order. Interrupts
 * come in between two holds: no loop runs over @n timers with them off.
 *
 * Context: process or softirq context, interrupts enabled (a hold ends
 * with local_irq_enable()).
 *
 * Return: the number of timers armed, those whose @ret is 0. A failed
 * timer's @ret is -EEXIST, -ERANGE, -EINVAL or -ESHUTDOWN as for
 * twheel_add(), and nothing changed for it.
 */
int twheel_add_bulk(struct twheel_timer **timers, const ktime_t *expires,
		    unsigned int n, enum twheel_mode mode, int *ret)
{
	unsigned int i = 0, j, to, stop, armed = 0;
	u64 abs[CASCADE_BATCH], now;

	now = mode == TWHEEL_REL ? ktime_get() : ktime_get_coarse();
	while (i < n) {
		to = min(n, i + CASCADE_BATCH);
		/* The checks of twheel_mod_opts() that need no lock. */
		for (j = i; j < to; j++) {
			ret[j] = twheel_abs(expires[j], mode, now, &abs[j - i]);
			if (!ret[j] &&
			    WARN_ONCE(!timers[j]->function,
				      "twheel: timer %p not initialized\n",
				      timers[j]))
				ret[j] = -EINVAL;
		}
		stop = i + twheel_add_some(timers + i, abs, to - i, now,
					   ret + i);
		/* Another wheel's timer: on its own, as twheel_add() would. */
		if (stop < to) {
			ret[stop] = twheel_add(timers[stop], abs[stop - i],
					       TWHEEL_ABS);
			stop++;
		}
		for (; i < stop; i++)
			armed += !ret[i];
	}
	return armed;
}
EXPORT_SYMBOL_GPL(twheel_add_bulk);

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
	return twheel_mod_opts(timer, expires, mode, 0, 0, NULL);
}
EXPORT_SYMBOL_GPL(twheel_mod);

/**
 * twheel_mod_pending - move the deadline of a pending timer only
 * @timer:	an initialized timer
 * @expires:	the deadline, read as @mode says
 * @mode:	%TWHEEL_REL or %TWHEEL_ABS
 *
 * As twheel_mod() for a pending timer; a timer that is not pending (never
 * armed, cancelled, or fired: its callback may be running) is left alone.
 * The test and the re-arm are atomic against the wheel firing the timer,
 * so a caller learns whether its new deadline replaced a fire or came too
 * late, like mod_timer_pending(). Any context.
 *
 * Return: 1 if @timer was pending and now has the new deadline, 0 if it was
 * not pending; or -ERANGE, -EINVAL, -ESHUTDOWN as for twheel_add().
 */
int twheel_mod_pending(struct twheel_timer *timer, ktime_t expires,
		       enum twheel_mode mode)
{
	return twheel_mod_any(timer, expires, mode, MOD_PENDING, 0, NULL);
}
EXPORT_SYMBOL_GPL(twheel_mod_pending);

/**
 * twheel_mod_pending_period - re-arm a pending timer with a new period
 * @timer:	an initialized timer
 * @expires:	the deadline, read as @mode says
 * @mode:	%TWHEEL_REL or %TWHEEL_ABS
 * @period_ns:	time between deadlines, at least one tick; 0 for one-shot
 * @count:	deadlines to deliver, at least 1, or %TWHEEL_FOREVER
 *
 * As twheel_mod_pending(), and sets the period and count as
 * twheel_set_period() would, in the same step: no fire of @timer comes
 * between the two, so that every fire uses either the old deadline,
 * period and count or the new ones. Any context.
 *
 * Return: as twheel_mod_pending(); -EINVAL also for a period below one
 * tick or a zero @count, in which case nothing changed.
 */
int twheel_mod_pending_period(struct twheel_timer *timer, ktime_t expires,
			      enum twheel_mode mode, u64 period_ns, u32 count)
{
	struct twheel_period per = { .ns = period_ns, .count = count };

	if (!twheel_period_valid(&per))
		return -EINVAL;
	return twheel_mod_any(timer, expires, mode, MOD_PENDING | MOD_PERIOD,
			       0, &per);
}
EXPORT_SYMBOL_GPL(twheel_mod_pending_period);

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
	return twheel_mod_any(timer, expires, mode, MOD_REDUCE, 0, NULL);
}
EXPORT_SYMBOL_GPL(twheel_reduce);

/**
 * twheel_set_period - make a timer periodic, or one-shot again
 * @timer:	an initialized timer
 * @period_ns:	time between deadlines, at least one tick; 0 for one-shot
 * @count:	number of deadlines still to deliver, at least 1, or
 *		%TWHEEL_FOREVER
 *
 * Takes effect at the timer's next fire: each fire re-arms the timer at the
 * delivered deadline plus @period_ns, until @count deadlines have been
 * delivered. When a fire comes late by whole periods, it delivers the
 * latest deadline that has passed (but never one beyond @count), and
 * twheel_overruns() counts the earlier ones: missed deadlines never run one
 * after another, yet each uses up @count, so that a counted timer delivers
 * exactly @count deadlines, one per callback or folded into overruns. A
 * periodic timer is pending again while its callback runs; the callback
 * stops it with twheel_cancel() or re-arms it with twheel_mod(). Any
 * context.
 *
 * Return: 0, or -EINVAL for a period below one tick or, with a period, a
 * zero @count.
 */
int twheel_set_period(struct twheel_timer *timer, u64 period_ns, u32 count)
{
	struct twheel_period per = { .ns = period_ns, .count = count };
	struct twheel_base *base;
	unsigned long flags;

	if (!twheel_period_valid(&per))
		return -EINVAL;

	base = lock_timer_base(timer, &flags);
	twheel_period_set(timer, &per);
	twheel_releasing(base);
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return 0;
}
EXPORT_SYMBOL_GPL(twheel_set_period);

/**
 * twheel_set_slack - let a timer fire up to some time after its deadline
 * @timer:	an initialized timer
 * @slack_ns:	how late after its deadline the timer may fire; 0 for none
 *
 * A timer with slack fires anywhere from its deadline to @slack_ns after
 * it (plus the tick and softirq latency every timer has), never before its
 * deadline. twheel rounds the timer's tick up to a multiple of the largest
 * power of two ticks not above @slack_ns, so that timers whose windows
 * overlap fire together and the wheel wakes up less often: the hrtimer's
 * range (hrtimer_set_expires_range_ns()) and a task's timer slack do the
 * same for their timers. Less than two ticks of slack round nothing;
 * twheel_slack() reads back the slack in use.
 *
 * The slack stays with the timer until set again: every later
 * twheel_add(), twheel_mod() and each re-arm of a periodic timer use it (a
 * periodic timer's deadlines stay one period apart; each fire may use the
 * slack). A pending timer is filed again at once with the new slack.
 * twheel_timer_init() gives no slack. A slack of a period or more lets a
 * fire come after the next deadline, which then counts as an overrun. Any
 * context.
 *
 * Return: 0, or -EINVAL for a slack beyond KTIME_MAX (nothing changed).
 */
int twheel_set_slack(struct twheel_timer *timer, u64 slack_ns)
{
	struct twheel_base *base;
	unsigned long flags;
	bool refile;
	u8 slack;

	if (slack_ns > KTIME_MAX)
		return -EINVAL;
	slack = wheel_slack_grid(tick_ns, slack_ns);

	base = lock_timer_base(timer, &flags);
	if (slack != timer->slack) {
		/* A filed timer's slot depends on its grid: file it again. */
		refile = twheel_pending(timer) && timer->idx != IDX_SLEEP;
		if (refile)
			twheel_unlink(base, timer);
		WRITE_ONCE(timer->slack, slack);
		if (refile)
			twheel_enqueue(base, timer);
	}
	twheel_releasing(base);
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return 0;
}
EXPORT_SYMBOL_GPL(twheel_set_slack);

/* Cancel @timer; with @try, only if its callback is not running. */
static int __twheel_cancel(struct twheel_timer *timer, bool try)
{
	struct twheel_base *base;
	unsigned long flags;
	bool running;
	int ret = 0;

	base = lock_timer_base(timer, &flags);
	running = twheel_running(base, timer);
	if (!running || !try)
		ret = twheel_detach_if_pending(base, timer);
	if (running)
		ret = -EBUSY;
	twheel_releasing(base);
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return ret;
}

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
 * * -EBUSY	- the callback is running right now (a fire pending
 *		  meanwhile, of a periodic timer or one the callback
 *		  re-armed, has still been cancelled)
 */
int twheel_cancel(struct twheel_timer *timer)
{
	return __twheel_cancel(timer, false);
}
EXPORT_SYMBOL_GPL(twheel_cancel);

/**
 * twheel_try_cancel - deactivate a timer unless its callback is running
 * @timer:	an initialized timer
 *
 * As twheel_cancel(), but a timer whose callback is running is left as it
 * is, as try_to_del_timer_sync() and hrtimer_try_to_cancel() leave theirs.
 * A caller that holds a lock its callback takes, and has the callback ask
 * whether the timer is pending (a periodic timer is filed for its next
 * deadline before the callback runs), stops the timer with this under that
 * lock, and, on -EBUSY, drops the lock and waits with
 * twheel_wait_running() before it tries again: the callback never finds
 * the timer cancelled halfway through a fire. Any context.
 *
 * Return:
 * * 1		- @timer was pending and is now cancelled
 * * 0		- @timer was not pending
 * * -EBUSY	- the callback is running right now; nothing changed
 */
int twheel_try_cancel(struct twheel_timer *timer)
{
	return __twheel_cancel(timer, true);
}
EXPORT_SYMBOL_GPL(twheel_try_cancel);

/*
 * Cancel @timer on @base, whose lock is held; with @shutdown, refuse every
 * later arming. Returns 1 if it was pending, else 0.
 */
static int twheel_stop_locked(struct twheel_base *base,
			      struct twheel_timer *timer, bool shutdown)
{
	lockdep_assert_held(&base->lock);

	if (shutdown)
		twheel_store_flags(timer, timer->flags | TWHEEL_F_SHUTDOWN);
	return twheel_detach_if_pending(base, timer);
}

/* What __twheel_cancel_sync() does before it waits for the callback. */
enum twheel_sync {
	SYNC_CANCEL,	/* cancel */
	SYNC_SHUTDOWN,	/* cancel, and refuse every later arming */
	SYNC_WAIT,	/* nothing: wait for the running callback alone */
};

/*
 * Stop @timer as @how says; if its callback is running, return its base
 * (with our waiter counted) in *@wait.
 */
static int twheel_cancel_or_wait(struct twheel_timer *timer,
				 enum twheel_sync how,
				 struct twheel_base **wait)
{
	struct twheel_base *base;
	unsigned long flags;
	int ret = 0;

	*wait = NULL;
	base = lock_timer_base(timer, &flags);
	if (how != SYNC_WAIT)
		ret = twheel_stop_locked(base, timer, how == SYNC_SHUTDOWN);
	if (WARN_ON_ONCE(base->running[RUN_WORK].timer == timer &&
			 current_work() == &base->sleep_work)) {
		/* Waiting for ourselves would never end. */
		ret = -EDEADLK;
	} else if (twheel_running(base, timer)) {
		base->waiters++;
		*wait = base;
	}
	twheel_releasing(base);
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return ret;
}

static bool twheel_done_running(struct twheel_base *base,
				struct twheel_timer *timer)
{
	/*
	 * Lockless: twheel_fire() clears these before it wakes us. A timer
	 * seen running under the lock is seen not running only once that
	 * callback has returned; a later one may have started, which
	 * twheel_cancel_sync() finds as it looks again under the lock.
	 */
	return !twheel_runs(&base->running[RUN_SOFTIRQ], timer) &&
	       !twheel_runs(&base->running[RUN_WORK], timer);
}

/*
 * Waiting for the callback is taking it as a lock: lockdep reports a call
 * from the callback itself, or under a lock the callback takes. See the
 * synchronization rules of twheel_cancel_sync().
 */
static void twheel_sync_acquire(struct twheel_timer *timer)
{
#ifdef CONFIG_LOCKDEP
	local_irq_disable();
	lock_map_acquire(&timer->lockdep_map);
	lock_map_release(&timer->lockdep_map);
	local_irq_enable();
#endif
}

static int __twheel_cancel_sync(struct twheel_timer *timer,
				enum twheel_sync how)
{
	struct twheel_base *base;
	int ret = 0, r;

	might_sleep();
	twheel_sync_acquire(timer);
	do {
		r = twheel_cancel_or_wait(timer, how, &base);
		if (r < 0)
			return r;
		ret |= r;
		if (base) {
			wait_event(twheel_sync_wait,
				   twheel_done_running(base, timer));
			twheel_lock(base);
			base->waiters--;
			twheel_unlock(base);
		}
	} while (base && how != SYNC_WAIT);
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
 * warning) when called from @timer's own sleepable callback, which it
 * does not wait for (a pending fire is cancelled all the same).
 */
int twheel_cancel_sync(struct twheel_timer *timer)
{
	return __twheel_cancel_sync(timer, SYNC_CANCEL);
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
	return __twheel_cancel_sync(timer, SYNC_SHUTDOWN);
}
EXPORT_SYMBOL_GPL(twheel_shutdown_sync);

/**
 * twheel_wait_running - wait for a timer's running callback to return
 * @timer:	an initialized timer
 *
 * Waits for the callback of @timer that is running at the call, if any,
 * to return (and may wait through a later one that started meanwhile),
 * and changes nothing: the timer may be pending, and fire again,
 * meanwhile and after. See twheel_try_cancel().
 *
 * Context: process context; may sleep. As for twheel_cancel_sync(): not
 * from the timer's own callback, nor holding a lock that the callback
 * takes.
 *
 * Return: 0; -EDEADLK (with a warning) when called from @timer's own
 * sleepable callback, which it does not wait for.
 */
int twheel_wait_running(struct twheel_timer *timer)
{
	return __twheel_cancel_sync(timer, SYNC_WAIT);
}
EXPORT_SYMBOL_GPL(twheel_wait_running);

/*
 * Shut down the first of the @n timers of @timers and those after it on
 * the same wheel, up to @n, under one hold of its lock
 * (twheel_stop_locked()); set the bit in @busy of each whose
 * callback is running, and count in @pending those that were pending.
 * Returns how many it took.
 */
static unsigned int twheel_shutdown_some(struct twheel_timer **timers,
					 unsigned int n, unsigned long *busy,
					 int *pending)
{
	struct twheel_base *base;
	unsigned long flags;
	unsigned int i;

	base = lock_timer_base(timers[0], &flags);
	for (i = 0; i < n; i++) {
		struct twheel_timer *timer = timers[i];

		/* Ours as lock_timer_base() sees it. */
		if (i && !twheel_on_base(base, timer))
			break;
		*pending += twheel_stop_locked(base, timer, true);
		if (twheel_running(base, timer))
			__set_bit(i, busy);
	}
	twheel_releasing(base);
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return i;
}

/**
 * twheel_shutdown_bulk - cancel many timers for good, for teardown
 * @timers:	initialized timers, each once
 * @n:		the number of timers
 *
 * As twheel_shutdown_sync() of each timer in turn, for callers that tear
 * many down at once. Timers that follow one another in @timers on the same
 * wheel (those armed on one CPU: timers armed together usually are) are
 * shut down 16 at a time under one hold of its lock; a timer whose
 * callback was running is then waited for on its own. Interrupts come in
 * between two holds: no loop runs over @n timers with them off.
 *
 * Context: process context; may sleep. See twheel_cancel_sync().
 *
 * Return: the number of timers that were pending.
 */
int twheel_shutdown_bulk(struct twheel_timer **timers, unsigned int n)
{
	DECLARE_BITMAP(busy, CASCADE_BATCH);
	unsigned int i = 0, j, to;
	int pending = 0;

	might_sleep();
	while (i < n) {
		to = min(n, i + CASCADE_BATCH);
		for (j = i; j < to; j++)
			twheel_sync_acquire(timers[j]);
		bitmap_zero(busy, CASCADE_BATCH);
		to = i + twheel_shutdown_some(timers + i, to - i, busy,
					      &pending);
		/* Rare: a callback was running. Wait for it as one would. */
		for_each_set_bit(j, busy, CASCADE_BATCH)
			pending += twheel_shutdown_sync(timers[i + j]) > 0;
		i = to;
		cond_resched();
	}
	return pending;
}
EXPORT_SYMBOL_GPL(twheel_shutdown_bulk);

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
	twheel_releasing(base);
	raw_spin_unlock_irqrestore(&base->lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(twheel_remaining);

/**
 * twheel_fire_time - when the wheel fired the running callback's timer
 * @timer:	the timer whose callback is running, called from that callback
 *
 * The wheel reads the clock as a run starts and again every 16 timers (or
 * batch of them): the latest read before the timer fired, at or after
 * twheel_fired_deadline(), is the fire time twheel accounts lateness with
 * (debugfs, tracepoints); for a %TWHEEL_SLEEPABLE timer, the clock read as
 * the work item runs its callback. It saves a callback that reports when
 * it fired a clocksource read of its own.
 *
 * Return: the fire time in CLOCK_MONOTONIC nanoseconds, or the current
 * time if @timer's callback is not running on its wheel (it was moved).
 */
u64 twheel_fire_time(const struct twheel_timer *timer)
{
	struct twheel_base *base = per_cpu(twheel_bases, READ_ONCE(timer->cpu));
	unsigned int ctx;

	/* Our own callback's entry: stable until the callback returns. */
	for (ctx = 0; ctx < RUN_CONTEXTS; ctx++)
		if (twheel_runs(&base->running[ctx], timer))
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
	unsigned int i;

	if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return -EINVAL;
	base = per_cpu(twheel_bases, cpu);
	raw_spin_lock_irqsave(&base->lock, flags);
	twheel_held(base);
	*stats = base->stats;
	stats->pending = twheel_base_pending(base);
	stats->fired = stats->early;
	for (i = 0; i < TWHEEL_LATE_BUCKETS; i++)
		stats->fired += stats->lateness[i];
	memcpy(stats->level_pending, base->wheel.level_count,
	       sizeof(stats->level_pending));
	stats->cascaded = base->wheel.cascaded;
	stats->hrtimer_armed = hrtimer_active(&base->hrtimer);
	twheel_releasing(base);
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
		seq_printf(m, "cpu%u slices=%llu deferred=%llu\n", cpu,
			   st.slices, st.deferred);
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

/*
 * debugfs twheel/irqoff: "1" turns the interrupts-off accounting on, from
 * zero; "0" turns it off. Reads give, per CPU, the longest lock hold seen,
 * the holds timed and those longer than a tenth of a tick, then the sums,
 * and the holds of all CPUs by length: "hist" and a count per bucket of
 * twheel_hold_bucket(), under 1 us, 1-2 us, 2-4 us, and so on.
 */
static int twheel_irqoff_show(struct seq_file *m, void *v)
{
	u64 max = 0, holds = 0, long_holds = 0, hist[IRQOFF_BUCKETS] = {};
	u64 cpu_max, cpu_holds, cpu_long;
	unsigned int cpu, b;

	for_each_possible_cpu(cpu) {
		struct twheel_base *base = per_cpu(twheel_bases, cpu);

		/* One snapshot: the CPU's counts and its buckets agree. */
		twheel_lock(base);
		cpu_max = base->stats.irqoff_max_ns;
		cpu_holds = base->stats.irqoff_holds;
		cpu_long = base->stats.irqoff_long;
		for (b = 0; b < IRQOFF_BUCKETS; b++)
			hist[b] += base->held_hist[b];
		twheel_unlock(base);
		seq_printf(m, "cpu%u %llu %llu %llu\n", cpu, cpu_max, cpu_holds,
			   cpu_long);
		max = max(max, cpu_max);
		holds += cpu_holds;
		long_holds += cpu_long;
	}
	seq_printf(m, "max_ns %llu\nholds %llu\nlong %llu\ntick_ns %u\non %d\nhist",
		   max, holds, long_holds, tick_ns,
		   static_key_enabled(&twheel_irqoff_key));
	for (b = 0; b < IRQOFF_BUCKETS; b++)
		seq_printf(m, " %llu", hist[b]);
	seq_putc(m, '\n');
	return 0;
}

static int twheel_irqoff_open(struct inode *inode, struct file *file)
{
	return single_open(file, twheel_irqoff_show, NULL);
}

static ssize_t twheel_irqoff_write(struct file *file, const char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	unsigned int cpu;
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &on);
	if (ret)
		return ret;
	if (!on) {
		static_branch_disable(&twheel_irqoff_key);
		return len;
	}
	for_each_possible_cpu(cpu) {
		struct twheel_base *base = per_cpu(twheel_bases, cpu);

		twheel_lock(base);
		/* A hold the last accounting did not see end: not timed. */
		base->held_at = 0;
		base->stats.irqoff_max_ns = 0;
		base->stats.irqoff_holds = 0;
		base->stats.irqoff_long = 0;
		memset(base->held_hist, 0, sizeof(base->held_hist));
		twheel_unlock(base);
	}
	static_branch_enable(&twheel_irqoff_key);
	return len;
}

static const struct file_operations twheel_irqoff_fops = {
	.owner		= THIS_MODULE,
	.open		= twheel_irqoff_open,
	.read		= seq_read,
	.write		= twheel_irqoff_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* Before @cpu comes up: its wheel is empty, its clock starts now. */
static int twheel_cpu_prepare(unsigned int cpu)
{
	struct twheel_base *base = per_cpu(twheel_bases, cpu);

	twheel_lock(base);
	WARN_ON_ONCE(twheel_base_pending(base));
	wheel_init(&base->wheel, tick_ns, ktime_get());
	base->next_expiry = U64_MAX;
	base->in_run = false;
	twheel_unlock(base);
	return 0;
}

/*
 * On @cpu, once it runs: take timers, and program the hrtimer here. Also
 * when a CPU's going down failed after twheel_cpu_offline(): the base has
 * its timers, and maybe expired sleepable ones that the sleep work left.
 */
static int twheel_cpu_online(unsigned int cpu)
{
	struct twheel_base *base = per_cpu(twheel_bases, cpu);

	twheel_lock(base);
	WRITE_ONCE(base->online, true);
	base->next_expiry = wheel_next_event(&base->wheel);
	twheel_program(base);
	if (base->sleeping)
		queue_work_on(cpu, twheel_wq, &base->sleep_work);
	twheel_unlock(base);
	return 0;
}

/*
 * On @cpu, as it starts going down: stop its base, so that none of its
 * callbacks runs from now on, here or on the CPU that inherits its hrtimer
 * and work items. Its timers stay until twheel_cpu_dead() moves them; a
 * callback running now that re-arms its timer leaves it here too.
 */
static int twheel_cpu_offline(unsigned int cpu)
{
	struct twheel_base *base = per_cpu(twheel_bases, cpu);

	twheel_lock(base);
	WRITE_ONCE(base->online, false);
	/*
	 * A slice of the runner may be in progress, preempted where bottom
	 * halves off do not keep others out (PREEMPT_RT): it stops at its
	 * end, and no run starts after. Wait for it before the hrtimer and
	 * the work item are cancelled: its end may arm or queue them.
	 */
	while (base->in_run) {
		twheel_unlock(base);
		usleep_range(100, 200);
		twheel_lock(base);
	}
	twheel_unlock(base);
	hrtimer_cancel(&base->hrtimer);
	cancel_work_sync(&base->sleep_work);
	/* The wheel may be behind: keep twheel_forward() off it. */
	twheel_lock(base);
	WRITE_ONCE(base->backlog, false);
	base->next_expiry = 0;
	twheel_unlock(base);
	return 0;
}

/*
 * The first occupied slot of @w, lowest level first, or %WHEEL_NONE for an
 * empty wheel: the timers of one tick in the order they were filed.
 */
static unsigned int twheel_first_slot(const struct wheel *w)
{
	unsigned int lvl, idx;

	for (lvl = 0; lvl < LVL_DEPTH; lvl++) {
		idx = wheel_lvl_first(w, lvl, WHEEL_NONE);
		if (idx != WHEEL_NONE)
			return idx;
	}
	return WHEEL_NONE;
}

/*
 * Move up to CASCADE_BATCH timers of the stopped base @old to @new, both
 * locked: expired sleepable ones first, then the wheel's, lowest level
 * first so that timers of one tick keep their order. Returns true when
 * @old is empty.
 */
static bool twheel_move_some(struct twheel_base *old, struct twheel_base *new)
{
	unsigned int n, idx = 0;

	for (n = 0; n < CASCADE_BATCH; n++) {
		struct list_head *head = &old->sleep_list;
		struct twheel_timer *timer;

		while (list_empty(head)) {
			idx = twheel_first_slot(&old->wheel);
			if (idx == WHEEL_NONE)
				return true;
			head = &old->wheel.slots[idx].head;
		}
		timer = list_first_entry(head, struct twheel_timer, entry);
		/* Pending throughout: it is linked again under both locks. */
		twheel_unlink(old, timer);
		WRITE_ONCE(timer->cpu, new->cpu);
		if (head == &old->sleep_list) {
			twheel_hand_over(new, timer);
			queue_work_on(new->cpu, twheel_wq, &new->sleep_work);
		} else {
			twheel_enqueue(new, timer);
		}
	}
	return false;
}

/*
 * @cpu is dead: move its timers to a live CPU, a bounded batch per lock
 * hold. Timers of the dead base can still be cancelled or re-armed
 * meanwhile: they are locked through their base as always.
 */
static int twheel_cpu_dead(unsigned int cpu)
{
	struct twheel_base *old = per_cpu(twheel_bases, cpu);
	struct twheel_base *new = per_cpu(twheel_bases, raw_smp_processor_id());
	bool done;

	do {
		twheel_lock(new);
		raw_spin_lock_nested(&old->lock, SINGLE_DEPTH_NESTING);
		done = twheel_move_some(old, new);
		raw_spin_unlock(&old->lock);
		twheel_unlock(new);
		cond_resched();
	} while (!done);
	return 0;
}

static void twheel_base_init(struct twheel_base *base, unsigned int cpu)
{
	raw_spin_lock_init(&base->lock);
	base->cpu = cpu;
	base->next_expiry = U64_MAX;
	wheel_init(&base->wheel, tick_ns, ktime_get());
	INIT_LIST_HEAD(&base->sleep_list);
	base->late.counter = &base->stats.lateness[0];
	hrtimer_setup(&base->hrtimer, twheel_hrtimer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS_PINNED_SOFT);
	INIT_CSD(&base->kick, twheel_kick_fn, base);
	INIT_WORK(&base->sleep_work, twheel_sleep_work_fn);
}

static void twheel_base_stop(struct twheel_base *base)
{
	/*
	 * Offline first: a kick still on its way (an arm that moved the
	 * base's last timer away leaves @next_expiry set) starts no
	 * hrtimer after the cancel below.
	 */
	twheel_lock(base);
	WRITE_ONCE(base->online, false);
	twheel_unlock(base);
	/* A kick clears the flag under the lock; synchronize_rcu() does the rest. */
	while (READ_ONCE(base->kick_queued))
		cpu_relax();
	hrtimer_cancel(&base->hrtimer);
	cancel_work_sync(&base->sleep_work);
	WARN(twheel_base_pending(base), "twheel: %llu timers left on CPU %u\n",
	     twheel_base_pending(base), base->cpu);
}

static void twheel_bases_free(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		vfree(per_cpu(twheel_bases, cpu));
}

static int __init twheel_bases_alloc(void)
{
	struct twheel_base *base;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		base = vzalloc_node(sizeof(*base), cpu_to_node(cpu));
		if (!base)
			return -ENOMEM;
		twheel_base_init(base, cpu);
		per_cpu(twheel_bases, cpu) = base;
	}
	return 0;
}

static int __init twheel_init(void)
{
	int ret;

	if (tick_us < TICK_MIN_US || tick_us > TICK_MAX_US) {
		pr_err("tick_us=%u is outside %u..%lu\n", tick_us,
		       TICK_MIN_US, TICK_MAX_US);
		return -EINVAL;
	}
	tick_ns = tick_us * NSEC_PER_USEC;
	/* The top level must reach KTIME_MAX: see the level table. */
	BUILD_BUG_ON(LVL_SHIFT(LVL_DEPTH) < 64 - ilog2(TICK_MIN_US * NSEC_PER_USEC));

	ret = twheel_bases_alloc();
	if (ret)
		goto out_free_bases;
	twheel_wq = alloc_workqueue("twheel", 0, 0);
	if (!twheel_wq) {
		ret = -ENOMEM;
		goto out_free_bases;
	}
	ret = smpboot_register_percpu_thread(&twheel_runner_threads);
	if (ret)
		goto out_destroy_wq;

	ret = cpuhp_setup_state(CPUHP_BP_PREPARE_DYN, "twheel:prepare",
				twheel_cpu_prepare, twheel_cpu_dead);
	if (ret < 0)
		goto out_unregister_runners;
	twheel_hp_prepare = ret;
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "twheel:online",
				twheel_cpu_online, twheel_cpu_offline);
	if (ret < 0)
		goto out_remove_prepare;
	twheel_hp_online = ret;
	twheel_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("stats", 0444, twheel_debugfs, NULL,
			    &twheel_stats_fops);
	debugfs_create_file("irqoff", 0644, twheel_debugfs, NULL,
			    &twheel_irqoff_fops);
	pr_info("tick %u us, %u levels of %lu slots per CPU\n", tick_us,
		LVL_DEPTH, LVL_SLOTS);
	return 0;

out_remove_prepare:
	cpuhp_remove_state_nocalls(twheel_hp_prepare);
out_unregister_runners:
	smpboot_unregister_percpu_thread(&twheel_runner_threads);
out_destroy_wq:
	destroy_workqueue(twheel_wq);
out_free_bases:
	twheel_bases_free();
	return ret;
}

static void __exit twheel_exit(void)
{
	unsigned int cpu;

	debugfs_remove_recursive(twheel_debugfs);
	cpuhp_remove_state_nocalls(twheel_hp_online);
	cpuhp_remove_state_nocalls(twheel_hp_prepare);
	smpboot_unregister_percpu_thread(&twheel_runner_threads);
	for_each_possible_cpu(cpu)
		twheel_base_stop(per_cpu(twheel_bases, cpu));
	/* An IPI handler runs with interrupts off, so this waits for it. */
	synchronize_rcu();
	destroy_workqueue(twheel_wq);
	twheel_bases_free();
}

module_init(twheel_init);
module_exit(twheel_exit);

MODULE_AUTHOR("The twheel authors");
MODULE_DESCRIPTION("Per-CPU hierarchical timing wheel with tick precision");
MODULE_LICENSE("GPL");
