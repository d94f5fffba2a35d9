/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * /dev/twheel - many keyed timers on one file descriptor
 *
 * Copyright (C) 2026 The twheel authors
 *
 * See Documentation/twheel-uapi.rst for the full description.
 */
#ifndef _UAPI_LINUX_TWHEEL_H
#define _UAPI_LINUX_TWHEEL_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * DOC: General ioctl format
 *
 * Each open of /dev/twheel is an independent set of timers, each named by a
 * 64-bit key chosen by the caller. Timers fire with the wheel's tick
 * resolution (never early in their clock; how late: see struct
 * twheel_event) and are reported by read() as struct twheel_event records.
 *
 * Each timer has a clock, chosen when it is armed: CLOCK_MONOTONIC (the
 * default), CLOCK_BOOTTIME (TWHEEL_ARM_BOOTTIME: counts suspend too) or
 * CLOCK_REALTIME (TWHEEL_ARM_REALTIME: the wall clock; a relative deadline
 * becomes an absolute one in that clock, so setting the clock moves it, as
 * for clock_nanosleep() and timerfd). Its deadlines in and out, and its
 * fire times, are times of that clock. A timer of CLOCK_REALTIME armed
 * with TWHEEL_ARM_ABS | TWHEEL_ARM_CANCEL_ON_SET is cancelled when the
 * clock is set, as timerfd's TFD_TIMER_CANCEL_ON_SET: see
 * TWHEEL_EVENT_CANCELED.
 *
 * Absolute times, in (TWHEEL_ARM_ABS) and out (deadlines and fire times),
 * of CLOCK_MONOTONIC and CLOCK_BOOTTIME are those of the calling process's
 * time namespace, converted as timerfd converts them: an absolute deadline
 * before the namespace's offset is already expired, and a time out before
 * the namespace's zero reads 0. CLOCK_REALTIME has no namespace offset.
 *
 * Every ioctl takes a pointer to a struct that starts with a __u32 @size:
 * the caller's sizeof of the struct, so that structs can grow at their end,
 * as the kernel's extensible structs do (openat2, clone3, sched_setattr).
 * Every size from the struct's first released one (its *_SIZE_VER0) up is
 * accepted: a smaller struct than the kernel's is zero-extended (new fields
 * are 0, which always means what older callers expect); a larger one is
 * accepted if the bytes unknown to the kernel are zero, else the ioctl fails
 * with -E2BIG and writes the kernel's size of the struct into @size, so that
 * the caller can retry with the fields the kernel knows. Structs the ioctl
 * fills in are copied out for min(@size, kernel's size) bytes; the caller's
 * bytes beyond are left as they were (zero, as they had to be). The size
 * encoded in the ioctl number is the struct's *_SIZE_VER0, whatever size
 * it grows to, and is not checked: the @size field is authoritative.
 * Every __reserved field must be zero and every unknown @flags bit must be
 * clear, else -EINVAL.
 *
 * read() returns records of the size the file's user asked for in
 * TWHEEL_IOC_VERSION (@want_event_size), TWHEEL_EVENT_SIZE_VER0 by default,
 * so struct twheel_event can grow as well.
 *
 * ioctl magic 0xB9 (free in Documentation/userspace-api/ioctl/ioctl-number.rst
 * of v6.1), numbers 0x00-0x0F.
 *
 * Error codes common to all ioctls:
 *
 * - ENOTTY: unknown ioctl
 * - EFAULT: a pointer (the argument or one inside the struct) is invalid
 * - EINVAL: @size below the struct's *_SIZE_VER0, unknown @flags bit,
 *   nonzero __reserved field, a value out of its domain (e.g. a period
 *   below one tick), or flags that do not go together (both clocks;
 *   TWHEEL_ARM_CANCEL_ON_SET without TWHEEL_ARM_REALTIME and
 *   TWHEEL_ARM_ABS; a MODIFY naming another clock than the timer's)
 * - E2BIG: @size is larger than the kernel knows and the tail is not zero,
 *   or @size is larger than a page; the kernel's size is written to @size
 * - ERANGE: the deadline lies beyond the wheel's range (KTIME_MAX ns)
 * - ENOENT: no timer with that key (or, for MODIFY, not pending any more)
 * - EEXIST: a timer with that key exists and TWHEEL_ARM_REPLACE was not set
 * - ENOSPC: the per-file or per-user timer limit is reached
 * - ENOMEM: out of memory; nothing was changed
 * - EBUSY: the file has an event ring already (TWHEEL_IOC_RING_SETUP, or
 *   TWHEEL_IOC_VERSION asking for another event size)
 */

#define TWHEEL_IOC_MAGIC	0xB9

/* The version of this interface, see TWHEEL_IOC_VERSION. */
#define TWHEEL_API		1

/* Features of TWHEEL_API 1, all reported by TWHEEL_IOC_VERSION. */
#define TWHEEL_FEATURE_ABS		0x1ULL	/* absolute deadlines */
#define TWHEEL_FEATURE_PERIODIC		0x2ULL	/* period and count */
#define TWHEEL_FEATURE_REPLACE		0x4ULL	/* TWHEEL_ARM_REPLACE */
#define TWHEEL_FEATURE_BATCH		0x8ULL	/* *_BATCH ioctls */
#define TWHEEL_FEATURE_MODIFY		0x10ULL	/* TWHEEL_IOC_MODIFY */
/* Added to TWHEEL_API 1 later; test the bit before relying on it. */
#define TWHEEL_FEATURE_EVENT_SIZE	0x20ULL	/* @want_event_size */
#define TWHEEL_FEATURE_BATCH_PROGRESS	0x40ULL	/* TWHEEL_BATCH_PROGRESS */
#define TWHEEL_FEATURE_TIMENS		0x80ULL	/* time namespaces honoured */
#define TWHEEL_FEATURE_RING		0x100ULL /* TWHEEL_IOC_RING_SETUP, mmap */
#define TWHEEL_FEATURE_CLOCKS		0x200ULL /* BOOTTIME, REALTIME timers */
#define TWHEEL_FEATURE_SLACK		0x400ULL /* twheel_arm.slack_ns */
#define TWHEEL_FEATURE_RING_ATTACH	0x800ULL /* TWHEEL_RING_ATTACH */

/*
 * The first released size of each struct: the smallest @size accepted. A
 * caller that wants to run on every kernel with TWHEEL_API 1 may always
 * pass these sizes, at the price of the fields added since.
 */
#define TWHEEL_VERSION_SIZE_VER0	48
#define TWHEEL_ARM_SIZE_VER0		48
#define TWHEEL_ARM_BATCH_SIZE_VER0	32
#define TWHEEL_CANCEL_SIZE_VER0		16
#define TWHEEL_CANCEL_BATCH_SIZE_VER0	32
#define TWHEEL_MODIFY_SIZE_VER0		40
#define TWHEEL_QUERY_SIZE_VER0		64
#define TWHEEL_CANCEL_ALL_SIZE_VER0	8
#define TWHEEL_EVENT_SIZE_VER0		40	/* read() records */
#define TWHEEL_RING_SETUP_SIZE_VER0	56
#define TWHEEL_RING_FLUSH_SIZE_VER0	8

/* The largest event record read() can be asked for. */
#define TWHEEL_EVENT_SIZE_MAX		4096

/*
 * A count of 0 (arm, modify) asks for a periodic timer that never stops;
 * so does TWHEEL_COUNT_FOREVER, which QUERY reports for one.
 */
#define TWHEEL_COUNT_FOREVER	0xffffffffU

/**
 * struct twheel_version - TWHEEL_IOC_VERSION: the handshake
 * @size: sizeof(struct twheel_version)
 * @api: in: TWHEEL_API the caller was built for; out: TWHEEL_API of the kernel
 * @features: out: TWHEEL_FEATURE_* bits the kernel supports
 * @tick_ns: out: the wheel tick: the resolution of every timer; a timer
 *	never fires before its deadline (see struct twheel_event for how late)
 * @min_period_ns: out: the smallest period accepted (one tick)
 * @max_timers: out: the limit of timers per open file
 * @max_user_timers: out: the limit of timers per user, over all files
 * @event_size: out: the size of the records read() returns on this file
 * @want_event_size: in: the size of the records read() shall return on this
 *	file from now on, the caller's sizeof(struct twheel_event); 0 keeps
 *	the file's size (TWHEEL_EVENT_SIZE_VER0 until set). A multiple of 8
 *	from TWHEEL_EVENT_SIZE_VER0 to TWHEEL_EVENT_SIZE_MAX, else -EINVAL.
 *	Bytes of a record beyond the kernel's struct twheel_event are zero.
 *	(This was __reserved, "must be 0", before TWHEEL_FEATURE_EVENT_SIZE.)
 *	Once the file has an event ring, only its size is accepted (else
 *	-EBUSY): the ring's records have the size they were set up with.
 *
 * Call it first. It fails with -EINVAL if @api is not one the kernel
 * implements.
 */
struct twheel_version {
	__u32 size;
	__u32 api;
	__aligned_u64 features;
	__aligned_u64 tick_ns;
	__aligned_u64 min_period_ns;
	__u32 max_timers;
	__u32 max_user_timers;
	__u32 event_size;
	__u32 want_event_size;
};

/* Flags of struct twheel_arm and struct twheel_modify */
#define TWHEEL_ARM_ABS		0x1U	/* @expiry_ns is absolute */
#define TWHEEL_ARM_REPLACE	0x2U	/* replace a timer with this key */
#define TWHEEL_MODIFY_PERIOD	0x4U	/* also set @period_ns, @count */
#define TWHEEL_ARM_BOOTTIME	0x8U	/* the timer's clock: CLOCK_BOOTTIME */
#define TWHEEL_ARM_REALTIME	0x10U	/* the timer's clock: CLOCK_REALTIME */
#define TWHEEL_ARM_CANCEL_ON_SET 0x20U	/* cancel when CLOCK_REALTIME is set */

/**
 * struct twheel_arm - TWHEEL_IOC_ARM: arm a timer
 * @size: sizeof(struct twheel_arm)
 * @flags: TWHEEL_ARM_ABS: @expiry_ns is an absolute time of the timer's
 *	clock (of the caller's time namespace), else nanoseconds from now;
 *	TWHEEL_ARM_REPLACE: a timer with @key is cancelled (its unread event
 *	discarded, unless already in the ring) and replaced atomically, else
 *	an existing @key fails with -EEXIST;
 *	TWHEEL_ARM_BOOTTIME or TWHEEL_ARM_REALTIME (not both, else -EINVAL):
 *	the timer's clock, CLOCK_MONOTONIC without either (needs
 *	TWHEEL_FEATURE_CLOCKS);
 *	TWHEEL_ARM_CANCEL_ON_SET: the timer is cancelled, with a last event
 *	flagged TWHEEL_EVENT_CANCELED, when CLOCK_REALTIME is set after it
 *	was armed; only with TWHEEL_ARM_REALTIME and TWHEEL_ARM_ABS, else
 *	-EINVAL
 * @key: the caller's name of the timer, unique in the file
 * @data: returned in every event of the timer
 * @expiry_ns: the first deadline; a deadline in the past fires at once
 * @period_ns: 0 for a one-shot timer, else the time between deadlines,
 *	at least one tick (twheel_version.min_period_ns)
 * @count: number of fires of a periodic timer, 0 (or TWHEEL_COUNT_FOREVER)
 *	for no limit; must be 0 for a one-shot timer
 * @__reserved: must be 0
 * @slack_ns: how late after each deadline the timer may fire, besides the
 *	usual tick and softirq latency (TWHEEL_FEATURE_SLACK; 0, no slack, for
 *	callers built before it): the timer fires in [deadline, deadline +
 *	slack_ns + lateness], never early, and the wheel lets timers whose
 *	windows overlap fire together, for fewer wakeups. The wheel uses the
 *	largest power of two ticks not above @slack_ns (less than two ticks:
 *	none), as QUERY reports. It stays with the timer: MODIFY keeps it, and
 *	every fire of a periodic timer may use it (a slack of a period or more
 *	folds deadlines into overruns). Above KTIME_MAX: -EINVAL.
 */
struct twheel_arm {
	__u32 size;
	__u32 flags;
	__aligned_u64 key;
	__aligned_u64 data;
	__aligned_u64 expiry_ns;
	__aligned_u64 period_ns;
	__u32 count;
	__u32 __reserved;
	__aligned_u64 slack_ns;
};

/* Flags of struct twheel_arm_batch and struct twheel_cancel_batch */
#define TWHEEL_BATCH_PROGRESS	0x1U	/* return the entries processed */

/* A @status value no entry yields: fill @status with it to see progress. */
#define TWHEEL_STATUS_UNDONE	1

/**
 * struct twheel_arm_batch - TWHEEL_IOC_ARM_BATCH: arm many timers
 * @size: sizeof(struct twheel_arm_batch)
 * @flags: TWHEEL_BATCH_PROGRESS: return the number of entries processed
 *	instead of the number of timers armed
 * @entries: user pointer to @count struct twheel_arm, @entry_size apart
 * @status: user pointer to @count __s32: 0 or the -errno of each entry
 * @count: number of entries
 * @entry_size: the caller's sizeof(struct twheel_arm), at least
 *	TWHEEL_ARM_SIZE_VER0; each entry's @size must equal it
 *
 * Every entry is processed in order, as TWHEEL_IOC_ARM would; a bad entry
 * does not stop the others. Entries go in chunks of 64: a chunk's @status
 * slots are zeroed when it starts (0 is what a successful entry reports; a
 * failed entry, which changes nothing, writes its -errno), and a fatal
 * signal stops the batch between chunks. A @status array that cannot be
 * written stops the batch before the chunk, or the failed entry, whose
 * status it could not take, so no entry takes effect unreported. Chunks
 * not started keep the @status values the caller put there
 * (TWHEEL_STATUS_UNDONE tells them apart). The ioctl returns the number
 * of timers armed, or with TWHEEL_BATCH_PROGRESS the number of entries
 * processed (@count unless the batch stopped early); -EFAULT if @status
 * faulted (with TWHEEL_BATCH_PROGRESS: only if before the first entry), or
 * -EINVAL/-E2BIG for a bad header.
 */
struct twheel_arm_batch {
	__u32 size;
	__u32 flags;
	__aligned_u64 entries;
	__aligned_u64 status;
	__u32 count;
	__u32 entry_size;
};

/**
 * struct twheel_cancel - TWHEEL_IOC_CANCEL: cancel a timer by key
 * @size: sizeof(struct twheel_cancel)
 * @flags: must be 0
 * @key: the timer
 *
 * The timer is stopped, its unread event (if any) discarded and its key
 * freed. An event already written to the ring stays there: a process that
 * reuses keys tells the old timer's events from the new one's by @data.
 */
struct twheel_cancel {
	__u32 size;
	__u32 flags;
	__aligned_u64 key;
};

/**
 * struct twheel_cancel_batch - TWHEEL_IOC_CANCEL_BATCH: cancel many timers
 * @size: sizeof(struct twheel_cancel_batch)
 * @flags: TWHEEL_BATCH_PROGRESS: return the number of keys processed
 *	instead of the number of timers cancelled
 * @keys: user pointer to @count __u64 keys
 * @status: user pointer to @count __s32: 0 or -ENOENT (or -EFAULT)
 * @count: number of keys
 * @__reserved: must be 0
 *
 * Returns the number of timers cancelled. Chunks, fatal signals, faults and
 * TWHEEL_BATCH_PROGRESS as for struct twheel_arm_batch.
 */
struct twheel_cancel_batch {
	__u32 size;
	__u32 flags;
	__aligned_u64 keys;
	__aligned_u64 status;
	__u32 count;
	__u32 __reserved;
};

/**
 * struct twheel_modify - TWHEEL_IOC_MODIFY: move a pending timer
 * @size: sizeof(struct twheel_modify)
 * @flags: TWHEEL_ARM_ABS as for arming; TWHEEL_MODIFY_PERIOD: also set
 *	@period_ns and @count, which take effect from the next fire;
 *	TWHEEL_ARM_BOOTTIME or TWHEEL_ARM_REALTIME: the timer's clock, which
 *	must be named as it was armed (neither for CLOCK_MONOTONIC), else
 *	-EINVAL: a timer keeps its clock, and @expiry_ns is a time of it.
 *	TWHEEL_ARM_CANCEL_ON_SET is refused (-EINVAL); the timer keeps it.
 * @key: the timer
 * @expiry_ns: the new deadline
 * @period_ns: with TWHEEL_MODIFY_PERIOD, as for arming; else must be 0
 * @count: with TWHEEL_MODIFY_PERIOD, as for arming; else must be 0
 * @__reserved: must be 0
 *
 * Fails with -ENOENT if no timer has @key or if it is not pending (a
 * one-shot timer that has fired). The move, with its period and count, is
 * atomic against the fire: a fire already on its way is not replaced (its
 * event carries the old deadline; a one-shot timer then fails MODIFY with
 * -ENOENT, a periodic one is moved from its next deadline on), and every
 * other fire uses either the old or the new deadline, period and count.
 * The timer keeps its slack (twheel_arm.slack_ns).
 */
struct twheel_modify {
	__u32 size;
	__u32 flags;
	__aligned_u64 key;
	__aligned_u64 expiry_ns;
	__aligned_u64 period_ns;
	__u32 count;
	__u32 __reserved;
};

/* twheel_query.state bits */
#define TWHEEL_STATE_PENDING	0x1U	/* armed, will fire */
#define TWHEEL_STATE_QUEUED	0x2U	/* an event waits to be read */
#define TWHEEL_STATE_DONE	0x4U	/* fired its last, event unread */

/**
 * struct twheel_query - TWHEEL_IOC_QUERY: the state of a timer
 * @size: sizeof(struct twheel_query)
 * @flags: must be 0
 * @key: in: the timer
 * @state: out: TWHEEL_STATE_* bits
 * @fires_left: out: fires still to come: 0 when not pending, 1 for a
 *	pending one-shot, TWHEEL_COUNT_FOREVER for an unlimited periodic one
 * @remaining_ns: out: time until the next deadline, 0 if not pending
 * @deadline_ns: out: the next deadline (in the timer's clock, of the
 *	caller's time namespace) if pending, else the last one delivered
 * @period_ns: out: the period, 0 for a one-shot timer
 * @data: out: the timer's data
 * @overruns: out: overruns of the queued event so far
 * @__reserved: must be 0
 * @slack_ns: out: the slack the timer uses (TWHEEL_FEATURE_SLACK): its
 *	twheel_arm.slack_ns rounded down to a power of two ticks, 0 for none
 */
struct twheel_query {
	__u32 size;
	__u32 flags;
	__aligned_u64 key;
	__u32 state;
	__u32 fires_left;
	__aligned_u64 remaining_ns;
	__aligned_u64 deadline_ns;
	__aligned_u64 period_ns;
	__aligned_u64 data;
	__u32 overruns;
	__u32 __reserved;
	__aligned_u64 slack_ns;
};

/**
 * struct twheel_cancel_all - TWHEEL_IOC_CANCEL_ALL: cancel every timer
 * @size: sizeof(struct twheel_cancel_all)
 * @flags: must be 0
 *
 * Returns the number of timers cancelled; unread events are discarded.
 */
struct twheel_cancel_all {
	__u32 size;
	__u32 flags;
};

/* twheel_event.flags */
#define TWHEEL_EVENT_LAST	0x1U	/* the timer's last fire */
#define TWHEEL_EVENT_CANCELED	0x2U	/* cancelled: its clock was set */

/**
 * struct twheel_event - a fire of a timer, as read() returns it
 * @key: the timer's key
 * @data: the timer's data
 * @deadline_ns: the deadline this event delivers (in the timer's clock, of
 *	the reader's time namespace); the latest one when @overruns > 0
 * @fire_ns: when the timer fired for @deadline_ns (same clock): never
 *	before @deadline_ns (unless TWHEEL_EVENT_CANCELED); at most one
 *	tick plus the wheel's softirq latency after it while the wheel keeps
 *	up. Under a flood a fire also waits for the callbacks due before it
 *	on its CPU: their run time, up to twice that while other tasks want
 *	the CPU (the wheel then takes half of it). Of 1M timers due over 10
 *	s on one file, read from the ring on their CPU, 1 % were more than
 *	1.2-1.3 ms late and none more than 3.6-7.6 ms (under QEMU TCG).
 *	There is no bound independent of the load. A timer of
 *	CLOCK_REALTIME whose clock is set forward past its deadline fires
 *	once the set is noticed, within milliseconds; one set back does not
 *	fire early.
 * @overruns: earlier deadlines of this timer that passed since its
 *	previous event and are folded into this one (saturates at 2^32 - 1)
 * @flags: TWHEEL_EVENT_LAST: the timer's last fire; its key is free once
 *	this event has been read.
 *	TWHEEL_EVENT_CANCELED (always with TWHEEL_EVENT_LAST): a
 *	TWHEEL_ARM_CANCEL_ON_SET timer was cancelled because CLOCK_REALTIME
 *	was set (settimeofday(), clock_settime(), clock_adjtime() stepping
 *	it, a leap second) after it was armed. Nothing is lost: if an
 *	event of the timer was waiting, it becomes this one, with its
 *	deadline and overruns; else @deadline_ns is the pending deadline,
 *	which did not pass, and @fire_ns the time of the cancel (after the
 *	set), which may lie before it. A deadline the set jumped over is not
 *	delivered: the set cancels it, as it makes timerfd's read() fail
 *	with -ECANCELED.
 *
 * A timer has at most one event waiting: a fire while its event is unread
 * adds to @overruns, so the queue is bounded and no expiry is lost.
 *
 * read() returns records of the size set with twheel_version's
 * @want_event_size (TWHEEL_EVENT_SIZE_VER0 by default); fields added to
 * this struct later are zero on kernels that do not know them.
 */
struct twheel_event {
	__aligned_u64 key;
	__aligned_u64 data;
	__aligned_u64 deadline_ns;
	__aligned_u64 fire_ns;
	__u32 overruns;
	__u32 flags;
};

/**
 * DOC: Event ring
 *
 * Instead of read(), a file's events can be reaped from a ring shared with
 * the kernel, as io_uring's completion queue is: the kernel appends each
 * event at the ring's tail as its timer fires, the process takes them from
 * the head and stores the new head, with no system call per event or per
 * batch. TWHEEL_IOC_RING_SETUP creates the ring (once per file; it belongs
 * to the file, so dup() and fork() share it; with TWHEEL_RING_ATTACH it
 * tells the layout of the ring the file has, to a process that got the
 * file otherwise or whose mmap() failed) and mmap() of the file,
 * MAP_SHARED, offset 0, at most twheel_ring_setup.mmap_size bytes, maps
 * it. Its layout is given by the offsets in struct twheel_ring_offsets:
 *
 * - @head (__u32): the next event to reap; written by the process only
 * - @tail (__u32): one past the last event; written by the kernel only
 * - @mask (__u32): @entries - 1; an event's slot is index & @mask
 * - @entries (__u32): the number of slots, a power of two
 * - @flags (__u32): TWHEEL_RING_OVERFLOW, written by the kernel
 * - @overflow (__u64): events that went to the backlog, written by the
 *   kernel; they were not lost (see below)
 * - @events: @entries records of twheel_ring_setup.event_size bytes (the
 *   file's event size, see TWHEEL_IOC_VERSION), each a struct twheel_event
 *   zero-extended as read() returns it
 *
 * Memory ordering. The kernel writes the records, then the tail with
 * smp_store_release(); the process must load the tail with acquire
 * semantics (__atomic_load_n(tail, __ATOMIC_ACQUIRE)) before reading the
 * records it covers. The process reads the records, then stores the head
 * with release semantics (__atomic_store_n(head, h, __ATOMIC_RELEASE));
 * the kernel loads it with smp_load_acquire() before it reuses a slot.
 * Indexes are free-running __u32s: the ring holds tail - head events.
 *
 * A full ring loses nothing. An event that finds no free slot, or the
 * backlog not empty, waits on the file's backlog, as read()'s events do
 * (one per timer: later fires of a timer whose event waits fold into its
 * @overruns), @overflow counts it,
 * and TWHEEL_RING_OVERFLOW is set in @flags until the backlog is empty.
 * The backlog moves into the ring, in firing order and ahead of new
 * events, as slots free: on the next fire that queues an event (not one
 * that folds into a waiting one), poll(), TWHEEL_IOC_RING_FLUSH or any
 * other ioctl but TWHEEL_IOC_VERSION and TWHEEL_IOC_RING_SETUP. A
 * process that reaped events and sees
 * TWHEEL_RING_OVERFLOW after storing the head (with a full barrier
 * between the store and the load, __atomic_thread_fence(__ATOMIC_SEQ_CST);
 * the kernel has one between setting the flag and reading the head) calls
 * TWHEEL_IOC_RING_FLUSH; one that waits in poll() or level-triggered
 * epoll need not, as poll() flushes.
 *
 * Each fire is its own record in the ring: a periodic timer may have
 * several. The key of a timer whose last fire (TWHEEL_EVENT_LAST) entered
 * the ring is free at once: any ioctl after the record became visible
 * sees the key unused. Times in the records are of the time namespace of
 * the process that set the ring up.
 *
 * poll() and epoll report EPOLLIN while the ring holds events (tail !=
 * head) or the backlog does. With a ring, read() fails with -EBUSY: a file
 * delivers through one of them. The ring is freed at the file's last close
 * and unmap; unmapping it early, or a reaper that dies, loses nothing that
 * is still in the ring: the ring is the file's, not the mapping's.
 *
 * Several processes or threads may reap one ring if they agree on how:
 * one reaper at a time (a lock), or each taking a record by
 * compare-and-swap of the head after copying it (discarding the copy if
 * the swap fails). The kernel trusts neither the head nor anything else
 * the process writes: a head that claims more events than the ring holds
 * makes the kernel treat the ring as full.
 */

/* The ring's @flags word */
#define TWHEEL_RING_OVERFLOW	0x1U	/* events wait on the backlog */

/* Flags of struct twheel_ring_setup */
#define TWHEEL_RING_ATTACH	0x1U	/* describe the file's ring */

/* Limits of twheel_ring_setup.entries and of the ring's size. */
#define TWHEEL_RING_ENTRIES_MAX	0x100000U	/* 1Mi */
#define TWHEEL_RING_BYTES_MAX	0x4000000U	/* 64 MiB */

/**
 * struct twheel_ring_offsets - where the ring's fields are in the mapping
 * @head: offset of the __u32 head index
 * @tail: offset of the __u32 tail index
 * @mask: offset of the __u32 index mask
 * @entries: offset of the __u32 number of slots
 * @flags: offset of the __u32 flags (TWHEEL_RING_OVERFLOW)
 * @overflow: offset of the __u64 count of events that went to the backlog
 * @events: offset of the first record, 8-byte aligned
 * @__reserved: 0
 */
struct twheel_ring_offsets {
	__u32 head;
	__u32 tail;
	__u32 mask;
	__u32 entries;
	__u32 flags;
	__u32 overflow;
	__u32 events;
	__u32 __reserved;
};

/**
 * struct twheel_ring_setup - TWHEEL_IOC_RING_SETUP: create the event ring
 * @size: sizeof(struct twheel_ring_setup)
 * @flags: 0 to create the ring; TWHEEL_RING_ATTACH (TWHEEL_FEATURE_RING_ATTACH)
 *	to describe the ring the file has, created through this or another
 *	descriptor of it: -EINVAL if it has none
 * @entries: in: the number of slots, a power of two from 1 to
 *	TWHEEL_RING_ENTRIES_MAX, at most TWHEEL_RING_BYTES_MAX bytes of
 *	records, else -EINVAL; 0 with TWHEEL_RING_ATTACH. Out: the number
 * @event_size: out: the size of a record, the file's event size
 * @mmap_size: out: the length to mmap() at offset 0
 * @off: out: the layout of the mapping
 *
 * Creating fails with -EBUSY if the file has a ring already, -ENOMEM
 * without the memory, which is charged to the caller's memory cgroup.
 * Events waiting for read() move into the ring.
 */
struct twheel_ring_setup {
	__u32 size;
	__u32 flags;
	__u32 entries;
	__u32 event_size;
	__aligned_u64 mmap_size;
	struct twheel_ring_offsets off;
};

/**
 * struct twheel_ring_flush - TWHEEL_IOC_RING_FLUSH: move the backlog in
 * @size: sizeof(struct twheel_ring_flush)
 * @flags: must be 0
 *
 * Moves waiting events into the ring as far as it has room; returns the
 * number moved. -EINVAL if the file has no ring.
 */
struct twheel_ring_flush {
	__u32 size;
	__u32 flags;
};

/* Sized by *_SIZE_VER0, see "Every ioctl takes" above. */
#define TWHEEL_IOC(dir, nr, size)	_IOC(dir, TWHEEL_IOC_MAGIC, nr, size)
#define TWHEEL_IOC_RW			(_IOC_READ | _IOC_WRITE)

#define TWHEEL_IOC_VERSION	TWHEEL_IOC(TWHEEL_IOC_RW, 0x00, TWHEEL_VERSION_SIZE_VER0)
#define TWHEEL_IOC_ARM		TWHEEL_IOC(_IOC_WRITE, 0x01, TWHEEL_ARM_SIZE_VER0)
#define TWHEEL_IOC_ARM_BATCH	TWHEEL_IOC(_IOC_WRITE, 0x02, TWHEEL_ARM_BATCH_SIZE_VER0)
#define TWHEEL_IOC_CANCEL	TWHEEL_IOC(_IOC_WRITE, 0x03, TWHEEL_CANCEL_SIZE_VER0)
#define TWHEEL_IOC_CANCEL_BATCH	TWHEEL_IOC(_IOC_WRITE, 0x04, TWHEEL_CANCEL_BATCH_SIZE_VER0)
#define TWHEEL_IOC_MODIFY	TWHEEL_IOC(_IOC_WRITE, 0x05, TWHEEL_MODIFY_SIZE_VER0)
#define TWHEEL_IOC_QUERY	TWHEEL_IOC(TWHEEL_IOC_RW, 0x06, TWHEEL_QUERY_SIZE_VER0)
#define TWHEEL_IOC_CANCEL_ALL	TWHEEL_IOC(_IOC_WRITE, 0x07, TWHEEL_CANCEL_ALL_SIZE_VER0)
#define TWHEEL_IOC_RING_SETUP	TWHEEL_IOC(TWHEEL_IOC_RW, 0x08, TWHEEL_RING_SETUP_SIZE_VER0)
#define TWHEEL_IOC_RING_FLUSH	TWHEEL_IOC(_IOC_WRITE, 0x09, TWHEEL_RING_FLUSH_SIZE_VER0)

#endif /* _UAPI_LINUX_TWHEEL_H */
