// SPDX-License-Identifier: GPL-2.0
/*
 * twheel-dev - /dev/twheel: many keyed timers on one file descriptor
 *
 * Copyright (C) 2026 The twheel authors
 *
 * timerfd gives a process one timer per file; ALSA's timer device gives
 * events without identity. /dev/twheel gives each open file a set of up to
 * a million timers (max_timers) on twheel's wheels, each named by a 64-bit
 * key, and a read() that returns their fires as struct twheel_event
 * records. The UAPI is in include/uapi/linux/twheel.h and
 * Documentation/twheel-uapi.rst.
 *
 * Objects
 * -------
 *
 * An open file is a struct twd_ctx. Each timer is a struct twd_timer: the
 * twheel timer, the user's key and data, and two links: @hnext chains it in
 * the file's hash table of keys, and @ready queues it on the file's ready
 * list once it has fired. The timer object itself is the event: it is on the
 * ready list at most once, and a fire while it is still queued folds into
 * its overrun count. The ready list is therefore bounded by the number of
 * timers, the fire path allocates nothing, and no expiry is lost.
 *
 * A one-shot timer whose event has been read is freed and its key becomes
 * free; so is a periodic timer after the event of its last fire. Timers
 * belong to the file: they are shared by dup() and fork() and cancelled at
 * the last close.
 *
 * The hash table is a power-of-two array of singly linked chains, indexed
 * by hsiphash of the key with a per-file random key, so that chosen keys
 * cannot build long chains. It holds up to TWD_HASH_LOAD (2) timers per
 * bucket: it doubles when it holds more and halves when it holds fewer
 * than an eighth of that; if the new array cannot be allocated the old one
 * stays in use, so arming never fails for the table's sake. A timer costs
 * its 136-byte object (144 for a timer of another clock than
 * CLOCK_MONOTONIC) and 4 to 8 bytes of table, where a timerfd costs about
 * 730.
 *
 * Why not the kernel's rhashtable? It is built for lookups under RCU
 * against concurrent writers, which we do not have: every change is made
 * under ctx->mutex. It would cost the same link per timer and a bucket
 * array too, plus per-bucket bit locks, RCU-deferred frees of old tables
 * and a resize worker per file; it grows on its own schedule, so an insert
 * may fail (-EBUSY, -ENOMEM) while a resize lags behind a burst, which
 * ARM would have to report, and it cannot be told to make room for a
 * batch. The hand-written table is resized only under the mutex, may run
 * over its load when memory is short, and is sized once for a whole
 * batch.
 *
 * Arming in batches
 * -----------------
 *
 * TWHEEL_IOC_ARM_BATCH works in chunks of TWD_BATCH_CHUNK entries, each
 * entry with the result TWHEEL_IOC_ARM would give it in turn. Before the
 * first chunk the table is sized for the whole batch. A chunk is copied in
 * at once; a first pass checks its entries, hashes each key (once: the
 * hash serves the lookup and the insertion) and counts the new keys; the
 * user is charged for them with one atomic, and their objects come from
 * one kmem_cache_alloc_bulk() (charged to the memory cgroup as single
 * allocations are: on v6.1 and v6.12 the bulk allocation takes the cgroup
 * hooks of the cache's SLAB_ACCOUNT and of __GFP_ACCOUNT). The second
 * pass arms the entries in order and the new timers go on the wheel with
 * twheel_add_bulk(), 16 per hold of its lock. Whatever runs out midway
 * (the file's or the user's limit, memory: then single allocations take
 * over) fails the entries it would fail one by one; what the chunk did
 * not use is given back at its end. A REPLACE of a timer first files the
 * new timers made before it, so that timers with the same tick still
 * fire in the order of their entries. The chunk's state (8 KiB) is kept
 * by the file from its first batch on; without memory for it, entries go
 * one by one, as ARM calls would.
 *
 * Teardown goes in bulk too: CANCEL_BATCH, CANCEL_ALL and the last close
 * take timers out of the table one by one and kill them 32 at a time
 * (twd_timers_kill()): one twheel_shutdown_bulk(), one hold of the event
 * lock to drop their events, one uncharge, one kmem_cache_free_bulk().
 *
 * Event ring
 * ----------
 *
 * A file may also have an event ring (TWHEEL_IOC_RING_SETUP), mapped by the
 * process: the fire path writes each event straight into the ring's next
 * slot and publishes the tail; the process reaps events and publishes the
 * head. The ring is an array of pages allocated one by one (charged to the
 * memory cgroup), mapped twice: vmap() for the kernel, vm_map_pages() for
 * each mmap(). The kernel keeps its own tail and never reads back what the
 * process may write (the head is only compared with that tail).
 *
 * While the ring is full, events wait on the ready list, the "backlog",
 * coalesced on their timers as read()'s events are, and move into the ring
 * in order, ahead of newer events, when the fire path, poll() or an ioctl
 * finds free slots. A timer whose last fire went into the ring is finished
 * but still in the hash table, which only ctx->mutex may change: it waits
 * on ctx->done, and every ioctl that works on timers (twd_lock()) frees the
 * finished timers first, in bulk, so that no ioctl sees the key of an
 * event the process could have reaped.
 *
 * Locking
 * -------
 *
 * ctx->mutex serializes every change to the set of timers: the hash table
 * and ->ntimers, the key, data and period of a timer, the twheel calls that
 * arm, move and cancel timers, and freeing them. ioctl() takes it, and so
 * does read() around taking events and freeing finished timers; both wait
 * for it killably (read() interruptibly), as an ioctl holds it across its
 * user copies, which may wait for a page as long as a FUSE server or a
 * userfaultfd handler likes. The clock work only tries it, and is queued
 * again by twd_unlock() if it found it held.
 *
 * ctx->wqh.lock, the "event lock", protects the ready list, each timer's
 * @ready, @flags, @overruns, @deadline and @fired_at, and the fire counters.
 * The timer callback runs in softirq context and takes it with spin_lock();
 * process context takes it with spin_lock_irq(), as the wait_event_*_irq()
 * helpers do. It nests inside ctx->mutex, and twheel's base lock nests
 * inside it: MODIFY calls twheel_mod_pending() and
 * twheel_mod_pending_period() under it, the clock work twheel_try_cancel()
 * and twheel_add(), the callback twheel_mod(), twheel_set_period() and
 * twheel_cancel(), which makes a pending test and the change that depends
 * on it atomic with respect to the callback. twheel calls the callback
 * with no lock held; twheel_cancel_sync(), twheel_shutdown_sync(),
 * twheel_shutdown_bulk() and twheel_wait_running() are called with
 * ctx->mutex alone; the timers the first three stop are marked first,
 * under the event lock (twd_stopping()).
 *
 * Lifetime
 * --------
 *
 * A timer is freed under ctx->mutex, and only when its callback cannot run:
 * after twheel_shutdown_sync() or twheel_shutdown_bulk(), or once the event
 * of its last fire has been read. The callback marks that last fire (the timer
 * is not pending again: see twd_last_fire()) under the event lock and
 * touches neither the timer nor the file after dropping it (it wakes
 * readers with the lock held); twheel never touches a timer once its
 * callback has started. The file is freed at the last close, after every
 * timer.
 *
 * Clocks
 * ------
 *
 * The wheel runs on CLOCK_MONOTONIC. A timer of CLOCK_BOOTTIME or
 * CLOCK_REALTIME (TWD_BOOTTIME, TWD_REALTIME) keeps its deadlines in its
 * clock and is filed at their monotonic equivalent: the deadline less
 * @clock_off, the clock's offset from CLOCK_MONOTONIC when it was filed.
 * An offset changes only when its clock is set (a resume adds the time
 * slept to CLOCK_BOOTTIME's), so a timer filed with today's offset fires
 * on time in its clock; the wheel counts a periodic timer's deadlines in
 * monotonic time, which runs at the same rate.
 *
 * A set of a clock is learnt from the timekeeping notifier
 * (pvclock_gtod_register_notifier(); clock_was_set() is not hookable),
 * called under the timekeeper's lock: it only queues an irq_work, which
 * queues twd_clock_work. That work queues the work of each file on
 * twd_clock_files (a file joins at its first timer of another clock,
 * before that timer reads the offset, and leaves at release), on
 * twd_clock_wq. A file whose mutex is held, maybe long (an ioctl's copy
 * waiting for a page), holds up no other: its work leaves at once, and the
 * holder queues it again as it lets the mutex go. Under its file's mutex,
 * a file's work stops every timer whose @clock_off is not its clock's
 * offset any more, then files it again at its deadline less the new
 * offset, or cancels it if it is TWD_CANCEL_ON_SET, with a last event
 * flagged TWHEEL_EVENT_CANCELED.
 * A timer of CLOCK_MONOTONIC does not pay for this: no per-clock list,
 * and only a timer of another clock takes the wider object that holds
 * @clock_off (struct twd_clock_timer).
 *
 * A deadline before CLOCK_MONOTONIC's zero (a wall-clock time before the
 * boot, after the clock was set forward by more than the uptime, say from
 * 1970 to today by NTP) has no monotonic equivalent: such a timer is filed
 * at 0 (fires at once), marked TWD_PAST, with @clock_off the difference
 * that maps 0 back to its deadline, and its fire works in its clock
 * (twd_fire_past()): the latest deadline passed, the earlier ones folded,
 * the next one filed in phase. Likewise at KTIME_MAX for a wall clock set
 * near 1970.
 *
 * Between the set and the work, a timer may fire at its old monotonic
 * equivalent: the callback compares its clock's offset with @clock_off
 * and, if the clock was set, cancels a TWD_CANCEL_ON_SET timer, fires
 * another only if its clock has reached the deadline, and else files it
 * again for the deadline, giving back the count of a periodic timer. So
 * no timer fires early in its clock, and a set forward fires the timers
 * it jumped over as soon as the work (or the wheel) comes to them.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/irq_work.h>
#include <linux/math64.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/pagemap.h>
#include <linux/poll.h>
#include <linux/pvclock_gtod.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/siphash.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/time_namespace.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <uapi/linux/twheel.h>

#include "compat.h"
#include "twheel.h"

/*
 * Limits. /dev/twheel is mode 0666, so the default per-user limit lets one
 * user pin at most 1/32 of RAM in timers (TWD_TIMER_COST bytes each, as
 * measured with its hash bucket), between TWD_USER_TIMERS_MIN and
 * TWD_USER_TIMERS_MAX; a file may hold at most TWD_FILE_TIMERS_MAX of them.
 * 0 at load time (the default) asks for these; twd_init() sets them.
 */
#define TWD_TIMER_COST		160
#define TWD_RAM_SHARE		32
#define TWD_USER_TIMERS_MIN	SZ_16K
#define TWD_USER_TIMERS_MAX	SZ_4M
#define TWD_FILE_TIMERS_MAX	SZ_1M

static unsigned int max_timers;
module_param(max_timers, uint, 0644);
MODULE_PARM_DESC(max_timers, "Maximum timers per open file (default: max_user_timers, at most 1048576)");

static unsigned int max_user_timers;
module_param(max_user_timers, uint, 0644);
MODULE_PARM_DESC(max_user_timers, "Maximum timers per user over all files (default: 1/32 of RAM, 16384 to 4194304)");

/* Hash table sizes, in bits of bucket index, and timers per bucket. */
#define TWD_HASH_MIN_BITS	6
#define TWD_HASH_MAX_BITS	26
#define TWD_HASH_LOAD		2

/* Events taken off the ready list per round of read(), into a buffer. */
#define TWD_READ_CHUNK		128

/* Finished timers freed per kmem_cache_free_bulk(), from the stack. */
#define TWD_FREE_CHUNK		32

/* Backlog events the fire path moves into the ring per fire, at most. */
#define TWD_RING_FILL_FIRE	64

/* Backlog events process context moves per hold of the event lock. */
#define TWD_RING_FILL_CHUNK	256

/* Batch entries processed between checks for a fatal signal. */
#define TWD_BATCH_CHUNK		64

/*
 * Slots of a chunk's table of new keys (twd_arm_chunk_check()), a power of
 * two, and the mark of a free one: entries of a chunk are numbered in a u8.
 */
#define TWD_CHUNK_SLOTS		(2 * TWD_BATCH_CHUNK)
#define TWD_CHUNK_FREE		U8_MAX

/* twd_timer.flags */
#define TWD_LAST		BIT(0)	/* the queued event is the last fire */
#define TWD_MODIFIED		BIT(1)	/* moved by MODIFY since it was armed */
#define TWD_DONE		BIT(2)	/* last event in the ring; on ctx->done */
#define TWD_BOOTTIME		BIT(3)	/* the timer's clock: CLOCK_BOOTTIME */
#define TWD_REALTIME		BIT(4)	/* the timer's clock: CLOCK_REALTIME */
#define TWD_CANCEL_ON_SET	BIT(5)	/* cancel it when its clock is set */
#define TWD_CANCELED		BIT(6)	/* the last event is a cancel */
#define TWD_PAST		BIT(7)	/* filed out of range: see twd_file() */
#define TWD_WIDE		BIT(8)	/* a struct twd_clock_timer */
#define TWD_STOPPING		BIT(9)	/* being stopped: see twd_stopping() */

/* twd_ctx.clock_state: the clock work found the mutex held. */
#define TWD_CLOCK_DEFERRED	0

/* The clock bits: neither for CLOCK_MONOTONIC. */
#define TWD_CLOCKS		(TWD_BOOTTIME | TWD_REALTIME)

/* The arm flags of a timer's clock. */
#define TWD_ARM_CLOCKS		(TWHEEL_ARM_BOOTTIME | TWHEEL_ARM_REALTIME)

/* Timers whose clock was set, re-filed or cancelled per cond_resched(). */
#define TWD_CLOCK_CHUNK		64

/* The features of TWHEEL_API 1. */
#define TWD_FEATURES	(TWHEEL_FEATURE_ABS | TWHEEL_FEATURE_PERIODIC |	\
			 TWHEEL_FEATURE_REPLACE | TWHEEL_FEATURE_BATCH |	\
			 TWHEEL_FEATURE_MODIFY | TWHEEL_FEATURE_EVENT_SIZE |	\
			 TWHEEL_FEATURE_TIMENS | TWHEEL_FEATURE_BATCH_PROGRESS |\
			 TWHEEL_FEATURE_RING | TWHEEL_FEATURE_CLOCKS |\
			 TWHEEL_FEATURE_SLACK | TWHEEL_FEATURE_RING_ATTACH)

/**
 * struct twd_user - the timers of one user, over all their files
 * @node:	in twd_users, under twd_users_lock
 * @uid:	the user (real uid of the process that opened the files)
 * @files:	open files charging this user, under twd_users_lock
 * @timers:	timers of those files
 */
struct twd_user {
	struct hlist_node	node;
	kuid_t			uid;
	unsigned int		files;
	atomic_long_t		timers;
};

static DEFINE_HASHTABLE(twd_users, 6);
static DEFINE_MUTEX(twd_users_lock);

/**
 * struct twd_tns - the time namespace offsets of a process
 * @mono:	its CLOCK_MONOTONIC minus the host's, in ns
 * @boot:	its CLOCK_BOOTTIME minus the host's
 *
 * CLOCK_REALTIME has no namespace offset.
 */
struct twd_tns {
	s64	mono;
	s64	boot;
};

/*
 * Files with timers of CLOCK_BOOTTIME or CLOCK_REALTIME, whose works
 * twd_clock_work_fn() queues when a clock was set; see "Clocks".
 */
static LIST_HEAD(twd_clock_files);
static DEFINE_MUTEX(twd_clock_lock);
/* The files' clock works: a stuck one holds up no other workqueue's. */
static struct workqueue_struct *twd_clock_wq;

/**
 * struct twd_ring_hdr - the head of the event ring, as the process maps it
 * @head:	next event to reap, written by the process
 * @pad_head:	keeps @head's cache line the process's
 * @tail:	one past the last event, written by the kernel
 * @mask:	@entries - 1
 * @entries:	slots, a power of two
 * @flags:	TWHEEL_RING_OVERFLOW
 * @overflow:	events that went to the backlog
 * @pad_tail:	up to the events, at TWD_RING_EVENTS
 *
 * The layout is told to the process by struct twheel_ring_offsets and may
 * change; the process reads it from there.
 */
struct twd_ring_hdr {
	u32	head;
	u8	pad_head[60];
	u32	tail;
	u32	mask;
	u32	entries;
	u32	flags;
	u64	overflow;
	u8	pad_tail[104];
};

#define TWD_RING_EVENTS		sizeof(struct twd_ring_hdr)

/**
 * struct twd_ring - the event ring of a file
 * @hdr:	the kernel's mapping of the ring's pages
 * @pages:	the pages, for mmap()
 * @npages:	their number
 * @tail:	the kernel's tail, the only one it trusts
 * @mask:	slots - 1
 * @esize:	size of a record
 * @tns:	time namespace offsets of the process that set the ring up
 * @overflow:	events that went to the backlog
 * @flagged:	TWHEEL_RING_OVERFLOW is set in @hdr
 *
 * Set up once under ctx->mutex and the event lock, published with
 * smp_store_release() for mmap(), which takes neither; freed at release.
 * @tail, @overflow and @flagged are under the event lock.
 */
struct twd_ring {
	struct twd_ring_hdr	*hdr;
	struct page		**pages;
	unsigned int		npages;
	u32			tail;
	u32			mask;
	u32			esize;
	struct twd_tns		tns;
	u64			overflow;
	bool			flagged;
};

/**
 * struct twd_ctx - an open /dev/twheel: a set of timers
 * @mutex:	serializes changes to the set of timers, see "Locking"
 * @wqh:	readers and pollers; its lock is the event lock
 * @ready:	fired timers whose event is unread, in firing order
 * @done:	finished timers whose last event went into the ring, under
 *		the event lock, freed under @mutex
 * @ring:	the event ring, NULL until set up; see "Event ring"
 * @chunk:	read()'s buffer, allocated at the first read(), under @mutex
 * @arm_chunk:	ARM_BATCH's buffer, allocated at the first, under @mutex
 * @buckets:	hash table of timers by key, under @mutex
 * @hash_bits:	log2 of the number of @buckets
 * @ntimers:	timers in the table, under @mutex
 * @nqueued:	timers on @ready, under the event lock
 * @hash_key:	hsiphash key of this file's table
 * @user:	the user charged for the timers
 * @event_size:	size of the records read() returns, under @mutex
 * @armed:	timers armed or replaced, under @mutex
 * @cancelled:	timers cancelled, under @mutex
 * @fired:	callbacks run, under the event lock
 * @overruns:	deadlines folded into events, under the event lock
 * @delivered:	events read, under the event lock
 * @clock_node:	in twd_clock_files once a timer of CLOCK_BOOTTIME or
 *		CLOCK_REALTIME was armed, under twd_clock_lock
 * @clock_work:	applies a set of the clocks to the file's timers
 *		(twd_clock_set_file()); queued by twd_clock_work_fn(), and
 *		by twd_unlock() if it found the mutex held
 * @clock_state: %TWD_CLOCK_DEFERRED, atomic bit operations
 */
struct twd_ctx {
	struct mutex		mutex;	/* see "Locking" above */
	wait_queue_head_t	wqh;
	struct list_head	ready;
	struct list_head	done;
	struct twd_ring		*ring;
	struct twd_chunk	*chunk;
	struct twd_arm_chunk	*arm_chunk;
	struct twd_timer	**buckets;
	unsigned int		hash_bits;
	unsigned int		ntimers;
	unsigned int		nqueued;
	hsiphash_key_t		hash_key;
	struct twd_user		*user;
	unsigned int		event_size;
	u64			armed;
	u64			cancelled;
	u64			fired;
	u64			overruns;
	u64			delivered;
	struct list_head	clock_node;
	struct work_struct	clock_work;
	unsigned long		clock_state;
};

/**
 * struct twd_timer - one timer of a file, and its event
 * @wt:		the twheel timer
 * @hnext:	next in the hash chain, under ctx->mutex
 * @ready:	on ctx->ready while an event waits, on ctx->done when
 *		finished in the ring (%TWD_DONE), else empty
 * @ctx:	the file
 * @key:	the user's key, under ctx->mutex
 * @data:	the user's data, under ctx->mutex
 * @deadline:	the deadline of the last fire, in the timer's clock (host
 *		time), under the event lock
 * @fired_at:	when the last fire ran (same clock), under the event lock
 * @overruns:	deadlines folded into the queued event, under the event lock
 * @flags:	TWD_*, under the event lock; the clock bits change only
 *		under ctx->mutex too; %TWD_WIDE never changes
 *
 * The period lives in @wt only: twheel_period(). A timer of
 * CLOCK_MONOTONIC, the common case, is this struct alone, 136 bytes on
 * 64-bit (twd_init() asserts it): this is the memory a timer costs,
 * besides its hash bucket, and with the bucket and the ring it stays
 * within 145 bytes a timer at 100k timers. Every field is needed while a
 * periodic timer is pending and its event waits (the ready list needs
 * O(1) removal for CANCEL and REPLACE, and an event's times do not fit
 * in less), so a timer of another clock, which also needs its clock
 * offset, takes a struct twd_clock_timer (%TWD_WIDE) instead. Keep it
 * that way.
 */
struct twd_timer {
	struct twheel_timer	wt;
	struct twd_timer	*hnext;
	struct list_head	ready;
	struct twd_ctx		*ctx;
	u64			key;
	u64			data;
	u64			deadline;
	u64			fired_at;
	u32			overruns;
	u32			flags;
};

/**
 * struct twd_clock_timer - a timer that may be of another clock (%TWD_WIDE)
 * @t:		the timer
 * @clock_off:	for a timer of CLOCK_BOOTTIME or CLOCK_REALTIME, that clock
 *		minus CLOCK_MONOTONIC when the timer was filed: it is filed
 *		on the wheel (which runs on CLOCK_MONOTONIC) at its deadline
 *		minus @clock_off (for a TWD_PAST timer, @clock_off maps its
 *		clamped filing back to its deadline; see twd_file()); 0 for
 *		CLOCK_MONOTONIC; under the event lock. Read it with
 *		twd_clock_off(), which gives 0 for a timer that is not wide.
 *
 * From twd_clock_cache. A timer armed with another clock is wide from the
 * start; a REPLACE that gives a narrow one another clock moves it into a
 * wide object first (twd_timer_widen()), and a wide one stays wide.
 */
struct twd_clock_timer {
	struct twd_timer	t;
	s64			clock_off;
};

static struct kmem_cache *twd_cache __read_mostly;
static struct kmem_cache *twd_clock_cache __read_mostly;

/* ---- per-user accounting ---- */

static struct twd_user *twd_user_get(kuid_t uid)
{
	struct twd_user *user;

	mutex_lock(&twd_users_lock);
	hash_for_each_possible(twd_users, user, node, __kuid_val(uid)) {
		if (uid_eq(user->uid, uid))
			goto out_found;
	}
	/*
	 * Not GFP_KERNEL_ACCOUNT: the object is shared by every file of the
	 * user, whatever their memory cgroups, and outlives the first one;
	 * charged to the first opener's cgroup, it would pin that cgroup
	 * after its tasks are gone. It is small and there is one per uid
	 * with a file open.
	 */
	user = kzalloc(sizeof(*user), GFP_KERNEL);
	if (!user)
		goto out_unlock;
	user->uid = uid;
	atomic_long_set(&user->timers, 0);
	hash_add(twd_users, &user->node, __kuid_val(uid));
out_found:
	user->files++;
out_unlock:
	mutex_unlock(&twd_users_lock);
	return user;
}

static void twd_user_put(struct twd_user *user)
{
	mutex_lock(&twd_users_lock);
	if (!--user->files) {
		WARN_ON_ONCE(atomic_long_read(&user->timers));
		hash_del(&user->node);
		kfree(user);
	}
	mutex_unlock(&twd_users_lock);
}

static bool twd_user_charge(struct twd_user *user)
{
	if (atomic_long_inc_return(&user->timers) >
	    READ_ONCE(max_user_timers)) {
		atomic_long_dec(&user->timers);
		return false;
	}
	return true;
}

static void twd_user_uncharge(struct twd_user *user)
{
	atomic_long_dec(&user->timers);
}

/*
 * Charge @user for up to @n timers with one atomic: as many as @n charges
 * one by one would get. Returns that number.
 */
static unsigned int twd_user_charge_n(struct twd_user *user, unsigned int n)
{
	long over;

	if (!n)
		return 0;
	over = atomic_long_add_return(n, &user->timers) -
	       (long)READ_ONCE(max_user_timers);
	if (over > 0) {
		over = min_t(long, over, n);
		atomic_long_sub(over, &user->timers);
		n -= over;
	}
	return n;
}

/* ---- the hash table of keys ---- */

static u32 twd_hash(struct twd_ctx *ctx, u64 key)
{
	return hsiphash_2u32(lower_32_bits(key), upper_32_bits(key),
			     &ctx->hash_key);
}

static struct twd_timer **twd_bucket(struct twd_ctx *ctx, u32 hash)
{
	return &ctx->buckets[hash & (BIT(ctx->hash_bits) - 1)];
}

/* The timer of @key, whose twd_hash() is @hash. */
static struct twd_timer *twd_lookup_hashed(struct twd_ctx *ctx, u64 key,
					   u32 hash)
{
	struct twd_timer *t;

	lockdep_assert_held(&ctx->mutex);

	for (t = *twd_bucket(ctx, hash); t; t = t->hnext)
		if (t->key == key)
			return t;
	return NULL;
}

/* Rehash into 2^@bits buckets; keep the old table if memory is short. */
static void twd_hash_resize(struct twd_ctx *ctx, unsigned int bits)
{
	struct twd_timer **old = ctx->buckets, **new;
	unsigned int i, old_size = BIT(ctx->hash_bits);

	lockdep_assert_held(&ctx->mutex);

	new = kvcalloc(BIT(bits), sizeof(*new),
		       GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!new)
		return;
	ctx->buckets = new;
	ctx->hash_bits = bits;
	for (i = 0; i < old_size; i++) {
		while (old[i]) {
			struct twd_timer *t = old[i];
			struct twd_timer **bucket;

			bucket = twd_bucket(ctx, twd_hash(ctx, t->key));
			old[i] = t->hnext;
			t->hnext = *bucket;
			*bucket = t;
		}
		if (!(i & 1023))
			cond_resched();
	}
	kvfree(old);
}

/* Make room for @n timers in all, at most TWD_HASH_LOAD per bucket. */
static void twd_hash_reserve(struct twd_ctx *ctx, u64 n)
{
	unsigned int bits = ctx->hash_bits;

	while (n > (u64)BIT(bits) * TWD_HASH_LOAD && bits < TWD_HASH_MAX_BITS)
		bits++;
	if (bits > ctx->hash_bits)
		twd_hash_resize(ctx, bits);
}

/*
 * Halve a table that holds fewer than an eighth of its load, as often as
 * that holds: a batch whose entries failed leaves the table it reserved.
 */
static void twd_hash_trim(struct twd_ctx *ctx)
{
	unsigned int bits = ctx->hash_bits;

	while (ctx->ntimers < BIT(bits) * TWD_HASH_LOAD / 8 &&
	       bits > TWD_HASH_MIN_BITS)
		bits--;
	if (bits < ctx->hash_bits)
		twd_hash_resize(ctx, bits);
}

/* Link @t, whose key's twd_hash() is @hash, without resizing. */
static void twd_hash_link(struct twd_ctx *ctx, struct twd_timer *t, u32 hash)
{
	struct twd_timer **bucket = twd_bucket(ctx, hash);

	lockdep_assert_held(&ctx->mutex);

	t->hnext = *bucket;
	*bucket = t;
	ctx->ntimers++;
}

static struct twd_timer *twd_lookup(struct twd_ctx *ctx, u64 key)
{
	return twd_lookup_hashed(ctx, key, twd_hash(ctx, key));
}

/* Link @t as twd_hash_link() does, and grow the table if it is full. */
static void twd_hash_insert(struct twd_ctx *ctx, struct twd_timer *t, u32 hash)
{
	twd_hash_link(ctx, t, hash);
	twd_hash_reserve(ctx, ctx->ntimers);
}

static void twd_hash_remove(struct twd_ctx *ctx, struct twd_timer *t)
{
	struct twd_timer **pp = twd_bucket(ctx, twd_hash(ctx, t->key));

	lockdep_assert_held(&ctx->mutex);

	while (*pp != t)
		pp = &(*pp)->hnext;
	*pp = t->hnext;
	ctx->ntimers--;
	twd_hash_trim(ctx);
}

/* ---- time namespaces and clocks ---- */

/*
 * The offsets of current's time namespace from the host's clocks, in ns.
 * timerfd converts with timens_ktime_to_host(), which a module cannot
 * call: it is inline but uses init_time_ns and do_timens_ktime_to_host(),
 * neither exported (v6.1). timens_add_monotonic() and
 * timens_add_boottime(), inline too, read the same offsets through
 * current->nsproxy and nothing else; without CONFIG_TIME_NS they add
 * nothing.
 */
static void twd_timens_offsets(struct twd_tns *tns)
{
	struct timespec64 ts = { 0, 0 };

	timens_add_monotonic(&ts);
	tns->mono = timespec64_to_ns(&ts);
	ts = (struct timespec64){ 0, 0 };
	timens_add_boottime(&ts);
	tns->boot = timespec64_to_ns(&ts);
}

/* The namespace offset of the clock given by the TWD_CLOCKS of @flags. */
static s64 twd_tns_of(const struct twd_tns *tns, u32 flags)
{
	if (flags & TWD_REALTIME)
		return 0;
	return flags & TWD_BOOTTIME ? tns->boot : tns->mono;
}

/*
 * The clock given by the TWD_CLOCKS of @flags minus CLOCK_MONOTONIC, now:
 * the host's offset of CLOCK_BOOTTIME or CLOCK_REALTIME, 0 for
 * CLOCK_MONOTONIC. It changes only when the clock is set (a resume adds
 * the time slept to CLOCK_BOOTTIME), not as the clocks run.
 */
static s64 twd_clock_offset(u32 flags)
{
	if (flags & TWD_REALTIME)
		return ktime_to_ns(ktime_mono_to_any(0, TK_OFFS_REAL));
	if (flags & TWD_BOOTTIME)
		return ktime_to_ns(ktime_mono_to_any(0, TK_OFFS_BOOT));
	return 0;
}

/*
 * A time of a clock @off ns ahead of CLOCK_MONOTONIC as the other one, in
 * [0, KTIME_MAX]: @t is at most KTIME_MAX, and a clock may have been set
 * anywhere, so either way may leave the range.
 */
static u64 twd_clock_sub(u64 t, s64 off)
{
	s64 r;

	/* t >= 0: only a negative @off can overflow, upwards. */
	if (check_sub_overflow((s64)t, off, &r))
		return KTIME_MAX;
	return max_t(s64, r, 0);
}

static u64 twd_clock_add(u64 t, s64 off)
{
	return twd_clock_sub(t, off == S64_MIN ? S64_MAX : -off);
}

/*
 * Where to file a timer whose deadline is @deadline of a clock now @off ns
 * ahead of CLOCK_MONOTONIC: returns the CLOCK_MONOTONIC time, and in
 * *@clock_off what maps it back to @deadline exactly. That is @off, unless
 * the deadline lies before CLOCK_MONOTONIC's zero (a wall-clock deadline
 * before the boot: long past, it fires at once) or beyond KTIME_MAX (a
 * wall clock set before 1970 + uptime), where the time is clamped: then
 * *@clock_off is not the clock's offset, and twd_set_filed() marks the
 * timer TWD_PAST, so that its fire decides in its clock (twd_fire_past()).
 */
static u64 twd_file(u64 deadline, s64 off, s64 *clock_off)
{
	u64 mono = twd_clock_sub(deadline, off);

	*clock_off = (s64)(deadline - mono);
	return mono;
}

/* @t's struct twd_clock_timer; @t is %TWD_WIDE. */
static struct twd_clock_timer *twd_to_clock(struct twd_timer *t)
{
	return container_of(t, struct twd_clock_timer, t);
}

/* The clock offset @t was filed with: 0 for a narrow timer. */
static s64 twd_clock_off(struct twd_timer *t)
{
	return t->flags & TWD_WIDE ? twd_to_clock(t)->clock_off : 0;
}

/*
 * @t is filed as twd_file() said, its clock @off ahead now. A narrow timer
 * is of CLOCK_MONOTONIC, which maps to itself.
 */
static void twd_set_filed(struct twd_timer *t, s64 clock_off, s64 off)
{
	if (t->flags & TWD_WIDE)
		twd_to_clock(t)->clock_off = clock_off;
	else
		WARN_ON_ONCE(clock_off);
	if (clock_off != off)
		t->flags |= TWD_PAST;
	else
		t->flags &= ~TWD_PAST;
}

/*
 * A time of a namespace @offset ns ahead of the host, as host time, as
 * do_timens_ktime_to_host() converts it: a time before the offset is
 * already past (0). @t is at most KTIME_MAX, and offsets are limited to
 * KTIME_SEC_MAX / 2 seconds, so the result fits in a u64; the caller
 * checks it against KTIME_MAX.
 */
static u64 twd_time_to_host(u64 t, s64 offset)
{
	if ((s64)t < offset)
		return 0;
	return t - offset;
}

/* A host time as the namespace @offset ns ahead sees it; 0 before its zero. */
static u64 twd_time_from_host(u64 t, s64 offset)
{
	if (offset < 0 && t < (u64)-offset)
		return 0;
	return t + offset;
}

/* ---- timers and their events ---- */

/*
 * Is the fire being delivered @t's last, i.e. is @t not pending again? Only
 * twheel re-arms a periodic timer, and only MODIFY (under the event lock,
 * held here) may have re-armed a one-shot timer while this fire was on its
 * way, so a one-shot timer that was never modified is done without asking
 * twheel. twheel_pending() is exact here: the event lock keeps the ioctls
 * from arming or moving @t, and twheel files a periodic timer again, or
 * marks it not pending, before its callback runs.
 */
static bool twd_last_fire(struct twd_timer *t)
{
	lockdep_assert_held(&t->ctx->wqh.lock);

	if (!twheel_period(&t->wt) && !(t->flags & TWD_MODIFIED))
		return true;
	return !twheel_pending(&t->wt);
}

/*
 * Fill @ev with the event of @t, its times as the namespace @tns sees
 * them. Under the event lock.
 */
static void twd_event_fill(struct twheel_event *ev, struct twd_timer *t,
			   const struct twd_tns *tns)
{
	s64 off = twd_tns_of(tns, t->flags);

	ev->key = t->key;
	ev->data = t->data;
	ev->deadline_ns = twd_time_from_host(t->deadline, off);
	ev->fire_ns = twd_time_from_host(t->fired_at, off);
	ev->overruns = t->overruns;
	ev->flags = (t->flags & TWD_LAST ? TWHEEL_EVENT_LAST : 0) |
		    (t->flags & TWD_CANCELED ? TWHEEL_EVENT_CANCELED : 0);
}

/* ---- the event ring ---- */

/*
 * Free slots of @ring. A head the kernel's tail cannot explain (the
 * process wrote garbage) leaves no free slot.
 */
static u32 twd_ring_space(struct twd_ring *ring)
{
	u32 used;

	/*
	 * Pairs with the process's release store of the head: its reads of
	 * the slots it hands back are done before the kernel writes them.
	 */
	used = ring->tail - smp_load_acquire(&ring->hdr->head);
	return used > ring->mask + 1 ? 0 : ring->mask + 1 - used;
}

/* Has @ring events the process has not reaped? */
static bool twd_ring_nonempty(struct twd_ring *ring)
{
	/* A hint for poll(): the process may store the head at any time. */
	return READ_ONCE(ring->hdr->head) != ring->tail;
}

/*
 * Write @t's event into the next slot of the ring; the caller checked that
 * there is one and publishes the tail. A finished timer moves to ctx->done.
 */
static void twd_ring_put(struct twd_ctx *ctx, struct twd_timer *t)
{
	struct twd_ring *ring = ctx->ring;
	struct twheel_event *ev;

	lockdep_assert_held(&ctx->wqh.lock);

	ev = (void *)ring->hdr + TWD_RING_EVENTS +
	     (size_t)(ring->tail & ring->mask) * ring->esize;
	twd_event_fill(ev, t, &ring->tns);
	/* Bytes of a larger record beyond ours stay as allocated: zero. */
	ring->tail++;
	ctx->delivered++;
	if (t->flags & TWD_LAST) {
		t->flags |= TWD_DONE;
		list_add_tail(&t->ready, &ctx->done);
	}
}

/* Make the events written so far visible to the process. */
static void twd_ring_publish(struct twd_ring *ring)
{
	/* Pairs with the process's acquire load of the tail. */
	smp_store_release(&ring->hdr->tail, ring->tail);
}

/* The backlog is empty: clear TWHEEL_RING_OVERFLOW. */
static void twd_ring_unflag(struct twd_ring *ring)
{
	if (ring->flagged) {
		ring->flagged = false;
		WRITE_ONCE(ring->hdr->flags, 0);
	}
}

/*
 * Move up to @max events of the backlog into the ring, oldest first, as
 * far as it has room; clear TWHEEL_RING_OVERFLOW once the backlog is
 * empty. Returns the number moved.
 */
static unsigned int twd_ring_fill(struct twd_ctx *ctx, unsigned int max)
{
	struct twd_ring *ring = ctx->ring;
	unsigned int n = 0;

	lockdep_assert_held(&ctx->wqh.lock);

	/* Empty, perhaps by cancels: nothing waits any more. */
	if (list_empty(&ctx->ready))
		goto out_clear;
	max = min(max, twd_ring_space(ring));
	while (n < max && !list_empty(&ctx->ready)) {
		struct twd_timer *t = list_first_entry(&ctx->ready,
						       struct twd_timer, ready);

		list_del_init(&t->ready);
		twd_ring_put(ctx, t);
		n++;
	}
	ctx->nqueued -= n;
	if (n)
		twd_ring_publish(ring);
	if (!list_empty(&ctx->ready))
		return n;
out_clear:
	twd_ring_unflag(ring);
	return n;
}

/*
 * @n events went to the backlog: count them, set TWHEEL_RING_OVERFLOW and
 * let in what the ring has room for.
 */
static void twd_ring_overflow(struct twd_ctx *ctx, unsigned int n)
{
	struct twd_ring *ring = ctx->ring;

	lockdep_assert_held(&ctx->wqh.lock);

	ring->overflow += n;
	ring->flagged = true;
	WRITE_ONCE(ring->hdr->overflow, ring->overflow);
	WRITE_ONCE(ring->hdr->flags, TWHEEL_RING_OVERFLOW);
	/*
	 * Flag, then read the head; the process stores the head, then reads
	 * the flag, with a full barrier too: one of them sees the other, so
	 * an event never waits for a process that thinks there is none.
	 */
	smp_mb();
	twd_ring_fill(ctx, TWD_RING_FILL_FIRE);
}

/*
 * Queue the event of @t, which is on no list: into the ring if the file
 * has one with room and no backlog, else on the ready list (the backlog of
 * a ring, which the ring then takes as far as it can).
 */
static void twd_queue(struct twd_ctx *ctx, struct twd_timer *t)
{
	struct twd_ring *ring = ctx->ring;

	lockdep_assert_held(&ctx->wqh.lock);

	/* The tail is published once per run: twd_fire_run(). */
	if (ring && list_empty(&ctx->ready) && twd_ring_space(ring)) {
		twd_ring_put(ctx, t);
		return;
	}
	list_add_tail(&t->ready, &ctx->ready);
	ctx->nqueued++;
	if (ring)
		twd_ring_overflow(ctx, 1);
}

/*
 * Move the backlog into the ring in chunks, from process context; returns
 * the number moved.
 */
static unsigned int twd_ring_fill_all(struct twd_ctx *ctx)
{
	unsigned int n, moved = 0;

	do {
		spin_lock_irq(&ctx->wqh.lock);
		n = twd_ring_fill(ctx, TWD_RING_FILL_CHUNK);
		spin_unlock_irq(&ctx->wqh.lock);
		moved += n;
		cond_resched();
	} while (n == TWD_RING_FILL_CHUNK);
	return moved;
}

/*
 * Publish the events queued on @ctx's ring, and wake its readers. Under the
 * event lock, after queueing events.
 */
static void twd_wake_locked(struct twd_ctx *ctx)
{
	lockdep_assert_held(&ctx->wqh.lock);

	if (ctx->ring)
		twd_ring_publish(ctx->ring);
	/* Exact: waiters are added under the lock we hold. */
	if (waitqueue_active(&ctx->wqh))
		wake_up_locked_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
}

/*
 * Cancel @t, a CANCEL_ON_SET timer that is not pending any more, because
 * its clock was set: its last event says so. An event that waits becomes
 * the last one, keeping its deadline and overruns; else the event has the
 * pending deadline @deadline and the time of the cancel @now, both of the
 * timer's clock. Returns true if a reader should be woken.
 */
static bool twd_cancel_on_set(struct twd_ctx *ctx, struct twd_timer *t,
			      u64 deadline, u64 now)
{
	lockdep_assert_held(&ctx->wqh.lock);

	t->flags |= TWD_LAST | TWD_CANCELED;
	if (!list_empty(&t->ready))
		return false;
	t->deadline = deadline;
	t->fired_at = now;
	t->overruns = 0;
	twd_queue(ctx, t);
	return true;
}

/*
 * A fire of @t, whose clock was set after the timer was filed (@off is the
 * clock's offset now, twd_clock_off() the one it was filed with), before
 * its clock work came to it. A CANCEL_ON_SET timer is cancelled. Any
 * other fires if its clock has reached the deadline (returns false: the
 * caller delivers the fire); else it is filed again for the deadline, with
 * the count it had: a clock set back never makes a timer fire early.
 * Returns true if the fire was taken care of, with *@wake set if a reader
 * should be woken.
 */
static bool twd_fire_clock_set(struct twd_ctx *ctx, struct twd_timer *t,
			       u64 now, s64 off, bool *wake)
{
	struct twheel_timer *wt = &t->wt;
	u64 period = twheel_period(wt);
	u32 overruns = twheel_overruns(wt), left;
	s64 clock_off;
	/* The first deadline this fire stands for, then in the clock. */
	u64 first = twheel_fired_deadline(wt) - (u64)overruns * period;
	u64 deadline = twd_clock_add(first, twd_clock_off(t));

	lockdep_assert_held(&ctx->wqh.lock);

	*wake = false;
	if (t->flags & TWD_CANCEL_ON_SET) {
		/* Stops a periodic timer's next fire, pending meanwhile. */
		twheel_cancel(wt);
		*wake = twd_cancel_on_set(ctx, t, deadline,
					  twd_clock_add(now, off));
		return true;
	}
	if (twd_clock_add(now, off) >=
	    twd_clock_add(twheel_fired_deadline(wt), twd_clock_off(t)))
		return false;
	/* Give back the deadlines this fire used up, as armed. */
	left = twheel_fires_left(wt);
	if (period && left != TWHEEL_FOREVER)
		twheel_set_period(wt, period, left + overruns + 1);
	deadline = twd_file(deadline, off, &clock_off);
	twd_set_filed(t, clock_off, off);
	/* Replaces the periodic re-arm of this fire; cannot fail. */
	twheel_mod(wt, deadline, TWHEEL_ABS);
	return true;
}

/*
 * Deliver a fire of @t for @deadline at @fired_at (both of its clock),
 * standing for @overruns earlier deadlines too: queue the timer's event
 * (into the ring if the file has one with room), or fold this fire into
 * the event already queued. Returns true if a reader should be woken.
 */
static bool twd_deliver(struct twd_ctx *ctx, struct twd_timer *t,
			u64 deadline, u64 fired_at, u32 overruns)
{
	bool queued;

	lockdep_assert_held(&ctx->wqh.lock);

	ctx->fired++;
	queued = !list_empty(&t->ready);
	if (!queued) {
		t->overruns = overruns;
	} else {
		/* The earlier event is unread: this fire becomes overruns. */
		overruns = min_t(u64, (u64)overruns + 1, U32_MAX);
		t->overruns = min_t(u64, (u64)t->overruns + overruns, U32_MAX);
	}
	ctx->overruns += overruns;
	t->deadline = deadline;
	t->fired_at = fired_at;
	if (twd_last_fire(t))
		t->flags |= TWD_LAST;
	if (queued)
		return false;
	twd_queue(ctx, t);
	return true;
}

/*
 * A fire of @t, a TWD_PAST timer: filed at CLOCK_MONOTONIC's zero (or
 * KTIME_MAX), where twheel's count of the deadlines passed says nothing.
 * Decide in the clock, @off ahead now: give back what twheel counted;
 * deliver the latest deadline the clock has reached, folding the earlier
 * ones (as far as the count goes), and file the next one; or, if the clock
 * was set back below the deadline, file it again. A CANCEL_ON_SET timer is
 * not cancelled: its deadline had passed when it was filed, which tells
 * nothing of the clock's offset then. Returns true if a reader should be
 * woken.
 */
static bool twd_fire_past(struct twd_ctx *ctx, struct twd_timer *t, u64 now,
			  s64 off)
{
	struct twheel_timer *wt = &t->wt;
	u64 period = twheel_period(wt), clock_now = twd_clock_add(now, off);
	u32 overruns = twheel_overruns(wt), left = twheel_fires_left(wt);
	u64 first = twheel_fired_deadline(wt) - (u64)overruns * period;
	u64 deadline = twd_clock_add(first, twd_clock_off(t)), j = 0, next;
	bool counted = period && left != TWHEEL_FOREVER;
	s64 clock_off;

	lockdep_assert_held(&ctx->wqh.lock);

	if (counted)
		left += overruns + 1;
	if (clock_now < deadline) {
		if (counted)
			twheel_set_period(wt, period, left);
		next = twd_file(deadline, off, &clock_off);
		twd_set_filed(t, clock_off, off);
		twheel_mod(wt, next, TWHEEL_ABS);
		return false;
	}
	if (period) {
		j = div64_u64(clock_now - deadline, period);
		if (counted) {
			j = min_t(u64, j, left - 1);
			left -= j + 1;
		}
	}
	deadline += j * period;
	if (period && left && !check_add_overflow(deadline, period, &next) &&
	    next <= KTIME_MAX) {
		if (counted)
			twheel_set_period(wt, period, left);
		next = twd_file(next, off, &clock_off);
		twd_set_filed(t, clock_off, off);
		twheel_mod(wt, next, TWHEEL_ABS);
	} else {
		/* The last one: no re-arm. */
		twheel_cancel(wt);
	}
	return twd_deliver(ctx, t, deadline, clock_now, min_t(u64, j, U32_MAX));
}

/*
 * One fire of @t, under its file's event lock, delivered in its clock.
 * Returns true if a reader should be woken.
 */
static bool twd_fire_locked(struct twd_ctx *ctx, struct twd_timer *t, u64 now)
{
	struct twheel_timer *wt = &t->wt;
	bool wake;
	s64 off = 0;

	lockdep_assert_held(&ctx->wqh.lock);

	/* A clock set since the timer was filed: see "Clocks". */
	if (unlikely(t->flags & TWD_CLOCKS)) {
		off = twd_clock_offset(t->flags);
		if (t->flags & TWD_PAST)
			return twd_fire_past(ctx, t, now, off);
		if (off != twd_clock_off(t) &&
		    twd_fire_clock_set(ctx, t, now, off, &wake))
			return wake;
	}
	/* twheel counts a periodic timer's deadlines, overruns included. */
	return twd_deliver(ctx, t,
			   twd_clock_add(twheel_fired_deadline(wt),
					 twd_clock_off(t)),
			   twd_clock_add(now, off), twheel_overruns(wt));
}

/*
 * Fire the run of timers of one file that starts at @wts[@i], under its
 * event lock, taken once: publish its ring's tail and wake its readers
 * once. Returns the index after the run. Touches neither a timer nor the
 * file after dropping the lock.
 */
static unsigned int twd_fire_run(struct twheel_timer **wts, unsigned int i,
				 unsigned int n, u64 now)
{
	struct twd_ctx *ctx = container_of(wts[i], struct twd_timer, wt)->ctx;
	bool wake = false;

	spin_lock(&ctx->wqh.lock);
	for (; i < n; i++) {
		struct twd_timer *t = container_of(wts[i], struct twd_timer, wt);

		if (t->ctx != ctx)
			break;
		if (!(t->flags & TWD_STOPPING))
			wake |= twd_fire_locked(ctx, t, now);
	}
	/* The run's events in the ring, at once. */
	if (wake)
		twd_wake_locked(ctx);
	spin_unlock(&ctx->wqh.lock);
	return i;
}

/*
 * The timers' batch callback, in softirq context: a batch holds due timers
 * in firing order, of one file or of several; each run of one file's
 * timers is fired under one hold of its event lock. (One lock and unlock
 * per function: sparse follows the context.)
 */
static void twd_timer_fn(struct twheel_timer **wts, unsigned int n)
{
	u64 now = twheel_fire_time(wts[0]);
	unsigned int i = 0;

	while (i < n)
		i = twd_fire_run(wts, i, n, now);
}

/* Take @t off the ready list or ctx->done, whichever it is on. */
static void twd_unqueue(struct twd_ctx *ctx, struct twd_timer *t)
{
	lockdep_assert_held(&ctx->wqh.lock);

	if (list_empty(&t->ready))
		return;
	list_del_init(&t->ready);
	if (t->flags & TWD_DONE) {
		t->flags &= ~TWD_DONE;
		return;
	}
	ctx->nqueued--;
	if (ctx->ring && list_empty(&ctx->ready))
		twd_ring_unflag(ctx->ring);
}

/* Take @t's settings from @arm; @t is idle. */
static void twd_timer_setup(struct twd_timer *t, const struct twheel_arm *arm)
{
	t->data = arm->data;
	/* Checked by twd_check_arm(); without slack, spare the wheel lock. */
	if (arm->slack_ns || twheel_slack(&t->wt))
		WARN_ON_ONCE(twheel_set_slack(&t->wt, arm->slack_ns));
	/* A new timer is one-shot: spare the common case a wheel lock. */
	if (arm->period_ns || twheel_period(&t->wt))
		twheel_set_period(&t->wt, arm->period_ns,
				  arm->count ? arm->count : TWHEEL_FOREVER);
}

/* A new timer object: wide if @tflags name another clock than monotonic. */
static struct twd_timer *twd_timer_alloc(u32 tflags)
{
	struct twd_clock_timer *ct;

	if (!(tflags & TWD_CLOCKS))
		return kmem_cache_alloc(twd_cache, GFP_KERNEL_ACCOUNT);
	ct = kmem_cache_alloc(twd_clock_cache, GFP_KERNEL_ACCOUNT);
	return ct ? &ct->t : NULL;
}

/* Give @t's object back to its cache; @t is idle, out of the hash. */
static void twd_timer_put(struct twd_timer *t)
{
	if (t->flags & TWD_WIDE)
		kmem_cache_free(twd_clock_cache, twd_to_clock(t));
	else
		kmem_cache_free(twd_cache, t);
}

static void twd_timer_free(struct twd_ctx *ctx, struct twd_timer *t)
{
	twd_user_uncharge(ctx->user);
	twd_timer_put(t);
}

/*
 * Free @n timers of @ts, out of the hash and idle: one uncharge of the
 * user, one kmem_cache_free_bulk() of the narrow ones (@ts is reordered).
 */
static void twd_timers_free(struct twd_ctx *ctx, struct twd_timer **ts,
			    unsigned int n)
{
	unsigned int i, narrow = 0;

	if (!n)
		return;
	atomic_long_sub(n, &ctx->user->timers);
	for (i = 0; i < n; i++) {
		if (ts[i]->flags & TWD_WIDE)
			twd_timer_put(ts[i]);
		else
			ts[narrow++] = ts[i];
	}
	if (narrow)
		kmem_cache_free_bulk(twd_cache, narrow, (void **)ts);
}

/*
 * Mark the @n timers of @ts, about to be stopped (cancelled, replaced or
 * moved into a wide object), so that a fire of theirs on its way is
 * dropped, as the stop discards an event that waits: its callback, waiting
 * for the event lock meanwhile, would find the timer stopped and take the
 * fire for its last. The stop clears the mark or frees the timer.
 */
static void twd_stopping(struct twd_ctx *ctx, struct twd_timer **ts,
			 unsigned int n)
{
	unsigned int i;

	spin_lock_irq(&ctx->wqh.lock);
	for (i = 0; i < n; i++)
		ts[i]->flags |= TWD_STOPPING;
	spin_unlock_irq(&ctx->wqh.lock);
}

/*
 * Stop @n timers of @ts, at most TWD_FREE_CHUNK, for good, discard their
 * events and free them, in bulk; they are out of the hash.
 */
static void twd_timers_kill(struct twd_ctx *ctx, struct twd_timer **ts,
			    unsigned int n)
{
	struct twheel_timer *wts[TWD_FREE_CHUNK];
	unsigned int i;

	lockdep_assert_held(&ctx->mutex);

	if (!n)
		return;
	for (i = 0; i < n; i++)
		wts[i] = &ts[i]->wt;
	twd_stopping(ctx, ts, n);
	twheel_shutdown_bulk(wts, n);
	spin_lock_irq(&ctx->wqh.lock);
	for (i = 0; i < n; i++)
		twd_unqueue(ctx, ts[i]);
	spin_unlock_irq(&ctx->wqh.lock);
	twd_timers_free(ctx, ts, n);
	ctx->cancelled += n;
}

/*
 * Add @t, out of the hash, to the *@n timers of @ts to kill; kill them
 * when they fill it (TWD_FREE_CHUNK). The caller kills what is left.
 */
static void twd_kill_later(struct twd_ctx *ctx, struct twd_timer **ts,
			   unsigned int *n, struct twd_timer *t)
{
	ts[(*n)++] = t;
	if (*n == TWD_FREE_CHUNK) {
		twd_timers_kill(ctx, ts, *n);
		*n = 0;
	}
}

/* Free the timers whose last event went into the ring, in bulk. */
static void twd_reap_done(struct twd_ctx *ctx)
{
	struct twd_timer *ts[TWD_FREE_CHUNK], *t, *next;
	unsigned int n = 0;
	LIST_HEAD(done);

	lockdep_assert_held(&ctx->mutex);

	spin_lock_irq(&ctx->wqh.lock);
	list_splice_init(&ctx->done, &done);
	spin_unlock_irq(&ctx->wqh.lock);
	/* Off every list the event lock guards: ours, under the mutex. */
	list_for_each_entry_safe(t, next, &done, ready) {
		twd_hash_remove(ctx, t);
		ts[n++] = t;
		if (n == TWD_FREE_CHUNK) {
			twd_timers_free(ctx, ts, n);
			n = 0;
			cond_resched();
		}
	}
	twd_timers_free(ctx, ts, n);
}

/*
 * Take ctx->mutex for an ioctl, unless the process is killed meanwhile:
 * another ioctl of the file may hold it for as long as one of its user
 * copies waits for a page (of a FUSE file, or of userfaultfd).
 */
static int twd_mutex_lock(struct twd_ctx *ctx)
{
	return mutex_lock_killable(&ctx->mutex) ? -EINTR : 0;
}

/*
 * twd_mutex_lock(), then, with a ring, move the backlog into it as far as
 * the process made room, and free the timers whose last events it took,
 * so that the ioctl finds their keys free.
 */
static int twd_lock(struct twd_ctx *ctx)
{
	if (twd_mutex_lock(ctx))
		return -EINTR;
	if (ctx->ring) {
		twd_ring_fill_all(ctx);
		twd_reap_done(ctx);
	}
	return 0;
}

/*
 * Drop ctx->mutex, taken by twd_mutex_lock() or twd_lock(), or by read()
 * or fdinfo; queue the file's clock work if it found the mutex held.
 */
static void twd_unlock(struct twd_ctx *ctx)
{
	mutex_unlock(&ctx->mutex);
	/*
	 * Pairs with the barrier in twd_clock_set_file(): it finds the
	 * mutex free, or we find it deferred (or both: it runs twice).
	 */
	smp_mb();
	if (test_and_clear_bit(TWD_CLOCK_DEFERRED, &ctx->clock_state))
		queue_work(twd_clock_wq, &ctx->clock_work);
}

/* ---- ioctl argument checks ---- */

/**
 * struct twd_now - the time an ioctl arms or moves timers at
 * @mono:	CLOCK_MONOTONIC, host time
 * @tns:	the caller's time namespace offsets
 */
struct twd_now {
	u64		mono;
	struct twd_tns	tns;
};

static void twd_now(struct twd_now *tn)
{
	tn->mono = ktime_get_ns();
	twd_timens_offsets(&tn->tns);
}

/* The TWD_* bits of a timer armed with the TWHEEL_ARM_* @flags. */
static u32 twd_clock_flags(u32 flags)
{
	return (flags & TWHEEL_ARM_BOOTTIME ? TWD_BOOTTIME : 0) |
	       (flags & TWHEEL_ARM_REALTIME ? TWD_REALTIME : 0) |
	       (flags & TWHEEL_ARM_CANCEL_ON_SET ? TWD_CANCEL_ON_SET : 0);
}

/* One clock at most; cancel-on-set for absolute wall-clock deadlines. */
static int twd_check_clock(u32 flags)
{
	if ((flags & TWD_ARM_CLOCKS) == TWD_ARM_CLOCKS)
		return -EINVAL;
	if ((flags & TWHEEL_ARM_CANCEL_ON_SET) &&
	    (!(flags & TWHEEL_ARM_REALTIME) || !(flags & TWHEEL_ARM_ABS)))
		return -EINVAL;
	return 0;
}

/*
 * The absolute deadline, in host time of the clock the TWD_CLOCKS of
 * @tflags name, of @expiry: relative to now (@tn; that clock is @off ns
 * ahead of CLOCK_MONOTONIC) unless @abs, then a time of the caller's
 * namespace.
 */
static int twd_deadline(u64 expiry, bool abs, u32 tflags,
			const struct twd_now *tn, s64 off, u64 *deadline)
{
	if (!abs && check_add_overflow(twd_clock_add(tn->mono, off), expiry,
				       &expiry))
		return -ERANGE;
	if (expiry > KTIME_MAX)
		return -ERANGE;
	if (abs)
		expiry = twd_time_to_host(expiry, twd_tns_of(&tn->tns, tflags));
	if (expiry > KTIME_MAX)
		return -ERANGE;
	*deadline = expiry;
	return 0;
}

static int twd_check_period(u64 period, u32 count)
{
	if (!period)
		return count ? -EINVAL : 0;
	/* One tick at least, so that no timer can fire more often. */
	return period < twheel_tick_ns() ? -EINVAL : 0;
}

static int twd_check_arm(const struct twheel_arm *arm)
{
	if (arm->flags & ~(TWHEEL_ARM_ABS | TWHEEL_ARM_REPLACE |
			   TWD_ARM_CLOCKS | TWHEEL_ARM_CANCEL_ON_SET))
		return -EINVAL;
	if (arm->__reserved || arm->slack_ns > KTIME_MAX)
		return -EINVAL;
	return twd_check_clock(arm->flags) ?:
	       twd_check_period(arm->period_ns, arm->count);
}

/*
 * @ctx gets a timer of CLOCK_BOOTTIME or CLOCK_REALTIME: put it on
 * twd_clock_files, before the clock's offset is read for the timer, so
 * that a set of the clock after the read has its work visit the file.
 */
static void twd_clock_file_add(struct twd_ctx *ctx)
{
	lockdep_assert_held(&ctx->mutex);

	/* Only here, under ctx->mutex, and at release, does it change. */
	if (!list_empty(&ctx->clock_node))
		return;
	mutex_lock(&twd_clock_lock);
	list_add_tail(&ctx->clock_node, &twd_clock_files);
	mutex_unlock(&twd_clock_lock);
}

/* ---- ioctl operations, called with ctx->mutex held ---- */

/*
 * A new timer @t of @ctx, idle, as @arm says, for @deadline in its clock,
 * which is @off ns ahead of CLOCK_MONOTONIC. Returns where to file it on
 * the wheel: twd_file().
 */
static u64 twd_timer_init(struct twd_ctx *ctx, struct twd_timer *t,
			  const struct twheel_arm *arm, u64 deadline, s64 off)
{
	s64 clock_off;
	u64 mono;

	twheel_timer_init_batch(&t->wt, twd_timer_fn, 0);
	INIT_LIST_HEAD(&t->ready);
	t->ctx = ctx;
	t->key = arm->key;
	t->deadline = deadline;
	t->fired_at = 0;
	t->overruns = 0;
	t->flags = twd_clock_flags(arm->flags);
	if (t->flags & TWD_CLOCKS)
		t->flags |= TWD_WIDE;
	mono = twd_file(deadline, off, &clock_off);
	twd_set_filed(t, clock_off, off);
	twd_timer_setup(t, arm);
	return mono;
}

static int twd_arm_new(struct twd_ctx *ctx, const struct twheel_arm *arm,
		       u64 deadline, s64 off, u32 hash)
{
	struct twd_timer *t;
	u64 mono;
	int ret;

	lockdep_assert_held(&ctx->mutex);

	if (ctx->ntimers >= READ_ONCE(max_timers))
		return -ENOSPC;
	if (!twd_user_charge(ctx->user))
		return -ENOSPC;
	t = twd_timer_alloc(twd_clock_flags(arm->flags));
	if (!t) {
		ret = -ENOMEM;
		goto out_uncharge;
	}
	mono = twd_timer_init(ctx, t, arm, deadline, off);
	twd_hash_insert(ctx, t, hash);
	ret = twheel_add(&t->wt, mono, TWHEEL_ABS);
	/* Cannot fail: a new timer and a deadline checked to be in range. */
	if (WARN_ON_ONCE(ret))
		goto out_unhash;
	ctx->armed++;
	return 0;

out_unhash:
	twd_hash_remove(ctx, t);
	twd_timer_put(t);
out_uncharge:
	twd_user_uncharge(ctx->user);
	return ret;
}

/*
 * @t, narrow, is to become a timer of another clock: move it into a wide
 * object, which holds the clock offset, in its place in the hash table;
 * stop the old one for good and discard its event, as the REPLACE that
 * asks for this would. Returns the new object, or NULL (nothing changed)
 * if there is no memory for it.
 */
static struct twd_timer *twd_timer_widen(struct twd_ctx *ctx,
					 struct twd_timer *t)
{
	struct twd_timer *wide, **pp;

	lockdep_assert_held(&ctx->mutex);

	wide = twd_timer_alloc(TWD_CLOCKS);
	if (!wide)
		return NULL;
	twd_stopping(ctx, &t, 1);
	twheel_shutdown_sync(&t->wt);
	spin_lock_irq(&ctx->wqh.lock);
	twd_unqueue(ctx, t);
	spin_unlock_irq(&ctx->wqh.lock);
	twheel_timer_init_batch(&wide->wt, twd_timer_fn, 0);
	INIT_LIST_HEAD(&wide->ready);
	wide->ctx = ctx;
	wide->key = t->key;
	wide->data = t->data;
	wide->deadline = t->deadline;
	wide->fired_at = 0;
	wide->overruns = 0;
	wide->flags = TWD_WIDE;
	twd_to_clock(wide)->clock_off = 0;
	/* The same key: the same bucket and place in its chain. */
	pp = twd_bucket(ctx, twd_hash(ctx, t->key));
	while (*pp != t)
		pp = &(*pp)->hnext;
	wide->hnext = t->hnext;
	*pp = wide;
	twd_timer_put(t);
	return wide;
}

/*
 * Replace *@tp: cancel it, discard its event, arm it as @arm says. A
 * narrow timer given another clock moves to a wide object, *@tp then;
 * -ENOMEM if there is none.
 */
static int twd_arm_replace(struct twd_ctx *ctx, struct twd_timer **tp,
			   const struct twheel_arm *arm, u64 deadline, s64 off)
{
	u32 tflags = twd_clock_flags(arm->flags);
	struct twd_timer *t = *tp;
	s64 clock_off;
	u64 mono;
	int ret;

	lockdep_assert_held(&ctx->mutex);

	if ((tflags & TWD_CLOCKS) && !(t->flags & TWD_WIDE)) {
		t = twd_timer_widen(ctx, t);
		if (!t)
			return -ENOMEM;
		*tp = t;
	}
	twd_stopping(ctx, &t, 1);
	twheel_cancel_sync(&t->wt);
	spin_lock_irq(&ctx->wqh.lock);
	twd_unqueue(ctx, t);
	t->flags = tflags | (t->flags & TWD_WIDE);
	t->overruns = 0;
	mono = twd_file(deadline, off, &clock_off);
	twd_set_filed(t, clock_off, off);
	t->deadline = deadline;
	spin_unlock_irq(&ctx->wqh.lock);
	twd_timer_setup(t, arm);
	ret = twheel_add(&t->wt, mono, TWHEEL_ABS);
	WARN_ON_ONCE(ret);
	ctx->armed++;
	return ret;
}

static int twd_arm(struct twd_ctx *ctx, const struct twheel_arm *arm,
		   const struct twd_now *tn)
{
	u32 tflags = twd_clock_flags(arm->flags);
	struct twd_timer *t;
	u64 deadline;
	s64 off = 0;
	u32 hash;
	int ret;

	lockdep_assert_held(&ctx->mutex);

	ret = twd_check_arm(arm);
	if (ret)
		return ret;
	if (tflags & TWD_CLOCKS) {
		twd_clock_file_add(ctx);
		off = twd_clock_offset(tflags);
	}
	ret = twd_deadline(arm->expiry_ns, arm->flags & TWHEEL_ARM_ABS, tflags,
			   tn, off, &deadline);
	if (ret)
		return ret;
	hash = twd_hash(ctx, arm->key);
	t = twd_lookup_hashed(ctx, arm->key, hash);
	if (!t)
		return twd_arm_new(ctx, arm, deadline, off, hash);
	if (!(arm->flags & TWHEEL_ARM_REPLACE))
		return -EEXIST;
	return twd_arm_replace(ctx, &t, arm, deadline, off);
}

/* Take the timer of @key out of the hash table: it is to be killed. */
static struct twd_timer *twd_unhash_key(struct twd_ctx *ctx, u64 key)
{
	struct twd_timer *t;

	lockdep_assert_held(&ctx->mutex);

	t = twd_lookup(ctx, key);
	if (t)
		twd_hash_remove(ctx, t);
	return t;
}

static int twd_cancel(struct twd_ctx *ctx, u64 key)
{
	struct twd_timer *t = twd_unhash_key(ctx, key);

	if (!t)
		return -ENOENT;
	twd_timers_kill(ctx, &t, 1);
	return 0;
}

/* Cancel every timer of @ctx, in bulk; returns how many there were. */
static unsigned int twd_cancel_all(struct twd_ctx *ctx)
{
	struct twd_timer *ts[TWD_FREE_CHUNK];
	unsigned int i, n = 0, nts = 0;

	lockdep_assert_held(&ctx->mutex);

	for (i = 0; i < BIT(ctx->hash_bits); i++) {
		struct twd_timer *t;

		while ((t = ctx->buckets[i])) {
			ctx->buckets[i] = t->hnext;
			twd_kill_later(ctx, ts, &nts, t);
			n++;
		}
	}
	twd_timers_kill(ctx, ts, nts);
	ctx->ntimers = 0;
	if (ctx->hash_bits > TWD_HASH_MIN_BITS)
		twd_hash_resize(ctx, TWD_HASH_MIN_BITS);
	return n;
}

static int twd_modify(struct twd_ctx *ctx, const struct twheel_modify *mod,
		      u64 deadline)
{
	struct twd_timer *t;
	s64 off, clock_off;
	int ret = 0;

	lockdep_assert_held(&ctx->mutex);

	t = twd_lookup(ctx, mod->key);
	if (!t)
		return -ENOENT;
	/*
	 * twheel re-arms a pending timer only, in one step with its period:
	 * a fire already on its way is not replaced (-ENOENT, and its event
	 * comes), and every fire uses the old deadline, period and count or
	 * the new ones. Under the event lock, the callback of a fire of the
	 * new deadline sees the timer's new period.
	 */
	spin_lock_irq(&ctx->wqh.lock);
	/* A timer keeps its clock, and MODIFY must name it. */
	if ((t->flags & TWD_CLOCKS) !=
	    (twd_clock_flags(mod->flags) & TWD_CLOCKS)) {
		spin_unlock_irq(&ctx->wqh.lock);
		return -EINVAL;
	}
	/*
	 * Filed with the offset the timer has, stale or not: a set of the
	 * clock since then is the clock work's to apply, to all alike. A
	 * TWD_PAST timer has none: today's, then.
	 */
	off = t->flags & TWD_PAST ? twd_clock_offset(t->flags) :
				    twd_clock_off(t);
	deadline = twd_file(deadline, off, &clock_off);
	if (mod->flags & TWHEEL_MODIFY_PERIOD)
		ret = twheel_mod_pending_period(&t->wt, deadline, TWHEEL_ABS,
						mod->period_ns, mod->count ?
						mod->count : TWHEEL_FOREVER);
	else
		ret = twheel_mod_pending(&t->wt, deadline, TWHEEL_ABS);
	if (ret > 0) {
		twd_set_filed(t, clock_off, off);
		t->flags |= TWD_MODIFIED;
		ret = 0;
	} else if (!ret) {
		ret = -ENOENT;
	}
	spin_unlock_irq(&ctx->wqh.lock);
	return ret;
}

static void twd_query(struct twd_ctx *ctx, struct twd_timer *t,
		      struct twheel_query *q, const struct twd_tns *tns)
{
	u64 period = twheel_period(&t->wt);
	s64 remaining;
	u32 left;

	lockdep_assert_held(&ctx->wqh.lock);

	q->state = 0;
	q->fires_left = 0;
	q->remaining_ns = 0;
	q->deadline_ns = t->deadline;
	remaining = twheel_remaining(&t->wt);
	if (remaining >= 0) {
		q->state |= TWHEEL_STATE_PENDING;
		q->remaining_ns = remaining;
		q->deadline_ns = twd_clock_add(twheel_expires(&t->wt),
					       twd_clock_off(t));
		left = twheel_fires_left(&t->wt);
		q->fires_left = period ? left : 1;
	}
	/* In the timer's clock, which may have been set since it was filed. */
	if (remaining >= 0 && (t->flags & TWD_CLOCKS)) {
		u64 now = twd_clock_add(ktime_get_ns(),
					twd_clock_offset(t->flags));

		q->remaining_ns = q->deadline_ns > now ? q->deadline_ns - now : 0;
	}
	if (!list_empty(&t->ready))
		q->state |= TWHEEL_STATE_QUEUED;
	if (t->flags & TWD_LAST)
		q->state |= TWHEEL_STATE_DONE;
	q->period_ns = period;
	q->data = t->data;
	q->overruns = list_empty(&t->ready) ? 0 : t->overruns;
	q->slack_ns = twheel_slack(&t->wt);
	q->deadline_ns = twd_time_from_host(q->deadline_ns,
					    twd_tns_of(tns, t->flags));
}

/* ---- clocks that are set ---- */

/*
 * Is @t, of a clock now @off ahead of CLOCK_MONOTONIC, filed at another
 * place than that offset says? A TWD_PAST timer has no offset to compare:
 * it is, if its deadline would be filed elsewhere today. Under the event
 * lock.
 */
static bool twd_clock_stale(struct twd_timer *t, s64 off)
{
	u64 expires = twheel_expires(&t->wt);
	s64 clock_off;

	if (!(t->flags & TWD_PAST))
		return off != twd_clock_off(t);
	return twd_file(twd_clock_add(expires, twd_clock_off(t)), off,
			&clock_off) != expires;
}

/*
 * @t's clock was set (or CLOCK_BOOTTIME took a suspend) after it was filed:
 * cancel it if it is CANCEL_ON_SET, else file it again at its deadline's
 * new CLOCK_MONOTONIC equivalent. Under ctx->mutex, so that no ioctl arms
 * or moves it meanwhile.
 *
 * The timer is stopped under the event lock, and only while no callback
 * of it is on its way (twheel_try_cancel()): twheel files a periodic
 * timer for its next deadline before the callback runs, and the callback,
 * under the event lock, takes a timer it finds not pending for one that
 * has fired its last (twd_last_fire()). A timer stopped while its callback
 * waited for the lock would end there. With a callback on its way, the
 * lock is dropped until it has run (twheel_wait_running()), and the
 * timer looked at again.
 */
static void twd_clock_set_timer(struct twd_ctx *ctx, struct twd_timer *t)
{
	s64 off, clock_off;
	bool wake = false;
	u64 deadline;
	int ret;

	lockdep_assert_held(&ctx->mutex);

	for (;;) {
		spin_lock_irq(&ctx->wqh.lock);
		off = twd_clock_offset(t->flags);
		if (!(t->flags & TWD_CLOCKS) || (t->flags & TWD_LAST) ||
		    !twd_clock_stale(t, off))
			goto out_unlock;
		ret = twheel_try_cancel(&t->wt);
		if (ret != -EBUSY)
			break;
		spin_unlock_irq(&ctx->wqh.lock);
		twheel_wait_running(&t->wt);
	}
	/* Not pending and no fire on its way: nothing to file again. */
	if (!ret)
		goto out_unlock;
	deadline = twd_clock_add(twheel_expires(&t->wt), twd_clock_off(t));
	if ((t->flags & (TWD_CANCEL_ON_SET | TWD_PAST)) == TWD_CANCEL_ON_SET &&
	    off != twd_clock_off(t)) {
		wake = twd_cancel_on_set(ctx, t, deadline,
					 twd_clock_add(ktime_get_ns(), off));
		goto out_unlock;
	}
	deadline = twd_file(deadline, off, &clock_off);
	twd_set_filed(t, clock_off, off);
	/* Cannot fail: an idle timer and a deadline in range. */
	WARN_ON_ONCE(twheel_add(&t->wt, deadline, TWHEEL_ABS));
out_unlock:
	if (wake)
		twd_wake_locked(ctx);
	spin_unlock_irq(&ctx->wqh.lock);
}

/*
 * The file's @clock_work: apply a set of the clocks to its every timer.
 * Not behind an ioctl that holds the mutex, maybe for as long as a page
 * takes to come (and a kworker with it: a user could hold up the files of
 * all others with 256 such files): the work marks itself deferred and
 * leaves, and twd_unlock() queues it again.
 */
static void twd_clock_set_file(struct work_struct *work)
{
	struct twd_ctx *ctx = container_of(work, struct twd_ctx, clock_work);
	unsigned int i, n = 0;

	set_bit(TWD_CLOCK_DEFERRED, &ctx->clock_state);
	/* Pairs with the barrier in twd_unlock(). */
	smp_mb__after_atomic();
	if (!mutex_trylock(&ctx->mutex))
		return;
	clear_bit(TWD_CLOCK_DEFERRED, &ctx->clock_state);
	/* Neither the hash table nor its chains change under the mutex. */
	for (i = 0; i < BIT(ctx->hash_bits); i++) {
		struct twd_timer *t;

		for (t = ctx->buckets[i]; t; t = t->hnext) {
			twd_clock_set_timer(ctx, t);
			if (!(++n % TWD_CLOCK_CHUNK))
				cond_resched();
		}
	}
	mutex_unlock(&ctx->mutex);
}

/*
 * The work run when a clock was set: queue the work of every file on
 * twd_clock_files, as many as users opened, yielding between them. A set
 * while a file's work runs queues it again.
 */
static void twd_clock_work_fn(struct work_struct *work)
{
	struct twd_ctx *ctx;

	mutex_lock(&twd_clock_lock);
	list_for_each_entry(ctx, &twd_clock_files, clock_node) {
		queue_work(twd_clock_wq, &ctx->clock_work);
		cond_resched();
	}
	mutex_unlock(&twd_clock_lock);
}

static DECLARE_WORK(twd_clock_work, twd_clock_work_fn);

/* Out of the timekeeper's lock: queue the work. */
static void twd_clock_irq_work_fn(struct irq_work *work)
{
	queue_work(system_unbound_wq, &twd_clock_work);
}

static DEFINE_IRQ_WORK(twd_clock_irq_work, twd_clock_irq_work_fn);

/*
 * Called on every timekeeping update, @was_set when a clock was set, under
 * the timekeeper's lock and its seqcount's write side, interrupts off: a
 * wakeup here could read the time and deadlock (KVM's notifier learned
 * that), so an irq_work queues the work.
 */
static int twd_clock_notify(struct notifier_block *nb, unsigned long was_set,
			    void *priv)
{
	if (was_set)
		irq_work_queue(&twd_clock_irq_work);
	return NOTIFY_DONE;
}

static struct notifier_block twd_clock_nb = {
	.notifier_call = twd_clock_notify,
};

/*
 * @ctx is closing: take it off twd_clock_files, after which its work is
 * not queued again, and wait for the work.
 */
static void twd_clock_file_del(struct twd_ctx *ctx)
{
	if (list_empty(&ctx->clock_node))
		return;
	mutex_lock(&twd_clock_lock);
	list_del_init(&ctx->clock_node);
	mutex_unlock(&twd_clock_lock);
	cancel_work_sync(&ctx->clock_work);
}

/* ---- ioctl() ---- */

union twd_ucmd {
	struct twheel_version		version;
	struct twheel_arm		arm;
	struct twheel_arm_batch		arm_batch;
	struct twheel_cancel		cancel;
	struct twheel_cancel_batch	cancel_batch;
	struct twheel_modify		modify;
	struct twheel_query		query;
	struct twheel_cancel_all	cancel_all;
	struct twheel_ring_setup	ring_setup;
	struct twheel_ring_flush	ring_flush;
};

static long twd_ioc_version(struct twd_ctx *ctx, union twd_ucmd *u)
{
	struct twheel_version *v = &u->version;
	u32 esize = v->want_event_size;

	if (v->api != TWHEEL_API)
		return -EINVAL;
	/* Multiples of 8 keep the records' __aligned_u64 fields aligned. */
	if (esize && (esize < TWHEEL_EVENT_SIZE_VER0 ||
		      esize > TWHEEL_EVENT_SIZE_MAX || !IS_ALIGNED(esize, 8)))
		return -EINVAL;
	if (twd_mutex_lock(ctx))
		return -EINTR;
	/* The ring's records keep the size they were set up with. */
	if (esize && ctx->ring && esize != ctx->event_size) {
		twd_unlock(ctx);
		return -EBUSY;
	}
	if (esize)
		WRITE_ONCE(ctx->event_size, esize);
	v->event_size = ctx->event_size;
	twd_unlock(ctx);
	v->features = TWD_FEATURES;
	v->tick_ns = twheel_tick_ns();
	v->min_period_ns = twheel_tick_ns();
	v->max_timers = READ_ONCE(max_timers);
	v->max_user_timers = READ_ONCE(max_user_timers);
	return 0;
}

static long twd_ioc_arm(struct twd_ctx *ctx, union twd_ucmd *u)
{
	struct twd_now tn;
	long ret;

	twd_now(&tn);
	ret = twd_lock(ctx);
	if (ret)
		return ret;
	ret = twd_arm(ctx, &u->arm, &tn);
	twd_unlock(ctx);
	return ret;
}

/*
 * Copy in and arm one batch entry of @usize bytes. Unlike the ioctl's own
 * argument, an entry with an unknown nonzero tail does not get the
 * kernel's size written back: the entries are input only (the ioctl is
 * _IOW), and the caller may be wrong about where they end.
 */
static int twd_arm_user(struct twd_ctx *ctx, const void __user *uarm,
			u32 usize, const struct twd_now *tn)
{
	struct twheel_arm arm;
	int ret;

	ret = copy_struct_from_user(&arm, sizeof(arm), uarm, usize);
	if (ret)
		return ret;
	if (arm.size != usize)
		return -EINVAL;
	return twd_arm(ctx, &arm, tn);
}

/*
 * What a batch returns: with TWHEEL_BATCH_PROGRESS the entries processed
 * (@done), else those that took effect (@ok); @err if it stopped early,
 * unless TWHEEL_BATCH_PROGRESS and some entries were processed.
 */
static long twd_batch_ret(u32 flags, u32 done, long ok, int err)
{
	if (flags & TWHEEL_BATCH_PROGRESS)
		return done || !err ? done : err;
	return err ?: ok;
}

/*
 * Start a chunk of a batch: zero the status of its entries @first to @end,
 * the status of every entry that succeeds, so that no entry takes effect
 * where that could not be reported; a failed entry, which changes nothing,
 * writes its errno itself.
 */
static int twd_batch_start(s32 __user *status, u32 first, u32 end)
{
	s32 __user *s = status + first;
	u32 i, n = end - first;

	/* Not clear_user(): see twd_arm_chunk_get(). */
	if (!user_write_access_begin(s, n * sizeof(*s)))
		return -EFAULT;
	for (i = 0; i < n; i++)
		unsafe_put_user(0, s + i, out_fault);
	user_write_access_end();
	return 0;

out_fault:
	user_write_access_end();
	return -EFAULT;
}

/*
 * Between two chunks of a batch: stop for a fatal signal (the caller will
 * never see the return value, but the timers of a shared file stay as far
 * as the batch got), and let others run.
 */
static int twd_batch_pause(void)
{
	if (fatal_signal_pending(current))
		return -EINTR;
	cond_resched();
	return 0;
}

/**
 * struct twd_arm_chunk - a chunk of TWHEEL_IOC_ARM_BATCH between its passes
 * @arm:	the entries, copied in
 * @ret:	each entry's result: 0, or the -errno it fails with
 * @deadline:	each checked entry's deadline, host time of its clock
 * @off:	each checked entry's clock minus CLOCK_MONOTONIC
 * @hash:	each checked entry's twd_hash() of its key
 * @found:	the timer each checked entry's key had before the chunk
 * @lead:	for an entry whose key was not @found: the first entry of
 *		the chunk with that key
 * @slot:	the chunk's new keys, by hash: their first entries, open
 *		addressing with linear probing, %TWD_CHUNK_FREE if none
 * @made:	by @lead: the timer the chunk made for that key, or NULL
 * @status:	the chunk's first slot in the user's status array
 * @units:	charges of the user the chunk holds and has not used
 * @armed:	entries that took effect
 * @nobj:	objects left in @obj
 * @obj:	objects allocated in bulk for the chunk's new keys
 * @nstaged:	timers in @staged
 * @staged:	timers made by the chunk, not yet on the wheel
 * @expires:	their deadlines
 * @entry:	their entries
 * @add_ret:	twheel_add_bulk()'s results
 */
struct twd_arm_chunk {
	struct twheel_arm	arm[TWD_BATCH_CHUNK];
	int			ret[TWD_BATCH_CHUNK];
	u64			deadline[TWD_BATCH_CHUNK];
	s64			off[TWD_BATCH_CHUNK];
	u32			hash[TWD_BATCH_CHUNK];
	struct twd_timer	*found[TWD_BATCH_CHUNK];
	u8			lead[TWD_BATCH_CHUNK];
	u8			slot[TWD_CHUNK_SLOTS];
	struct twd_timer	*made[TWD_BATCH_CHUNK];
	s32 __user		*status;
	unsigned int		units;
	unsigned int		armed;
	unsigned int		nobj;
	void			*obj[TWD_BATCH_CHUNK];
	unsigned int		nstaged;
	struct twheel_timer	*staged[TWD_BATCH_CHUNK];
	ktime_t			expires[TWD_BATCH_CHUNK];
	u8			entry[TWD_BATCH_CHUNK];
	int			add_ret[TWD_BATCH_CHUNK];
};

/*
 * Copy in @n entries of our size from @uarm, 8-byte aligned, a word at a
 * time in one user access section; false if one faults. Not
 * copy_from_user(): with ERMS it is a byte-wise string instruction (rep
 * movsb), which a chunk of a few KiB of words does not need and which
 * costs most where instructions are emulated.
 */
static bool twd_arm_chunk_get(struct twd_arm_chunk *c, const u8 __user *uarm,
			      unsigned int n)
{
	const u64 __user *src = (const u64 __user *)uarm;
	size_t i, words = n * sizeof(c->arm[0]) / sizeof(u64);
	u64 *dst = (u64 *)c->arm;

	BUILD_BUG_ON(sizeof(c->arm[0]) % sizeof(u64));
	if (!IS_ALIGNED((unsigned long)uarm, sizeof(u64)) ||
	    !user_read_access_begin(src, words * sizeof(u64)))
		return false;
	for (i = 0; i < words; i++)
		unsafe_get_user(dst[i], src + i, out_fault);
	user_read_access_end();
	return true;

out_fault:
	user_read_access_end();
	return false;
}

/*
 * Copy in @n entries of @usize bytes. An entry with an unknown nonzero
 * tail does not get the kernel's size written back, unlike the ioctl's own
 * argument: the entries are input only (the ioctl is _IOW), and the caller
 * may be wrong about where they end. One copy for entries of our size; one
 * per entry for another size or alignment, or to find the entries that
 * fault.
 */
static void twd_arm_chunk_load(struct twd_arm_chunk *c,
			       const u8 __user *uarm, u32 usize,
			       unsigned int n)
{
	unsigned int i;

	if (usize == sizeof(c->arm[0]) && twd_arm_chunk_get(c, uarm, n)) {
		for (i = 0; i < n; i++)
			c->ret[i] = c->arm[i].size != usize ? -EINVAL : 0;
		return;
	}
	for (i = 0; i < n; i++) {
		c->ret[i] = copy_struct_from_user(&c->arm[i], sizeof(c->arm[i]),
						  uarm + (size_t)i * usize,
						  usize);
		if (!c->ret[i] && c->arm[i].size != usize)
			c->ret[i] = -EINVAL;
	}
}

/*
 * The first pass: check the entries, hash and look up their keys, and
 * link the entries of each key the table lacks to the first of them.
 * Returns the number of such keys: the timers the chunk may make.
 */
static unsigned int twd_arm_chunk_check(struct twd_ctx *ctx,
					struct twd_arm_chunk *c,
					unsigned int n,
					const struct twd_now *tn)
{
	unsigned int i, j, k, nkeys = 0;

	lockdep_assert_held(&ctx->mutex);
	BUILD_BUG_ON(!is_power_of_2(TWD_CHUNK_SLOTS));

	memset(c->slot, TWD_CHUNK_FREE, sizeof(c->slot));
	for (i = 0; i < n; i++) {
		const struct twheel_arm *arm = &c->arm[i];
		u32 tflags = twd_clock_flags(arm->flags);
		u64 key = arm->key;

		/* As twd_arm() does it. */
		if (!c->ret[i])
			c->ret[i] = twd_check_arm(arm);
		if (c->ret[i])
			continue;
		c->off[i] = 0;
		if (tflags & TWD_CLOCKS) {
			twd_clock_file_add(ctx);
			c->off[i] = twd_clock_offset(tflags);
		}
		c->ret[i] = twd_deadline(arm->expiry_ns,
					 arm->flags & TWHEEL_ARM_ABS, tflags, tn,
					 c->off[i], &c->deadline[i]);
		if (c->ret[i])
			continue;
		c->hash[i] = twd_hash(ctx, key);
		c->found[i] = twd_lookup_hashed(ctx, key, c->hash[i]);
		if (c->found[i])
			continue;
		/* At most n of 2n slots taken: a free one ends the probe. */
		for (k = c->hash[i]; ; k++) {
			j = c->slot[k & (TWD_CHUNK_SLOTS - 1)];
			if (j == TWD_CHUNK_FREE) {
				c->slot[k & (TWD_CHUNK_SLOTS - 1)] = i;
				j = i;
				nkeys++;
				break;
			}
			if (c->arm[j].key == key)
				break;
		}
		c->lead[i] = j;
		c->made[i] = NULL;
	}
	return nkeys;
}

/*
 * File the chunk's new timers on the wheel, in the order of their
 * entries. twheel_add_bulk() cannot fail for them (new timers, deadlines
 * in range); if it did, the entry is undone and reports it.
 */
static void twd_arm_chunk_flush(struct twd_ctx *ctx, struct twd_arm_chunk *c)
{
	unsigned int i, n = c->nstaged;

	lockdep_assert_held(&ctx->mutex);

	if (!n)
		return;
	c->nstaged = 0;
	if (twheel_add_bulk(c->staged, c->expires, n, TWHEEL_ABS,
			    c->add_ret) == n)
		return;
	for (i = 0; i < n; i++) {
		struct twd_timer *t;
		unsigned int e;

		if (!WARN_ON_ONCE(c->add_ret[i]))
			continue;
		t = container_of(c->staged[i], struct twd_timer, wt);
		e = c->entry[i];
		c->made[c->lead[e]] = NULL;
		twd_hash_remove(ctx, t);
		twd_timer_free(ctx, t);
		ctx->armed--;
		c->armed--;
		/* Best effort: the slot was writable when it was zeroed. */
		put_user(c->add_ret[i], c->status + e);
	}
}

/* Arm a new timer for entry @i of the chunk; staged, not yet filed. */
static int twd_arm_chunk_new(struct twd_ctx *ctx, struct twd_arm_chunk *c,
			     unsigned int i)
{
	struct twd_timer *t;

	if (ctx->ntimers >= READ_ONCE(max_timers))
		return -ENOSPC;
	if (c->units)
		c->units--;
	else if (!twd_user_charge(ctx->user))
		return -ENOSPC;
	/* The bulk objects are narrow: not for a timer of another clock. */
	if (c->nobj && !(c->arm[i].flags & TWD_ARM_CLOCKS))
		t = c->obj[--c->nobj];
	else
		t = twd_timer_alloc(twd_clock_flags(c->arm[i].flags));
	if (!t) {
		c->units++;
		return -ENOMEM;
	}
	c->expires[c->nstaged] = twd_timer_init(ctx, t, &c->arm[i],
						c->deadline[i], c->off[i]);
	twd_hash_link(ctx, t, c->hash[i]);
	c->made[c->lead[i]] = t;
	c->staged[c->nstaged] = &t->wt;
	c->entry[c->nstaged] = i;
	c->nstaged++;
	ctx->armed++;
	return 0;
}

/* The second pass, for entry @i: as twd_arm() would do it. */
static int twd_arm_chunk_entry(struct twd_ctx *ctx, struct twd_arm_chunk *c,
			       unsigned int i)
{
	struct twd_timer *t, *old;
	unsigned int j;
	int ret;

	if (c->ret[i])
		return c->ret[i];
	t = c->found[i] ?: c->made[c->lead[i]];
	if (!t)
		return twd_arm_chunk_new(ctx, c, i);
	if (!(c->arm[i].flags & TWHEEL_ARM_REPLACE))
		return -EEXIST;
	/* Timers armed before this one go on the wheel before it. */
	twd_arm_chunk_flush(ctx, c);
	old = t;
	ret = twd_arm_replace(ctx, &t, &c->arm[i], c->deadline[i], c->off[i]);
	if (t == old)
		return ret;
	/* It moved to a wide object: later entries of its key follow it. */
	if (!c->found[i]) {
		c->made[c->lead[i]] = t;
		return ret;
	}
	for (j = i + 1; j < TWD_BATCH_CHUNK; j++)
		if (c->found[j] == old)
			c->found[j] = t;
	return ret;
}

/*
 * Arm the @n entries at @uarm, chunk @first of the batch, whose status
 * slots start at @status and are zeroed: see "Arming in batches". Returns
 * the number of entries processed: @n, or fewer if a status slot faulted
 * (the entry there changed nothing).
 */
static unsigned int twd_arm_chunk(struct twd_ctx *ctx, struct twd_arm_chunk *c,
				  const u8 __user *uarm, u32 usize,
				  s32 __user *status, unsigned int n,
				  const struct twd_now *tn)
{
	unsigned int i, want, room, max = READ_ONCE(max_timers);
	int ret;

	lockdep_assert_held(&ctx->mutex);

	twd_arm_chunk_load(c, uarm, usize, n);
	want = twd_arm_chunk_check(ctx, c, n, tn);
	room = ctx->ntimers < max ? max - ctx->ntimers : 0;
	c->status = status;
	c->armed = 0;
	c->nstaged = 0;
	c->units = twd_user_charge_n(ctx->user, min(want, room));
	c->nobj = 0;
	if (c->units &&
	    kmem_cache_alloc_bulk(twd_cache, GFP_KERNEL_ACCOUNT, c->units,
				  c->obj))
		c->nobj = c->units;
	for (i = 0; i < n; i++) {
		ret = twd_arm_chunk_entry(ctx, c, i);
		if (!ret)
			c->armed++;
		else if (put_user(ret, status + i))
			break;	/* stop before the next entry */
	}
	twd_arm_chunk_flush(ctx, c);
	if (c->units)
		atomic_long_sub(c->units, &ctx->user->timers);
	if (c->nobj)
		kmem_cache_free_bulk(twd_cache, c->nobj, c->obj);
	return i;
}

/*
 * Arm @n entries of a batch one by one, as twd_arm_chunk() would, for
 * lack of its buffer; counts the timers armed in @armed.
 */
static unsigned int twd_arm_entries(struct twd_ctx *ctx, const u8 __user *uarm,
				    u32 usize, s32 __user *status,
				    unsigned int n, const struct twd_now *tn,
				    long *armed)
{
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = twd_arm_user(ctx, uarm + (size_t)i * usize, usize, tn);
		if (!ret)
			(*armed)++;
		else if (put_user(ret, status + i))
			break;	/* stop before the next entry */
	}
	return i;
}

static long twd_ioc_arm_batch(struct twd_ctx *ctx, union twd_ucmd *u)
{
	const struct twheel_arm_batch *b = &u->arm_batch;
	const u8 __user *entries = u64_to_user_ptr(b->entries);
	s32 __user *status = u64_to_user_ptr(b->status);
	struct twd_arm_chunk *c;
	u32 done = 0, n, got, max;
	struct twd_now tn;
	long armed = 0;
	int err = 0;

	if (b->flags & ~TWHEEL_BATCH_PROGRESS)
		return -EINVAL;
	if (b->entry_size < TWHEEL_ARM_SIZE_VER0)
		return -EINVAL;
	if (b->entry_size > PAGE_SIZE)
		return -E2BIG;

	twd_now(&tn);
	err = twd_lock(ctx);
	if (err)
		return err;
	/* Without it (no memory), entries go one by one: same results. */
	if (!ctx->arm_chunk)
		ctx->arm_chunk = kmalloc(sizeof(*c), GFP_KERNEL_ACCOUNT |
					 __GFP_NOWARN);
	c = ctx->arm_chunk;
	/* Room for the whole batch, as far as the file may hold it. */
	max = READ_ONCE(max_timers);
	twd_hash_reserve(ctx, (u64)ctx->ntimers +
			 min(b->count, max > ctx->ntimers ?
			     max - ctx->ntimers : 0));
	while (done < b->count && !err) {
		n = min_t(u32, b->count - done, TWD_BATCH_CHUNK);
		err = twd_batch_start(status, done, done + n);
		if (err)
			break;
		if (c) {
			got = twd_arm_chunk(ctx, c, entries + (size_t)done *
					    b->entry_size, b->entry_size,
					    status + done, n, &tn);
			armed += c->armed;
		} else {
			got = twd_arm_entries(ctx, entries + (size_t)done *
					      b->entry_size, b->entry_size,
					      status + done, n, &tn, &armed);
		}
		done += got;
		/* A status slot faulted: stop before its entry. */
		err = got < n ? -EFAULT : twd_batch_pause();
	}
	/* Entries that failed leave no table larger than its timers need. */
	twd_hash_trim(ctx);
	twd_unlock(ctx);
	return twd_batch_ret(b->flags, done, armed, err);
}

static long twd_ioc_cancel(struct twd_ctx *ctx, union twd_ucmd *u)
{
	long ret;

	if (u->cancel.flags)
		return -EINVAL;
	ret = twd_lock(ctx);
	if (ret)
		return ret;
	ret = twd_cancel(ctx, u->cancel.key);
	twd_unlock(ctx);
	return ret;
}

static long twd_ioc_cancel_batch(struct twd_ctx *ctx, union twd_ucmd *u)
{
	const struct twheel_cancel_batch *b = &u->cancel_batch;
	const u64 __user *keys = u64_to_user_ptr(b->keys);
	s32 __user *status = u64_to_user_ptr(b->status);
	struct twd_timer *ts[TWD_FREE_CHUNK];
	unsigned int nts = 0;
	u32 done = 0, end;
	long cancelled = 0;
	int err = 0;

	if (b->flags & ~TWHEEL_BATCH_PROGRESS || b->__reserved)
		return -EINVAL;

	err = twd_lock(ctx);
	if (err)
		return err;
	while (done < b->count && !err) {
		end = done + min_t(u32, b->count - done, TWD_BATCH_CHUNK);
		err = twd_batch_start(status, done, end);
		for (; !err && done < end; done++) {
			struct twd_timer *t = NULL;
			u64 key;
			int ret;

			ret = get_user(key, keys + done);
			if (!ret) {
				t = twd_unhash_key(ctx, key);
				ret = t ? 0 : -ENOENT;
			}
			if (t) {
				twd_kill_later(ctx, ts, &nts, t);
				cancelled++;
			} else if (put_user(ret, status + done)) {
				err = -EFAULT;	/* stop before this entry */
				break;
			}
		}
		twd_timers_kill(ctx, ts, nts);
		nts = 0;
		if (!err)
			err = twd_batch_pause();
	}
	twd_unlock(ctx);
	return twd_batch_ret(b->flags, done, cancelled, err);
}

static long twd_ioc_modify(struct twd_ctx *ctx, union twd_ucmd *u)
{
	const struct twheel_modify *mod = &u->modify;
	u32 tflags = twd_clock_flags(mod->flags);
	struct twd_now tn;
	u64 deadline;
	long ret;

	if (mod->flags & ~(TWHEEL_ARM_ABS | TWHEEL_MODIFY_PERIOD |
			   TWD_ARM_CLOCKS))
		return -EINVAL;
	if (mod->__reserved)
		return -EINVAL;
	if (mod->flags & TWHEEL_MODIFY_PERIOD)
		ret = twd_check_period(mod->period_ns, mod->count);
	else
		ret = mod->period_ns || mod->count ? -EINVAL : 0;
	if (ret)
		return ret;
	ret = twd_check_clock(mod->flags);
	if (ret)
		return ret;
	/* In the timer's clock: twd_modify() checks that it is this one. */
	twd_now(&tn);
	ret = twd_deadline(mod->expiry_ns, mod->flags & TWHEEL_ARM_ABS, tflags,
			   &tn, twd_clock_offset(tflags), &deadline);
	if (ret)
		return ret;

	ret = twd_lock(ctx);
	if (ret)
		return ret;
	ret = twd_modify(ctx, mod, deadline);
	twd_unlock(ctx);
	return ret;
}

static long twd_ioc_query(struct twd_ctx *ctx, union twd_ucmd *u)
{
	struct twheel_query *q = &u->query;
	struct twd_timer *t;
	struct twd_tns tns;
	long ret = 0;

	if (q->flags || q->__reserved)
		return -EINVAL;
	twd_timens_offsets(&tns);
	ret = twd_lock(ctx);
	if (ret)
		return ret;
	t = twd_lookup(ctx, q->key);
	if (t) {
		spin_lock_irq(&ctx->wqh.lock);
		twd_query(ctx, t, q, &tns);
		spin_unlock_irq(&ctx->wqh.lock);
	} else {
		ret = -ENOENT;
	}
	twd_unlock(ctx);
	return ret;
}

static long twd_ioc_cancel_all(struct twd_ctx *ctx, union twd_ucmd *u)
{
	long ret;

	if (u->cancel_all.flags)
		return -EINVAL;
	ret = twd_lock(ctx);
	if (ret)
		return ret;
	ret = twd_cancel_all(ctx);
	twd_unlock(ctx);
	return ret;
}

static void twd_ring_free(struct twd_ring *ring)
{
	unsigned int i;

	vunmap(ring->hdr);
	for (i = 0; i < ring->npages; i++)
		__free_page(ring->pages[i]);
	kvfree(ring->pages);
	kfree(ring);
}

/*
 * A ring of @entries records of @esize bytes, its pages allocated one by
 * one (no high-order allocation for a large ring) and charged to the
 * caller's memory cgroup, zeroed, mapped for the kernel with vmap().
 */
static struct twd_ring *twd_ring_alloc(u32 entries, u32 esize)
{
	size_t bytes = TWD_RING_EVENTS + (size_t)entries * esize;
	struct twd_ring *ring;
	unsigned int i;

	ring = kzalloc(sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return NULL;
	ring->npages = DIV_ROUND_UP(bytes, PAGE_SIZE);
	ring->pages = kvcalloc(ring->npages, sizeof(*ring->pages),
			       GFP_KERNEL_ACCOUNT);
	if (!ring->pages)
		goto out_free_ring;
	for (i = 0; i < ring->npages; i++) {
		ring->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!ring->pages[i])
			goto out_free_pages;
	}
	ring->hdr = vmap(ring->pages, ring->npages, VM_MAP, PAGE_KERNEL);
	if (!ring->hdr)
		goto out_free_pages;
	ring->mask = entries - 1;
	ring->esize = esize;
	ring->hdr->mask = entries - 1;
	ring->hdr->entries = entries;
	return ring;

out_free_pages:
	while (i--)
		__free_page(ring->pages[i]);
	kvfree(ring->pages);
out_free_ring:
	kfree(ring);
	return NULL;
}

/* Fill in what the process needs to map and reap @ring. */
static void twd_ring_describe(const struct twd_ring *ring,
			      struct twheel_ring_setup *rs)
{
	rs->entries = ring->mask + 1;
	rs->event_size = ring->esize;
	rs->mmap_size = (u64)ring->npages << PAGE_SHIFT;
	memset(&rs->off, 0, sizeof(rs->off));
	rs->off.head = offsetof(struct twd_ring_hdr, head);
	rs->off.tail = offsetof(struct twd_ring_hdr, tail);
	rs->off.mask = offsetof(struct twd_ring_hdr, mask);
	rs->off.entries = offsetof(struct twd_ring_hdr, entries);
	rs->off.flags = offsetof(struct twd_ring_hdr, flags);
	rs->off.overflow = offsetof(struct twd_ring_hdr, overflow);
	rs->off.events = TWD_RING_EVENTS;
}

/* TWHEEL_RING_ATTACH: describe the ring the file has. */
static long twd_ring_attach(struct twd_ctx *ctx, struct twheel_ring_setup *rs)
{
	/* Pairs with the smp_store_release() of setup; freed at release. */
	const struct twd_ring *ring = smp_load_acquire(&ctx->ring);

	if (rs->entries || !ring)
		return -EINVAL;
	twd_ring_describe(ring, rs);
	return 0;
}

static long twd_ioc_ring_setup(struct twd_ctx *ctx, union twd_ucmd *u)
{
	struct twheel_ring_setup *rs = &u->ring_setup;
	struct twd_ring *ring;
	u32 esize;

	if (rs->flags & ~TWHEEL_RING_ATTACH)
		return -EINVAL;
	if (rs->flags & TWHEEL_RING_ATTACH)
		return twd_ring_attach(ctx, rs);
	if (!is_power_of_2(rs->entries) || rs->entries > TWHEEL_RING_ENTRIES_MAX)
		return -EINVAL;

	if (twd_mutex_lock(ctx))
		return -EINTR;
	esize = ctx->event_size;
	if (ctx->ring) {
		twd_unlock(ctx);
		return -EBUSY;
	}
	if ((u64)rs->entries * esize > TWHEEL_RING_BYTES_MAX) {
		twd_unlock(ctx);
		return -EINVAL;
	}
	ring = twd_ring_alloc(rs->entries, esize);
	if (!ring) {
		twd_unlock(ctx);
		return -ENOMEM;
	}
	twd_timens_offsets(&ring->tns);
	spin_lock_irq(&ctx->wqh.lock);
	/* Complete before seen: twd_mmap() reads it without our locks. */
	smp_store_release(&ctx->ring, ring);
	/*
	 * Events waiting for read() move in (below); those the empty ring has
	 * no room for are its backlog, flagged and counted as a fire's.
	 */
	if (ctx->nqueued > rs->entries)
		twd_ring_overflow(ctx, ctx->nqueued - rs->entries);
	spin_unlock_irq(&ctx->wqh.lock);
	twd_ring_fill_all(ctx);
	twd_unlock(ctx);
	/* Blocked readers wake to fail. */
	wake_up_poll(&ctx->wqh, EPOLLIN | EPOLLRDNORM);
	twd_ring_describe(ring, rs);
	return 0;
}

static long twd_ioc_ring_flush(struct twd_ctx *ctx, union twd_ucmd *u)
{
	long ret;

	if (u->ring_flush.flags)
		return -EINVAL;
	if (twd_mutex_lock(ctx))
		return -EINTR;
	if (ctx->ring) {
		ret = twd_ring_fill_all(ctx);
		twd_reap_done(ctx);
	} else {
		ret = -EINVAL;
	}
	twd_unlock(ctx);
	return ret;
}

/**
 * struct twd_ioctl_op - an ioctl: its handler and argument struct
 * @cmd:	the ioctl number; its size bits are not checked
 * @size:	the kernel's sizeof of the argument
 * @size_ver0:	the argument's first released size, the smallest accepted
 * @copy_out:	copy the argument back to the user on success
 * @fn:		the handler, given the argument copied in
 */
struct twd_ioctl_op {
	unsigned int	cmd;
	unsigned int	size;
	unsigned int	size_ver0;
	bool		copy_out;
	long		(*fn)(struct twd_ctx *ctx, union twd_ucmd *u);
};

#define TWD_IOCTL_OP(_cmd, _fn, _struct, _ver0, _out)		\
	{							\
		.cmd = _cmd,					\
		.size = sizeof(struct _struct),			\
		.size_ver0 = _ver0,				\
		.copy_out = _out,				\
		.fn = _fn,					\
	}

static const struct twd_ioctl_op twd_ioctl_ops[] = {
	TWD_IOCTL_OP(TWHEEL_IOC_VERSION, twd_ioc_version, twheel_version,
		     TWHEEL_VERSION_SIZE_VER0, true),
	TWD_IOCTL_OP(TWHEEL_IOC_ARM, twd_ioc_arm, twheel_arm,
		     TWHEEL_ARM_SIZE_VER0, false),
	TWD_IOCTL_OP(TWHEEL_IOC_ARM_BATCH, twd_ioc_arm_batch, twheel_arm_batch,
		     TWHEEL_ARM_BATCH_SIZE_VER0, false),
	TWD_IOCTL_OP(TWHEEL_IOC_CANCEL, twd_ioc_cancel, twheel_cancel,
		     TWHEEL_CANCEL_SIZE_VER0, false),
	TWD_IOCTL_OP(TWHEEL_IOC_CANCEL_BATCH, twd_ioc_cancel_batch,
		     twheel_cancel_batch, TWHEEL_CANCEL_BATCH_SIZE_VER0, false),
	TWD_IOCTL_OP(TWHEEL_IOC_MODIFY, twd_ioc_modify, twheel_modify,
		     TWHEEL_MODIFY_SIZE_VER0, false),
	TWD_IOCTL_OP(TWHEEL_IOC_QUERY, twd_ioc_query, twheel_query,
		     TWHEEL_QUERY_SIZE_VER0, true),
	TWD_IOCTL_OP(TWHEEL_IOC_CANCEL_ALL, twd_ioc_cancel_all,
		     twheel_cancel_all, TWHEEL_CANCEL_ALL_SIZE_VER0, false),
	TWD_IOCTL_OP(TWHEEL_IOC_RING_SETUP, twd_ioc_ring_setup,
		     twheel_ring_setup, TWHEEL_RING_SETUP_SIZE_VER0, true),
	TWD_IOCTL_OP(TWHEEL_IOC_RING_FLUSH, twd_ioc_ring_flush,
		     twheel_ring_flush, TWHEEL_RING_FLUSH_SIZE_VER0, false),
};

/* The struct's own size field, not the ioctl number, gives its size. */
static const struct twd_ioctl_op *twd_ioctl_op(unsigned int cmd)
{
	const unsigned int mask = ~(_IOC_SIZEMASK << _IOC_SIZESHIFT);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(twd_ioctl_ops); i++)
		if (!((cmd ^ twd_ioctl_ops[i].cmd) & mask))
			return &twd_ioctl_ops[i];
	return NULL;
}

static long twd_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct twd_ctx *ctx = file->private_data;
	void __user *uarg = (void __user *)arg;
	const struct twd_ioctl_op *op;
	union twd_ucmd u;
	u32 usize;
	long ret;

	op = twd_ioctl_op(cmd);
	if (!op)
		return -ENOTTY;

	if (get_user(usize, (u32 __user *)uarg))
		return -EFAULT;
	if (usize < op->size_ver0)
		return -EINVAL;
	ret = usize > PAGE_SIZE ? -E2BIG :
	      copy_struct_from_user(&u, op->size, uarg, usize);
	/* As sched_setattr(): tell the caller the size the kernel knows. */
	if (ret == -E2BIG && put_user(op->size, (u32 __user *)uarg))
		return -EFAULT;
	if (ret)
		return ret;

	/*
	 * An argument the result cannot be copied back to fails now, before
	 * the op changes anything (a ring set up, an event size) that the
	 * caller would not hear of: write back what was read.
	 */
	if (op->copy_out && copy_to_user(uarg, &u, min_t(u32, usize, op->size)))
		return -EFAULT;
	ret = op->fn(ctx, &u);
	if (ret >= 0 && op->copy_out &&
	    copy_to_user(uarg, &u, min_t(u32, usize, op->size)))
		return -EFAULT;
	return ret;
}

/* ---- read() and poll() ---- */

/**
 * struct twd_chunk - events taken off the ready list, to be copied out
 * @ev:		the events
 * @timer:	their timers
 */
struct twd_chunk {
	struct twheel_event	ev[TWD_READ_CHUNK];
	struct twd_timer	*timer[TWD_READ_CHUNK];
};

/*
 * Take up to @max events off the ready list into @c, their times as the
 * namespace @tns sees them.
 */
static unsigned int twd_take(struct twd_ctx *ctx, struct twd_chunk *c,
			     unsigned int max, const struct twd_tns *tns)
{
	unsigned int n = 0;

	lockdep_assert_held(&ctx->mutex);

	spin_lock_irq(&ctx->wqh.lock);
	while (n < max && !list_empty(&ctx->ready)) {
		struct twd_timer *t = list_first_entry(&ctx->ready,
						       struct twd_timer, ready);

		list_del_init(&t->ready);
		twd_event_fill(&c->ev[n], t, tns);
		c->timer[n++] = t;
	}
	ctx->nqueued -= n;
	ctx->delivered += n;
	spin_unlock_irq(&ctx->wqh.lock);
	return n;
}

/*
 * Copying @c out failed: put its events back, in front, losing none, and
 * wake the readers that found none while they were out.
 */
static void twd_untake(struct twd_ctx *ctx, struct twd_chunk *c,
		       unsigned int n)
{
	lockdep_assert_held(&ctx->mutex);

	spin_lock_irq(&ctx->wqh.lock);
	ctx->delivered -= n;
	while (n--) {
		struct twd_timer *t = c->timer[n];

		if (list_empty(&t->ready)) {
			list_add(&t->ready, &ctx->ready);
			ctx->nqueued++;
		} else {
			/* It fired again meanwhile: fold the old event in. */
			t->overruns = min_t(u64, (u64)t->overruns +
					    c->ev[n].overruns + 1, U32_MAX);
		}
	}
	twd_wake_locked(ctx);
	spin_unlock_irq(&ctx->wqh.lock);
}

/*
 * The events of @c are read: free the timers they finished, in bulk; their
 * slots in @c->timer are reused for the list.
 */
static void twd_reap(struct twd_ctx *ctx, struct twd_chunk *c, unsigned int n)
{
	unsigned int i, nfree = 0;

	lockdep_assert_held(&ctx->mutex);

	for (i = 0; i < n; i++) {
		if (!(c->ev[i].flags & TWHEEL_EVENT_LAST))
			continue;
		twd_hash_remove(ctx, c->timer[i]);
		c->timer[nfree++] = c->timer[i];
	}
	twd_timers_free(ctx, c->timer, nfree);
}

/* Copy @n events of @c to @buf as records of @esize bytes. */
static int twd_copy_events(struct twd_chunk *c, unsigned int n,
			   char __user *buf, size_t esize)
{
	size_t ksize = sizeof(c->ev[0]);
	unsigned int i;

	if (esize == ksize)
		return copy_to_user(buf, c->ev, n * ksize) ? -EFAULT : 0;
	/* Records of another size: the caller's fields, zero beyond ours. */
	for (i = 0; i < n; i++, buf += esize) {
		if (copy_to_user(buf, &c->ev[i], min(esize, ksize)))
			return -EFAULT;
		if (esize > ksize && clear_user(buf + ksize, esize - ksize))
			return -EFAULT;
	}
	return 0;
}

/*
 * Copy events to @buf, as many records of the file's size as @count bytes
 * hold; returns bytes copied, -EINVAL if not one fits, -EBUSY if the file
 * has a ring, -EFAULT, or -ERESTARTSYS if a signal came while it waited
 * for ctx->mutex with nothing copied.
 *
 * ctx->mutex is held across the copies, but never while a page fault
 * waits (for I/O, for userfaultfd, for mmap_lock): every ioctl of the file
 * would wait with it. The copies run with page faults disabled; one that
 * needs a fault puts its events back in front, drops the mutex, faults the
 * buffer in, and takes the events again, at most as many as now fit.
 */
static ssize_t twd_read_events(struct twd_ctx *ctx, char __user *buf,
			       size_t count)
{
	size_t esize, max, len, left;
	struct twd_tns tns;
	struct twd_chunk *c;
	ssize_t done = 0;
	unsigned int n;
	int ret;

	twd_timens_offsets(&tns);
	/* As the wait: SA_RESTART restarts the read, -EINTR would not. */
	if (mutex_lock_interruptible(&ctx->mutex))
		return -ERESTARTSYS;
again:
	/* Set up since twd_read() checked, or since the mutex was dropped. */
	if (ctx->ring) {
		ret = -EBUSY;
		goto out_unlock;
	}
	esize = ctx->event_size;
	max = (count - done) / esize;
	ret = -EINVAL;
	if (!max)
		goto out_unlock;
	c = ctx->chunk;
	if (!c) {
		c = kmalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
		ret = -ENOMEM;
		if (!c)
			goto out_unlock;
		ctx->chunk = c;
	}
	ret = 0;
	while (max) {
		n = twd_take(ctx, c, min_t(size_t, max, TWD_READ_CHUNK), &tns);
		if (!n)
			break;
		pagefault_disable();
		ret = twd_copy_events(c, n, buf + done, esize);
		pagefault_enable();
		if (ret) {
			twd_untake(ctx, c, n);
			len = n * esize;
			twd_unlock(ctx);
			left = fault_in_writeable(buf + done, len);
			if (len - left < esize)
				return done ?: -EFAULT;
			if (mutex_lock_interruptible(&ctx->mutex))
				return done ?: -ERESTARTSYS;
			/* Only what was faulted in; then a short read. */
			count = done + len - left;
			if (esize != ctx->event_size && done)
				goto out_unlock;
			goto again;
		}
		twd_reap(ctx, c, n);
		done += n * esize;
		max -= n;
		cond_resched();
	}
out_unlock:
	twd_unlock(ctx);
	return done ?: ret;
}

/* An event to read, or a ring, which makes read() fail? */
static bool twd_ready(struct twd_ctx *ctx)
{
	lockdep_assert_held(&ctx->wqh.lock);

	return !list_empty(&ctx->ready) || ctx->ring;
}

/* Wait for an event, unless @nonblock; 0 when there may be one. */
static int twd_wait_ready(struct twd_ctx *ctx, bool nonblock)
{
	int ret = 0;

	spin_lock_irq(&ctx->wqh.lock);
	if (nonblock && !twd_ready(ctx))
		ret = -EAGAIN;
	else
		ret = wait_event_interruptible_locked_irq(ctx->wqh,
							  twd_ready(ctx));
	spin_unlock_irq(&ctx->wqh.lock);
	return ret;
}

static ssize_t twd_read(struct file *file, char __user *buf, size_t count,
			loff_t *ppos)
{
	struct twd_ctx *ctx = file->private_data;
	ssize_t ret;

	/* Unlocked: both are checked again under the mutex. */
	if (READ_ONCE(ctx->ring))
		return -EBUSY;
	if (count < READ_ONCE(ctx->event_size))
		return -EINVAL;
	/* Another reader may take the events between the wait and the copy. */
	do {
		ret = twd_wait_ready(ctx, file->f_flags & O_NONBLOCK);
		if (ret)
			return ret;
		ret = twd_read_events(ctx, buf, count);
	} while (!ret);
	return ret;
}

static __poll_t twd_poll(struct file *file, poll_table *wait)
{
	struct twd_ctx *ctx = file->private_data;
	__poll_t events = 0;

	poll_wait(file, &ctx->wqh, wait);
	/* With a ring, the backlog moves in, as far as the process made room. */
	if (READ_ONCE(ctx->ring))
		twd_ring_fill_all(ctx);
	spin_lock_irq(&ctx->wqh.lock);
	if (!list_empty(&ctx->ready) ||
	    (ctx->ring && twd_ring_nonempty(ctx->ring)))
		events = EPOLLIN | EPOLLRDNORM;
	spin_unlock_irq(&ctx->wqh.lock);
	return events;
}

/*
 * mmap() of the event ring: shared, within the ring's pages. The mapping
 * holds the file and its own references to the pages, so the ring outlives
 * it, and it outlives nothing: the ring is freed at the last close, which
 * comes after the last unmap.
 */
static int twd_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct twd_ctx *ctx = file->private_data;
	struct twd_ring *ring;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	/*
	 * Not under ctx->mutex: mmap() holds mmap_lock, which the ioctls'
	 * user copies take inside ctx->mutex. The ring is complete when
	 * published (pairs with the release in twd_ioc_ring_setup()) and
	 * never changes until the last close, after the last unmap.
	 */
	ring = smp_load_acquire(&ctx->ring);
	if (!ring)
		return -ENODEV;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return vm_map_pages(vma, ring->pages, ring->npages);
}

/* ---- open(), release(), fdinfo ---- */

static int twd_open(struct inode *inode, struct file *file)
{
	struct twd_ctx *ctx;
	int ret = -ENOMEM;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	ctx->hash_bits = TWD_HASH_MIN_BITS;
	ctx->event_size = TWHEEL_EVENT_SIZE_VER0;
	ctx->buckets = kvcalloc(BIT(ctx->hash_bits), sizeof(*ctx->buckets),
				GFP_KERNEL_ACCOUNT);
	if (!ctx->buckets)
		goto out_free_ctx;
	ctx->user = twd_user_get(current_uid());
	if (!ctx->user)
		goto out_free_buckets;
	mutex_init(&ctx->mutex);
	init_waitqueue_head(&ctx->wqh);
	INIT_LIST_HEAD(&ctx->ready);
	INIT_LIST_HEAD(&ctx->done);
	INIT_LIST_HEAD(&ctx->clock_node);
	INIT_WORK(&ctx->clock_work, twd_clock_set_file);
	get_random_bytes(&ctx->hash_key, sizeof(ctx->hash_key));
	file->private_data = ctx;
	return stream_open(inode, file);

out_free_buckets:
	kvfree(ctx->buckets);
out_free_ctx:
	kfree(ctx);
	return ret;
}

static int twd_release(struct inode *inode, struct file *file)
{
	struct twd_ctx *ctx = file->private_data;

	twd_clock_file_del(ctx);
	mutex_lock(&ctx->mutex);
	twd_cancel_all(ctx);
	mutex_unlock(&ctx->mutex);
	WARN_ON_ONCE(!list_empty(&ctx->ready));
	WARN_ON_ONCE(!list_empty(&ctx->done));
	if (ctx->ring)
		twd_ring_free(ctx->ring);
	kfree(ctx->chunk);
	kfree(ctx->arm_chunk);
	twd_user_put(ctx->user);
	mutex_destroy(&ctx->mutex);
	kvfree(ctx->buckets);
	kfree(ctx);
	return 0;
}

static void twd_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct twd_ctx *ctx = file->private_data;
	u64 armed, cancelled, fired, overruns, delivered, ring_overflow = 0;
	unsigned int ntimers, nqueued, event_size, ring_entries = 0;
	size_t table_bytes, ring_bytes = 0;

	/* A reader killed while an ioctl holds the mutex long shows nothing. */
	if (twd_mutex_lock(ctx))
		return;
	ntimers = ctx->ntimers;
	table_bytes = BIT(ctx->hash_bits) * sizeof(*ctx->buckets);
	if (ctx->ring)
		ring_bytes = (size_t)ctx->ring->npages << PAGE_SHIFT;
	event_size = ctx->event_size;
	armed = ctx->armed;
	cancelled = ctx->cancelled;
	spin_lock_irq(&ctx->wqh.lock);
	nqueued = ctx->nqueued;
	fired = ctx->fired;
	overruns = ctx->overruns;
	delivered = ctx->delivered;
	if (ctx->ring) {
		ring_entries = ctx->ring->mask + 1;
		ring_overflow = ctx->ring->overflow;
	}
	spin_unlock_irq(&ctx->wqh.lock);
	twd_unlock(ctx);

	seq_printf(m, "timers:\t%u\nqueued:\t%u\n", ntimers, nqueued);
	seq_printf(m, "armed:\t%llu\ncancelled:\t%llu\nfired:\t%llu\n",
		   armed, cancelled, fired);
	seq_printf(m, "overruns:\t%llu\ndelivered:\t%llu\n", overruns,
		   delivered);
	seq_printf(m, "event_size:\t%u\n", event_size);
	/* The ring's slots (0: none) and the events that found it full. */
	seq_printf(m, "ring_entries:\t%u\nring_overflow:\t%llu\n",
		   ring_entries, ring_overflow);
	/* Memory besides the timers: the key table's and the ring's pages. */
	seq_printf(m, "table_bytes:\t%zu\nring_bytes:\t%zu\n", table_bytes,
		   ring_bytes);
	/* The limits in force, and the user's count they apply to. */
	seq_printf(m, "max_timers:\t%u\nmax_user_timers:\t%u\n",
		   READ_ONCE(max_timers), READ_ONCE(max_user_timers));
	seq_printf(m, "user_timers:\t%ld\n",
		   atomic_long_read(&ctx->user->timers));
}

static const struct file_operations twd_fops = {
	.owner		= THIS_MODULE,
	.open		= twd_open,
	.release	= twd_release,
	.read		= twd_read,
	.poll		= twd_poll,
	.mmap		= twd_mmap,
	.unlocked_ioctl	= twd_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.show_fdinfo	= twd_show_fdinfo,
};

static struct miscdevice twd_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "twheel",
	.fops	= &twd_fops,
	.mode	= 0666,
};

/* No more clock sets noticed: the notifier, its irq_work, the work. */
static void twd_clock_stop(void)
{
	pvclock_gtod_unregister_notifier(&twd_clock_nb);
	irq_work_sync(&twd_clock_irq_work);
	cancel_work_sync(&twd_clock_work);
}

/* The default limits: see TWD_RAM_SHARE. */
static void __init twd_default_limits(void)
{
	u64 user = div_u64((u64)totalram_pages() << PAGE_SHIFT,
			   TWD_RAM_SHARE * TWD_TIMER_COST);

	user = clamp_t(u64, user, TWD_USER_TIMERS_MIN, TWD_USER_TIMERS_MAX);
	if (!max_user_timers)
		max_user_timers = user;
	if (!max_timers)
		max_timers = min_t(u32, max_user_timers, TWD_FILE_TIMERS_MAX);
}

static int __init twd_init(void)
{
	int ret;

	/*
	 * The memory of a timer: with its hash bucket and its share of a
	 * ring, at most 145 bytes at 100k timers (see struct twd_timer).
	 * No SLAB_HWCACHE_ALIGN below: it would round 136 up to 192.
	 */
	static_assert(IS_ENABLED(CONFIG_LOCKDEP) ||
		      sizeof(struct twd_timer) <= 136);
	/* Structs grow; their first sizes stay accepted. */
	static_assert(sizeof(struct twheel_version) >= TWHEEL_VERSION_SIZE_VER0);
	static_assert(sizeof(struct twheel_arm) >= TWHEEL_ARM_SIZE_VER0);
	static_assert(sizeof(struct twheel_arm_batch) >=
		      TWHEEL_ARM_BATCH_SIZE_VER0);
	static_assert(sizeof(struct twheel_cancel) >= TWHEEL_CANCEL_SIZE_VER0);
	static_assert(sizeof(struct twheel_cancel_batch) >=
		      TWHEEL_CANCEL_BATCH_SIZE_VER0);
	static_assert(sizeof(struct twheel_modify) >= TWHEEL_MODIFY_SIZE_VER0);
	static_assert(sizeof(struct twheel_query) >= TWHEEL_QUERY_SIZE_VER0);
	static_assert(sizeof(struct twheel_cancel_all) >=
		      TWHEEL_CANCEL_ALL_SIZE_VER0);
	static_assert(sizeof(struct twheel_event) >= TWHEEL_EVENT_SIZE_VER0);
	static_assert(sizeof(struct twheel_ring_setup) >=
		      TWHEEL_RING_SETUP_SIZE_VER0);
	static_assert(sizeof(struct twheel_ring_flush) >=
		      TWHEEL_RING_FLUSH_SIZE_VER0);
	static_assert(TWD_RING_EVENTS == 192);
	twd_cache = kmem_cache_create("twheel_dev_timer",
				      sizeof(struct twd_timer), 0,
				      SLAB_ACCOUNT, NULL);
	if (!twd_cache)
		return -ENOMEM;
	twd_clock_cache = kmem_cache_create("twheel_dev_clock_timer",
					    sizeof(struct twd_clock_timer), 0,
					    SLAB_ACCOUNT, NULL);
	if (!twd_clock_cache) {
		ret = -ENOMEM;
		goto out_destroy_cache;
	}
	twd_default_limits();
	twd_clock_wq = alloc_workqueue("twheel_dev_clock", WQ_UNBOUND, 0);
	if (!twd_clock_wq) {
		ret = -ENOMEM;
		goto out_destroy_clock_cache;
	}
	ret = pvclock_gtod_register_notifier(&twd_clock_nb);
	if (ret)
		goto out_destroy_clock_wq;
	ret = misc_register(&twd_misc);
	if (ret)
		goto out_unregister_clock;
	pr_info("/dev/%s: tick %llu ns, %u timers per file, %u per user\n",
		twd_misc.name, twheel_tick_ns(), max_timers, max_user_timers);
	return 0;

out_unregister_clock:
	twd_clock_stop();
out_destroy_clock_wq:
	destroy_workqueue(twd_clock_wq);
out_destroy_clock_cache:
	kmem_cache_destroy(twd_clock_cache);
out_destroy_cache:
	kmem_cache_destroy(twd_cache);
	return ret;
}

static void __exit twd_exit(void)
{
	misc_deregister(&twd_misc);
	twd_clock_stop();
	destroy_workqueue(twd_clock_wq);
	kmem_cache_destroy(twd_clock_cache);
	kmem_cache_destroy(twd_cache);
}

module_init(twd_init);
module_exit(twd_exit);

MODULE_DESCRIPTION("/dev/twheel: many keyed timers on one file descriptor");
MODULE_AUTHOR("The twheel authors");
MODULE_LICENSE("GPL");
