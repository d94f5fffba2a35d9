// SPDX-License-Identifier: GPL-2.0
/*
 * twheel's pure timing wheel: see wheel.h. Included by twheel.c (the
 * per-CPU driver) and by the KUnit suite, which drives it on virtual time;
 * every function is static so that the compiler may inline it, and those
 * of the hot paths that have several callers are __always_inline: out of
 * line, each call would also pay the return thunk of kernels built with
 * the retbleed and SRSO mitigations (Debian's are).
 *
 * Filing
 * ------
 *
 * A timer due at tick E (the first tick boundary at or after its deadline)
 * goes to the lowest level n at which E's granule of level n + 1 (E's
 * digits from the (n+1)-th up) is that of the wheel clock @clk or the next
 * one (wheel_calc_lvl()), in the slot of E's granule of level n modulo
 * LVL_SLOTS. Level 0 therefore holds the timers due in @clk's 64-tick block
 * and the next, one tick per slot; level 1 those of @clk's 4096-tick block
 * and the next, 64 ticks per slot; and so on. A delay d lands on level
 * floor(log64(d)) or the one below it, and a level's slots hold distinct
 * granules: its occupied slots lie in a window of LVL_SLOTS granules
 * starting at @clk's.
 *
 * Cascading
 * ---------
 *
 * The granule g of a slot at level n > 0 belongs to level n - 1 as soon as
 * @clk reaches its drain tick, the start of granule g - 1 of level n: from
 * then on the slot may be drained, its timers filed again at lower levels.
 * A slot whose timers must move one by one drains at its drain tick, a
 * whole granule of its level before its timers are due (4.1 s ahead at
 * level 2 with a 1 ms tick), so that even a slot of millions of timers,
 * moved a bounded number at a time (wheel_advance()'s budget, the caller
 * dropping its lock in between), is down before its first tick comes.
 * Meanwhile level-0 slots outside the spans being drained keep expiring,
 * and slots of other levels start draining when their drain ticks come;
 * one slot per level drains at a time, the lowest level's first (its span
 * comes soonest). When every timer of a slot falls into one lower slot (a
 * burst with one deadline, or a sparse slot: @first, @last and the slack
 * grids tell), the whole list is spliced there in O(1), which can wait
 * until the first of them may be due, or, if they must drain one by one
 * from where they go, until that slot's drain tick (wheel_slot_event()):
 * the wheel does not wake up earlier for it.
 *
 * @clk never passes the drain tick of an occupied slot that has not started
 * draining (wheel_forward() stops before it, and slots with the same drain
 * tick start together), so that a timer filed anew goes to the slot that
 * holds the older timers of its tick, or, if a drain has yet to move
 * those, to the tail of the draining slot (spans being drained never
 * overlap): timers of one tick keep their FIFO order.
 *
 * A spliced timer's @idx still names the slot it was filed in. That slot
 * keeps the index of the slot its timers went to (@moved), which
 * wheel_slot_of() follows, as far as later splices lead: no slot is reused
 * before every timer that was spliced out of it has fired (it would hold
 * a granule LVL_SLOTS granules later, which @clk reaches only after the
 * ticks of the spliced ones), so a slot filed anew forgets where its
 * timers went.
 *
 * Events
 * ------
 *
 * A level-0 slot is due once the latest deadline filed in it (@last) has
 * passed, which is at or before the end of its tick: a sparse timer fires
 * at its deadline, not at the end of its tick, and no timer fires early;
 * as every timer reaches level 0 by then, this holds for timers of every
 * delay. A slot of a higher level is due for draining as
 * wheel_slot_event() says. The next event is the earliest of these.
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

/* The tick a timer of deadline @expires and slack grid @slack is filed at. */
static __always_inline u64
wheel_tick_at(const struct wheel *w, u64 expires, unsigned int slack)
{
	return wheel_round_tick(w, wheel_tick_of(w, expires), slack);
}

/* The tick @timer is filed at: its deadline's, rounded to its slack grid. */
static __always_inline u64
wheel_timer_tick(const struct wheel *w, const struct twheel_timer *timer)
{
	return wheel_tick_at(w, timer->expires, timer->slack);
}

/* @tick's granule of level @lvl: its tick number in units of LVL_GRAN(@lvl). */
static u64 wheel_gran(u64 tick, unsigned int lvl)
{
	return tick >> LVL_SHIFT(lvl);
}

static unsigned int wheel_lvl(unsigned int idx)
{
	return idx / LVL_SLOTS;
}

/*
 * The drain tick of a slot of level @lvl > 0 holding granule @gran: the
 * start of the granule before.
 */
static u64 wheel_drain_tick(u64 gran, unsigned int lvl)
{
	return (gran - 1) << LVL_SHIFT(lvl);
}

/* The level of a timer due at @tick on a wheel at @clk (@tick >= @clk). */
static unsigned int wheel_calc_lvl(u64 tick, u64 clk)
{
	u64 delta = tick - clk;
	unsigned int lvl;

	if (delta < LVL_SIZE)
		return 0;
	/*
	 * delta < 2^fls64(delta) <= 64^(lvl + 1): @tick lies in @clk's
	 * granule of level lvl + 1 or the next, which level lvl holds. The
	 * level below holds it too if @tick lies in @clk's granule of level
	 * lvl or the next; none further below (its delta would be under
	 * 2 * 64^(lvl - 1)).
	 */
	lvl = DIV_ROUND_UP(fls64(delta), LVL_BITS) - 1;
	if (wheel_gran(tick, lvl) - wheel_gran(clk, lvl) <= 1)
		lvl--;
	return lvl;
}

/* The slot of a timer due at @tick on a wheel at @clk (@tick >= @clk). */
static __always_inline unsigned int wheel_calc_idx(u64 tick, u64 clk)
{
	unsigned int lvl = wheel_calc_lvl(tick, clk);

	return LVL_OFFS(lvl) + (wheel_gran(tick, lvl) & LVL_SLOT_MASK);
}

/* The granule of occupied slot @idx, on a wheel at @clk: see "Filing". */
static u64 wheel_slot_gran(u64 clk, unsigned int idx)
{
	u64 here = wheel_gran(clk, wheel_lvl(idx));

	return here + ((idx - here) & LVL_SLOT_MASK);
}

/* The drain tick of occupied slot @idx, above level 0. */
static u64 wheel_slot_drain_tick(const struct wheel *w, unsigned int idx)
{
	return wheel_drain_tick(wheel_slot_gran(w->clk, idx), wheel_lvl(idx));
}

static void wheel_init(struct wheel *w, u64 tick_ns, u64 now)
{
	unsigned int idx;

	memset(w, 0, sizeof(*w));
	w->tick_ns = tick_ns;
	w->tick_inv = div64_u64(U64_MAX, tick_ns);
	w->clk = wheel_ns_div(w, now);
	w->tick_max = wheel_tick_of(w, KTIME_MAX);
	for (idx = 0; idx < LVL_DEPTH; idx++)
		w->drain[idx] = WHEEL_NONE;
	w->due = WHEEL_NONE;
	w->drain_limit = U64_MAX;
	for (idx = 0; idx < WHEEL_SIZE; idx++) {
		INIT_LIST_HEAD(&w->slots[idx].head);
		w->slots[idx].first = U64_MAX;
		w->slots[idx].slack_min = U8_MAX;
		w->slots[idx].moved = WHEEL_NONE;
	}
}

/*
 * Add @count timers with deadlines in [@first, @last] and slack grids in
 * [@slack_min, @slack] to the bookkeeping of @idx.
 */
static __always_inline void
wheel_slot_fill(struct wheel *w, unsigned int idx, u32 count, u64 first,
		u64 last, u8 slack_min, u8 slack)
{
	struct wheel_slot *slot = &w->slots[idx];
	unsigned int lvl = wheel_lvl(idx);

	slot->count += count;
	slot->first = min(slot->first, first);
	slot->last = max(slot->last, last);
	slot->slack_min = min(slot->slack_min, slack_min);
	slot->slack = max(slot->slack, slack);
	__set_bit(idx % LVL_SLOTS, w->pending_map[lvl]);
	w->level_count[lvl] += count;
	if (slot->count != count)
		return;
	/*
	 * Newly occupied: no timer spliced out of it is left (see "Cascading"),
	 * and its drain tick joins @drain_limit, where those of the occupied
	 * slots are.
	 */
	slot->moved = WHEEL_NONE;
	if (lvl && idx != w->drain[lvl])
		w->drain_limit = min(w->drain_limit,
				     wheel_slot_drain_tick(w, idx));
}

/* @idx has lost @count timers; an emptied slot is cleared. */
static __always_inline void wheel_slot_drop(struct wheel *w, unsigned int idx,
					    u32 count)
{
	struct wheel_slot *slot = &w->slots[idx];

	slot->count -= count;
	w->level_count[wheel_lvl(idx)] -= count;
	if (!slot->count) {
		/* wheel_due() then need not check for an empty slot. */
		if (idx == w->due)
			w->due = WHEEL_NONE;
		__clear_bit(idx % LVL_SLOTS, w->pending_map[wheel_lvl(idx)]);
		/* Its drain tick may be @drain_limit: see wheel_forward(). */
		if (wheel_lvl(idx))
			w->limit_stale = true;
		slot->first = U64_MAX;
		slot->last = 0;
		slot->slack = 0;
		slot->slack_min = U8_MAX;
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

/* list_splice_tail_init(), as wheel_list_add_tail() marks its stores. */
static void wheel_list_splice_tail_init(struct list_head *list,
					struct list_head *head)
{
	struct list_head *first = list->next, *last = list->prev;
	struct list_head *prev = head->prev;

	if (list_empty(list))
		return;
	first->prev = prev;
	WRITE_ONCE(prev->next, first);
	WRITE_ONCE(last->next, head);
	head->prev = last;
	INIT_LIST_HEAD(list);
}

/* File @timer at @idx, at the tail: FIFO. */
static __always_inline void
wheel_link(struct wheel *w, struct twheel_timer *timer, unsigned int idx)
{
	wheel_list_add_tail(&timer->entry, &w->slots[idx].head);
	timer->idx = idx;
	wheel_slot_fill(w, idx, 1, timer->expires, timer->expires, timer->slack,
			timer->slack);
}

/* The slot for tick @tick, not counting a drain in progress. */
static __always_inline unsigned int
wheel_home(const struct wheel *w, u64 tick)
{
	return wheel_calc_idx(max(tick, w->clk), w->clk);
}

/* The slot being drained whose span holds @tick, or %WHEEL_NONE. */
static unsigned int wheel_draining(const struct wheel *w, u64 tick)
{
	unsigned int lvl;

	for (lvl = 1; w->draining >> lvl; lvl++)
		if ((w->draining & BIT(lvl)) && tick >= w->drain_start[lvl] &&
		    tick - w->drain_start[lvl] < LVL_GRAN(lvl))
			return w->drain[lvl];
	return WHEEL_NONE;
}

/*
 * Bounds on the ticks of the timers of @slot: from the tick of @first
 * rounded to the slot's finest slack grid to the tick of @last rounded to
 * its coarsest (a timer's own grid lies between the two), but a rounding
 * beyond the tick of KTIME_MAX is not made: then from the tick of @first.
 */
static void wheel_slot_ticks(const struct wheel *w,
			     const struct wheel_slot *slot, u64 *lo, u64 *hi)
{
	u64 first = wheel_tick_of(w, slot->first);

	*hi = round_up(wheel_tick_of(w, slot->last), 1ULL << slot->slack);
	*lo = round_up(first, 1ULL << slot->slack_min);
	if (*hi > w->tick_max) {
		*hi = w->tick_max;
		*lo = first;
	}
}

/*
 * Can occupied slot @idx, above level 0, drain in one splice? To which
 * slot? All its timers must fall into one slot of the level below from
 * its drain tick, where the drain puts them: every tick between the
 * bounds of wheel_slot_ticks() then has that slot too, the granules that
 * decide it being the same for all of them. *@one_tick: do the bounds
 * leave its timers a single tick?
 */
static unsigned int wheel_drain_target(const struct wheel *w, unsigned int idx,
				       bool *one_tick)
{
	u64 from = wheel_slot_drain_tick(w, idx);
	unsigned int to;
	u64 lo, hi;

	wheel_slot_ticks(w, &w->slots[idx], &lo, &hi);
	*one_tick = lo == hi;
	/*
	 * Mixed slack grids may put @lo before @from: no slot to tell, the
	 * timers move one by one.
	 */
	if (lo < from)
		return WHEEL_NONE;
	to = wheel_calc_idx(lo, from);
	return to == wheel_calc_idx(hi, from) ? to : WHEEL_NONE;
}

/*
 * When occupied slot @idx, above level 0, must drain: at its drain tick
 * if its timers move one by one, which takes time; if they splice, which
 * takes none, when the first of them may be due: at the latest deadline
 * if they all share one tick, as a level-0 slot would be, at the earliest
 * if they go to level 0; else, as they move one by one from the slot they
 * go to, by that slot's drain tick. Slots that splice so drain along with
 * the fires around them instead of waking the wheel a slot width early.
 * Callers only want to know whether that comes before @before: if the
 * drain tick does not, the result is the drain tick, at or after @before,
 * worked out no further.
 */
static u64 wheel_slot_event(const struct wheel *w, unsigned int idx,
			    u64 before)
{
	const struct wheel_slot *slot = &w->slots[idx];
	u64 at = wheel_slot_drain_tick(w, idx) * w->tick_ns, lo, hi;
	unsigned int to, lvl;
	bool one_tick;

	if (at >= before)
		return at;
	to = wheel_drain_target(w, idx, &one_tick);
	if (to == WHEEL_NONE)
		return at;
	if (one_tick)
		return max(at, slot->last);
	lvl = wheel_lvl(to);
	if (!lvl)
		return max(at, slot->first);
	wheel_slot_ticks(w, slot, &lo, &hi);
	return max(at, wheel_drain_tick(lo >> LVL_SHIFT(lvl), lvl) * w->tick_ns);
}

/*
 * Does occupied @slot's bookkeeping cover a timer of deadline @expires and
 * slack grid @slack already (@expires within @first and @last, @slack
 * within the slot's grids)? Then filing it there leaves the slot's event
 * as it was.
 */
static bool wheel_slot_covers(const struct wheel_slot *slot, u64 expires,
			      u8 slack)
{
	return slot->count && slot->first <= expires && expires <= slot->last &&
	       slot->slack_min <= slack && slack <= slot->slack;
}

/* The slot wheel_add() files a timer of tick @tick in. */
static __always_inline unsigned int wheel_file_idx(const struct wheel *w,
						   u64 tick)
{
	unsigned int idx = WHEEL_NONE;

	/* A tick inside a span being drained waits behind that slot's timers. */
	if (unlikely(w->draining))
		idx = wheel_draining(w, tick);
	return idx == WHEEL_NONE ? wheel_home(w, tick) : idx;
}

/**
 * wheel_add - file a timer by its deadline, timer->expires
 * @w:		the wheel
 * @timer:	a timer on no list
 * @before:	the wheel's next event as the caller knows it: at or before
 *		the event of every occupied slot (wheel_next_event() is)
 *
 * The timer is filed at wheel_timer_tick(): @timer->slack must not change
 * until it is off the wheel again.
 *
 * Return: the time at which the timer's slot is due: its latest deadline
 * for a level-0 slot, wheel_slot_event() above, 0 for a slot draining; or,
 * for a slot not due before @before, any time at or after @before.
 */
static __always_inline u64
wheel_add(struct wheel *w, struct twheel_timer *timer, u64 before)
{
	unsigned int idx = wheel_file_idx(w, wheel_timer_tick(w, timer)), lvl;
	bool covered;

	covered = wheel_slot_covers(&w->slots[idx], timer->expires,
				    timer->slack);
	wheel_link(w, timer, idx);
	lvl = wheel_lvl(idx);
	if (!lvl)
		return w->slots[idx].last;
	if (idx == w->drain[lvl])
		return 0;
	/* An event that did not change is not before @before. */
	return covered ? before : wheel_slot_event(w, idx, before);
}

/*
 * The slot @timer is in: its @idx, or where splices took it (@moved), one
 * level down each: LVL_DEPTH - 1 steps at most.
 */
static __always_inline unsigned int
wheel_slot_of(const struct wheel *w, const struct twheel_timer *timer)
{
	unsigned int idx = timer->idx;

	while (unlikely(w->slots[idx].moved != WHEEL_NONE))
		idx = w->slots[idx].moved;
	return idx;
}

/**
 * wheel_del - take a timer off the wheel
 * @w:		the wheel
 * @timer:	a timer filed on @w
 *
 * Leaves @timer->entry as it was: the caller marks it as not pending.
 *
 * Return: true if that emptied @timer's slot.
 */
static __always_inline bool
wheel_del(struct wheel *w, struct twheel_timer *timer)
{
	unsigned int idx = wheel_slot_of(w, timer);

	wheel_list_del(&timer->entry);
	wheel_slot_drop(w, idx, 1);
	return !w->slots[idx].count;
}

/**
 * wheel_requeue - file a filed timer again in its own slot, if it may stay
 * @w:		the wheel
 * @timer:	a timer filed on @w
 * @expires:	its new deadline
 *
 * A new deadline that wheel_add() would file in the timer's slot, within
 * the slot's bounds, changes none of the wheel's bookkeeping while other
 * timers share the slot: the timer only goes to the slot's tail, where
 * wheel_del() and wheel_add() would put it, and the slot's event stays as
 * it was. A timer alone in its slot is filed anew: wheel_del() clears the
 * slot's bounds, which the new deadline alone then sets.
 *
 * Return: true if so (the caller then sets @timer->expires to @expires);
 * false, with nothing changed, if the timer must be filed anew.
 */
static __always_inline bool
wheel_requeue(struct wheel *w, struct twheel_timer *timer, u64 expires)
{
	unsigned int idx = wheel_slot_of(w, timer);
	u64 tick;

	/* The bounds first: a new deadline mostly leaves them, and the slot. */
	if (w->slots[idx].count == 1 ||
	    !wheel_slot_covers(&w->slots[idx], expires, timer->slack))
		return false;
	tick = wheel_tick_at(w, expires, timer->slack);
	if (wheel_file_idx(w, tick) != idx)
		return false;
	wheel_list_del(&timer->entry);
	wheel_list_add_tail(&timer->entry, &w->slots[idx].head);
	timer->idx = idx;
	return true;
}

/* The number of timers filed on @w. */
static u64 wheel_count(const struct wheel *w)
{
	unsigned int lvl;
	u64 n = 0;

	for (lvl = 0; lvl < LVL_DEPTH; lvl++)
		n += w->level_count[lvl];
	return n;
}

/*
 * The first occupied slot of level @lvl in the order of its granules from
 * @clk's on (see "Filing"), leaving out @skip, or %WHEEL_NONE.
 */
static unsigned int wheel_lvl_first(const struct wheel *w, unsigned int lvl,
				    unsigned int skip)
{
	DECLARE_BITMAP(map, LVL_SLOTS);
	unsigned int here = wheel_gran(w->clk, lvl) & LVL_SLOT_MASK;
	unsigned int pos;

	bitmap_copy(map, w->pending_map[lvl], LVL_SLOTS);
	if (wheel_lvl(skip) == lvl)
		__clear_bit(skip % LVL_SLOTS, map);
	pos = find_next_bit(map, LVL_SLOTS, here);
	if (pos < LVL_SLOTS)
		return LVL_OFFS(lvl) + pos;
	pos = find_first_bit(map, here);
	return pos < here ? LVL_OFFS(lvl) + pos : WHEEL_NONE;
}

/*
 * The higher-level slot that drains next, but those draining, or
 * %WHEEL_NONE; its drain tick in *@tick.
 */
static unsigned int wheel_next_drain(const struct wheel *w, u64 *tick)
{
	unsigned int lvl, idx, next = WHEEL_NONE;

	*tick = U64_MAX;
	for (lvl = 1; lvl < LVL_DEPTH; lvl++) {
		u64 at;

		if (!w->level_count[lvl])
			continue;
		idx = wheel_lvl_first(w, lvl, w->drain[lvl]);
		if (idx == WHEEL_NONE)
			continue;
		at = wheel_slot_drain_tick(w, idx);
		if (at < *tick) {
			*tick = at;
			next = idx;
		}
	}
	return next;
}

/*
 * When the first level-0 slot is due: its latest deadline, or U64_MAX if
 * level 0 is empty. Drains may still bring earlier timers down.
 */
static u64 wheel_next_fire(const struct wheel *w)
{
	unsigned int idx = wheel_lvl_first(w, 0, WHEEL_NONE);

	return idx == WHEEL_NONE ? U64_MAX : w->slots[idx].last;
}

/**
 * wheel_next_event - when the wheel next has work
 * @w:	the wheel
 *
 * Return: the time in ns at which wheel_advance() next finds work, 0 while
 * a drain is in progress, U64_MAX for an empty wheel.
 */
static u64 wheel_next_event(const struct wheel *w)
{
	unsigned int idx, lvl, later;
	u64 next;

	if (w->draining)
		return 0;
	next = wheel_next_fire(w);
	/*
	 * The first slot of a level may drain late (wheel_slot_event()),
	 * the next one no earlier than its drain tick, those after later.
	 */
	for (lvl = 1; lvl < LVL_DEPTH; lvl++) {
		if (!w->level_count[lvl])
			continue;
		idx = wheel_lvl_first(w, lvl, WHEEL_NONE);
		next = min(next, wheel_slot_event(w, idx, next));
		later = wheel_lvl_first(w, lvl, idx);
		if (later != WHEEL_NONE)
			next = min(next, wheel_slot_drain_tick(w, later) *
					 w->tick_ns);
	}
	return next;
}

/*
 * @clk has reached the drain tick of @idx: splice its timers down if they
 * all fall into one slot, else make it the slot that wheel_drain() moves.
 */
static void wheel_drain_begin(struct wheel *w, unsigned int idx,
			      unsigned int *budget)
{
	struct wheel_slot *slot = &w->slots[idx];
	u32 count = slot->count;
	bool one_tick;
	unsigned int to = wheel_drain_target(w, idx, &one_tick);

	if (to == WHEEL_NONE) {
		unsigned int lvl = wheel_lvl(idx);

		w->drain[lvl] = idx;
		w->drain_start[lvl] = wheel_slot_gran(w->clk, idx) <<
				      LVL_SHIFT(lvl);
		w->draining |= BIT(lvl);
		return;
	}
	wheel_list_splice_tail_init(&slot->head, &w->slots[to].head);
	wheel_slot_fill(w, to, count, slot->first, slot->last, slot->slack_min,
			slot->slack);
	wheel_slot_drop(w, idx, count);
	slot->moved = to;
	w->cascaded += count;
	if (*budget)
		(*budget)--;
}

/* Move the timers of the slot draining at @lvl down, at most *@budget. */
static bool wheel_drain(struct wheel *w, unsigned int lvl, unsigned int *budget)
{
	unsigned int idx = w->drain[lvl];
	struct wheel_slot *slot = &w->slots[idx];

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
	w->drain[lvl] = WHEEL_NONE;
	w->draining &= ~BIT(lvl);
	return true;
}

/**
 * wheel_emptied - forget the drains of a wheel whose last timer left
 * @w:	the wheel, with no timer on it
 *
 * A drain in progress holds @clk back (wheel_forward()) until
 * wheel_advance() comes by, which an empty wheel, with no event, does not
 * call: the next timers would be filed against an old @clk, higher up
 * than their delays need.
 */
static void wheel_emptied(struct wheel *w)
{
	unsigned int lvl;

	for (lvl = 0; lvl < LVL_DEPTH; lvl++)
		w->drain[lvl] = WHEEL_NONE;
	w->draining = 0;
	w->drain_limit = U64_MAX;
	w->limit_stale = false;
}

/**
 * wheel_forward - move the clock of a wheel with nothing due
 * @w:		the wheel
 * @now:	the current time in ns, before the wheel's next event
 *
 * Moves @clk up to @now's tick, or to just before the next drain tick if
 * that comes first (a slot that splices may be due after its drain tick),
 * so that timers are filed as low as their delays allow. The caller knows
 * that no event is due by @now (so no slot is left behind); a drain in
 * progress keeps @clk where it is.
 *
 * @drain_limit may be the drain tick of a slot emptied since it was set
 * (@limit_stale): when it holds @clk back, it is worked out again, lest
 * @clk wait for a drain that will not come and file timers higher, and
 * cascade them more often, than their delays need.
 */
static void wheel_forward(struct wheel *w, u64 now)
{
	u64 tick;

	/* @clk is at @now (or past it) already: tell so without a division. */
	if (now < (w->clk + 1) * w->tick_ns || w->draining)
		return;
	tick = wheel_ns_div(w, now);
	if (tick >= w->drain_limit && w->limit_stale) {
		wheel_next_drain(w, &w->drain_limit);
		w->limit_stale = false;
	}
	/* Not to a drain tick, which only the drain may reach. */
	w->clk = max(w->clk, min(tick, w->drain_limit - 1));
}

/*
 * May level-0 slot @idx expire at @now, with the next other drain at tick
 * @drain_tick? Its deadlines must have passed, and @clk, which moves to its
 * tick or @now's, must stay before @drain_tick, and its tick outside the
 * spans being drained, which may still hold timers of that tick.
 */
static bool wheel_may_expire(const struct wheel *w, unsigned int idx,
			     u64 drain_tick, u64 now)
{
	u64 tick = wheel_slot_gran(w->clk, idx);

	if (w->slots[idx].last > now ||
	    (w->draining && wheel_draining(w, tick) != WHEEL_NONE))
		return false;
	return min(tick, wheel_ns_div(w, now)) < drain_tick;
}

/*
 * May slot @idx start draining at @drain_tick, while others drain? Not
 * while its level drains another slot; not at or after the start of a
 * span being drained: @clk, which moves to @drain_tick, must not pass the
 * ticks of its timers, nor reach its start, from which level 0 reaches
 * past the span, to slots that wheel_may_expire() would let expire before
 * the span's timers; and not inside a span being drained, so that spans
 * being drained never overlap.
 */
static bool wheel_may_drain(const struct wheel *w, unsigned int idx,
			    u64 drain_tick)
{
	u64 start = wheel_slot_gran(w->clk, idx) << LVL_SHIFT(wheel_lvl(idx));
	unsigned int lvl;

	if (w->drain[wheel_lvl(idx)] != WHEEL_NONE ||
	    wheel_draining(w, start) != WHEEL_NONE)
		return false;
	for (lvl = 1; w->draining >> lvl; lvl++)
		if ((w->draining & BIT(lvl)) && w->drain_start[lvl] <= drain_tick)
			return false;
	return true;
}

/*
 * Start the drains of every slot whose drain tick is @tick, the next one
 * (one per level at most), if all of them may start; else none, so that
 * @clk, which moves to @tick, does not pass one left behind.
 */
static bool wheel_drains_begin(struct wheel *w, u64 tick, unsigned int *budget)
{
	unsigned int idx[LVL_DEPTH], lvl, due = 0;

	for (lvl = 1; lvl < LVL_DEPTH; lvl++) {
		if (!w->level_count[lvl])
			continue;
		idx[lvl] = wheel_lvl_first(w, lvl, w->drain[lvl]);
		if (idx[lvl] == WHEEL_NONE ||
		    wheel_slot_drain_tick(w, idx[lvl]) != tick)
			continue;
		if (!wheel_may_drain(w, idx[lvl], tick))
			return false;
		due |= BIT(lvl);
	}
	/* @clk never passes a drain tick: see "Cascading". */
	WARN_ON_ONCE(tick < w->clk);
	w->clk = tick;
	for (lvl = 1; lvl < LVL_DEPTH; lvl++)
		if (due & BIT(lvl))
			wheel_drain_begin(w, idx[lvl], budget);
	return true;
}

/**
 * wheel_advance - process the wheel's events up to a time
 * @w:		the wheel
 * @now:	the current time in ns
 * @budget:	timers the drains may still move; decremented
 *
 * Makes a due level-0 slot the one wheel_first_due() returns timers from,
 * or drains higher-level slots (within @budget), in the order of their
 * events at or before @now. Drains in progress do not hold up the level-0
 * slots due before their spans, nor the start of drains at other levels:
 * the lowest level's drain, the most urgent, goes on first.
 *
 * Return: %WHEEL_DUE, %WHEEL_AGAIN (out of budget) or %WHEEL_IDLE.
 */
static enum wheel_state wheel_advance(struct wheel *w, u64 now,
				      unsigned int *budget)
{
	for (;;) {
		unsigned int idx = wheel_lvl_first(w, 0, WHEEL_NONE), next;
		u64 drain_tick;

		w->due = WHEEL_NONE;
		next = wheel_next_drain(w, &drain_tick);
		if (idx != WHEEL_NONE &&
		    wheel_may_expire(w, idx, drain_tick, now)) {
			/*
			 * A slot due before its tick has begun (its deadlines
			 * all passed early in the tick) leaves @clk at @now's
			 * tick: a deadline passed meanwhile must still file
			 * into a slot that is due.
			 */
			w->clk = max(w->clk, min(wheel_slot_gran(w->clk, idx),
						 wheel_ns_div(w, now)));
			w->due = idx;
			return WHEEL_DUE;
		}
		if (next != WHEEL_NONE && drain_tick * w->tick_ns <= now &&
		    wheel_drains_begin(w, drain_tick, budget))
			continue;
		if (w->draining) {
			if (!wheel_drain(w, __ffs(w->draining), budget))
				return WHEEL_AGAIN;
			continue;
		}
		w->drain_limit = drain_tick;
		w->limit_stale = false;
		wheel_forward(w, now);
		return WHEEL_IDLE;
	}
}

/*
 * The due slot, @due, which is of level 0: the mask, which leaves it as
 * it is, tells the compiler so. Not for %WHEEL_NONE.
 */
static __always_inline unsigned int wheel_due_idx(const struct wheel *w)
{
	return w->due & LVL_SLOT_MASK;
}

/**
 * wheel_del_due - take the timer wheel_first_due() returned off the wheel
 * @w:		the wheel
 * @timer:	the timer wheel_first_due() returned
 *
 * As wheel_del(), without looking for the slot: it is the due one.
 */
static __always_inline void
wheel_del_due(struct wheel *w, struct twheel_timer *timer)
{
	/* Read @due first: the compiler cannot tell the list stores keep it. */
	unsigned int idx = wheel_due_idx(w);

	wheel_list_del(&timer->entry);
	wheel_slot_drop(w, idx, 1);
}

/**
 * wheel_due - is a slot due, all its deadlines passed?
 * @w:		the wheel
 * @now:	the current time in ns
 *
 * Return: true if the due level-0 slot's deadlines have all passed by
 * @now: take its timers with wheel_due_first(). False: call
 * wheel_advance().
 */
static __always_inline bool wheel_due(const struct wheel *w, u64 now)
{
	return w->due != WHEEL_NONE && w->slots[wheel_due_idx(w)].last <= now;
}

/* The first timer of the due slot, which wheel_due() said is due. */
static __always_inline struct twheel_timer *
wheel_due_first(const struct wheel *w)
{
	return list_first_entry(&w->slots[wheel_due_idx(w)].head,
				struct twheel_timer, entry);
}

/**
 * wheel_first_due - the next timer to expire
 * @w:		the wheel
 * @now:	the current time in ns
 *
 * Return: the first timer of the due level-0 slot if all that slot's
 * deadlines have passed by @now, else NULL (call wheel_advance()). The
 * timer stays filed: take it off with wheel_del_due().
 */
static struct twheel_timer *wheel_first_due(const struct wheel *w, u64 now)
{
	return wheel_due(w, now) ? wheel_due_first(w) : NULL;
}
