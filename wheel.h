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

#include <linux/list.h>
#include <linux/types.h>

#include "twheel.h"

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

/* timer->idx values off the wheel, and "no slot" for wheel.drain/due. */
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
 *
 * @first, @last and @slack are bounds, not exact: a cancel does not
 * tighten them.
 */
struct wheel_slot {
	struct list_head	head;
	u64			first;
	u64			last;
	u32			count;
	u8			slack;
};

/**
 * struct wheel - a hierarchical timing wheel on a clock of ticks
 * @clk:	first tick not yet processed: every filed tick is >= @clk
 * @tick_ns:	length of a tick
 * @tick_inv:	floor(2^64 / @tick_ns), to divide by @tick_ns without a
 *		64-bit division
 * @tick_max:	the tick of KTIME_MAX: slack never files a timer later
 * @drain:	the higher-level slot being cascaded, or %WHEEL_NONE
 * @due:	the level-0 slot being expired, or %WHEEL_NONE
 * @cascaded:	timers moved down a level, ever
 * @level_count: timers filed at each level
 * @pending_map: occupied slots, one bit per slot, one u64 per level
 * @slots:	the slots
 */
struct wheel {
	u64			clk;
	u64			tick_ns;
	u64			tick_inv;
	u64			tick_max;
	unsigned int		drain;
	unsigned int		due;
	u64			cascaded;
	u32			level_count[LVL_DEPTH];
	u64			pending_map[LVL_DEPTH];
	struct wheel_slot	slots[WHEEL_SIZE];
};

/* What wheel_advance() found. */
enum wheel_state {
	WHEEL_IDLE,	/* nothing is due: the wheel is caught up */
	WHEEL_DUE,	/* a level-0 slot is due: see wheel_first_due() */
	WHEEL_AGAIN,	/* a cascade used up the budget: call again */
};

#endif /* _TWHEEL_WHEEL_H */
