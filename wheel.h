/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pure timing wheel of twheel: slots, occupancy bitmaps, the wheel
 * clock, cascading and collecting due timers, with time passed in. No
 * locks, no hrtimer, no per-CPU state: twheel.c drives one per CPU, and the
 * KUnit suite drives one on virtual time. See the design comment at the top
 * of twheel.c for the geometry and wheel.c for the algorithms.
 */
#ifndef _TWHEEL_WHEEL_H
#define _TWHEEL_WHEEL_H

#include <linux/bitops.h>
#include <linux/list.h>
#include <linux/types.h>

#include "twheel.h"

/*
 * A slot of level n spans LVL_GRAN(n) ticks, a granule of the level: the
 * base-64 digits of the tick number from the n-th up. A level has two
 * spans of the level above of slots, LVL_SLOTS: the span that holds @clk
 * and the next one (see "Filing" in wheel.c).
 */
#define LVL_BITS	6
#define LVL_SIZE	BIT(LVL_BITS)
#define LVL_SLOTS	(2 * LVL_SIZE)
#define LVL_SLOT_MASK	(LVL_SLOTS - 1)
#define LVL_DEPTH	8
#define WHEEL_SIZE	(LVL_SLOTS * LVL_DEPTH)

/* Level n: its slots start at LVL_OFFS(n) and each spans LVL_GRAN(n) ticks. */
#define LVL_SHIFT(n)	((n) * LVL_BITS)
#define LVL_GRAN(n)	(1ULL << LVL_SHIFT(n))
#define LVL_OFFS(n)	((n) * LVL_SLOTS)

/* timer->idx values off the wheel, and "no slot" for wheel.drain and .due. */
#define WHEEL_NONE	WHEEL_SIZE

/*
 * Slack: a timer's tick is rounded up to a multiple of 2^timer->slack
 * ticks (see "Slack" in wheel.c); 0 keeps it exact. Larger grids would
 * exceed every deadline the wheel can hold.
 */
#define WHEEL_SLACK_MAX	(LVL_SHIFT(LVL_DEPTH) - 1)

/**
 * struct wheel_slot - one slot of a wheel
 * @head:	the timers, FIFO
 * @first:	earliest deadline filed since the slot was last empty
 * @last:	latest deadline filed since the slot was last empty
 * @count:	timers in the slot
 * @slack:	largest slack grid (timer->slack) filed since the slot was
 *		last empty
 * @slack_min:	smallest slack grid filed since the slot was last empty
 * @moved:	the slot a splice moved this one's timers to, until it is
 *		filed anew; else %WHEEL_NONE (see "Cascading" in wheel.c)
 *
 * @first, @last, @slack and @slack_min are bounds, not exact: a cancel
 * does not tighten them.
 */
struct wheel_slot {
	struct list_head	head;
	u64			first;
	u64			last;
	u32			count;
	u8			slack;
	u8			slack_min;
	u16			moved;
};

/**
 * struct wheel - a hierarchical timing wheel on a clock of ticks
 * @clk:	first tick not yet processed: every filed tick is >= @clk
 * @tick_ns:	length of a tick
 * @tick_inv:	floor(2^64 / @tick_ns), to divide by @tick_ns without a
 *		64-bit division
 * @tick_max:	the tick of KTIME_MAX: slack never files a timer later
 * @drain:	per level, the slot being drained, or %WHEEL_NONE
 * @draining:	the levels with a drain in progress, a bit each
 * @drain_start: per level, the first tick of @drain's span
 * @drain_limit: at most the first drain tick of a slot not draining, so
 *		that wheel_forward() does not pass it
 * @limit_stale: a slot above level 0 emptied since @drain_limit was set:
 *		it may be less than that drain tick
 * @due:	the level-0 slot being expired, or %WHEEL_NONE
 * @cascaded:	timers moved down a level, ever
 * @level_count: timers filed at each level
 * @pending_map: occupied slots, a bitmap of LVL_SLOTS bits per level
 * @slots:	the slots
 */
struct wheel {
	u64			clk;
	u64			tick_ns;
	u64			tick_inv;
	u64			tick_max;
	u16			drain[LVL_DEPTH];
	u8			draining;
	bool			limit_stale;
	unsigned int		due;
	u64			drain_start[LVL_DEPTH];
	u64			drain_limit;
	u64			cascaded;
	u32			level_count[LVL_DEPTH];
	unsigned long		pending_map[LVL_DEPTH][BITS_TO_LONGS(LVL_SLOTS)];
	struct wheel_slot	slots[WHEEL_SIZE];
};

/* What wheel_advance() found. */
enum wheel_state {
	WHEEL_IDLE,	/* nothing is due: the wheel is caught up */
	WHEEL_DUE,	/* a level-0 slot is due: see wheel_first_due() */
	WHEEL_AGAIN,	/* a cascade used up the budget: call again */
};

#endif /* _TWHEEL_WHEEL_H */
