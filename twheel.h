/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twheel - per-CPU hierarchical timing wheel with tick precision
 *
 * The kernel API of twheel.ko. See Documentation/twheel.rst and the design
 * comment at the top of twheel.c.
 */
#ifndef _TWHEEL_H
#define _TWHEEL_H

#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/types.h>

/* Flags for twheel_timer_init(); the high bits are twheel's own state. */
#define TWHEEL_PINNED		0x00000001U	/* stay on its CPU, see twheel_add() */
#define TWHEEL_SLEEPABLE	0x00000002U	/* callback runs in process context */
#define TWHEEL_BATCH		0x00000004U	/* see twheel_timer_init_batch() */
#define TWHEEL_INIT_FLAGS	(TWHEEL_PINNED | TWHEEL_SLEEPABLE | TWHEEL_BATCH)

/* Most timers a batch callback receives at once. */
#define TWHEEL_BATCH_MAX	32

/* Repeat count of a periodic timer that fires until it is cancelled. */
#define TWHEEL_FOREVER		U32_MAX

/**
 * enum twheel_mode - how an expiry time is to be read
 * @TWHEEL_REL: nanoseconds from now
 * @TWHEEL_ABS: absolute CLOCK_MONOTONIC time (ktime_get()) in nanoseconds
 */
enum twheel_mode {
	TWHEEL_REL,
	TWHEEL_ABS,
};

struct twheel_timer;
typedef void (*twheel_fn_t)(struct twheel_timer *timer);
typedef void (*twheel_batch_fn_t)(struct twheel_timer **timers,
				  unsigned int n);

/**
 * struct twheel_timer - a timer on a twheel wheel; embed it in your object
 * @entry:	wheel slot or sleep list; @entry.next is NULL when not pending
 * @expires:	deadline, CLOCK_MONOTONIC nanoseconds
 * @function:	callback, called with the timer (use container_of())
 * @batch:	callback of a %TWHEEL_BATCH timer, called with due timers
 * @period:	nanoseconds between fires of a periodic timer, 0 for one-shot
 * @left:	deadlines left for a periodic timer, %TWHEEL_FOREVER for no limit
 * @fired:	deadline delivered by the last fire
 * @overruns:	deadlines the last fire stands for, besides @fired
 * @flags:	%TWHEEL_INIT_FLAGS and twheel's internal state bits
 * @slack:	the slack grid: the timer's tick is rounded up to a multiple
 *		of 2^@slack ticks, see twheel_set_slack()
 * @cpu:	CPU whose wheel holds (or last held) the timer
 * @idx:	wheel slot index while pending
 * @lockdep_map: the callback as a lock, for lockdep to check
 *		twheel_cancel_sync() against (CONFIG_LOCKDEP only)
 *
 * All fields are private to twheel.c: use the accessors below. The struct
 * is 64 bytes on 64-bit architectures without CONFIG_LOCKDEP.
 */
struct twheel_timer {
	struct list_head	entry;
	u64			expires;
	union {
		twheel_fn_t		function;
		twheel_batch_fn_t	batch;
	};
	u64			period;
	u64			fired;
	u32			left;
	u32			overruns;
	u16			flags;
	u8			slack;
	u16			cpu;
	u16			idx;
#ifdef CONFIG_LOCKDEP
	struct lockdep_map	lockdep_map;
#endif
};

void __twheel_timer_init(struct twheel_timer *timer, twheel_fn_t function,
			 u32 flags, const char *name,
			 struct lock_class_key *key);

#ifdef CONFIG_LOCKDEP
/*
 * One lockdep class per call site and kind of callback (softirq or
 * sleepable), as for timer_setup().
 */
#define twheel_timer_init(timer, function, flags)			\
	do {								\
		static struct lock_class_key __key[2];			\
		u32 __flags = (flags);					\
									\
		__twheel_timer_init((timer), (function), __flags,	\
				    #timer,				\
				    &__key[!!(__flags & TWHEEL_SLEEPABLE)]); \
	} while (0)
#else
#define twheel_timer_init(timer, function, flags)			\
	__twheel_timer_init((timer), (function), (flags), NULL, NULL)
#endif

/**
 * twheel_timer_init_batch - initialize a timer whose fires come in batches
 * @timer:	the timer
 * @fn:		the batch callback
 * @flags:	as for twheel_timer_init(); %TWHEEL_SLEEPABLE is not allowed
 *
 * For clients whose callback only queues what fired (an event queue, a
 * completion list): when due timers with the same @fn (and, under lockdep,
 * initialized at the same place) follow each other in a slot, twheel calls
 * @fn once for up to %TWHEEL_BATCH_MAX of them, in
 * firing order, in softirq context, having taken the wheel's lock once for
 * all of them. Each timer in the batch is a fire as for a plain callback:
 * twheel_fired_deadline(), twheel_overruns() and twheel_fire_time() work,
 * and @fn may free or re-arm any of them. twheel_cancel_sync() of a timer
 * waits for the batch that holds it. The array belongs to twheel and is
 * only valid during the call.
 */
#define twheel_timer_init_batch(timer, fn, flags)			\
	do {								\
		struct twheel_timer *__t = (timer);			\
									\
		twheel_timer_init(__t, NULL, (flags) | TWHEEL_BATCH);	\
		__t->batch = (fn);					\
	} while (0)

int twheel_add(struct twheel_timer *timer, ktime_t expires,
	       enum twheel_mode mode);
int twheel_add_on(struct twheel_timer *timer, ktime_t expires,
		  enum twheel_mode mode, unsigned int cpu);
int twheel_add_bulk(struct twheel_timer **timers, const ktime_t *expires,
		    unsigned int n, enum twheel_mode mode, int *ret);
int twheel_mod(struct twheel_timer *timer, ktime_t expires,
	       enum twheel_mode mode);
int twheel_mod_pending(struct twheel_timer *timer, ktime_t expires,
		       enum twheel_mode mode);
int twheel_mod_pending_period(struct twheel_timer *timer, ktime_t expires,
			      enum twheel_mode mode, u64 period_ns, u32 count);
int twheel_reduce(struct twheel_timer *timer, ktime_t expires,
		  enum twheel_mode mode);
int twheel_set_period(struct twheel_timer *timer, u64 period_ns, u32 count);
int twheel_set_slack(struct twheel_timer *timer, u64 slack_ns);
int twheel_cancel(struct twheel_timer *timer);
int twheel_try_cancel(struct twheel_timer *timer);
int twheel_cancel_sync(struct twheel_timer *timer);
int twheel_shutdown_sync(struct twheel_timer *timer);
int twheel_wait_running(struct twheel_timer *timer);
int twheel_shutdown_bulk(struct twheel_timer **timers, unsigned int n);
s64 twheel_remaining(struct twheel_timer *timer);
u64 twheel_fire_time(const struct twheel_timer *timer);
u64 twheel_tick_ns(void);

#define TWHEEL_STATS_LEVELS	8
#define TWHEEL_LATE_BUCKETS	8

/**
 * struct twheel_stats - counters of one CPU's wheel, see twheel_cpu_stats()
 * @pending:		armed timers, expired sleepable ones not yet run included
 * @fired:		callbacks run
 * @cascaded:		timers moved to a lower level
 * @cancelled:		pending timers taken off by a cancel or a shutdown
 * @wakeups:		runs of the wheel's hrtimer
 * @slices:		slices of a backlog run by the CPU's runner thread,
 *			when the CPU had nothing else to run
 * @deferred:		runs of the hrtimer that left a backlog to the
 *			next slices (the runner's or the hrtimer's), see
 *			"Bounded work" in twheel.rst
 * @early:		fires before their deadline (a bug: always 0)
 * @lateness:		fires by lateness in ticks, taken when their slot runs
 *			(a sleepable timer's when the work item runs it):
 *			[0] under one tick, then
 *			[n] from 2^(n-1) up to 2^n ticks, the last one open
 * @level_pending:	timers filed at each level
 * @irqoff_max_ns:	longest hold of the wheel's lock (interrupts off)
 *			while debugfs twheel/irqoff was on, see twheel.rst
 * @irqoff_holds:	holds of the wheel's lock timed meanwhile
 * @irqoff_long:	those of them longer than a tenth of a tick
 * @hrtimer_armed:	the wheel's hrtimer is queued or running
 */
struct twheel_stats {
	u64	pending;
	u64	fired;
	u64	cascaded;
	u64	cancelled;
	u64	wakeups;
	u64	slices;
	u64	deferred;
	u64	early;
	u64	lateness[TWHEEL_LATE_BUCKETS];
	u32	level_pending[TWHEEL_STATS_LEVELS];
	u64	irqoff_max_ns;
	u64	irqoff_holds;
	u64	irqoff_long;
	bool	hrtimer_armed;
};

int twheel_cpu_stats(unsigned int cpu, struct twheel_stats *stats);

/**
 * twheel_pending - is a timer queued to fire?
 * @timer: an initialized timer
 *
 * A lockless snapshot: the answer may be stale by the time it is used
 * unless the caller serializes against every other operation on @timer.
 * A periodic timer reads as pending from one fire to the next, up to its
 * last; a %TWHEEL_SLEEPABLE one until its callback starts; a timer of a
 * dead CPU while it moves to another wheel.
 *
 * Return: true if @timer is armed and its callback has not yet started.
 */
static inline bool twheel_pending(const struct twheel_timer *timer)
{
	/* Pairs with the WRITE_ONCE()s in twheel.c that queue and detach. */
	return READ_ONCE(timer->entry.next);
}

/**
 * twheel_overruns - deadlines a late periodic fire stands for
 * @timer: the timer whose callback is running
 *
 * Only meaningful inside the callback.
 *
 * Return: the number of deadlines before twheel_fired_deadline() that had
 * passed, unfired, when this fire was delivered.
 */
static inline u32 twheel_overruns(const struct twheel_timer *timer)
{
	return timer->overruns;
}

/**
 * twheel_fires_left - deadlines left for a periodic timer
 * @timer: the timer
 *
 * Inside the callback, the fire being delivered is already counted: a
 * counted timer reads 0 in the callback of its last fire.
 *
 * Return: deadlines left to deliver, or %TWHEEL_FOREVER for an unlimited
 * periodic timer.
 */
static inline u32 twheel_fires_left(const struct twheel_timer *timer)
{
	return READ_ONCE(timer->left);
}

/**
 * twheel_period - the period of a timer
 * @timer: the timer
 *
 * As set by twheel_set_period() or twheel_mod_pending_period(); it stays
 * after the last fire of a counted timer.
 *
 * Return: nanoseconds between deadlines, 0 for a one-shot timer.
 */
static inline u64 twheel_period(const struct twheel_timer *timer)
{
	/* Pairs with the WRITE_ONCE() of twheel_period_set(). */
	return READ_ONCE(timer->period);
}

/**
 * twheel_expires - the deadline of a timer
 * @timer: the timer
 *
 * Inside the callback of a periodic timer, this is already the next one;
 * after its last fire, the deadline that fire delivered.
 *
 * Return: the deadline in CLOCK_MONOTONIC nanoseconds.
 */
static inline u64 twheel_expires(const struct twheel_timer *timer)
{
	return READ_ONCE(timer->expires);
}

/**
 * twheel_slack - the slack a timer uses
 * @timer: the timer
 *
 * Return: how late after its deadline, besides the usual tick, the timer
 * may fire: the slack given to twheel_set_slack() rounded down to a power
 * of two ticks, 0 for less than two ticks.
 */
static inline u64 twheel_slack(const struct twheel_timer *timer)
{
	u8 slack = READ_ONCE(timer->slack);

	return slack ? twheel_tick_ns() << slack : 0;
}

/**
 * twheel_fired_deadline - the deadline the running callback delivers
 * @timer: the timer whose callback is running
 *
 * Only meaningful inside the callback.
 *
 * Return: the deadline, in CLOCK_MONOTONIC nanoseconds, of this fire.
 */
static inline u64 twheel_fired_deadline(const struct twheel_timer *timer)
{
	return timer->fired;
}

#endif /* _TWHEEL_H */
