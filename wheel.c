// SPDX-License-Identifier: GPL-2.0
/*
 * twheel's pure timing wheel: see wheel.h. Included by twheel.c (the
 * per-CPU driver) and by the KUnit suite, which drives it on virtual time;
 * every function is static so that the compiler inlines the hot ones.
 *
 * Filing
 * ------
 *
 * A timer due at tick E (the first tick boundary at or after its deadline)
 * is filed by comparing E with @clk as base-64 numbers: it goes to the level
 * of the highest digit in which they differ, in the slot of E's digit there
 * (wheel_calc_idx()). A level-0 slot therefore holds the timers of exactly
 * one tick, and an occupied slot of a level n > 0 always lies after @clk's
 * own digit at level n: the levels never wrap.
 *
 * Events
 * ------
 *
 * A level-0 slot is due once the latest deadline filed in it (@last) has
 * passed, which is at or before the end of its tick: a sparse timer fires
 * at its deadline, not at the end of its tick, and no timer fires early.
 * A slot of a higher level is due for cascading when @clk reaches the start
 * of its span. The next event is the first occupied slot of the lowest
 * non-empty level: any level-0 slot comes before any slot above it.
 *
 * Cascading
 * ---------
 *
 * When @clk enters the span of a higher-level slot, that slot (only one at a
 * time: see wheel_advance()) is drained: its timers are filed again at lower
 * levels. A drain is bounded: wheel_advance() moves at most a budget of
 * timers per call, and the caller may drop its lock in between. Meanwhile a
 * timer filed with a tick inside the draining slot's span joins that slot's
 * tail, so that timers of one tick keep their FIFO order. When every timer
 * of the slot falls into one lower slot (a burst with one deadline, which
 * @first and @last tell), the whole list is spliced there in O(1).
 *
 * A spliced timer's @idx still names the slot it was filed in, whose span
 * @clk has entered since. wheel_slot_of() follows such a stale index down
 * to the slot the splice put it in: the splice target depends only on the
 * timer's tick and the start of the stale slot's span, and no slot is reused
 * before every timer that was spliced out of it has fired.
 *
 * Slack
 * -----
 *
 * A timer with a slack grid of s (timer->slack, set by the driver from the
 * slack its user allows, see wheel_slack_grid()) is filed not at its
 * deadline's tick E but at E rounded up to a multiple of 2^s ticks, where
 * 2^s ticks is the largest power of two not above the slack: every place
 * that needs a timer's tick (filing, cascading, following a stale index)
 * asks wheel_timer_tick(), so the rounded tick is simply the timer's tick
 * and everything above holds for it. The rounding adds less than 2^s ticks
 * to E, and E * tick is less than a tick after the deadline, so the tick
 * ends less than 2^s ticks, at most the slack, after the deadline. The
 * slot is still due when its latest deadline has passed, which is at or
 * before the end of that tick: slack never makes a timer early, and never
 * later than its slack plus one tick (plus the softirq latency).
 *
 * Why powers of two: the grids nest, so that a timer with a coarse grid and
 * one with a finer grid whose windows overlap meet on a point of the coarse
 * grid, which lies on the finer one too; timers with any mix of slacks
 * share the ticks of the coarsest grid their windows allow, and a wheel
 * with many timers wakes up once per occupied grid point instead of once
 * per deadline. Rounding to the wheel's own 64^k slot widths would nest as
 * well but use at worst 1/64 of the slack allowed (a slack of 63 ticks
 * would round nothing); powers of two use more than half of it. timer_list
 * rounds every timer to its level's granularity (8^k jiffies, 12.5 % of the
 * delay at most) without being asked; here the user asks for the slack,
 * per timer, and a timer without slack keeps its exact tick.
 *
 * A rounded tick past the tick of KTIME_MAX is not used: the timer keeps
 * its exact tick. A slot's @slack bounds the grids filed in it, so that a
 * drain can still bound the ticks of its timers from @first and @last.
 */

#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/log2.h>
#include <linux/math64.h>

#include "wheel.h"

/* floor(@ns / tick) from one multiplication and at most one correction. */
static u64 wheel_ns_div(const struct wheel *w, u64 ns)
{
	u64 q = mul_u64_u64_shr(ns, w->tick_inv, 64);

	/* tick_inv <= 2^64 / tick: q is the quotient or one below it. */
	if (ns - q * w->tick_ns >= w->tick_ns)
		q++;
	return q;
}

/* The tick of a deadline: the first tick boundary at or after it. */
static u64 wheel_tick_of(const struct wheel *w, u64 ns)
{
	return wheel_ns_div(w, ns + w->tick_ns - 1);
}

/**
 * wheel_slack_grid - the slack grid of a timer allowed some slack
 * @tick_ns:	the wheel's tick
 * @slack_ns:	how late after its deadline the timer may fire
 *
 * Return: s such that 2^s ticks is the largest power of two at most
 * @slack_ns (0, an exact tick, for less than two ticks of slack), at most
 * %WHEEL_SLACK_MAX: the value for timer->slack.
 */
static u8 wheel_slack_grid(u64 tick_ns, u64 slack_ns)
{
	u64 ticks = div64_u64(slack_ns, tick_ns);

	if (ticks < 2)
		return 0;
	return min_t(unsigned int, ilog2(ticks), WHEEL_SLACK_MAX);
}

/* @tick rounded up to a multiple of 2^@slack, unless that passes @tick_max. */
static u64 wheel_round_tick(const struct wheel *w, u64 tick, unsigned int slack)
{
	u64 grid;

	if (!slack)
		return tick;
	grid = round_up(tick, 1ULL << slack);
	return grid <= w->tick_max ? grid : tick;
}

/* The tick @timer is filed at: its deadline's, rounded to its slack grid. */
static u64 wheel_timer_tick(const struct wheel *w,
			    const struct twheel_timer *timer)
{
	return wheel_round_tick(w, wheel_tick_of(w, timer->expires),
				timer->slack);
}

/* The slot of a timer due at @tick on a wheel at @clk (@tick >= @clk). */
static unsigned int wheel_calc_idx(u64 tick, u64 clk)
{
	unsigned int lvl = 0;

	if (tick != clk)
		lvl = (fls64(tick ^ clk) - 1) / LVL_BITS;
	return LVL_OFFS(lvl) + ((tick >> LVL_SHIFT(lvl)) & LVL_MASK);
}

static unsigned int wheel_lvl(unsigned int idx)
{
	return idx / LVL_SIZE;
}

/* The first tick of the span of @clk's own slot at level @lvl. */
static u64 wheel_span_start(u64 clk, unsigned int lvl)
{
	return clk & ~(LVL_GRAN(lvl) - 1);
}

/* Is @idx, at a level above 0, the slot whose span holds @clk? */
static bool wheel_slot_holds_clk(unsigned int idx, u64 clk)
{
	unsigned int lvl = wheel_lvl(idx);

	return ((clk >> LVL_SHIFT(lvl)) & LVL_MASK) == idx % LVL_SIZE;
}

static void wheel_init(struct wheel *w, u64 tick_ns, u64 now)
{
	unsigned int idx;

	memset(w, 0, sizeof(*w));
	w->tick_ns = tick_ns;
	w->tick_inv = div64_u64(U64_MAX, tick_ns);
	w->clk = wheel_ns_div(w, now);
	w->tick_max = wheel_tick_of(w, KTIME_MAX);
	w->drain = WHEEL_NONE;
	w->due = WHEEL_NONE;
	for (idx = 0; idx < WHEEL_SIZE; idx++) {
		INIT_LIST_HEAD(&w->slots[idx].head);
		w->slots[idx].first = U64_MAX;
	}
}

/*
 * Add @count timers with deadlines in [@first, @last] and slack grids up to
 * @slack to the bookkeeping of @idx.
 */
static void wheel_slot_fill(struct wheel *w, unsigned int idx, u32 count,
			    u64 first, u64 last, u8 slack)
{
	struct wheel_slot *slot = &w->slots[idx];

	slot->count += count;
	slot->first = min(slot->first, first);
	slot->last = max(slot->last, last);
	slot->slack = max(slot->slack, slack);
	w->pending_map[wheel_lvl(idx)] |= BIT_ULL(idx % LVL_SIZE);
	w->level_count[wheel_lvl(idx)] += count;
}

/* @idx has lost @count timers; an emptied slot is cleared. */
static void wheel_slot_drop(struct wheel *w, unsigned int idx, u32 count)
{
	struct wheel_slot *slot = &w->slots[idx];

	slot->count -= count;
	w->level_count[wheel_lvl(idx)] -= count;
	if (!slot->count) {
		w->pending_map[wheel_lvl(idx)] &= ~BIT_ULL(idx % LVL_SIZE);
		slot->first = U64_MAX;
		slot->last = 0;
		slot->slack = 0;
	}
}

/*
 * list_add_tail() and __list_del() without list debugging: the hot path
 * of every arm, cancel, cascade and fire, whose slot bookkeeping checks
 * itself (as timer_list's hlist pays no debug checks either).
 * twheel_pending() reads @entry.next locklessly.
 */
static void wheel_list_add_tail(struct list_head *entry, struct list_head *head)
{
	struct list_head *prev = head->prev;

	entry->prev = prev;
	WRITE_ONCE(entry->next, head);
	WRITE_ONCE(prev->next, entry);
	head->prev = entry;
}

static void wheel_list_del(struct list_head *entry)
{
	__list_del(entry->prev, entry->next);
}

/* File @timer at @idx, at the tail: FIFO. */
static void wheel_link(struct wheel *w, struct twheel_timer *timer,
		       unsigned int idx)
{
	wheel_list_add_tail(&timer->entry, &w->slots[idx].head);
	timer->idx = idx;
	wheel_slot_fill(w, idx, 1, timer->expires, timer->expires, timer->slack);
}

/* The slot for tick @tick, not counting a drain in progress. */
static unsigned int wheel_home(const struct wheel *w, u64 tick)
{
	return wheel_calc_idx(max(tick, w->clk), w->clk);
}

/**
 * wheel_add - file a timer by its deadline, timer->expires
 * @w:		the wheel
 * @timer:	a timer on no list
 *
 * The timer is filed at wheel_timer_tick(): @timer->slack must not change
 * until it is off the wheel again.
 *
 * Return: the time at which the timer's slot is due: its latest deadline
 * for a level-0 slot, the start of its span above.
 */
static u64 wheel_add(struct wheel *w, struct twheel_timer *timer)
{
	u64 tick = wheel_timer_tick(w, timer);
	unsigned int idx, lvl;

	/* A tick inside the span being cascaded waits behind that slot's timers. */
	if (unlikely(w->drain != WHEEL_NONE) && tick >= w->clk &&
	    wheel_span_start(tick, wheel_lvl(w->drain)) == w->clk)
		idx = w->drain;
	else
		idx = wheel_home(w, tick);
	wheel_link(w, timer, idx);
	lvl = wheel_lvl(idx);
	if (!lvl)
		return w->slots[idx].last;
	return wheel_span_start(tick, lvl) * w->tick_ns;
}

/*
 * The slot @timer is in. Its @idx is exact unless it names a slot whose
 * span @clk has entered and which is not being drained: then that slot was
 * cascaded, and the timer, which was spliced (a timer moved on its own gets
 * a new @idx), went where its tick and the start of that span lead.
 */
static unsigned int wheel_slot_of(const struct wheel *w,
				  const struct twheel_timer *timer)
{
	unsigned int idx = timer->idx;

	while (wheel_lvl(idx) && idx != w->drain &&
	       wheel_slot_holds_clk(idx, w->clk)) {
		u64 start = wheel_span_start(w->clk, wheel_lvl(idx));
		u64 tick = wheel_timer_tick(w, timer);

		idx = wheel_calc_idx(max(tick, start), start);
	}
	return idx;
}

/**
 * wheel_del - take a timer off the wheel
 * @w:		the wheel
 * @timer:	a timer filed on @w
 *
 * Leaves @timer->entry as it was: the caller marks it as not pending.
 */
static void wheel_del(struct wheel *w, struct twheel_timer *timer)
{
	unsigned int idx = wheel_slot_of(w, timer);

	wheel_list_del(&timer->entry);
	wheel_slot_drop(w, idx, 1);
}

/* The tick at which slot @pos of level @lvl starts, on a wheel at @clk. */
static u64 wheel_slot_tick(u64 clk, unsigned int lvl, unsigned int pos)
{
	return wheel_span_start(clk, lvl + 1) | ((u64)pos << LVL_SHIFT(lvl));
}

/*
 * The next slot with work, at the lowest non-empty level (any level-0 slot
 * is due before any slot above it), or %WHEEL_NONE for an empty wheel.
 */
static unsigned int wheel_next_slot(const struct wheel *w)
{
	unsigned int lvl;

	for (lvl = 0; lvl < LVL_DEPTH; lvl++)
		if (w->pending_map[lvl])
			return LVL_OFFS(lvl) + __ffs64(w->pending_map[lvl]);
	return WHEEL_NONE;
}

/* The time @idx, from wheel_next_slot(), is due at. */
static u64 wheel_slot_due(const struct wheel *w, unsigned int idx)
{
	unsigned int lvl = wheel_lvl(idx);

	if (!lvl)
		return w->slots[idx].last;
	return wheel_slot_tick(w->clk, lvl, idx % LVL_SIZE) * w->tick_ns;
}

/**
 * wheel_next_event - when the wheel next has work
 * @w:	the wheel
 *
 * Return: the time in ns at which wheel_advance() next finds work, 0 while
 * a cascade is in progress, U64_MAX for an empty wheel.
 */
static u64 wheel_next_event(const struct wheel *w)
{
	unsigned int idx;

	if (w->drain != WHEEL_NONE)
		return 0;
	idx = wheel_next_slot(w);
	return idx == WHEEL_NONE ? U64_MAX : wheel_slot_due(w, idx);
}

/* Can the draining slot move to one lower slot in one splice? Which one? */
static unsigned int wheel_drain_target(const struct wheel *w,
				       const struct wheel_slot *slot)
{
	u64 last = wheel_tick_of(w, slot->last);
	unsigned int lo = wheel_home(w, wheel_tick_of(w, slot->first));
	unsigned int hi;

	/*
	 * A timer's tick lies between the tick of @first and that of @last
	 * rounded to the slot's coarsest slack grid (or the tick of
	 * KTIME_MAX): its own grid is no coarser, and a rounding beyond
	 * KTIME_MAX's tick is not made. Every tick between the two bounds
	 * that has the same slot as both of them has that slot too: the
	 * digits that decide it are the same for all of them.
	 */
	if (slot->slack)
		last = min(round_up(last, 1ULL << slot->slack), w->tick_max);
	hi = wheel_home(w, last);
	return lo == hi ? lo : WHEEL_NONE;
}

/* Move the draining slot's timers down, at most *@budget of them. */
static bool wheel_drain(struct wheel *w, unsigned int *budget)
{
	unsigned int idx = w->drain;
	struct wheel_slot *slot = &w->slots[idx];
	unsigned int to;

	if (!*budget)
		return false;
	to = slot->count ? wheel_drain_target(w, slot) : WHEEL_NONE;
	if (to != WHEEL_NONE) {
		u32 count = slot->count;

		list_splice_tail_init(&slot->head, &w->slots[to].head);
		wheel_slot_fill(w, to, count, slot->first, slot->last,
				slot->slack);
		wheel_slot_drop(w, idx, count);
		w->cascaded += count;
		(*budget)--;
	}
	while (slot->count) {
		struct twheel_timer *timer;

		if (!*budget)
			return false;
		timer = list_first_entry(&slot->head, struct twheel_timer,
					 entry);
		wheel_list_del(&timer->entry);
		wheel_slot_drop(w, idx, 1);
		wheel_link(w, timer, wheel_home(w, wheel_timer_tick(w, timer)));
		w->cascaded++;
		(*budget)--;
	}
	w->drain = WHEEL_NONE;
	return true;
}

/**
 * wheel_forward - move the clock of a wheel with nothing due
 * @w:		the wheel
 * @now:	the current time in ns, before the wheel's next event
 *
 * Moves @clk up to @now's tick, so that timers are filed as low as their
 * delays allow. The caller knows that no event is due by @now (so no slot
 * is left behind); a cascade in progress keeps @clk where it is.
 */
static void wheel_forward(struct wheel *w, u64 now)
{
	if (w->drain == WHEEL_NONE)
		w->clk = max(w->clk, wheel_ns_div(w, now));
}

/**
 * wheel_advance - process the wheel's events up to a time
 * @w:		the wheel
 * @now:	the current time in ns
 * @budget:	timers a cascade may still move; decremented
 *
 * Moves @clk to the next event at or before @now: cascades a higher-level
 * slot (within @budget), or makes a due level-0 slot the one
 * wheel_first_due() returns timers from. With nothing due, moves @clk up
 * to @now's tick.
 *
 * Return: %WHEEL_DUE, %WHEEL_AGAIN (out of budget) or %WHEEL_IDLE.
 */
static enum wheel_state wheel_advance(struct wheel *w, u64 now,
				      unsigned int *budget)
{
	unsigned int idx;
	u64 tick;

	for (;;) {
		if (w->drain != WHEEL_NONE && !wheel_drain(w, budget))
			return WHEEL_AGAIN;
		w->due = WHEEL_NONE;
		idx = wheel_next_slot(w);
		if (idx == WHEEL_NONE || wheel_slot_due(w, idx) > now) {
			wheel_forward(w, now);
			return WHEEL_IDLE;
		}
		tick = wheel_slot_tick(w->clk, wheel_lvl(idx), idx % LVL_SIZE);
		/* Nothing is filed before @clk: see "Filing". */
		WARN_ON_ONCE(tick < w->clk);
		if (!wheel_lvl(idx)) {
			/*
			 * A slot due before its tick has begun (its deadlines
			 * all passed early in the tick) leaves @clk at @now's
			 * tick: a deadline passed meanwhile must still file
			 * into a slot that is due.
			 */
			w->clk = max(w->clk, min(tick, wheel_ns_div(w, now)));
			w->due = idx;
			return WHEEL_DUE;
		}
		w->clk = tick;
		/*
		 * Only the slot that @clk has just entered can be occupied
		 * among the slots holding @clk: any lower one would have been
		 * filed with @clk already in its span, hence after it.
		 */
		w->drain = idx;
	}
}

/**
 * wheel_del_due - take the timer wheel_first_due() returned off the wheel
 * @w:		the wheel
 * @timer:	the timer wheel_first_due() returned
 *
 * As wheel_del(), without looking for the slot: it is the due one.
 */
static void wheel_del_due(struct wheel *w, struct twheel_timer *timer)
{
	wheel_list_del(&timer->entry);
	wheel_slot_drop(w, w->due, 1);
}

/**
 * wheel_first_due - the next timer to expire
 * @w:		the wheel
 * @now:	the current time in ns
 *
 * Return: the first timer of the due level-0 slot if all that slot's
 * deadlines have passed by @now, else NULL (call wheel_advance()). The
 * timer stays filed: take it off with wheel_del().
 */
static struct twheel_timer *wheel_first_due(const struct wheel *w, u64 now)
{
	const struct wheel_slot *slot;

	if (w->due == WHEEL_NONE)
		return NULL;
	slot = &w->slots[w->due];
	if (!slot->count || slot->last > now)
		return NULL;
	return list_first_entry(&slot->head, struct twheel_timer, entry);
}
