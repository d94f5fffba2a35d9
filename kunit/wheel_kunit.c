// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of twheel's pure timing wheel (wheel.c) on virtual time.
 *
 * Copyright (C) 2026 The twheel authors
 *
 * wheel.c is included here as twheel.c includes it: its functions are
 * static. Each case drives a struct wheel of its own with a clock of its
 * own: the current time is a number the case sets, so a wheel can be taken
 * through 64^7 ticks at once, and nothing sleeps, arms an hrtimer or depends
 * on the host's speed.
 *
 * Every case drives the wheel the way its driver does: wheel_advance()
 * until it returns %WHEEL_IDLE, a fresh budget after each %WHEEL_AGAIN, and
 * after %WHEEL_DUE every timer wheel_first_due() returns, taken off with
 * wheel_del(). A reference model follows each timer the case arms: its tick
 * (the deadline rounded up to a tick, computed here by plain division) and
 * its arm order, in an rbtree sorted by (tick, arm order). Each fire is
 * checked against it: never before the deadline, never while a timer of the
 * same tick armed earlier is pending (FIFO per tick), nor one of an earlier
 * tick, for a timer without slack (see wt_fire() for the exceptions that
 * timers armed due and with slack make), and each time the
 * wheel is caught up, no pending timer's tick may have ended and the next
 * event must lie after now and no later than the end of the first pending
 * tick. wt_check_wheel() compares the whole wheel with the model: every
 * timer in a slot that fits its tick and the wheel clock, a stale index
 * that resolves to the slot the timer is in, and the counts, bounds and
 * bitmaps of every slot and level.
 *
 * The directed cases cover the slot calculation, each level edge,
 * deadlines 64^k and 64^k +- 1 ticks away for k = 1..7, FIFO within a tick
 * through cascades, the O(1) splice of a burst, the bounded cascade,
 * cancels in the middle of either, sparse precision and past deadlines,
 * and slack: the grid of a slack, lone timers with slack at the level
 * edges, the coalescing of many timers into one run per rounded tick, and
 * a periodic timer with slack. The model files a timer with slack at its
 * tick rounded up to its grid, by division; a third of the differential
 * test's arms have a random slack, and a re-arm with the grid it has tries
 * wheel_requeue() first, as the driver does.
 * wheel_test_random() is the differential test: WT_OPS random operations
 * (4M here, 10M with other seeds in twheel_wheel_stress.ko for make stress,
 * see wheel_stress.c), in runs of 1M, each on a fresh wheel with its own
 * seed, tick (1 ms, 100 us, 999983 ns, 4 ms in turn) and number of timers
 * (2048, 128, 512 or 32). A run takes about 2 s on the debug kernel under
 * TCG, far from KUnit's 300 s per case.
 */
#include <kunit/test.h>

#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "../wheel.c"

/* Operations per run of the differential test. */
#define WT_RUN_OPS	1000000UL
/* At most this many runs, whatever WT_OPS asks for. */
#define WT_MAX_RUNS	64
/* Timers of the differential test. */
#define WT_TIMERS	2048
/* The differential test compares the whole wheel with the model this often. */
#define WT_CHECK_EVERY	1024
/* Its clock stays below this, so that deadlines after it stay below KTIME_MAX. */
#define WT_HORIZON	((u64)KTIME_MAX / 2)

/*
 * The differential test's operations and first seed; wheel_stress.c sets
 * others. Not module parameters: KUnit runs a module's suites before the
 * kernel parses its parameters (MODULE_STATE_COMING, on 6.1).
 */
#ifndef WT_OPS
#define WT_OPS		(4 * WT_RUN_OPS)
#define WT_SEED		0x7477686565ULL
#define WT_SUITE	"twheel_wheel"
#endif

/**
 * struct wt_timer - a timer of a case and what the model knows about it
 * @t:		the timer on the wheel
 * @node:	in &wt.pending while armed
 * @tick:	the tick of @t.expires, by division
 * @seq:	arm order
 * @fired_at:	the time it last fired, 0 for never
 * @order:	its place among the fires of the case, from 1
 * @level:	the level it was filed at
 * @clamped:	armed with its tick before the wheel clock (a past deadline)
 * @due:	armed with its deadline passed (so are clamped timers)
 * @armed:	pending on the wheel
 */
struct wt_timer {
	struct twheel_timer	t;
	struct rb_node		node;
	u64			tick;
	u64			seq;
	u64			fired_at;
	u64			order;
	unsigned int		level;
	bool			clamped;
	bool			due;
	bool			armed;
};

/**
 * struct wt - a wheel on virtual time and its reference model
 * @test:	the case
 * @w:		the wheel
 * @tick_ns:	its tick
 * @now:	the virtual time, ns
 * @seq:	arms so far
 * @fired:	fires so far
 * @agains:	%WHEEL_AGAIN returns so far
 * @op:		the differential test's operation count, for messages
 * @mid_drain:	arms and cancels while a cascade was in progress
 * @mid_due:	arms and cancels while a due slot was being expired
 * @requeued:	re-arms wheel_requeue() made in place
 * @npending:	timers armed
 * @pending:	the armed timers by (tick, seq)
 * @timers:	the timers of the case
 * @ntimers:	how many
 * @failed:	a check failed: the case stops driving the wheel
 */
struct wt {
	struct kunit		*test;
	struct wheel		*w;
	u64			tick_ns;
	u64			now;
	u64			seq;
	u64			fired;
	u64			agains;
	u64			op;
	u64			mid_drain;
	u64			mid_due;
	u64			requeued;
	u32			npending;
	struct rb_root		pending;
	struct wt_timer		*timers;
	u32			ntimers;
	bool			failed;
};

#define WT_FAIL(wt_, fmt, ...)						\
	do {								\
		struct wt *wt__ = (wt_);				\
									\
		KUNIT_FAIL(wt__->test, "op %llu now %llu clk %llu: " fmt,	\
			   wt__->op, wt__->now, wt__->w->clk, ##__VA_ARGS__); \
		wt__->failed = true;					\
	} while (0)

/* A fresh wheel at @now, no timer armed. */
static void wt_reset(struct wt *wt, u64 tick_ns, u64 now)
{
	memset(wt->timers, 0, wt->ntimers * sizeof(*wt->timers));
	wt->tick_ns = tick_ns;
	wt->now = now;
	wt->seq = 0;
	wt->fired = 0;
	wt->agains = 0;
	wt->op = 0;
	wt->mid_drain = 0;
	wt->mid_due = 0;
	wt->requeued = 0;
	wt->npending = 0;
	wt->pending = RB_ROOT;
	wheel_init(wt->w, tick_ns, now);
	KUNIT_EXPECT_EQ(wt->test, wt->w->clk, div64_u64(now, tick_ns));
}

static struct wt *wt_new(struct kunit *test, u64 tick_ns, u64 now,
			 u32 ntimers)
{
	struct wt *wt = kunit_kzalloc(test, sizeof(*wt), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, wt);
	wt->w = kunit_kzalloc(test, sizeof(*wt->w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wt->w);
	wt->timers = kunit_kcalloc(test, ntimers, sizeof(*wt->timers),
				   GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wt->timers);
	wt->test = test;
	wt->ntimers = ntimers;
	wt_reset(wt, tick_ns, now);
	return wt;
}

/* A pseudo-random generator of our own (splitmix64): runs repeat by seed. */
static u64 wt_rand(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform enough in [0, @n), without a division. */
static u64 wt_below(u64 *s, u64 n)
{
	return mul_u64_u64_shr(wt_rand(s), n, 64);
}

/* The tick of a deadline, by plain division: the reference for wheel.c's. */
static u64 wt_tick_of(const struct wt *wt, u64 ns)
{
	return div64_u64(ns + wt->tick_ns - 1, wt->tick_ns);
}

/*
 * @tick rounded up to a multiple of 2^@slack by division, unless that
 * passes the tick of KTIME_MAX: the reference for wheel_timer_tick().
 */
static u64 wt_slack_tick(const struct wt *wt, u64 tick, unsigned int slack)
{
	u64 grid = 1ULL << slack, up;

	up = div64_u64(tick + grid - 1, grid) * grid;
	return up <= wt_tick_of(wt, KTIME_MAX) ? up : tick;
}

static int wt_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * The tick at which a slot of level @lvl > 0 holding the granule of @tick
 * drains, by division: the start of the granule before.
 */
static u64 wt_drain_tick(u64 tick, unsigned int lvl)
{
	return (div64_u64(tick, LVL_GRAN(lvl)) - 1) * LVL_GRAN(lvl);
}

/*
 * The level a tick is filed at on a wheel at @clk, level by level: the
 * lowest whose level above has @tick in @clk's granule or the next one.
 */
static unsigned int wt_level_of(u64 tick, u64 clk)
{
	unsigned int lvl;

	for (lvl = 0; lvl < LVL_DEPTH - 1; lvl++) {
		u64 gran = div64_u64(tick, LVL_GRAN(lvl + 1));
		u64 here = div64_u64(clk, LVL_GRAN(lvl + 1));

		if (tick <= clk || gran <= here + 1)
			break;
	}
	return lvl;
}

static unsigned int wt_slot_of(u64 tick, u64 clk)
{
	unsigned int lvl = wt_level_of(tick, clk);

	if (tick < clk)
		tick = clk;
	return LVL_OFFS(lvl) + (div64_u64(tick, LVL_GRAN(lvl)) % LVL_SLOTS);
}

static bool wt_less(struct rb_node *a, const struct rb_node *b)
{
	const struct wt_timer *x = rb_entry(a, struct wt_timer, node);
	const struct wt_timer *y = rb_entry(b, struct wt_timer, node);

	return x->tick < y->tick || (x->tick == y->tick && x->seq < y->seq);
}

static struct wt_timer *wt_first(const struct wt *wt)
{
	struct rb_node *node = rb_first(&wt->pending);

	return node ? rb_entry(node, struct wt_timer, node) : NULL;
}

/* @tm, off the wheel, leaves the model's pending timers. */
static void wt_forget(struct wt *wt, struct wt_timer *tm)
{
	rb_erase(&tm->node, &wt->pending);
	tm->armed = false;
	wt->npending--;
}

static void wt_cancel(struct wt *wt, struct wt_timer *tm)
{
	if (!tm->armed) {
		WT_FAIL(wt, "cancel of timer %ld, not armed",
			(long)(tm - wt->timers));
		return;
	}
	wheel_del(wt->w, &tm->t);
	wt_forget(wt, tm);
	/* As the driver does when its wheel empties. */
	if (!wt->npending)
		wheel_emptied(wt->w);
}

/* When slot @idx is due, as wheel_add() says it without a bound. */
static u64 wt_slot_due(const struct wheel *w, unsigned int idx)
{
	unsigned int lvl = wheel_lvl(idx);

	if (!lvl)
		return w->slots[idx].last;
	return idx == w->drain[lvl] ? 0 : wheel_slot_event(w, idx, U64_MAX);
}

/*
 * Arm (or re-arm) @tm for @expires; returns what wheel_add() returned, or
 * the bound it was given for a re-arm that wheel_requeue() made in place,
 * which the driver tries first.
 */
static u64 wt_arm(struct wt *wt, struct wt_timer *tm, u64 expires)
{
	struct wheel *w = wt->w;
	u64 due, end, before, event = 0;
	bool requeued = false;

	if (tm->armed) {
		event = wt_slot_due(w, wheel_slot_of(w, &tm->t));
		requeued = wheel_requeue(w, &tm->t, expires);
		if (requeued) {
			wt_forget(wt, tm);
			wt->requeued++;
		} else {
			wt_cancel(wt, tm);
		}
	}
	tm->t.expires = expires;
	tm->tick = wt_slack_tick(wt, wt_tick_of(wt, expires), tm->t.slack);
	/* Slack: the tick ends less than 2^slack ticks after the deadline. */
	if (tm->tick * wt->tick_ns - expires >= wt->tick_ns << tm->t.slack)
		WT_FAIL(wt, "timer %ld (expires %llu, slack %u) filed at tick %llu",
			(long)(tm - wt->timers), expires, tm->t.slack, tm->tick);
	tm->seq = ++wt->seq;
	tm->clamped = tm->tick < w->clk;
	tm->due = expires <= wt->now;
	tm->level = wt_level_of(tm->tick, w->clk);
	/* The bound the driver passes: the wheel's next event. */
	before = wheel_next_event(w);
	if (requeued) {
		/* In place: the slot's event is as it was, nothing to lower. */
		due = before;
		if (wt_slot_due(w, tm->t.idx) != event)
			WT_FAIL(wt, "timer %ld (expires %llu) requeued: slot due at %llu, was %llu",
				(long)(tm - wt->timers), expires,
				wt_slot_due(w, tm->t.idx), event);
	} else {
		due = wheel_add(w, &tm->t, before);
		if (due < before ? due != wt_slot_due(w, tm->t.idx) :
		    wt_slot_due(w, tm->t.idx) < before)
			WT_FAIL(wt, "timer %ld (expires %llu) due at %llu, slot %llu, bound %llu",
				(long)(tm - wt->timers), expires, due,
				wt_slot_due(w, tm->t.idx), before);
	}
	rb_add(&tm->node, &wt->pending, wt_less);
	tm->armed = true;
	wt->npending++;
	/* The wheel must wake up by the end of the timer's tick. */
	end = max(tm->tick, w->clk) * wt->tick_ns;
	if (due > end)
		WT_FAIL(wt, "timer %ld (expires %llu) armed due at %llu, after its tick's end %llu",
			(long)(tm - wt->timers), expires, due, end);
	return due;
}

/*
 * Arm @tm with the slack grid @slack (see wheel_slack_grid()); a re-arm
 * with the same grid tries wheel_requeue() first, as the driver does.
 */
static u64 wt_arm_slack(struct wt *wt, struct wt_timer *tm, u64 expires,
			unsigned int slack)
{
	/* Its grid must not change while it is filed. */
	if (tm->armed && tm->t.slack != slack)
		wt_cancel(wt, tm);
	tm->t.slack = slack;
	return wt_arm(wt, tm, expires);
}

/* A timer wheel_first_due() returned: check it against the model and fire it. */
static void wt_fire(struct wt *wt, struct twheel_timer *t)
{
	struct wt_timer *tm = container_of(t, struct wt_timer, t);
	long id = tm - wt->timers;
	struct rb_node *node;

	if (id < 0 || id >= wt->ntimers || !tm->armed) {
		WT_FAIL(wt, "fire of a timer not armed (%ld)", id);
		return;
	}
	if (t->expires > wt->now)
		WT_FAIL(wt, "timer %ld fired early: expires %llu", id, t->expires);
	/*
	 * FIFO within a tick; and tick order for a timer without slack,
	 * whose deadline's tick is its tick: when it is due, so are the
	 * earlier ticks' slots, which expire first. But a timer armed due
	 * (so a clamped one) goes to the slot being expired if its tick is
	 * that slot's or has passed, or waits for that slot; and a timer with
	 * slack fires once its slot's deadlines have passed, maybe before an
	 * earlier tick's slot whose have not, which makes that slot the one
	 * being expired.
	 */
	for (node = rb_first(&wt->pending); node != &tm->node;
	     node = rb_next(node)) {
		struct wt_timer *f = rb_entry(node, struct wt_timer, node);

		if (f->tick == tm->tick ||
		    (!f->due && !tm->due && !tm->t.slack)) {
			WT_FAIL(wt, "order: %ld (tick %llu/%llu) fired before %ld (%llu/%llu)",
				id, tm->tick, tm->seq, (long)(f - wt->timers),
				f->tick, f->seq);
			break;
		}
	}
	if (wheel_slot_of(wt->w, t) != wt->w->due)
		WT_FAIL(wt, "timer %ld fired from slot %u, not from the due slot %u",
			id, wheel_slot_of(wt->w, t), wt->w->due);
	/* As the driver does: the slot is the due one. */
	wheel_del_due(wt->w, t);
	wt_forget(wt, tm);
	tm->fired_at = wt->now;
	tm->order = ++wt->fired;
}

/* The wheel is caught up with now: nothing may be left behind. */
static void wt_check_idle(struct wt *wt)
{
	struct wt_timer *first = wt_first(wt);
	u64 next = wheel_next_event(wt->w);

	if (wt->w->draining)
		WT_FAIL(wt, "idle with levels %#x draining", wt->w->draining);
	if (!first) {
		if (next != U64_MAX)
			WT_FAIL(wt, "empty wheel with next event %llu", next);
		return;
	}
	if (first->tick * wt->tick_ns <= wt->now)
		WT_FAIL(wt, "timer %ld (expires %llu, tick %llu) missed",
			(long)(first - wt->timers), first->t.expires, first->tick);
	if (next <= wt->now)
		WT_FAIL(wt, "idle with next event %llu not after now", next);
	if (next > first->tick * wt->tick_ns)
		WT_FAIL(wt, "next event %llu after the end of tick %llu of timer %ld",
			next, first->tick, (long)(first - wt->timers));
}

/*
 * One step of the driver: one timer fired, or one wheel_advance() call
 * (which refills nothing: the caller gives a new budget after
 * %WHEEL_AGAIN). Returns %WHEEL_DUE for a fire.
 */
static enum wheel_state wt_step(struct wt *wt, bool *due, unsigned int *left)
{
	struct twheel_timer *t;
	enum wheel_state state;

	if (*due) {
		t = wheel_first_due(wt->w, wt->now);
		if (t) {
			wt_fire(wt, t);
			return WHEEL_DUE;
		}
		*due = false;
	}
	state = wheel_advance(wt->w, wt->now, left);
	switch (state) {
	case WHEEL_IDLE:
		wt_check_idle(wt);
		break;
	case WHEEL_AGAIN:
		if (*left)
			WT_FAIL(wt, "WHEEL_AGAIN with %u budget left", *left);
		wt->agains++;
		break;
	case WHEEL_DUE:
		if (!wheel_first_due(wt->w, wt->now))
			WT_FAIL(wt, "WHEEL_DUE with no timer due");
		*due = true;
		break;
	}
	return state;
}

/*
 * Process the wheel up to @now as its driver does, with @budget timers of
 * cascading per wheel_advance() call after each %WHEEL_AGAIN.
 */
static void wt_run(struct wt *wt, u64 now, unsigned int budget)
{
	unsigned int left = budget, i;
	bool due = false;

	if (now < wt->now)
		WT_FAIL(wt, "time going back to %llu", now);
	wt->now = now;
	for (i = 0; i < 10000000 && !wt->failed; i++) {
		switch (wt_step(wt, &due, &left)) {
		case WHEEL_IDLE:
			return;
		case WHEEL_AGAIN:
			left = budget;
			break;
		default:
			break;
		}
	}
	if (!wt->failed)
		WT_FAIL(wt, "wheel_advance() does not become idle");
}

/* Run the wheel at each of its events up to @until, as its hrtimer would. */
static void wt_run_events(struct wt *wt, u64 until)
{
	unsigned int i;

	for (i = 0; i < 100000 && !wt->failed; i++) {
		u64 next = wheel_next_event(wt->w);

		if (next == U64_MAX || next > until)
			return;
		wt_run(wt, max(next, wt->now), UINT_MAX);
	}
	if (!wt->failed)
		WT_FAIL(wt, "more than 100000 events");
}

/* Compare the whole wheel with the model. */
static void wt_check_wheel(struct wt *wt)
{
	const struct wheel *w = wt->w;
	u32 level[LVL_DEPTH] = {};
	unsigned int idx, lvl;
	u32 total = 0;

	if (wt->failed)
		return;
	for (idx = 0; idx < WHEEL_SIZE && !wt->failed; idx++) {
		const struct wheel_slot *slot = &w->slots[idx];
		unsigned int pos = idx % LVL_SLOTS;
		const struct list_head *pos_entry;
		u32 n = 0;

		lvl = idx / LVL_SLOTS;
		list_for_each(pos_entry, &slot->head) {
			struct twheel_timer *t =
				list_entry(pos_entry, struct twheel_timer, entry);
			struct wt_timer *tm = container_of(t, struct wt_timer, t);
			long id = tm - wt->timers;
			u64 tick = tm->tick;

			if (++n > wt->ntimers || id < 0 || id >= wt->ntimers ||
			    !tm->armed) {
				WT_FAIL(wt, "slot %u: a timer not armed (%ld) or a loop",
					idx, id);
				return;
			}
			if (wheel_slot_of(w, t) != idx)
				WT_FAIL(wt, "timer %ld in slot %u resolves to slot %u (idx %u)",
					id, idx, wheel_slot_of(w, t), t->idx);
			if (t->expires < slot->first || t->expires > slot->last)
				WT_FAIL(wt, "timer %ld: %llu outside slot %u's [%llu, %llu]",
					id, t->expires, idx, slot->first, slot->last);
			if (t->slack > slot->slack)
				WT_FAIL(wt, "timer %ld: slack %u above slot %u's %u",
					id, t->slack, idx, slot->slack);
			if (t->slack < slot->slack_min)
				WT_FAIL(wt, "timer %ld: slack %u below slot %u's %u",
					id, t->slack, idx, slot->slack_min);
			/*
			 * A tick's slot changes only when @clk reaches the drain
			 * tick of the slot it is in, and the drain moves it: each
			 * timer is where its tick belongs now, but in the slot
			 * being drained, which holds its span.
			 */
			if (idx == w->drain[lvl]) {
				if ((tick < w->clk && !tm->clamped) ||
				    tick < w->drain_start[lvl] ||
				    tick - w->drain_start[lvl] >= LVL_GRAN(lvl) ||
				    w->clk < wt_drain_tick(tick, lvl))
					WT_FAIL(wt, "timer %ld (tick %llu) in draining slot %u",
						id, tick, idx);
			} else if (tick >= w->clk) {
				if (wt_slot_of(tick, w->clk) != idx)
					WT_FAIL(wt, "timer %ld (tick %llu) in slot %u, not %u",
						id, tick, idx, wt_slot_of(tick, w->clk));
			} else if (lvl || !tm->clamped) {
				WT_FAIL(wt, "the clock passed timer %ld's tick %llu",
					id, tick);
			}
		}
		if (n != slot->count)
			WT_FAIL(wt, "slot %u holds %u timers, counts %u",
				idx, n, slot->count);
		if (!!n != test_bit(pos, w->pending_map[lvl]))
			WT_FAIL(wt, "slot %u holds %u timers, bitmap says %d",
				idx, n, test_bit(pos, w->pending_map[lvl]));
		if (!n && (slot->first != U64_MAX || slot->last || slot->slack ||
			   slot->slack_min != U8_MAX))
			WT_FAIL(wt, "empty slot %u has bounds [%llu, %llu], slack %u",
				idx, slot->first, slot->last, slot->slack);
		level[lvl] += n;
		total += n;
	}
	for (lvl = 0; lvl < LVL_DEPTH; lvl++)
		if (level[lvl] != w->level_count[lvl])
			WT_FAIL(wt, "level %u holds %u timers, counts %u",
				lvl, level[lvl], w->level_count[lvl]);
	if (total != wt->npending || wheel_count(w) != total)
		WT_FAIL(wt, "the wheel holds %u timers, counts %llu, %u are armed",
			total, wheel_count(w), wt->npending);
}

/* wheel_ns_div() and wheel_tick_of() against plain division. */
static void wheel_test_div(struct kunit *test)
{
	static const u64 ticks[] = {
		100 * NSEC_PER_USEC, 999983, NSEC_PER_MSEC, 3 * NSEC_PER_MSEC,
		NSEC_PER_SEC,
	};
	u64 seed = 1, ns, q;
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(ticks); i++) {
		struct wheel *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
		u64 tick = ticks[i];

		KUNIT_ASSERT_NOT_NULL(test, w);
		wheel_init(w, tick, 0);
		for (j = 0; j < 20000; j++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			switch (j % 4) {
			case 0:
				ns = seed >> 1;
				break;
			case 1:
				ns = (seed >> 20) * tick + (j % 3) - 1;
				break;
			case 2:
				ns = KTIME_MAX - (seed >> 40);
				break;
			default:
				ns = seed >> (j % 64);
			}
			if (ns > KTIME_MAX)
				ns = KTIME_MAX;
			q = div64_u64(ns, tick);
			if (wheel_ns_div(w, ns) != q ||
			    wheel_tick_of(w, ns) != div64_u64(ns + tick - 1, tick)) {
				KUNIT_FAIL(test, "tick %llu: %llu ns: %llu (tick %llu), want %llu",
					   tick, ns, wheel_ns_div(w, ns),
					   wheel_tick_of(w, ns), q);
				return;
			}
		}
	}
}

/*
 * wheel_calc_idx() against the reference for one pair; above level 0, the
 * slot must not drain before @clk.
 */
static bool wt_calc_idx_one(struct kunit *test, u64 tick, u64 clk)
{
	unsigned int idx = wheel_calc_idx(tick, clk), want = wt_slot_of(tick, clk);
	unsigned int lvl = want / LVL_SLOTS;

	if (idx == want && (!lvl || wt_drain_tick(tick, lvl) > clk))
		return true;
	KUNIT_FAIL(test, "tick %#llx clk %#llx: slot %u, want %u", tick, clk,
		   idx, want);
	return false;
}

/*
 * The slot of a tick: each level's first and last slot, the edges of the
 * granule after @clk's, the top level, KTIME_MAX at the smallest tick, and
 * 100000 random pairs of every magnitude.
 */
static void wheel_test_calc_idx(struct kunit *test)
{
	u64 seed = 5, clk, tick;
	unsigned int lvl, i;

	KUNIT_EXPECT_EQ(test, wheel_calc_idx(0, 0), 0);
	KUNIT_EXPECT_EQ(test, wheel_calc_idx(0x12345, 0x12345), 0x45);
	KUNIT_EXPECT_EQ(test, wheel_calc_idx(0x107f, 0x1040), 127);
	KUNIT_EXPECT_EQ(test, wheel_calc_idx(0x1080, 0x107f), 0);
	/* Level 0 holds the next 64-tick block, not the one after. */
	KUNIT_EXPECT_EQ(test, wheel_calc_idx(0x10bf, 0x1040), 63);
	KUNIT_EXPECT_EQ(test, wheel_calc_idx(0x10c0, 0x107f), LVL_OFFS(1) + 67);
	KUNIT_EXPECT_EQ(test, wheel_calc_idx(0x2fff, 0x1001), LVL_OFFS(1) + 63);
	KUNIT_EXPECT_EQ(test, wheel_calc_idx(0x3000, 0x1fff), LVL_OFFS(2) + 3);
	for (lvl = 1; lvl < LVL_DEPTH; lvl++) {
		u64 gran = LVL_GRAN(lvl);

		KUNIT_EXPECT_EQ(test, wheel_calc_idx(gran, 0),
				LVL_OFFS(lvl - 1) + LVL_SIZE);
		KUNIT_EXPECT_EQ(test, wheel_calc_idx(2 * gran - 1, 0),
				LVL_OFFS(lvl - 1) + LVL_SLOTS - 1);
		KUNIT_EXPECT_EQ(test, wheel_calc_idx(2 * gran, 0), LVL_OFFS(lvl) + 2);
		KUNIT_EXPECT_EQ(test, wheel_calc_idx(gran - 1, 0),
				LVL_OFFS(lvl - 1) + LVL_SIZE - 1);
		KUNIT_EXPECT_EQ(test, wheel_calc_idx(64 * gran - 1, 0),
				LVL_OFFS(lvl) + 63);
	}
	KUNIT_EXPECT_EQ(test, wheel_calc_idx(LVL_GRAN(LVL_DEPTH) - 1, 0),
			LVL_OFFS(LVL_DEPTH - 1) + 63);
	tick = div64_u64(KTIME_MAX, 100 * NSEC_PER_USEC) + 1;
	KUNIT_EXPECT_LT(test, tick, LVL_GRAN(LVL_DEPTH));
	KUNIT_EXPECT_EQ(test, wheel_calc_idx(tick, 0) / LVL_SLOTS, LVL_DEPTH - 1);
	for (i = 0; i < 100000; i++) {
		clk = wt_below(&seed, LVL_GRAN(LVL_DEPTH - 1) * 16);
		tick = clk + (wt_rand(&seed) & ((1ULL << wt_below(&seed, 45)) - 1));
		if (!wt_calc_idx_one(test, tick, clk))
			return;
	}
}

static void wheel_test_empty(struct kunit *test)
{
	struct wt *wt = wt_new(test, NSEC_PER_MSEC, 5 * NSEC_PER_MSEC + 7, 1);
	unsigned int budget = 1;

	KUNIT_EXPECT_EQ(test, wt->w->clk, 5);
	KUNIT_EXPECT_EQ(test, wheel_next_event(wt->w), U64_MAX);
	KUNIT_EXPECT_NULL(test, wheel_first_due(wt->w, U64_MAX));
	KUNIT_EXPECT_EQ(test, wheel_advance(wt->w, KTIME_MAX, &budget),
			WHEEL_IDLE);
	KUNIT_EXPECT_EQ(test, budget, 1);
	KUNIT_EXPECT_EQ(test, wt->w->clk, div64_u64(KTIME_MAX, NSEC_PER_MSEC));
	wt_check_wheel(wt);
}

/* Arm one timer and check where it is filed. */
static void wt_arm_check(struct wt *wt, struct wt_timer *tm, u64 expires)
{
	u64 tick = wt_tick_of(wt, expires);
	unsigned int want = wt_slot_of(tick, wt->w->clk);
	unsigned int lvl = wt_level_of(tick, wt->w->clk);
	u32 before = wt->w->level_count[lvl];

	wt_arm(wt, tm, expires);
	if (tm->t.idx != want || wheel_slot_of(wt->w, &tm->t) != want)
		WT_FAIL(wt, "expires %llu (tick %llu) filed in slot %u, want %u",
			expires, tick, tm->t.idx, want);
	if (wt->w->level_count[lvl] != before + 1)
		WT_FAIL(wt, "level %u counts %u timers, want %u", lvl,
			wt->w->level_count[lvl], before + 1);
}

/* Origins of the wheel clock, in ticks, the directed cases start from. */
static const u64 wt_origins[] = {
	0, 1, 63, 4095, 262143, 0x2a5f3c1b5ULL, (1ULL << 36) - 1,
};

/* The deadline at the end of @tick, or KTIME_MAX if that is later. */
static u64 wt_ns_of(const struct wt *wt, u64 tick)
{
	if (tick > div64_u64(KTIME_MAX, wt->tick_ns))
		return KTIME_MAX;
	return tick * wt->tick_ns;
}

/*
 * From @clk, at each level, the last tick of @clk's granule of the level
 * above and of the next granule, and the first ticks after them, with the
 * deadline at the end or at the start of the tick, and KTIME_MAX: each is
 * filed where the reference says, and all fire in tick order, each at its
 * deadline.
 */
static void wt_level_edges(struct kunit *test, u64 clk, bool tick_start)
{
	static const u64 tick_ns = 100 * NSEC_PER_USEC;
	struct wt *wt = wt_new(test, tick_ns, clk * tick_ns + tick_start,
			       4 * LVL_DEPTH + 1);
	u64 max_tick = div64_u64(KTIME_MAX, tick_ns);
	unsigned int lvl, e, n = 0, i, j;

	for (lvl = 0; lvl < LVL_DEPTH; lvl++) {
		for (e = 0; e < 4; e++) {
			u64 tick = (clk | (LVL_GRAN(lvl + 1) - 1)) +
				   (e / 2) * LVL_GRAN(lvl + 1) + e % 2;

			if (tick <= clk || tick > max_tick)
				continue;
			wt_arm_check(wt, &wt->timers[n++],
				     tick * tick_ns - (tick_start ? tick_ns - 1 : 0));
		}
	}
	wt_arm_check(wt, &wt->timers[n++], KTIME_MAX);
	wt_check_wheel(wt);
	wt_run_events(wt, KTIME_MAX);
	wt_check_wheel(wt);
	KUNIT_EXPECT_EQ(test, wt->fired, n);
	for (i = 0; i < n && !wt->failed; i++) {
		struct wt_timer *tm = &wt->timers[i];

		KUNIT_EXPECT_EQ_MSG(test, tm->fired_at, tm->t.expires,
				    "clk %llu timer %u tick %llu level %u",
				    clk, i, tm->tick, tm->level);
		/* In tick order, and in arm order within a tick. */
		for (j = 0; j < n; j++)
			if (wt->timers[j].order == tm->order + 1)
				KUNIT_EXPECT_TRUE(test, wt_less(&tm->node,
								&wt->timers[j].node));
	}
}

static void wheel_test_level_edges(struct kunit *test)
{
	unsigned int o;

	for (o = 0; o < ARRAY_SIZE(wt_origins); o++) {
		wt_level_edges(test, wt_origins[o], false);
		wt_level_edges(test, wt_origins[o], true);
	}
}

/*
 * A lone timer @delta ticks after @clk, its deadline at the end of its tick
 * or a third of a tick before (@v bit 1), the wheel started at the start or
 * in the middle of tick @clk (@v bit 0): filed at the level the reference
 * gives and fired at its deadline, never before. @stepped: time
 * moves in steps that halve the distance to the deadline, then creep past
 * it by a quarter tick; else the wheel runs at its events.
 */
static void wt_pow64(struct wt *wt, u64 clk, u64 delta, unsigned int v,
		     bool stepped)
{
	static const u64 tick_ns = NSEC_PER_MSEC;
	struct kunit *test = wt->test;
	u64 start = clk * tick_ns + (v & 1) * (tick_ns / 2);
	u64 expires = (clk + delta) * tick_ns - (v >> 1) * (tick_ns / 3);
	struct wt_timer *tm = &wt->timers[0];
	u64 fire, now = start;

	wt_reset(wt, tick_ns, start);
	wt_arm_check(wt, tm, expires);
	KUNIT_EXPECT_EQ(test, wheel_lvl(wheel_slot_of(wt->w, &tm->t)),
			wt_level_of(clk + delta, clk));
	fire = expires;
	if (!stepped)
		wt_run_events(wt, KTIME_MAX);
	while (stepped && tm->armed && !wt->failed) {
		now += max((fire - min(fire, now)) / 2, tick_ns / 4);
		wt_run(wt, now, UINT_MAX);
		if (now < fire && !tm->armed)
			WT_FAIL(wt, "delta %llu: fired at %llu, before %llu",
				delta, now, fire);
	}
	KUNIT_EXPECT_FALSE(test, tm->armed);
	KUNIT_EXPECT_GE_MSG(test, tm->fired_at, fire, "clk %llu delta %llu v %u",
			    clk, delta, v);
	KUNIT_EXPECT_LT_MSG(test, tm->fired_at, fire + (stepped ? tick_ns / 4 : 1),
			    "clk %llu delta %llu v %u", clk, delta, v);
	KUNIT_EXPECT_LE(test, wt->w->cascaded, tm->level);
	wt_check_wheel(wt);
}

static void wheel_test_pow64(struct kunit *test)
{
	struct wt *wt = wt_new(test, NSEC_PER_MSEC, 0, 1);
	unsigned int o, k, d, v;

	for (o = 0; o < ARRAY_SIZE(wt_origins); o++)
		for (k = 1; k < LVL_DEPTH; k++)
			for (d = 0; d < 3; d++)
				for (v = 0; v < 4; v++) {
					u64 delta = LVL_GRAN(k) + d - 1;

					wt_pow64(wt, wt_origins[o], delta, v, false);
					wt_pow64(wt, wt_origins[o], delta, v, true);
					if (wt->failed)
						return;
				}
}

/*
 * Timers of one tick fire in the order they were armed, through two
 * cascades, with timers of the same tick armed while the cascades are in
 * progress (between wheel_advance() calls that return %WHEEL_AGAIN) and
 * while the tick's slot is being expired (between fires), and with other
 * timers of the same slots around them. Whatever is left fires in tick
 * order.
 */
static void wheel_test_fifo(struct kunit *test)
{
	static const u64 tick_ns = NSEC_PER_MSEC;
	const u64 span = 3 * LVL_GRAN(2), tick = span + 17 * LVL_GRAN(1) + 5;
	struct wt *wt = wt_new(test, tick_ns, 0, 400);
	unsigned int n = 0, i, steps, left = 3;
	struct wt_timer *prev = NULL;
	u64 seed = 11;
	bool due = false;

	for (i = 0; i < 60; i++) {
		wt_arm(wt, &wt->timers[n++],
		       (tick - 1) * tick_ns + 1 + wt_below(&seed, tick_ns));
		wt_arm(wt, &wt->timers[n++],
		       (span + wt_below(&seed, LVL_GRAN(2))) * tick_ns -
		       wt_below(&seed, tick_ns));
	}
	KUNIT_EXPECT_EQ(test, wt->w->level_count[2], n);
	wt->now = tick * tick_ns;
	for (steps = 0; steps < 100000 && !wt->failed; steps++) {
		enum wheel_state state = wt_step(wt, &due, &left);

		if (state == WHEEL_IDLE)
			break;
		if (state == WHEEL_AGAIN)
			left = 3;
		/* Another timer of the tick, and one elsewhere in the span. */
		if (state != WHEEL_DUE || wt_below(&seed, 2)) {
			if (n + 2 > wt->ntimers)
				continue;
			wt_arm(wt, &wt->timers[n++],
			       wt->now - wt_below(&seed, tick_ns));
			wt_arm(wt, &wt->timers[n++],
			       (span + wt_below(&seed, LVL_GRAN(2))) * tick_ns);
		}
	}
	KUNIT_EXPECT_GT(test, wt->agains, 30);
	wt_check_wheel(wt);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, wt->fired, n);
	KUNIT_EXPECT_EQ(test, wt->npending, 0);
	/* In arm order within the tick. */
	for (i = 0; i < n; i++) {
		struct wt_timer *tm = &wt->timers[i];

		if (tm->tick != tick)
			continue;
		if (prev)
			KUNIT_EXPECT_LT(test, prev->order, tm->order);
		prev = tm;
	}
}

/*
 * Timers at random ticks of one level-3 slot, a quarter of them on the
 * tick of another, armed in random order: run in random steps with
 * several budgets, they fire in (tick, arm) order, each cascaded at most
 * once per level it started above 0.
 */
static void wheel_test_cascade_order(struct kunit *test)
{
	static const unsigned int budgets[] = { 1, 5, UINT_MAX };
	static const u64 tick_ns = NSEC_PER_MSEC;
	const u64 span = 5 * LVL_GRAN(3);
	unsigned int b, i, n = 400;

	for (b = 0; b < ARRAY_SIZE(budgets); b++) {
		struct wt *wt = wt_new(test, tick_ns, 0, n);
		u64 seed = 17 + b, levels = 0, last = 0;

		for (i = 0; i < n; i++) {
			u64 tick = span + wt_below(&seed, LVL_GRAN(3));

			if (i && !wt_below(&seed, 4))
				tick = wt->timers[wt_below(&seed, i)].tick;
			wt_arm(wt, &wt->timers[i],
			       tick * tick_ns - wt_below(&seed, tick_ns));
			levels += wt->timers[i].level;
		}
		KUNIT_EXPECT_EQ(test, wt->w->level_count[3], n);
		while (wt->npending && !wt->failed)
			wt_run(wt, wt->now + wt_below(&seed, 64 * LVL_GRAN(1) * tick_ns),
			       budgets[b]);
		KUNIT_EXPECT_LE(test, wt->w->cascaded, levels);
		for (i = 1; i <= n && !wt->failed; i++) {
			unsigned int j;

			for (j = 0; j < n && wt->timers[j].order != i; j++)
				;
			KUNIT_ASSERT_LT(test, j, n);
			KUNIT_EXPECT_LE(test, last, wt->timers[j].tick);
			last = wt->timers[j].tick;
		}
	}
}

/*
 * A burst of timers in one level-3 slot that all fall into one lower slot
 * (one deadline, one tick with many deadlines, or two ticks of one level-2
 * slot) is moved by one splice per level, at most one unit of budget
 * each: one wheel_advance() with a budget of 1 takes a burst of one tick
 * down to level 0, and splits the two ticks at level 2. The burst fires
 * in arm order.
 */
static void wt_splice(struct kunit *test, unsigned int kind)
{
	static const u64 tick_ns = NSEC_PER_MSEC;
	const u64 tick = 2 * LVL_GRAN(3) + 3 * LVL_GRAN(2) + 4 * LVL_GRAN(1) + 5;
	const unsigned int n = 4096;
	struct wt *wt = wt_new(test, tick_ns, 0, n);
	unsigned int i, left = 1;

	for (i = 0; i < n; i++) {
		u64 ns = tick * tick_ns;

		if (kind == 1)
			ns -= i % tick_ns;
		else if (kind == 2)
			ns += (i & 1) * LVL_GRAN(1) * tick_ns;
		wt_arm(wt, &wt->timers[i], ns);
	}
	KUNIT_EXPECT_EQ(test, wt->w->level_count[3], n);
	KUNIT_EXPECT_EQ(test, wt->w->slots[LVL_OFFS(3) + 2].count, n);
	wt->now = tick * tick_ns;
	if (kind == 2) {
		KUNIT_EXPECT_EQ(test, wheel_advance(wt->w, wt->now, &left),
				WHEEL_AGAIN);
		KUNIT_EXPECT_EQ(test, wt->w->level_count[3], 0);
		KUNIT_EXPECT_EQ(test, wt->w->level_count[2], n);
		KUNIT_EXPECT_EQ(test, wt->w->cascaded, n);
		KUNIT_EXPECT_EQ(test, wt->w->drain[2], LVL_OFFS(2) + 3);
		wt_check_wheel(wt);
		wt_run(wt, wt->now, 1);
		KUNIT_EXPECT_EQ(test, wt->fired, n / 2);
		wt_run_events(wt, KTIME_MAX);
		KUNIT_EXPECT_EQ(test, wt->fired, n);
		return;
	}
	KUNIT_EXPECT_EQ(test, wheel_advance(wt->w, wt->now, &left), WHEEL_DUE);
	KUNIT_EXPECT_EQ(test, wt->w->level_count[0], n);
	KUNIT_EXPECT_EQ(test, wt->w->cascaded, 3 * n);
	KUNIT_EXPECT_EQ(test, left, 0);
	wt_check_wheel(wt);
	wt_run(wt, wt->now, 1);
	KUNIT_EXPECT_EQ(test, wt->fired, n);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, wt->timers[i].order, i + 1);
	wt_check_wheel(wt);
}

static void wheel_test_splice(struct kunit *test)
{
	wt_splice(test, 0);
	wt_splice(test, 1);
	wt_splice(test, 2);
}

/* @n timers in level-1 slot 5 of a wheel at 0, on each of its 64 ticks in turn. */
static struct wt *wt_spread(struct kunit *test, unsigned int n, unsigned int extra)
{
	struct wt *wt = wt_new(test, NSEC_PER_MSEC, 0, n + extra);
	unsigned int i;

	for (i = 0; i < n; i++)
		wt_arm(wt, &wt->timers[i], (5 * LVL_SIZE + i % LVL_SIZE) * NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, wt->w->slots[LVL_OFFS(1) + 5].count, n);
	wt->now = 5 * LVL_SIZE * NSEC_PER_MSEC;
	return wt;
}

/*
 * A slot of timers with different deadlines is cascaded in chunks of the
 * budget: ceil(count / budget) calls, all but the last returning
 * %WHEEL_AGAIN with the budget used up, each moving a budget of timers.
 */
static void wheel_test_bounded_cascade(struct kunit *test)
{
	static const unsigned int budgets[] = { 1, 7, 64, 999, 1000, 1001 };
	const unsigned int n = 1000;
	unsigned int b;

	for (b = 0; b < ARRAY_SIZE(budgets); b++) {
		unsigned int budget = budgets[b], left = budget, calls = 0;
		struct wt *wt = wt_spread(test, n, 0);
		enum wheel_state state;

		while ((state = wheel_advance(wt->w, wt->now, &left)) == WHEEL_AGAIN &&
		       !wt->failed) {
			u32 moved = ++calls * budget;

			KUNIT_EXPECT_EQ(test, left, 0);
			KUNIT_EXPECT_EQ(test, wt->w->cascaded, moved);
			KUNIT_EXPECT_EQ(test, wt->w->level_count[0], moved);
			KUNIT_EXPECT_EQ(test, wt->w->slots[LVL_OFFS(1) + 5].count,
					n - moved);
			if (!(calls % 16))
				wt_check_wheel(wt);
			left = budget;
		}
		KUNIT_EXPECT_EQ(test, state, WHEEL_DUE);
		KUNIT_EXPECT_EQ(test, calls, DIV_ROUND_UP(n, budget) - 1);
		KUNIT_EXPECT_EQ(test, wt->w->cascaded, n);
		KUNIT_EXPECT_EQ(test, wt->w->level_count[0], n);
		wt_check_wheel(wt);
		wt_run(wt, wt->now, budget);
		KUNIT_EXPECT_EQ(test, wt->fired, DIV_ROUND_UP(n, LVL_SIZE));
		wt_run_events(wt, KTIME_MAX);
		KUNIT_EXPECT_EQ(test, wt->fired, n);
	}
}

/* Advance the wheel at wt->now with a budget, expecting %WHEEL_AGAIN. */
static void wt_again(struct wt *wt, unsigned int budget)
{
	unsigned int left = budget;

	KUNIT_EXPECT_EQ(wt->test, wheel_advance(wt->w, wt->now, &left), WHEEL_AGAIN);
	wt->agains++;
}

/*
 * Cancels while a slot is half cascaded: of timers already moved, of the
 * draining slot's head, middle and tail, a re-arm into the draining slot,
 * and at last of everything left in it. Counts, bitmaps and bounds stay
 * right and the rest fires in order.
 */
static void wheel_test_cancel_draining(struct kunit *test)
{
	const unsigned int n = 1000, drain = LVL_OFFS(1) + 5;
	struct wt *wt = wt_spread(test, n, 1);
	struct wheel *w = wt->w;
	unsigned int i;

	wt_again(wt, 100);
	wt_again(wt, 100);
	wt_again(wt, 100);
	KUNIT_EXPECT_EQ(test, w->drain[1], drain);
	KUNIT_EXPECT_EQ(test, wheel_next_event(w), 0);
	/* Moved: 0 and 50. Still draining: 300 (head), 700, 999 (tail). */
	KUNIT_EXPECT_EQ(test, wheel_slot_of(w, &wt->timers[50].t),
			(5 * LVL_SIZE + 50) % LVL_SLOTS);
	KUNIT_EXPECT_EQ(test, wheel_slot_of(w, &wt->timers[300].t), drain);
	wt_cancel(wt, &wt->timers[0]);
	wt_cancel(wt, &wt->timers[50]);
	wt_cancel(wt, &wt->timers[300]);
	wt_cancel(wt, &wt->timers[700]);
	wt_cancel(wt, &wt->timers[999]);
	wt_check_wheel(wt);
	KUNIT_EXPECT_EQ(test, w->slots[drain].count, n - 300 - 3);
	/* Back on tick 5 * 64 + 50: behind the draining slot's timers of that tick. */
	wt_arm(wt, &wt->timers[50], (5 * LVL_SIZE + 50) * NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, wt->timers[50].t.idx, drain);
	/* A new timer on the slot's first tick, due now: it waits behind them too. */
	wt_arm(wt, &wt->timers[n], wt->now);
	KUNIT_EXPECT_EQ(test, wt->timers[n].t.idx, drain);
	wt_check_wheel(wt);
	wt_again(wt, 100);
	wt_check_wheel(wt);
	/* Everything still in the draining slot. */
	for (i = 0; i < n + 1; i++)
		if (wt->timers[i].armed && wheel_slot_of(w, &wt->timers[i].t) == drain)
			wt_cancel(wt, &wt->timers[i]);
	KUNIT_EXPECT_EQ(test, w->slots[LVL_OFFS(1) + 5].count, 0);
	KUNIT_EXPECT_FALSE(test, test_bit(5, w->pending_map[1]));
	wt_check_wheel(wt);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, wt->npending, 0);
	KUNIT_EXPECT_EQ(test, wt->fired, 400 - 2);
	KUNIT_EXPECT_EQ(test, w->drain[1], WHEEL_NONE);
	wt_check_wheel(wt);
}

/*
 * Cancels after O(1) splices: the timers keep the index of the level-3
 * slot they were filed in, which wheel_slot_of() follows down one, two and
 * three levels; a re-arm on the same deadline joins the tail of the slot
 * they were spliced into and fires last.
 */
static void wheel_test_cancel_spliced(struct kunit *test)
{
	static const u64 tick_ns = NSEC_PER_MSEC;
	const u64 tick = 2 * LVL_GRAN(3) + 3 * LVL_GRAN(2) + 4 * LVL_GRAN(1) + 5;
	const unsigned int n = 1000, stale = LVL_OFFS(3) + 2;
	/* The level-2 and level-1 slots they pass through: granules 131, 8388. */
	const unsigned int lvl2 = LVL_OFFS(2) + 131 % LVL_SLOTS;
	const unsigned int lvl1 = LVL_OFFS(1) + 8388 % LVL_SLOTS;
	struct wt *wt = wt_new(test, tick_ns, 0, n);
	struct wheel *w = wt->w;
	unsigned int i;

	for (i = 0; i < n; i++)
		wt_arm(wt, &wt->timers[i], tick * tick_ns);
	wt_run(wt, wt_drain_tick(tick, 3) * tick_ns, 1);
	KUNIT_EXPECT_EQ(test, wt->timers[1].t.idx, stale);
	KUNIT_EXPECT_EQ(test, wheel_slot_of(w, &wt->timers[1].t), lvl2);
	wt_cancel(wt, &wt->timers[0]);
	wt_cancel(wt, &wt->timers[500]);
	wt_cancel(wt, &wt->timers[999]);
	KUNIT_EXPECT_EQ(test, w->level_count[2], n - 3);
	KUNIT_EXPECT_EQ(test, w->level_count[3], 0);
	wt_check_wheel(wt);
	wt_arm(wt, &wt->timers[500], tick * tick_ns);
	KUNIT_EXPECT_EQ(test, wt->timers[500].t.idx, lvl2);
	wt_run(wt, wt_drain_tick(tick, 2) * tick_ns, 1);
	KUNIT_EXPECT_EQ(test, w->level_count[1], n - 2);
	KUNIT_EXPECT_EQ(test, wheel_slot_of(w, &wt->timers[1].t), lvl1);
	KUNIT_EXPECT_EQ(test, wheel_slot_of(w, &wt->timers[500].t), lvl1);
	wt_cancel(wt, &wt->timers[1]);
	wt_cancel(wt, &wt->timers[998]);
	wt_check_wheel(wt);
	wt_run(wt, wt_drain_tick(tick, 1) * tick_ns, 1);
	KUNIT_EXPECT_EQ(test, wt->timers[2].t.idx, stale);
	KUNIT_EXPECT_EQ(test, wheel_slot_of(w, &wt->timers[2].t), tick % LVL_SLOTS);
	wt_cancel(wt, &wt->timers[2]);
	KUNIT_EXPECT_EQ(test, w->level_count[0], n - 5);
	wt_check_wheel(wt);
	wt_run(wt, tick * tick_ns, 1);
	KUNIT_EXPECT_EQ(test, wt->fired, n - 5);
	KUNIT_EXPECT_EQ(test, wt->timers[500].order, n - 5);
	KUNIT_EXPECT_EQ(test, wt->timers[3].order, 1);
	wt_check_wheel(wt);
}

/*
 * A spliced slot remembers where its timers went (@moved) until every one
 * of them has fired; filed anew LVL_SLOTS granules later, it forgets.
 */
static void wheel_test_slot_reuse(struct kunit *test)
{
	static const u64 tick_ns = NSEC_PER_MSEC;
	const u64 tick = 5 * LVL_GRAN(1) + 7;
	const u64 later = tick + LVL_SLOTS * LVL_GRAN(1);
	const unsigned int idx = LVL_OFFS(1) + 5, to = tick % LVL_SLOTS;
	struct wt *wt = wt_new(test, tick_ns, 0, 3);
	struct wheel *w = wt->w;

	wt_arm(wt, &wt->timers[0], tick * tick_ns);
	wt_arm(wt, &wt->timers[1], tick * tick_ns);
	KUNIT_EXPECT_EQ(test, wt->timers[0].t.idx, idx);
	wt_run(wt, wt_drain_tick(tick, 1) * tick_ns, 1);
	KUNIT_EXPECT_EQ(test, w->slots[idx].count, 0);
	KUNIT_EXPECT_EQ(test, w->slots[idx].moved, to);
	KUNIT_EXPECT_EQ(test, wheel_slot_of(w, &wt->timers[0].t), to);
	wt_run(wt, tick * tick_ns, 1);
	KUNIT_EXPECT_EQ(test, wt->fired, 2);
	/* @clk into the level-2 granule before @later's: it files at level 1. */
	wt_run(wt, (later - LVL_GRAN(2)) * tick_ns, 1);
	wt_arm(wt, &wt->timers[2], later * tick_ns);
	KUNIT_EXPECT_EQ(test, wt->timers[2].t.idx, idx);
	KUNIT_EXPECT_EQ(test, w->slots[idx].moved, WHEEL_NONE);
	KUNIT_EXPECT_EQ(test, wheel_slot_of(w, &wt->timers[2].t), idx);
	wt_check_wheel(wt);
	wt_run(wt, later * tick_ns, 1);
	KUNIT_EXPECT_EQ(test, wt->fired, 3);
}

/*
 * A lone level-0 timer is due at its deadline, not at the end of its tick;
 * a slot of several is due at its latest deadline (a bound: a cancel does
 * not bring it forward), never after the end of the tick.
 */
static void wheel_test_sparse(struct kunit *test)
{
	static const u64 tick_ns = NSEC_PER_MSEC;
	struct wt *wt = wt_new(test, tick_ns, 1000 * tick_ns + 123, 6);
	u64 a = 1010 * tick_ns + 456, b = 1010 * tick_ns + 789;
	unsigned int left = UINT_MAX;
	struct wheel *w = wt->w;
	bool due = false;

	KUNIT_EXPECT_EQ(test, wt_arm(wt, &wt->timers[0], a), a);
	KUNIT_EXPECT_EQ(test, wheel_next_event(w), a);
	wt_run(wt, a - 1, UINT_MAX);
	KUNIT_EXPECT_TRUE(test, wt->timers[0].armed);
	KUNIT_EXPECT_EQ(test, wheel_next_event(w), a);
	wt_run(wt, a, UINT_MAX);
	KUNIT_EXPECT_EQ(test, wt->timers[0].fired_at, a);

	/* Two in one tick: due when both deadlines have passed. */
	wt_arm(wt, &wt->timers[1], b + tick_ns);
	wt_arm(wt, &wt->timers[2], a + tick_ns);
	KUNIT_EXPECT_EQ(test, wheel_next_event(w), b + tick_ns);
	wt_run(wt, a + tick_ns, UINT_MAX);
	KUNIT_EXPECT_TRUE(test, wt->timers[2].armed);
	wt_cancel(wt, &wt->timers[1]);
	KUNIT_EXPECT_LE(test, wheel_next_event(w), 1012 * tick_ns);
	KUNIT_EXPECT_GE(test, wheel_next_event(w), a + tick_ns);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_GE(test, wt->timers[2].fired_at, a + tick_ns);
	KUNIT_EXPECT_LE(test, wt->timers[2].fired_at, 1012 * tick_ns);

	/* A lone timer above level 0 reaches level 0 before its deadline. */
	a = 1011 * tick_ns + 200 * tick_ns + 17;
	wt_arm(wt, &wt->timers[3], a);
	KUNIT_EXPECT_EQ(test, wt->timers[3].level, 1);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, wt->timers[3].fired_at, a);
	wt_check_wheel(wt);

	/*
	 * A later deadline of the same tick armed between WHEEL_DUE and the
	 * first fire holds the slot back: nothing fires before it has passed.
	 */
	a = 1300 * tick_ns + 100;
	wt_arm(wt, &wt->timers[4], a);
	wt->now = a;
	KUNIT_EXPECT_EQ(test, wt_step(wt, &due, &left), WHEEL_DUE);
	wt_arm(wt, &wt->timers[5], a + 200);
	KUNIT_EXPECT_EQ(test, wt_step(wt, &due, &left), WHEEL_IDLE);
	KUNIT_EXPECT_TRUE(test, wt->timers[4].armed);
	wt_run(wt, a + 200, UINT_MAX);
	KUNIT_EXPECT_EQ(test, wt->timers[4].fired_at, a + 200);
	KUNIT_EXPECT_EQ(test, wt->timers[5].order, wt->timers[4].order + 1);
	wt_check_wheel(wt);
}

/*
 * A re-arm that files a timer in its own slot, within the slot's bounds,
 * moves it to the slot's tail in place (wheel_requeue()): it fires after
 * the timers of its tick armed before the re-arm. One to another slot,
 * beyond the slot's bounds, or of a timer alone in its slot (whose bounds
 * a cancel and an add make its own) is left to a cancel and an add.
 */
static void wheel_test_requeue(struct kunit *test)
{
	static const u64 tick_ns = NSEC_PER_MSEC;
	struct wt *wt = wt_new(test, tick_ns, 1000 * tick_ns, 3);
	struct wt_timer *tm = wt->timers;
	u64 t = 1010 * tick_ns, t2 = 1300 * tick_ns;
	struct wheel *w = wt->w;

	wt_arm(wt, &tm[0], t - 300);
	wt_arm(wt, &tm[1], t - 100);
	wt_arm(wt, &tm[2], t2);
	KUNIT_EXPECT_EQ(test, tm[0].t.idx, tm[1].t.idx);
	KUNIT_EXPECT_FALSE(test, wheel_requeue(w, &tm[0].t, t + tick_ns));
	KUNIT_EXPECT_FALSE(test, wheel_requeue(w, &tm[0].t, t - 50));
	KUNIT_EXPECT_FALSE(test, wheel_requeue(w, &tm[2].t, t2 + 1));
	KUNIT_EXPECT_EQ(test, tm[0].t.expires, t - 300);
	KUNIT_EXPECT_EQ(test, tm[2].t.expires, t2);
	wt_check_wheel(wt);

	KUNIT_EXPECT_EQ(test, wt_arm(wt, &tm[0], t - 200), t - 100);
	KUNIT_EXPECT_EQ(test, wt->requeued, 1);
	wt_arm(wt, &tm[2], t2 - 1);
	KUNIT_EXPECT_EQ(test, wt->requeued, 1);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, tm[1].order, 1);
	KUNIT_EXPECT_EQ(test, tm[0].order, 2);
	KUNIT_EXPECT_EQ(test, tm[0].fired_at, t - 100);
	KUNIT_EXPECT_EQ(test, tm[2].fired_at, t2 - 1);
	wt_check_wheel(wt);

	/* Alone, after a cancel left the slot's bounds wider than it. */
	t += 400 * tick_ns;
	wt_arm(wt, &tm[0], t - 300);
	wt_arm(wt, &tm[1], t - 100);
	wt_cancel(wt, &tm[1]);
	KUNIT_EXPECT_FALSE(test, wheel_requeue(w, &tm[0].t, t - 200));
	KUNIT_EXPECT_EQ(test, wt_arm(wt, &tm[0], t - 200), t - 200);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, tm[0].fired_at, t - 200);
	wt_check_wheel(wt);
}

/*
 * Deadlines in the past are filed in the slot of the wheel clock's tick
 * and due at once: on an idle wheel, while a slot is being expired (fired
 * in the same run) and while a cascade is in progress.
 */
static void wheel_test_past(struct kunit *test)
{
	static const u64 tick_ns = NSEC_PER_MSEC;
	const u64 clk = 100000, now = clk * tick_ns + tick_ns / 2;
	const unsigned int here = clk % LVL_SLOTS;
	struct wt *wt = wt_new(test, tick_ns, now, 8);
	struct wheel *w = wt->w;
	unsigned int i, left = UINT_MAX;
	bool due = false;

	wt_arm(wt, &wt->timers[0], 0);
	wt_arm(wt, &wt->timers[1], (clk - 1) * tick_ns - 1);
	wt_arm(wt, &wt->timers[2], (clk - 5) * tick_ns);
	wt_arm(wt, &wt->timers[3], clk * tick_ns);
	wt_arm(wt, &wt->timers[4], now);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, wt->timers[i].t.idx, here);
		KUNIT_EXPECT_LE(test, wt_arm(wt, &wt->timers[i],
					     wt->timers[i].t.expires), now);
	}
	KUNIT_EXPECT_EQ(test, wt->timers[4].t.idx, here + 1);
	KUNIT_EXPECT_EQ(test, w->level_count[0], 5);
	KUNIT_EXPECT_LE(test, wheel_next_event(w), now);
	/* Fire one, then arm another past timer: it fires in this run. */
	KUNIT_EXPECT_EQ(test, wt_step(wt, &due, &left), WHEEL_DUE);
	KUNIT_EXPECT_EQ(test, wt_step(wt, &due, &left), WHEEL_DUE);
	KUNIT_EXPECT_EQ(test, wt->timers[0].order, 1);
	wt_arm(wt, &wt->timers[5], 1);
	while (wt_step(wt, &due, &left) != WHEEL_IDLE && !wt->failed)
		;
	/* 5 before or after 3: their ticks differ. */
	KUNIT_EXPECT_EQ(test, wt->fired, 6);
	KUNIT_EXPECT_EQ(test, wt->timers[1].order, 2);
	KUNIT_EXPECT_EQ(test, wt->timers[2].order, 3);
	KUNIT_EXPECT_LE(test, wt->timers[3].order, 5);
	KUNIT_EXPECT_LE(test, wt->timers[5].order, 5);
	KUNIT_EXPECT_EQ(test, wt->timers[4].order, 6);

	/* During a cascade: the past timer is due when it ends. */
	wt_arm(wt, &wt->timers[6], (clk + 100) * tick_ns);
	wt_arm(wt, &wt->timers[7], (clk + 101) * tick_ns);
	wt->now = (clk + 100) * tick_ns;
	wt_again(wt, 1);
	wt_arm(wt, &wt->timers[0], now);
	KUNIT_EXPECT_EQ(test, wt->timers[0].t.idx, w->clk % LVL_SLOTS);
	wt_check_wheel(wt);
	wt_run(wt, wt->now, 1);
	KUNIT_EXPECT_FALSE(test, wt->timers[0].armed);
	KUNIT_EXPECT_FALSE(test, wt->timers[6].armed);
	KUNIT_EXPECT_TRUE(test, wt->timers[7].armed);
	wt_check_wheel(wt);
}

/*
 * A deadline that has passed is due at once also right after a higher
 * slot was cascaded ahead of its span and the span's first tick holds a
 * later deadline.
 */
static void wheel_test_past_clock_ahead(struct kunit *test)
{
	static const u64 tick_ns = NSEC_PER_MSEC;
	struct wt *wt = wt_new(test, tick_ns, 0, 3);

	wt_arm(wt, &wt->timers[0], 127 * tick_ns + tick_ns / 2);
	wt_arm(wt, &wt->timers[1], 127 * tick_ns + 9 * tick_ns / 10);
	KUNIT_EXPECT_EQ(test, wt->timers[0].level, 1);
	wt_run(wt, 127 * tick_ns + 6 * tick_ns / 10, UINT_MAX);
	wt_arm(wt, &wt->timers[2], 126 * tick_ns + tick_ns / 5);
	KUNIT_EXPECT_LE(test, wheel_next_event(wt->w), wt->now);
	wt_run(wt, wt->now, UINT_MAX);
	KUNIT_EXPECT_FALSE(test, wt->timers[2].armed);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, wt->fired, 3);
	wt_check_wheel(wt);
}

/*
 * wheel_forward(), which the driver calls when nothing is due by now: the
 * clock moves to now's tick, so that timers armed then are filed as low as
 * their delays allow, while those filed before stay put and fire on time;
 * not to a drain tick, though, and a cascade in progress keeps the clock
 * where it is.
 */
static void wheel_test_forward(struct kunit *test)
{
	static const u64 tick_ns = NSEC_PER_MSEC;
	struct wt *wt = wt_new(test, tick_ns, 0, 2);
	struct wheel *w = wt->w;

	wt_arm(wt, &wt->timers[0], 5000 * tick_ns);
	KUNIT_EXPECT_EQ(test, wt->timers[0].level, 1);
	wt->now = 4000 * tick_ns + 1;
	wheel_forward(w, wt->now);
	KUNIT_EXPECT_EQ(test, w->clk, 4000);
	wt_arm_check(wt, &wt->timers[1], wt->now + 10 * tick_ns);
	KUNIT_EXPECT_EQ(test, wt->timers[1].level, 0);
	wt_check_wheel(wt);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, wt->timers[1].fired_at, wt->timers[1].t.expires);
	KUNIT_EXPECT_EQ(test, wt->timers[0].fired_at, 5000 * tick_ns);
	KUNIT_EXPECT_EQ(test, wt->timers[1].order, 1);

	/*
	 * A lone timer's slot splices when the timer is due: the clock stops
	 * before the slot's drain tick, 77 * 64, however late the wheel runs.
	 */
	wt = wt_new(test, tick_ns, 0, 1);
	wt_arm(wt, &wt->timers[0], 5000 * tick_ns);
	KUNIT_EXPECT_EQ(test, wheel_next_event(wt->w), 5000 * tick_ns);
	wt->now = 4950 * tick_ns;
	wheel_forward(wt->w, wt->now);
	KUNIT_EXPECT_EQ(test, wt->w->clk, 77 * LVL_SIZE - 1);
	wt_check_wheel(wt);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, wt->timers[0].fired_at, 5000 * tick_ns);

	wt = wt_spread(test, 100, 0);
	wt_again(wt, 10);
	KUNIT_EXPECT_EQ(test, wt->w->clk, 4 * LVL_SIZE);
	wheel_forward(wt->w, wt->now + 10 * tick_ns);
	KUNIT_EXPECT_EQ(test, wt->w->clk, 4 * LVL_SIZE);
	wt_check_wheel(wt);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, wt->fired, 100);
}

/*
 * The last timer cancelled mid-drain, or before its slot's drain tick:
 * wheel_emptied() (from wt_cancel()) lets @clk go to the next timer's
 * time, which then files on the level its delay needs.
 */
static void wheel_test_emptied(struct kunit *test)
{
	static const u64 tick_ns = NSEC_PER_MSEC;
	struct wt *wt = wt_spread(test, 100, 1);
	unsigned int i;

	wt_again(wt, 10);
	KUNIT_EXPECT_NE(test, wt->w->draining, 0);
	for (i = 0; i < 100; i++)
		if (wt->timers[i].armed)
			wt_cancel(wt, &wt->timers[i]);
	KUNIT_EXPECT_EQ(test, wt->w->draining, 0);
	wt->now += 10000 * tick_ns;
	wheel_forward(wt->w, wt->now);
	KUNIT_EXPECT_EQ(test, wt->w->clk, div64_u64(wt->now, tick_ns));
	wt_arm_check(wt, &wt->timers[100], wt->now + 10 * tick_ns);
	KUNIT_EXPECT_EQ(test, wt->timers[100].level, 0);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, wt->timers[100].fired_at,
			wt->timers[100].t.expires);

	/* Its slot's drain tick, 77 * 64, held @clk (wheel_test_forward()). */
	wt = wt_new(test, tick_ns, 0, 2);
	wt_arm(wt, &wt->timers[0], 5000 * tick_ns);
	wt_cancel(wt, &wt->timers[0]);
	wt->now = 6000 * tick_ns;
	wheel_forward(wt->w, wt->now);
	KUNIT_EXPECT_EQ(test, wt->w->clk, 6000);
	wt_arm_check(wt, &wt->timers[1], wt->now + 10 * tick_ns);
	KUNIT_EXPECT_EQ(test, wt->timers[1].level, 0);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, wt->timers[1].fired_at, wt->timers[1].t.expires);

	/*
	 * The same with a timer left on the wheel, whose drain tick, 23 * 4096,
	 * is the next one now: @clk goes on to 6000 all the same.
	 */
	wt = wt_new(test, tick_ns, 0, 3);
	wt_arm(wt, &wt->timers[0], 5000 * tick_ns);
	wt_arm(wt, &wt->timers[1], 100000 * tick_ns);
	KUNIT_EXPECT_EQ(test, wt->timers[1].level, 2);
	wt_cancel(wt, &wt->timers[0]);
	wt->now = 6000 * tick_ns;
	wheel_forward(wt->w, wt->now);
	KUNIT_EXPECT_EQ(test, wt->w->clk, 6000);
	KUNIT_EXPECT_EQ(test, wt->w->drain_limit, 23 * LVL_SIZE * LVL_SIZE);
	wt_arm_check(wt, &wt->timers[2], wt->now + 10 * tick_ns);
	KUNIT_EXPECT_EQ(test, wt->timers[2].level, 0);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, wt->timers[2].fired_at, wt->timers[2].t.expires);
	KUNIT_EXPECT_EQ(test, wt->timers[1].fired_at, wt->timers[1].t.expires);
}

/*
 * A drain at level 2 whose drain tick is the start of a level-1 span still
 * draining waits for it: @clk at that start would let level 0 reach the
 * next granule, whose slots would expire before the span's timers (ticks
 * 40960-40999, granule 640 of level 1, drains from tick 40896; the level-2
 * slot of tick 46000 drains at 40960). The level-1 timers moved down are
 * cancelled, and a timer of the next granule is due when the wheel runs.
 */
static void wheel_test_drain_span_order(struct kunit *test)
{
	const u64 ms = NSEC_PER_MSEC;
	struct wt *wt = wt_new(test, ms, 37000 * ms, 42);
	unsigned int i, left = 16;
	bool due = false;

	for (i = 0; i < 40; i++)
		wt_arm(wt, &wt->timers[i], (40960 + i) * ms);
	wt_arm(wt, &wt->timers[40], 46000 * ms);
	wt->now = 40960 * ms + 1;
	KUNIT_EXPECT_EQ(test, wheel_advance(wt->w, wt->now, &left), WHEEL_AGAIN);
	for (i = 0; i < 40; i++)
		if (!wheel_lvl(wheel_slot_of(wt->w, &wt->timers[i].t)))
			wt_cancel(wt, &wt->timers[i]);
	wt_check_wheel(wt);
	wt_arm(wt, &wt->timers[41], 41030 * ms);
	wt->now = 41030 * ms;
	left = 16;
	wt_step(wt, &due, &left);
	/* Not due before the span's timers, nor @clk past them. */
	KUNIT_EXPECT_NULL(test, wheel_first_due(wt->w, wt->now));
	KUNIT_EXPECT_LT(test, wt->w->clk, 40960ULL);
	wt_check_wheel(wt);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, wt->npending, 0);
	KUNIT_EXPECT_LT(test, wt->timers[39].order, wt->timers[41].order);
}

/*
 * A slot that splices into one above level 0, its timers on several ticks,
 * does so by the drain tick of the slot it goes to, from which they move
 * one by one: a granule ahead of them, as every drain starts, not at the
 * first of them (levels 2 and 1 here: ticks 8192-8255 share level-1
 * granule 128, which drains from tick 127 * 64).
 */
static void wheel_test_splice_drain_lead(struct kunit *test)
{
	static const u64 tick_ns = NSEC_PER_MSEC;
	struct wt *wt = wt_new(test, tick_ns, 0, LVL_SIZE);
	unsigned int i;

	for (i = 0; i < LVL_SIZE; i++)
		wt_arm(wt, &wt->timers[i], (8192 + i) * tick_ns);
	KUNIT_EXPECT_EQ(test, wt->timers[0].level, 2);
	KUNIT_EXPECT_EQ(test, wheel_next_event(wt->w), 127 * LVL_SIZE * tick_ns);
	wt_run(wt, 127 * LVL_SIZE * tick_ns, UINT_MAX);
	KUNIT_EXPECT_EQ(test, wt->w->level_count[0], LVL_SIZE);
	wt_check_wheel(wt);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, wt->fired, LVL_SIZE);
	for (i = 0; i < LVL_SIZE; i++)
		KUNIT_EXPECT_EQ(test, wt->timers[i].fired_at,
				wt->timers[i].t.expires);
}

/* wheel_slack_grid(): the largest power of two ticks within the slack. */
static void wheel_test_slack_grid(struct kunit *test)
{
	static const struct {
		u64 tick, slack;
		u8 grid;
	} cases[] = {
		{ NSEC_PER_MSEC, 0, 0 },
		{ NSEC_PER_MSEC, NSEC_PER_MSEC, 0 },
		{ NSEC_PER_MSEC, 2 * NSEC_PER_MSEC - 1, 0 },
		{ NSEC_PER_MSEC, 2 * NSEC_PER_MSEC, 1 },
		{ NSEC_PER_MSEC, 4 * NSEC_PER_MSEC - 1, 1 },
		{ NSEC_PER_MSEC, 4 * NSEC_PER_MSEC, 2 },
		{ NSEC_PER_MSEC, NSEC_PER_SEC, 9 },
		{ NSEC_PER_MSEC, 36 * NSEC_PER_SEC, 15 },
		{ 100 * NSEC_PER_USEC, NSEC_PER_SEC, 13 },
		{ 999983, 64 * 999983, 6 },
		{ 999983, 64 * 999983 - 1, 5 },
		{ 100 * NSEC_PER_USEC, KTIME_MAX, 46 },
		{ NSEC_PER_MSEC, U64_MAX, 44 },
		{ 100 * NSEC_PER_USEC, U64_MAX, WHEEL_SLACK_MAX },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test, wheel_slack_grid(cases[i].tick, cases[i].slack),
				    cases[i].grid, "tick %llu slack %llu",
				    cases[i].tick, cases[i].slack);
}

/*
 * A lone timer with slack, at each level edge and around 64^k ticks from
 * the clock: filed at its tick rounded up to its grid, never fired early,
 * and fired no later than that tick's end, within the slack.
 */
static void wheel_test_slack_window(struct kunit *test)
{
	static const unsigned int grids[] = { 1, 2, 5, 6, 7, 11, 12, 13, 20, 30 };
	static const u64 tick_ns = NSEC_PER_MSEC;
	struct wt *wt = wt_new(test, tick_ns, 0, 1);
	struct wt_timer *tm = &wt->timers[0];
	unsigned int o, k, g, e;

	for (o = 0; o < ARRAY_SIZE(wt_origins) && !wt->failed; o++) {
		u64 clk = wt_origins[o];

		for (k = 0; k < LVL_DEPTH - 2 && !wt->failed; k++) {
			for (g = 0; g < ARRAY_SIZE(grids) && !wt->failed; g++) {
				/* 64^k - 1, 64^k, 64^k + 1 ticks away, each at its end or start */
				for (e = 0; e < 6 && !wt->failed; e++) {
					u64 tick = clk + LVL_GRAN(k) + e / 2 - 1;
					u64 expires = tick * tick_ns - (e & 1 ? tick_ns - 1 : 0);
					u64 grid = tick_ns << grids[g], round;

					if (tick <= clk)
						continue;
					wt_reset(wt, tick_ns, clk * tick_ns + 7);
					wt_arm_slack(wt, tm, expires, grids[g]);
					round = wt_slack_tick(wt, tick, grids[g]);
					KUNIT_EXPECT_EQ(test, tm->tick, round);
					KUNIT_EXPECT_EQ(test, wheel_timer_tick(wt->w, &tm->t),
							round);
					KUNIT_EXPECT_EQ(test, round % (1ULL << grids[g]), 0);
					wt_check_wheel(wt);
					wt_run_events(wt, KTIME_MAX);
					KUNIT_EXPECT_GE(test, tm->fired_at, expires);
					KUNIT_EXPECT_LE(test, tm->fired_at, round * tick_ns);
					KUNIT_EXPECT_LT_MSG(test, tm->fired_at - expires, grid,
							    "clk %llu tick %llu grid %u",
							    clk, tick, grids[g]);
				}
			}
		}
	}
	/* Near KTIME_MAX a grid is not used past its tick: the timer stays exact. */
	wt_reset(wt, tick_ns, 0);
	wt_arm_slack(wt, tm, KTIME_MAX - 3 * tick_ns, WHEEL_SLACK_MAX);
	KUNIT_EXPECT_EQ(test, tm->tick, wt_tick_of(wt, KTIME_MAX - 3 * tick_ns));
	wt_check_wheel(wt);
	wt_run_events(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, tm->fired_at, KTIME_MAX - 3 * tick_ns);
}

/*
 * Run the wheel of @wt at each of its events up to @until; returns the
 * number of runs, the wakeups of the wheel's hrtimer.
 */
static u64 wt_count_wakeups(struct wt *wt, u64 until)
{
	u64 runs = 0;

	while (!wt->failed && runs < 1000000) {
		u64 next = wheel_next_event(wt->w);

		if (next == U64_MAX || next > until)
			break;
		wt_run(wt, max(next, wt->now), UINT_MAX);
		runs++;
	}
	return runs;
}

#define WT_COALESCE_N	4096

/*
 * Coalescing: WT_COALESCE_N timers due over 10 s (10000 ticks) with a slack
 * of @pct % of their delays fire in fewer wakeups than without: every
 * rounded tick is one run of its slot (the timers of a tick fire at one
 * time), each timer fires in [deadline, deadline + slack]. Returns the
 * number of wakeups.
 */
static u64 wt_coalesce(struct wt *wt, unsigned int pct, u64 *ticks)
{
	const u64 tick_ns = wt->tick_ns, start = 5 * tick_ns + 3;
	u64 s = 42, wakeups, distinct = 0, fires = 0, prev = 0;
	unsigned int i;

	wt_reset(wt, tick_ns, start);
	for (i = 0; i < WT_COALESCE_N; i++) {
		u64 delay = 1 + wt_below(&s, 10000 * tick_ns);

		wt_arm_slack(wt, &wt->timers[i], start + delay,
			     wheel_slack_grid(tick_ns, div_u64(delay * pct, 100)));
	}
	wt_check_wheel(wt);
	/* The rounded ticks, in order, as the model has them. */
	for (i = 0; i < WT_COALESCE_N; i++)
		ticks[i] = wt->timers[i].tick;
	sort(ticks, WT_COALESCE_N, sizeof(*ticks), wt_cmp_u64, NULL);
	for (i = 0; i < WT_COALESCE_N; i++)
		distinct += !i || ticks[i] != ticks[i - 1];
	wakeups = wt_count_wakeups(wt, KTIME_MAX);
	KUNIT_EXPECT_EQ(wt->test, wt->fired, WT_COALESCE_N);
	for (i = 0; i < WT_COALESCE_N; i++) {
		struct wt_timer *tm = &wt->timers[i];
		u64 slack = div_u64((tm->t.expires - start) * pct, 100);

		KUNIT_EXPECT_GE(wt->test, tm->fired_at, tm->t.expires);
		KUNIT_EXPECT_LE(wt->test, tm->fired_at, tm->t.expires + max(slack, tick_ns));
		ticks[i] = tm->fired_at;
	}
	/* One fire time per rounded tick: its slot ran once. */
	sort(ticks, WT_COALESCE_N, sizeof(*ticks), wt_cmp_u64, NULL);
	for (i = 0; i < WT_COALESCE_N; i++) {
		fires += !i || ticks[i] != prev;
		prev = ticks[i];
	}
	KUNIT_EXPECT_EQ(wt->test, fires, distinct);
	KUNIT_EXPECT_GE(wt->test, wakeups, distinct);
	kunit_info(wt->test, "%u timers over 10 s, slack %u %%: %llu wakeups, %llu distinct ticks\n",
		   WT_COALESCE_N, pct, wakeups, distinct);
	return wakeups;
}

static void wheel_test_slack_coalesce(struct kunit *test)
{
	struct wt *wt = wt_new(test, NSEC_PER_MSEC, 0, WT_COALESCE_N);
	u64 *ticks = kunit_kcalloc(test, WT_COALESCE_N, sizeof(*ticks), GFP_KERNEL);
	u64 none, one, ten;

	KUNIT_ASSERT_NOT_NULL(test, ticks);
	none = wt_coalesce(wt, 0, ticks);
	one = wt_coalesce(wt, 1, ticks);
	ten = wt_coalesce(wt, 10, ticks);
	/* 4096 deadlines in 10000 ticks take about 3400 wakeups without slack. */
	KUNIT_EXPECT_GT(test, none, 3000);
	KUNIT_EXPECT_LT(test, one, none / 2);
	KUNIT_EXPECT_LT(test, ten, one / 4);
}

/*
 * A periodic timer with slack, re-armed one period after each delivered
 * deadline as twheel.c does: every fire within its window, and the
 * deadlines never drift, whatever the fires' lateness. Its rounded ticks
 * are multiples of 64, points where other timers may join it; alone, it
 * fires at its deadline.
 */
static void wheel_test_slack_periodic(struct kunit *test)
{
	static const u64 tick_ns = NSEC_PER_MSEC;
	const u64 period = 1000 * tick_ns + 337, first = 123456789;
	struct wt *wt = wt_new(test, tick_ns, 0, 1);
	struct wt_timer *tm = &wt->timers[0];
	unsigned int i;

	/* 100 ms of slack: a grid of 64 ticks. */
	wt_arm_slack(wt, tm, first, wheel_slack_grid(tick_ns, 100 * NSEC_PER_MSEC));
	KUNIT_EXPECT_EQ(test, tm->t.slack, 6);
	for (i = 0; i < 200 && !wt->failed; i++) {
		u64 deadline = first + i * period;

		wt_run_events(wt, deadline + 64 * tick_ns);
		KUNIT_ASSERT_FALSE(test, tm->armed);
		KUNIT_EXPECT_GE(test, tm->fired_at, deadline);
		KUNIT_EXPECT_LT(test, tm->fired_at - deadline, 64 * tick_ns);
		KUNIT_EXPECT_EQ(test, tm->t.expires, deadline);
		KUNIT_EXPECT_EQ(test, tm->fired_at, deadline);
		/* The re-arm: the delivered deadline plus one period, same slack. */
		wt_arm(wt, tm, deadline + period);
		KUNIT_EXPECT_EQ(test, wheel_timer_tick(wt->w, &tm->t) % 64, 0);
		wt_check_wheel(wt);
	}
}

/*
 * The differential test's wheel_forward(): the clock to a random time
 * before the next event, as the driver may move it when it arms a timer,
 * but not to the next drain tick, which @drain_limit holds unless a slot
 * has emptied since it was set.
 */
static void wt_forward(struct wt *wt, u64 *s)
{
	u64 next = wheel_next_event(wt->w), clk = wt->w->clk, now = wt->now;
	u64 drain, want;

	if (next <= now || now >= WT_HORIZON)
		return;
	now += wt_below(s, min(next, WT_HORIZON) - now);
	/* It stops before the next drain tick, which a slot that splices may pass. */
	wheel_next_drain(wt->w, &drain);
	if (wt->w->drain_limit > drain ||
	    (!wt->w->limit_stale && wt->w->drain_limit != drain))
		WT_FAIL(wt, "drain limit %llu, the next drain tick %llu%s",
			wt->w->drain_limit, drain,
			wt->w->limit_stale ? " (stale)" : "");
	want = max(clk, min(div64_u64(now, wt->tick_ns), drain - 1));
	wheel_forward(wt->w, now);
	wt->now = now;
	if (wt->w->clk != want)
		WT_FAIL(wt, "forwarded from %llu to %llu, not %llu", clk,
			wt->w->clk, want);
	wt_check_idle(wt);
}

/* Deadlines of the differential test, of very different kinds and scales. */
static u64 wt_random_deadline(struct wt *wt, u64 *s, u64 *hot)
{
	u64 tick = wt->tick_ns, now = wt->now, clk = div64_u64(now, tick);
	struct wt_timer *tm;
	unsigned int k;
	u64 ns;

	switch (wt_below(s, 12)) {
	case 0:		/* just past */
		ns = now - wt_below(s, min(now, 3 * tick) + 1);
		break;
	case 1:		/* anywhere in the past */
		ns = wt_below(s, now + 1);
		break;
	case 2:		/* level 0 or 1 */
		ns = now + wt_below(s, 80 * tick);
		break;
	case 3:		/* level 1 mostly */
		ns = now + wt_below(s, 600 * tick);
		break;
	case 4:		/* level 1 or 2 */
		ns = now + wt_below(s, 5000 * tick);
		break;
	case 5:		/* up to 2^42 ticks ahead */
		ns = now + wt_below(s, tick << wt_below(s, 43));
		break;
	case 6:		/* one of a few deadlines that many timers share */
	case 7:		/* or a tick in the 64 after it: crowded slots */
		k = wt_below(s, 8);
		if (hot[k] <= now || !wt_below(s, 64))
			hot[k] = now + wt_below(s, tick << wt_below(s, 31));
		ns = min_t(u64, hot[k], KTIME_MAX - 64 * tick);
		if (wt_below(s, 2))
			ns += wt_below(s, 64) * tick;
		break;
	case 8:		/* at a tick boundary, or 1 ns off */
		ns = wt_ns_of(wt, clk + wt_below(s, 300)) + wt_below(s, 3) - 1;
		break;
	case 9:		/* at a block boundary of a level, or a tick off */
		k = 1 + wt_below(s, LVL_DEPTH - 1);
		clk = ((clk >> LVL_SHIFT(k)) + 1 + wt_below(s, 2)) << LVL_SHIFT(k);
		ns = wt_ns_of(wt, clk + wt_below(s, 3) - 1) + wt_below(s, 3) - 1;
		break;
	case 10:	/* the deadline or the tick of another timer */
		tm = &wt->timers[wt_below(s, wt->ntimers)];
		ns = tm->armed ? tm->t.expires - wt_below(s, 2) * wt_below(s, tick) : now;
		break;
	default:	/* now */
		ns = now + wt_below(s, 2);
	}
	return min_t(u64, ns, KTIME_MAX);
}

/* Time steps of the differential test, of very different scales. */
static u64 wt_random_step(struct wt *wt, u64 *s)
{
	u64 tick = wt->tick_ns, now = wt->now, next = wheel_next_event(wt->w);
	u64 step;

	if (next == U64_MAX || next < now)
		next = now;
	switch (wt_below(s, 10)) {
	case 0:
		step = wt_below(s, tick);
		break;
	case 1:
		step = wt_below(s, 8 * tick);
		break;
	case 2:
		step = wt_below(s, 100 * tick);
		break;
	case 3:
		step = wt_below(s, 5000 * tick);
		break;
	case 4:
		step = wt_below(s, tick << wt_below(s, 31));
		break;
	case 5:		/* to the next event, as the hrtimer does */
	case 6:
		step = next - now;
		break;
	case 7:		/* just before or after it */
		step = next - now + wt_below(s, 3) - 1;
		break;
	default:	/* to a tick boundary */
		step = wt_ns_of(wt, div64_u64(now, tick) + 1 + wt_below(s, 3)) - now;
	}
	/*
	 * Long steps take at most 1/64 of the time left before the horizon,
	 * so that a run with few timers, whose next events lie far, does not
	 * reach it early; near it, steps are short.
	 */
	if (step > (WT_HORIZON - min(now, WT_HORIZON)) / 64)
		step = wt_below(s, 8 * tick);
	return step;
}

/*
 * Slack grids of the differential test: none for most timers, else any
 * from 2 ticks to the largest, small ones more often.
 */
static unsigned int wt_random_slack(u64 *s)
{
	if (wt_below(s, 3))
		return 0;
	if (wt_below(s, 4))
		return 1 + wt_below(s, 12);
	return 1 + wt_below(s, WHEEL_SLACK_MAX);
}

static unsigned int wt_random_budget(u64 *s)
{
	static const unsigned int budgets[] = { 1, 1, 2, 3, 8, 64, 1000, UINT_MAX };

	return budgets[wt_below(s, ARRAY_SIZE(budgets))];
}

/*
 * One run of the differential test: @ops operations, each one of: arm or
 * re-arm a random timer, cancel one, arm a burst on one deadline, move time
 * on by a random step, move the idle wheel's clock on (wheel_forward()), or
 * one step of the driver (one wheel_advance() call with a random budget, or
 * one fire). Arms and cancels thus fall between %WHEEL_AGAIN steps and
 * between fires. At the end time jumps to KTIME_MAX and everything must
 * fire.
 */
static void wt_random_run(struct wt *wt, u64 seed, u64 ops, u64 tick_ns,
			  u32 active)
{
	unsigned int left = 1, interleave = 0, k;
	bool running = false, due = false;
	u64 hot[8] = {}, s = seed, r, arms = 0, spread;
	struct wt_timer *tm;
	u64 ns;

	wt_reset(wt, tick_ns, wt_below(&s, tick_ns << 36));
	while (wt->op < ops && !wt->failed) {
		/* Arms and cancels right after WHEEL_AGAIN, at times. */
		r = wt_below(&s, interleave ? 42 : 100);
		interleave -= !!interleave;
		wt->op++;
		if (r < 42) {
			wt->mid_drain += !!wt->w->draining;
			wt->mid_due += due;
		}
		if (!(wt->op % WT_CHECK_EVERY)) {
			wt_check_wheel(wt);
			cond_resched();
		}
		if (r < 30) {
			tm = &wt->timers[wt_below(&s, active)];
			wt_arm_slack(wt, tm, wt_random_deadline(wt, &s, hot),
				     wt_random_slack(&s));
			arms++;
		} else if (r < 40) {
			tm = &wt->timers[wt_below(&s, active)];
			if (tm->armed)
				wt_cancel(wt, tm);
		} else if (r < 42) {
			/* A burst on one deadline, or on the ticks after it. */
			ns = wt_random_deadline(wt, &s, hot);
			spread = wt_below(&s, 2) ? 0 : tick_ns << wt_below(&s, 13);
			for (k = wt_below(&s, 128); k; k--, wt->op++, arms++)
				wt_arm_slack(wt, &wt->timers[wt_below(&s, active)],
					     min_t(u64, ns + wt_below(&s, spread),
						   KTIME_MAX), wt_random_slack(&s));
		} else if (!running && !wt_below(&s, 4)) {
			wt_forward(wt, &s);
		} else if (!running) {
			wt->now += wt_random_step(wt, &s);
			left = wt_random_budget(&s);
			running = true;
		} else {
			/* The clock moves on while the wheel is run, at times. */
			if (!wt_below(&s, 64) && wt->now < WT_HORIZON)
				wt->now += wt_below(&s, tick_ns);
			switch (wt_step(wt, &due, &left)) {
			case WHEEL_AGAIN:
				left = wt_random_budget(&s);
				interleave = wt_below(&s, 4);
				break;
			case WHEEL_IDLE:
				running = false;
				break;
			default:
				break;
			}
		}
	}
	if (wt->failed)
		return;
	wt_check_wheel(wt);
	ns = wt->now;
	wt_run(wt, KTIME_MAX, wt_random_budget(&s));
	KUNIT_EXPECT_EQ(wt->test, wt->npending, 0);
	KUNIT_EXPECT_EQ(wt->test, wheel_next_event(wt->w), U64_MAX);
	for (k = 0; k < LVL_DEPTH; k++)
		KUNIT_EXPECT_TRUE(wt->test, bitmap_empty(wt->w->pending_map[k],
							 LVL_SLOTS));
	wt_check_wheel(wt);
	/* What the run is for came (each 1.9-18 % of the ops seen). */
	KUNIT_EXPECT_GT(wt->test, wt->mid_drain, ops / 1000);
	KUNIT_EXPECT_GT(wt->test, wt->mid_due, ops / 1000);
	KUNIT_EXPECT_GT(wt->test, wt->requeued, ops / 1000);
	kunit_info(wt->test,
		   "seed %#llx tick %llu ns, %u timers: %llu ops, %llu arms (%llu in place), %llu fires, %llu cascaded, %llu WHEEL_AGAIN, %llu arms/cancels mid-cascade, %llu between fires, clock at %llu ticks",
		   seed, tick_ns, active, wt->op, arms, wt->requeued, wt->fired,
		   wt->w->cascaded, wt->agains, wt->mid_drain, wt->mid_due,
		   div64_u64(ns, tick_ns));
}

/* The runs of the differential test: one KUnit parameter each. */
static const u8 wt_runs[WT_MAX_RUNS];

static unsigned long wt_nruns(void)
{
	return min_t(unsigned long, DIV_ROUND_UP(WT_OPS, WT_RUN_OPS), WT_MAX_RUNS);
}

static const void *wt_random_params(const void *prev, char *desc)
{
	const u8 *run = prev ? (const u8 *)prev + 1 : wt_runs;
	unsigned long n = run - wt_runs;

	if (n >= wt_nruns())
		return NULL;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "run %lu of %lu", n + 1, wt_nruns());
	return run;
}

/* The differential test against the model, see wt_random_run(). */
static void wheel_test_random(struct kunit *test)
{
	static const u64 ticks[] = {
		NSEC_PER_MSEC, 100 * NSEC_PER_USEC, 999983, 4 * NSEC_PER_MSEC,
	};
	/* Fewer timers crowd fewer slots: more cascades in chunks. */
	static const u32 active[] = { WT_TIMERS, 128, 512, 32 };
	unsigned long run = (const u8 *)test->param_value - wt_runs;
	u64 ops = min_t(u64, WT_RUN_OPS, WT_OPS - run * WT_RUN_OPS);
	struct wt *wt = wt_new(test, NSEC_PER_MSEC, 0, WT_TIMERS);

	wt_random_run(wt, WT_SEED + run * 0x9e3779b97f4a7c15ULL, ops,
		      ticks[run % ARRAY_SIZE(ticks)],
		      active[(run + run / 4) % ARRAY_SIZE(active)]);
}

static struct kunit_case wheel_test_cases[] = {
	KUNIT_CASE(wheel_test_div),
	KUNIT_CASE(wheel_test_calc_idx),
	KUNIT_CASE(wheel_test_empty),
	KUNIT_CASE(wheel_test_level_edges),
	KUNIT_CASE(wheel_test_pow64),
	KUNIT_CASE(wheel_test_fifo),
	KUNIT_CASE(wheel_test_cascade_order),
	KUNIT_CASE(wheel_test_splice),
	KUNIT_CASE(wheel_test_bounded_cascade),
	KUNIT_CASE(wheel_test_cancel_draining),
	KUNIT_CASE(wheel_test_cancel_spliced),
	KUNIT_CASE(wheel_test_slot_reuse),
	KUNIT_CASE(wheel_test_sparse),
	KUNIT_CASE(wheel_test_requeue),
	KUNIT_CASE(wheel_test_past),
	KUNIT_CASE(wheel_test_past_clock_ahead),
	KUNIT_CASE(wheel_test_forward),
	KUNIT_CASE(wheel_test_emptied),
	KUNIT_CASE(wheel_test_splice_drain_lead),
	KUNIT_CASE(wheel_test_drain_span_order),
	KUNIT_CASE(wheel_test_slack_grid),
	KUNIT_CASE(wheel_test_slack_window),
	KUNIT_CASE(wheel_test_slack_coalesce),
	KUNIT_CASE(wheel_test_slack_periodic),
	KUNIT_CASE_PARAM(wheel_test_random, wt_random_params),
	{}
};

static struct kunit_suite wheel_test_suite = {
	.name = WT_SUITE,
	.test_cases = wheel_test_cases,
};

kunit_test_suite(wheel_test_suite);

MODULE_DESCRIPTION("KUnit tests of twheel's pure timing wheel on virtual time");
MODULE_LICENSE("GPL");
