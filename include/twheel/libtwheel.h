/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * libtwheel - a thin header for /dev/twheel clients
 *
 * Copyright (C) 2026 The twheel authors
 *
 * Open and handshake, arm and cancel (one or a batch), read() events, or
 * set up the event ring and reap it without system calls. Every function
 * returns 0 (or a count) on success and -errno on failure; none keeps
 * state outside struct twl. No library to link: include it, and build
 * with `pkg-config --cflags libtwheel`. The UAPI it wraps is
 * <linux/twheel.h>, described in Documentation/twheel-uapi.rst.
 *
 *	struct twl tw;
 *	struct twheel_event ev[64];
 *	int n;
 *
 *	if (twl_open(&tw, 0) || twl_ring_setup(&tw, 4096))
 *		return -1;
 *	twl_arm(&tw, key, data, 10000000, 0, 0, 0);	// 10 ms from now
 *	for (;;) {
 *		n = twl_ring_reap(&tw, ev, 64);
 *		if (!n)
 *			twl_wait(&tw, -1);	// poll() until there are events
 *		...
 *	}
 *
 * One thread at a time may call twl_ring_reap() on a ring; any number may
 * call twl_ring_reap_shared() on the same ring (not mixed with the
 * former), in this process or others that map the ring (through fork(),
 * or twl_from_fd() and twl_ring_attach() of a descriptor they were sent).
 */
#ifndef _LIBTWHEEL_H
#define _LIBTWHEEL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/twheel.h>

#define TWL_DEV		"/dev/twheel"

/**
 * struct twl - an open /dev/twheel and, once set up, its event ring
 * @fd:		the file
 * @version:	what the kernel answered to the handshake
 * @map:	the ring's mapping, NULL without a ring
 * @map_size:	its length
 * @head:	the ring's head index: the process's
 * @tail:	the ring's tail index: the kernel's
 * @flags:	the ring's flags (TWHEEL_RING_OVERFLOW)
 * @overflow:	events that found the ring full
 * @events:	the ring's records
 * @mask:	slots - 1
 * @esize:	size of a record
 */
struct twl {
	int			fd;
	struct twheel_version	version;
	void			*map;
	size_t			map_size;
	__u32			*head;
	const __u32		*tail;
	const __u32		*flags;
	const __u64		*overflow;
	const char		*events;
	__u32			mask;
	__u32			esize;
};

/* ioctl() as a count or -errno. */
static inline long twl_ioctl(const struct twl *tw, unsigned long cmd,
			     void *arg)
{
	long ret = ioctl(tw->fd, cmd, arg);

	return ret < 0 ? -errno : ret;
}

/*
 * TWHEEL_IOC_VERSION, asking for records of @want bytes (0: the file's
 * size, unchanged); -EPROTO if the kernel does not speak TWHEEL_API.
 */
static inline int twl_version(struct twl *tw, __u32 want)
{
	int ret;

	tw->version.size = sizeof(tw->version);
	tw->version.api = TWHEEL_API;
	tw->version.want_event_size = want;
	ret = twl_ioctl(tw, TWHEEL_IOC_VERSION, &tw->version);
	return ret == -EINVAL && !want ? -EPROTO : ret;
}

/**
 * twl_open - open /dev/twheel and shake hands
 * @tw:		filled in
 * @oflags:	extra open() flags: O_NONBLOCK, O_CLOEXEC
 *
 * Records are struct twheel_event as this header knows it. Returns 0 or
 * -errno (-EPROTO: the kernel does not speak TWHEEL_API).
 */
static inline int twl_open(struct twl *tw, int oflags)
{
	int ret;

	memset(tw, 0, sizeof(*tw));
	tw->fd = open(TWL_DEV, O_RDWR | oflags);
	if (tw->fd < 0)
		return -errno;
	ret = twl_version(tw, sizeof(struct twheel_event));
	/* Before TWHEEL_FEATURE_EVENT_SIZE: records of VER0 size. */
	if (ret == -EINVAL)
		ret = twl_version(tw, 0);
	if (ret) {
		close(tw->fd);
		tw->fd = -1;
	}
	return ret;
}

/**
 * twl_from_fd - take a /dev/twheel file opened elsewhere
 * @tw:		filled in
 * @fd:		the file: dup()ed, or received from another process
 *		(SCM_RIGHTS); @tw owns it once this succeeds
 *
 * Asks the version without changing the file's event size, which its
 * holders share (tw->version.event_size says it; twl_read() moves records
 * of any size into this header's struct); twl_ring_attach() maps a ring
 * the file has. Returns 0 or -errno.
 */
static inline int twl_from_fd(struct twl *tw, int fd)
{
	int ret;

	memset(tw, 0, sizeof(*tw));
	tw->fd = fd;
	ret = twl_version(tw, 0);
	if (ret)
		tw->fd = -1;
	return ret;
}

static inline int twl_has(const struct twl *tw, __u64 feature)
{
	return (tw->version.features & feature) == feature;
}

/* Unmap the ring, close the file; its timers go with its last close. */
static inline void twl_close(struct twl *tw)
{
	if (tw->map)
		munmap(tw->map, tw->map_size);
	if (tw->fd >= 0)
		close(tw->fd);
	tw->map = NULL;
	tw->fd = -1;
}

/*
 * An arm entry: @expiry_ns from now (or, with TWHEEL_ARM_ABS in @flags, an
 * absolute time of the timer's clock: CLOCK_MONOTONIC, or CLOCK_BOOTTIME or
 * CLOCK_REALTIME with TWHEEL_ARM_BOOTTIME or TWHEEL_ARM_REALTIME), every
 * @period_ns @count times (0, 0: one-shot).
 */
static inline struct twheel_arm twl_arm_entry(__u64 key, __u64 data,
					      __u64 expiry_ns,
					      __u64 period_ns, __u32 count,
					      __u32 flags)
{
	struct twheel_arm a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.flags = flags;
	a.key = key;
	a.data = data;
	a.expiry_ns = expiry_ns;
	a.period_ns = period_ns;
	a.count = count;
	return a;
}

static inline int twl_arm(const struct twl *tw, __u64 key, __u64 data,
			  __u64 expiry_ns, __u64 period_ns, __u32 count,
			  __u32 flags)
{
	struct twheel_arm a = twl_arm_entry(key, data, expiry_ns, period_ns,
					    count, flags);

	return twl_ioctl(tw, TWHEEL_IOC_ARM, &a);
}

/*
 * Arm @n entries made by twl_arm_entry() in one ioctl; @status gets each
 * entry's 0 or -errno. Without @status (NULL: the caller does not care
 * which failed), in ioctls of 4096 with a status array on the stack.
 * Returns the number armed or -errno.
 */
static inline long twl_arm_batch(const struct twl *tw,
				 const struct twheel_arm *arms, __u32 n,
				 __s32 *status)
{
	struct twheel_arm_batch b;
	__s32 st[4096];
	long ret, armed = 0;
	__u32 done = 0;

	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	b.entry_size = sizeof(*arms);
	if (status) {
		b.entries = (__u64)(unsigned long)arms;
		b.status = (__u64)(unsigned long)status;
		b.count = n;
		return twl_ioctl(tw, TWHEEL_IOC_ARM_BATCH, &b);
	}
	while (done < n) {
		b.entries = (__u64)(unsigned long)(arms + done);
		b.status = (__u64)(unsigned long)st;
		b.count = n - done < 4096 ? n - done : 4096;
		ret = twl_ioctl(tw, TWHEEL_IOC_ARM_BATCH, &b);
		if (ret < 0)
			return armed ? armed : ret;
		armed += ret;
		done += b.count;
	}
	return armed;
}

static inline int twl_cancel(const struct twl *tw, __u64 key)
{
	struct twheel_cancel c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.key = key;
	return twl_ioctl(tw, TWHEEL_IOC_CANCEL, &c);
}

/*
 * Move pending timer @key to @expiry_ns (from now, or TWHEEL_ARM_ABS); the
 * clock flags in @flags must be those the timer was armed with.
 */
static inline int twl_modify(const struct twl *tw, __u64 key, __u64 expiry_ns,
			     __u32 flags)
{
	struct twheel_modify m;

	memset(&m, 0, sizeof(m));
	m.size = sizeof(m);
	m.flags = flags;
	m.key = key;
	m.expiry_ns = expiry_ns;
	return twl_ioctl(tw, TWHEEL_IOC_MODIFY, &m);
}

/* Cancel @n keys; @status as for twl_arm_batch(), but required. */
static inline long twl_cancel_batch(const struct twl *tw, const __u64 *keys,
				    __u32 n, __s32 *status)
{
	struct twheel_cancel_batch b;

	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	b.keys = (__u64)(unsigned long)keys;
	b.status = (__u64)(unsigned long)status;
	b.count = n;
	return twl_ioctl(tw, TWHEEL_IOC_CANCEL_BATCH, &b);
}

/*
 * Fill @q with what the kernel knows of timer @key: its state
 * (TWHEEL_STATE_*), fires left, time remaining, deadline, period, data,
 * overruns and slack. Returns 0 or -errno (-ENOENT: no such timer).
 */
static inline int twl_query(const struct twl *tw, __u64 key,
			    struct twheel_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->key = key;
	return twl_ioctl(tw, TWHEEL_IOC_QUERY, q);
}

static inline long twl_cancel_all(const struct twl *tw)
{
	struct twheel_cancel_all c;

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	return twl_ioctl(tw, TWHEEL_IOC_CANCEL_ALL, &c);
}

/* Wait up to @timeout_ms (-1: forever) for events; 1, 0 or -errno. */
static inline int twl_wait(const struct twl *tw, int timeout_ms)
{
	struct pollfd p = { .fd = tw->fd, .events = POLLIN };
	int ret = poll(&p, 1, timeout_ms);

	return ret < 0 ? -errno : ret;
}

/*
 * read() up to @max events (blocking unless O_NONBLOCK); count or -errno.
 * The file's records may be of another size than this header's struct
 * (tw->version.event_size, shared by the file's holders): each is moved
 * into its place in @ev, cut to the struct or zero-filled beyond the
 * record; fewer of larger records fit in @ev.
 */
static inline long twl_read(const struct twl *tw, struct twheel_event *ev,
			    unsigned int max)
{
	size_t size = sizeof(*ev), esize = tw->version.event_size;
	char *buf = (char *)ev;
	ssize_t ret;
	long i, n;

	if (!esize)
		esize = size;
	ret = read(tw->fd, buf, (size_t)max * size / esize * esize);
	if (ret < 0)
		return -errno;
	n = ret / esize;
	if (esize > size) {
		for (i = 0; i < n; i++)
			memmove(&ev[i], buf + i * esize, size);
	} else if (esize < size) {
		for (i = n - 1; i >= 0; i--) {
			memmove(&ev[i], buf + i * esize, esize);
			memset((char *)&ev[i] + esize, 0, size - esize);
		}
	}
	return n;
}

/*
 * TWHEEL_IOC_RING_SETUP with @flags, then map the ring it describes;
 * -EBUSY if @tw has a ring mapped already.
 */
static inline int twl_ring_map(struct twl *tw, __u32 entries, __u32 flags)
{
	struct twheel_ring_setup rs;
	void *map;
	int ret;

	if (tw->map)
		return -EBUSY;
	memset(&rs, 0, sizeof(rs));
	rs.size = sizeof(rs);
	rs.flags = flags;
	rs.entries = entries;
	ret = twl_ioctl(tw, TWHEEL_IOC_RING_SETUP, &rs);
	if (ret)
		return ret;
	map = mmap(NULL, rs.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   tw->fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	tw->map = map;
	tw->map_size = rs.mmap_size;
	tw->head = (__u32 *)((char *)map + rs.off.head);
	tw->tail = (const __u32 *)((char *)map + rs.off.tail);
	tw->flags = (const __u32 *)((char *)map + rs.off.flags);
	tw->overflow = (const __u64 *)((char *)map + rs.off.overflow);
	tw->events = (const char *)map + rs.off.events;
	tw->mask = rs.entries - 1;
	tw->esize = rs.event_size;
	return 0;
}

/**
 * twl_ring_setup - create and map the event ring
 * @tw:		the file, without a ring
 * @entries:	slots, a power of two
 *
 * From now on events arrive in the ring; read() fails with -EBUSY. If the
 * mmap() fails, the ring exists all the same: twl_ring_attach() maps it.
 * Returns 0 or -errno.
 */
static inline int twl_ring_setup(struct twl *tw, __u32 entries)
{
	return twl_ring_map(tw, entries, 0);
}

/**
 * twl_ring_attach - map the event ring the file has
 * @tw:		the file, with a ring set up through it or another of its
 *		descriptors (one received from another process, see
 *		twl_from_fd()), not mapped through @tw
 *
 * Needs TWHEEL_FEATURE_RING_ATTACH. Returns 0, -EINVAL if the file has no
 * ring, or another -errno.
 */
static inline int twl_ring_attach(struct twl *tw)
{
	return twl_ring_map(tw, 0, TWHEEL_RING_ATTACH);
}

/*
 * Events in the ring now, as far as this thread can tell. The head first:
 * read after the tail, a head other reapers moved on could pass it.
 */
static inline __u32 twl_ring_count(const struct twl *tw)
{
	__u32 head = __atomic_load_n(tw->head, __ATOMIC_ACQUIRE);

	return __atomic_load_n(tw->tail, __ATOMIC_ACQUIRE) - head;
}

/* The record in slot @idx (free-running index). */
static inline const struct twheel_event *twl_ring_event(const struct twl *tw,
							__u32 idx)
{
	return (const struct twheel_event *)(tw->events +
					     (size_t)(idx & tw->mask) * tw->esize);
}

/* Move the backlog of a full ring in; the number moved or -errno. */
static inline long twl_ring_flush(const struct twl *tw)
{
	struct twheel_ring_flush f;

	memset(&f, 0, sizeof(f));
	f.size = sizeof(f);
	return twl_ioctl(tw, TWHEEL_IOC_RING_FLUSH, &f);
}

/*
 * After storing the head: if the kernel has events that found the ring
 * full, let them in. The fence pairs with the kernel's smp_mb() between
 * setting TWHEEL_RING_OVERFLOW and reading the head.
 */
static inline void twl_ring_after_reap(const struct twl *tw)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(tw->flags, __ATOMIC_RELAXED) & TWHEEL_RING_OVERFLOW)
		twl_ring_flush(tw);
}

/* Copy one record (of the kernel's size) out as this header's struct. */
static inline void twl_ring_copy(const struct twl *tw, struct twheel_event *ev,
				 __u32 idx)
{
	size_t n = tw->esize < sizeof(*ev) ? tw->esize : sizeof(*ev);

	memset(ev, 0, sizeof(*ev));
	memcpy(ev, twl_ring_event(tw, idx), n);
}

/**
 * twl_ring_reap - take up to @max events from the ring, no system call
 * @tw:		the file, with a ring
 * @ev:		the events, copied out
 * @max:	room in @ev
 *
 * For one reaper at a time. Returns the number of events taken; 0 when
 * the ring is empty (then twl_wait() sleeps until it is not).
 */
static inline unsigned int twl_ring_reap(const struct twl *tw,
					 struct twheel_event *ev,
					 unsigned int max)
{
	__u32 head = __atomic_load_n(tw->head, __ATOMIC_RELAXED);
	/* Pairs with the kernel's smp_store_release() of the tail. */
	__u32 tail = __atomic_load_n(tw->tail, __ATOMIC_ACQUIRE);
	unsigned int n = 0;

	while (n < max && head != tail)
		twl_ring_copy(tw, &ev[n++], head++);
	if (!n)
		return 0;
	/* Pairs with the kernel's smp_load_acquire() of the head. */
	__atomic_store_n(tw->head, head, __ATOMIC_RELEASE);
	twl_ring_after_reap(tw);
	return n;
}

/**
 * twl_ring_reap_shared - take one event, among several reapers
 * @tw:		the file, with a ring
 * @ev:		the event
 *
 * Each reaper copies the record at the head, then claims it by
 * compare-and-swap of the head; a reaper that loses the race drops its
 * copy (which may be torn) and tries again. Returns 1, or 0 when empty.
 */
static inline int twl_ring_reap_shared(const struct twl *tw,
				       struct twheel_event *ev)
{
	__u32 head = __atomic_load_n(tw->head, __ATOMIC_ACQUIRE);

	for (;;) {
		__u32 tail = __atomic_load_n(tw->tail, __ATOMIC_ACQUIRE);

		if (head == tail)
			return 0;
		twl_ring_copy(tw, ev, head);
		if (__atomic_compare_exchange_n(tw->head, &head, head + 1, 0,
						__ATOMIC_RELEASE,
						__ATOMIC_ACQUIRE))
			break;
	}
	twl_ring_after_reap(tw);
	return 1;
}

#endif /* _LIBTWHEEL_H */
