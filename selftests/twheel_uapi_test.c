// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel selftests: the UAPI made to last.
 *
 * - size_ver0_*: structs grow as the kernel's extensible structs do. A "v1"
 *   client passes the *_SIZE_VER0 sizes; a "v2" client was built against a
 *   header whose structs (and struct twheel_event) have grown by a field the
 *   running kernel does not know. Both must work, and a v2 client that uses
 *   its new field learns the kernel's size from -E2BIG.
 * - batch_*: batches go in chunks, stop for a fatal signal and report how
 *   far they got; each entry of a chunk gets what TWHEEL_IOC_ARM would
 *   give it in turn, whatever else is in the chunk.
 * - timens_*: absolute times in and out are those of the caller's time
 *   namespace.
 *
 * Each test arms a sentinel timer first; the teardown checks that it still
 * fires, with the right key and data: no bad input loses another timer.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest_harness.h"

#define SENTINEL	0x5e5e5e5eULL

/* What a "v2" header would declare: each struct with one more field. */
struct arm_v2 {
	struct twheel_arm v1;
	__aligned_u64 future_ns;	/* unknown to this kernel */
};

/* What the first header declared: struct twheel_arm without slack_ns. */
struct arm_v1 {
	__u8 b[TWHEEL_ARM_SIZE_VER0];
};

struct query_v2 {
	struct twheel_query v1;
	__aligned_u64 clockid;		/* unknown to this kernel */
};

struct version_v2 {
	struct twheel_version v1;
	__aligned_u64 more_features;	/* unknown to this kernel */
};

struct event_v2 {
	struct twheel_event v1;
	__aligned_u64 clockid;		/* unknown to this kernel */
};

/*
 * Today's structs are the first ones, but for twheel_arm's and
 * twheel_query's slack_ns.
 */
static_assert(sizeof(struct twheel_version) == TWHEEL_VERSION_SIZE_VER0, "");
static_assert(sizeof(struct twheel_arm) == TWHEEL_ARM_SIZE_VER0 + 8, "");
static_assert(sizeof(struct twheel_event) == TWHEEL_EVENT_SIZE_VER0, "");
static_assert(sizeof(struct twheel_query) == TWHEEL_QUERY_SIZE_VER0 + 8, "");
/* An ioctl number keeps its struct's first size as the struct grows. */
static_assert(_IOC_SIZE(TWHEEL_IOC_VERSION) == TWHEEL_VERSION_SIZE_VER0, "");
static_assert(_IOC_SIZE(TWHEEL_IOC_ARM) == TWHEEL_ARM_SIZE_VER0, "");
static_assert(_IOC_SIZE(TWHEEL_IOC_ARM_BATCH) == TWHEEL_ARM_BATCH_SIZE_VER0, "");
static_assert(_IOC_SIZE(TWHEEL_IOC_CANCEL) == TWHEEL_CANCEL_SIZE_VER0, "");
static_assert(_IOC_SIZE(TWHEEL_IOC_CANCEL_BATCH) ==
	      TWHEEL_CANCEL_BATCH_SIZE_VER0, "");
static_assert(_IOC_SIZE(TWHEEL_IOC_MODIFY) == TWHEEL_MODIFY_SIZE_VER0, "");
static_assert(_IOC_SIZE(TWHEEL_IOC_QUERY) == TWHEEL_QUERY_SIZE_VER0, "");
static_assert(_IOC_SIZE(TWHEEL_IOC_CANCEL_ALL) == TWHEEL_CANCEL_ALL_SIZE_VER0,
	      "");
static_assert(_IOC_SIZE(TWHEEL_IOC_RING_SETUP) ==
	      TWHEEL_RING_SETUP_SIZE_VER0, "");
static_assert(_IOC_SIZE(TWHEEL_IOC_RING_FLUSH) ==
	      TWHEEL_RING_FLUSH_SIZE_VER0, "");

FIXTURE(uapi) {
	struct twl tw;
};

FIXTURE_SETUP(uapi)
{
	ASSERT_EQ(0, twl_open(&self->tw, O_CLOEXEC));
	ASSERT_EQ(0, twl_arm(&self->tw, SENTINEL, ~SENTINEL, 100 * MS, 0, 0, 0));
}

FIXTURE_TEARDOWN(uapi)
{
	struct twheel_event ev[1] = { 0 };

	/* Back to VER0 records, whatever a test asked for. */
	self->tw.version.want_event_size = TWHEEL_EVENT_SIZE_VER0;
	EXPECT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, &self->tw.version));
	EXPECT_EQ(1, tw_read_n(&self->tw, ev, 1, 5000));
	EXPECT_EQ(SENTINEL, ev[0].key);
	EXPECT_EQ(~SENTINEL, ev[0].data);
	EXPECT_TRUE(tw_late_ok(&ev[0], self->tw.version.tick_ns));
	twl_close(&self->tw);
}

/* A client of the first API: every struct at its *_SIZE_VER0. */
TEST_F(uapi, size_ver0_v1_client)
{
	struct twheel_version v = { .size = TWHEEL_VERSION_SIZE_VER0,
				    .api = TWHEEL_API };
	struct twheel_arm a = twl_arm_entry(1, 11, 10 * MS, 0, 0, 0);
	struct twheel_query q = { .size = TWHEEL_QUERY_SIZE_VER0, .key = 2 };
	struct twheel_modify m = { .size = TWHEEL_MODIFY_SIZE_VER0, .key = 2,
				   .expiry_ns = 20 * MS };
	struct twheel_cancel c = { .size = TWHEEL_CANCEL_SIZE_VER0, .key = 3 };
	__u64 keys[1] = { 4 };
	__s32 status[2] = { 7, 7 };
	struct twheel_arm e0[2] = { twl_arm_entry(3, 0, 10000 * MS, 0, 0, 0),
				    twl_arm_entry(4, 0, 10000 * MS, 0, 0, 0) };
	struct arm_v1 e[2];
	struct twheel_arm_batch ab = {
		.size = TWHEEL_ARM_BATCH_SIZE_VER0, .entries = (uintptr_t)e,
		.status = (uintptr_t)status, .count = 2,
		.entry_size = TWHEEL_ARM_SIZE_VER0,
	};
	struct twheel_cancel_batch cb = {
		.size = TWHEEL_CANCEL_BATCH_SIZE_VER0, .keys = (uintptr_t)keys,
		.status = (uintptr_t)status, .count = 1,
	};
	struct twheel_event ev[4];
	int i, n;

	/* Entries TWHEEL_ARM_SIZE_VER0 apart, each of that size. */
	for (i = 0; i < 2; i++) {
		e0[i].size = TWHEEL_ARM_SIZE_VER0;
		memcpy(&e[i], &e0[i], sizeof(e[i]));
	}
	/* A v1 client never sets want_event_size: VER0 records. */
	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, &v));
	EXPECT_EQ(TWHEEL_EVENT_SIZE_VER0, v.event_size);
	a.size = TWHEEL_ARM_SIZE_VER0;
	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &a));
	a.key = 2;
	a.expiry_ns = 10000 * MS;
	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &a));
	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_MODIFY, &m));
	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_QUERY, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	EXPECT_EQ(TWHEEL_QUERY_SIZE_VER0, q.size);
	EXPECT_GE(20 * MS, q.remaining_ns);
	EXPECT_EQ(2, twl_ioctl(&self->tw, TWHEEL_IOC_ARM_BATCH, &ab));
	EXPECT_EQ(0, status[0]);
	EXPECT_EQ(0, status[1]);
	EXPECT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_CANCEL, &c));
	EXPECT_EQ(1, twl_ioctl(&self->tw, TWHEEL_IOC_CANCEL_BATCH, &cb));
	/* Keys 1, 2 and the sentinel, in an order the load decides. */
	n = tw_read_n(&self->tw, ev, 3, 5000);
	ASSERT_EQ(3, n);
	for (i = 0; i < n; i++) {
		EXPECT_TRUE(ev[i].key == 1 || ev[i].key == 2 ||
			    ev[i].key == SENTINEL);
		EXPECT_LE(ev[i].deadline_ns, ev[i].fire_ns);	/* never early */
	}
	ASSERT_EQ(0, twl_arm(&self->tw, SENTINEL, ~SENTINEL, 10 * MS, 0, 0, 0));
}

/* A v2 client that leaves its new fields 0 works on this kernel. */
TEST_F(uapi, size_ver0_v2_client_zero_tail)
{
	struct version_v2 v = { .v1 = { .size = sizeof(v), .api = TWHEEL_API,
					.want_event_size = sizeof(struct event_v2) } };
	struct arm_v2 a = { .v1 = twl_arm_entry(1, 21, 10 * MS, 0, 0, 0) };
	struct arm_v2 e[2] = { { .v1 = twl_arm_entry(2, 22, 10 * MS, 0, 0, 0) },
			       { .v1 = twl_arm_entry(3, 23, 10000 * MS, 0, 0, 0) } };
	__s32 status[2];
	struct twheel_arm_batch ab = {
		.size = sizeof(ab), .entries = (uintptr_t)e,
		.status = (uintptr_t)status, .count = 2,
		.entry_size = sizeof(e[0]),
	};
	struct query_v2 q = { .v1 = { .size = sizeof(q), .key = 3 } };
	struct event_v2 ev[4];
	char buf[sizeof(struct event_v2) - 1];
	ssize_t r;
	int i, seen = 0;

	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, &v));
	EXPECT_EQ(sizeof(struct event_v2), v.v1.event_size);
	EXPECT_TRUE(v.v1.features & TWHEEL_FEATURE_EVENT_SIZE);
	EXPECT_EQ(0, v.more_features);	/* beyond the kernel's struct */
	a.v1.size = sizeof(a);
	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &a));
	e[0].v1.size = sizeof(e[0]);
	e[1].v1.size = sizeof(e[1]);
	EXPECT_EQ(2, twl_ioctl(&self->tw, TWHEEL_IOC_ARM_BATCH, &ab));
	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_QUERY, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.v1.state);
	EXPECT_EQ(23, q.v1.data);
	EXPECT_EQ(sizeof(q), q.v1.size);
	EXPECT_EQ(0, q.clockid);	/* not written: the kernel's struct is shorter */

	/* A buffer of less than one v2 record is too small now. */
	tw_sleep_ms(50);
	EXPECT_EQ(-1, read(self->tw.fd, buf, sizeof(buf)));
	EXPECT_EQ(EINVAL, errno);
	/* Records of the v2 size, the unknown field 0 (the sentinel too). */
	memset(ev, 0xa5, sizeof(ev));
	while (seen < 3) {
		struct pollfd p = { .fd = self->tw.fd, .events = POLLIN };

		ASSERT_EQ(1, poll(&p, 1, 5000));
		r = read(self->tw.fd, ev, sizeof(ev));
		ASSERT_LT(0, r);
		ASSERT_EQ(0, r % sizeof(ev[0]));
		for (i = 0; i < r / (ssize_t)sizeof(ev[0]); i++, seen++) {
			EXPECT_EQ(0, ev[i].clockid);
			EXPECT_EQ(ev[i].v1.key == SENTINEL ? ~SENTINEL :
				  20 + ev[i].v1.key, ev[i].v1.data);
			EXPECT_LE(ev[i].v1.deadline_ns, ev[i].v1.fire_ns);
		}
	}
	EXPECT_EQ(3, seen);
	EXPECT_EQ(0, twl_cancel(&self->tw, 3));
	ASSERT_EQ(0, twl_arm(&self->tw, SENTINEL, ~SENTINEL, 10 * MS, 0, 0, 0));
}

/*
 * A v2 client that uses its new field gets -E2BIG and the kernel's size,
 * and succeeds with that size: nothing was armed by the failed call.
 */
TEST_F(uapi, size_ver0_v2_client_e2big_writes_size)
{
	struct arm_v2 a = { .v1 = twl_arm_entry(1, 31, 10000 * MS, 0, 0, 0) };
	struct query_v2 q = { .v1 = { .size = sizeof(q), .key = 1 },
			      .clockid = 1 };
	struct arm_v2 e = { .v1 = twl_arm_entry(2, 32, 10000 * MS, 0, 0, 0), .future_ns = 1 };
	__s32 status = TWHEEL_STATUS_UNDONE;
	struct twheel_arm_batch ab = {
		.size = sizeof(ab), .entries = (uintptr_t)&e,
		.status = (uintptr_t)&status, .count = 1,
		.entry_size = sizeof(e),
	};
	char *page = malloc(2 * 4096);
	struct twheel_query *bigq = (struct twheel_query *)page;

	ASSERT_NE(NULL, page);
	a.v1.size = sizeof(a);
	a.future_ns = 5 * MS;
	EXPECT_EQ(-E2BIG, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &a));
	EXPECT_EQ(sizeof(struct twheel_arm), a.v1.size);
	EXPECT_EQ(-ENOENT, twl_cancel(&self->tw, 1));
	/* The caller falls back to what the kernel knows. */
	EXPECT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &a));
	EXPECT_EQ(-E2BIG, tw_ioctl(self->tw.fd, TWHEEL_IOC_QUERY, &q));
	EXPECT_EQ(sizeof(struct twheel_query), q.v1.size);
	EXPECT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_QUERY, &q));
	EXPECT_EQ(31, q.v1.data);
	/* Above a page: -E2BIG even with a zero tail, and the size. */
	memset(page, 0, 2 * 4096);
	bigq->size = 4096 + 8;
	bigq->key = 1;
	EXPECT_EQ(-E2BIG, tw_ioctl(self->tw.fd, TWHEEL_IOC_QUERY, bigq));
	EXPECT_EQ(sizeof(struct twheel_query), bigq->size);
	/* A batch entry: -E2BIG in its status; entries are never written. */
	e.v1.size = sizeof(e);
	EXPECT_EQ(0, twl_ioctl(&self->tw, TWHEEL_IOC_ARM_BATCH, &ab));
	EXPECT_EQ(-E2BIG, status);
	EXPECT_EQ(sizeof(e), e.v1.size);
	EXPECT_EQ(-ENOENT, twl_cancel(&self->tw, 2));
	EXPECT_EQ(2, tw_fdinfo(self->tw.fd, "timers"));
	EXPECT_EQ(0, twl_cancel(&self->tw, 1));
	free(page);
}

/* Bad sizes: -EINVAL, and nothing changes. */
TEST_F(uapi, size_ver0_bad_sizes)
{
	struct twheel_version v = { .size = sizeof(v), .api = TWHEEL_API };
	struct twheel_arm a = twl_arm_entry(1, 0, 0, 0, 0, 0);
	static const __u32 bad[] = { 8, TWHEEL_EVENT_SIZE_VER0 - 8,
				     TWHEEL_EVENT_SIZE_VER0 + 4,
				     TWHEEL_EVENT_SIZE_MAX + 8, UINT32_MAX };
	unsigned int i;

	a.size = TWHEEL_ARM_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &a));
	v.size = TWHEEL_VERSION_SIZE_VER0 - 4;
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, &v));
	v.size = sizeof(v);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		v.want_event_size = bad[i];
		EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, &v));
	}
	/* Unchanged, and 0 keeps the size. */
	v.want_event_size = 0;
	EXPECT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, &v));
	EXPECT_EQ(TWHEEL_EVENT_SIZE_VER0, v.event_size);
	v.want_event_size = TWHEEL_EVENT_SIZE_MAX;
	EXPECT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, &v));
	EXPECT_EQ(TWHEEL_EVENT_SIZE_MAX, v.event_size);
	v.want_event_size = 0;
	EXPECT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, &v));
	EXPECT_EQ(TWHEEL_EVENT_SIZE_MAX, v.event_size);
	EXPECT_EQ(1, tw_fdinfo(self->tw.fd, "timers"));
	EXPECT_EQ(TWHEEL_EVENT_SIZE_MAX, tw_fdinfo(self->tw.fd, "event_size"));
}

/* TWHEEL_IOC_VERSION that asks for the record size and sets none. */
static int version_ask(int fd, struct twheel_version *v)
{
	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v);
	v->api = TWHEEL_API;
	return tw_ioctl(fd, TWHEEL_IOC_VERSION, v);
}

/*
 * twl_read() on a file whose records are larger than this header's struct
 * (another holder asked for them): each record lands in its own struct,
 * its tail cut off, and the buffer takes as many records as fit in it.
 */
TEST_F(uapi, lib_read_larger_records)
{
	struct twheel_event ev[4];
	int i, got = 0;
	struct twl tw2;
	long r;

	ASSERT_EQ(0, twl_open(&tw2, O_CLOEXEC));
	ASSERT_EQ(0, twl_version(&tw2, 64));
	ASSERT_EQ(64, tw2.version.event_size);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, twl_arm(&tw2, i, 100 + i, 0, 0, 0, 0));
	while (got < 3 && twl_wait(&tw2, 5000) > 0) {
		r = twl_read(&tw2, ev, 4);
		/* 160 bytes hold two records of 64. */
		ASSERT_LT(0, r);
		ASSERT_GE(2, r);
		for (i = 0; i < r; i++) {
			EXPECT_EQ(100 + ev[i].key, ev[i].data);
			EXPECT_EQ(TWHEEL_EVENT_LAST, ev[i].flags);
		}
		got += r;
	}
	EXPECT_EQ(3, got);
	twl_close(&tw2);
}

/* The record size belongs to the open file: dup shares it, open does not. */
TEST_F(uapi, size_ver0_event_size_per_file)
{
	struct twheel_version v = { .size = sizeof(v), .api = TWHEEL_API,
				    .want_event_size = 64 };
	int fd3 = dup(self->tw.fd);
	struct twheel_version v2;
	struct twheel_query q;
	struct twl tw2;
	struct {
		struct twheel_event ev;
		__u64 tail[3];
	} rec;
	struct twheel_event ev;

	ASSERT_EQ(0, twl_open(&tw2, O_CLOEXEC));
	ASSERT_LE(0, fd3);
	ASSERT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, &v));
	ASSERT_EQ(0, version_ask(tw2.fd, &v2));
	EXPECT_EQ(TWHEEL_EVENT_SIZE_VER0, v2.event_size);
	ASSERT_EQ(0, version_ask(fd3, &v2));
	EXPECT_EQ(64, v2.event_size);
	ASSERT_EQ(0, twl_arm(&tw2, 1, 41, 0, 0, 0, 0));
	ASSERT_EQ(1, tw_read_n(&tw2, &ev, 1, 5000));
	EXPECT_EQ(41, ev.data);
	ASSERT_EQ(0, twl_arm(&self->tw, 1, 42, 0, 0, 0, 0));
	/* The sentinel may come first: read until key 1, then re-arm it. */
	do {
		struct pollfd p = { .fd = fd3, .events = POLLIN };

		ASSERT_EQ(1, poll(&p, 1, 5000));
		memset(&rec, 0xa5, sizeof(rec));
		ASSERT_EQ(64, read(fd3, &rec, sizeof(rec)));
		EXPECT_EQ(0, rec.tail[0]);
		EXPECT_EQ(0, rec.tail[2]);
	} while (rec.ev.key == SENTINEL);
	EXPECT_EQ(1, rec.ev.key);
	EXPECT_EQ(42, rec.ev.data);
	if (twl_query(&self->tw, SENTINEL, &q))
		ASSERT_EQ(0, twl_arm(&self->tw, SENTINEL, ~SENTINEL, 10 * MS,
				     0, 0, 0));
	twl_close(&tw2);
	close(fd3);
}

/* Fill @n status slots with TWHEEL_STATUS_UNDONE. */
static void status_undone(__s32 *status, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		status[i] = TWHEEL_STATUS_UNDONE;
}

/*
 * A status array that faults part way: the chunks before the fault are
 * processed and reported, nothing after it; TWHEEL_BATCH_PROGRESS says
 * how far, the default return is -EFAULT.
 */
TEST_F(uapi, batch_status_fault_stops_between_chunks)
{
	char *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* 100 slots, the last 36 in the PROT_NONE page. */
	__s32 *status = (__s32 *)(p + 4096) - 64;
	__u64 keys[100];
	struct twheel_arm e[100];
	struct twheel_arm_batch ab = {
		.size = sizeof(ab), .entries = (uintptr_t)e,
		.status = (uintptr_t)status, .count = 100,
		.entry_size = sizeof(e[0]),
	};
	struct twheel_cancel_batch cb = {
		.size = sizeof(cb), .keys = (uintptr_t)keys,
		.status = (uintptr_t)status, .count = 100,
	};
	struct twheel_query q;
	int i;

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, mprotect(p + 4096, 4096, PROT_NONE));
	for (i = 0; i < 100; i++) {
		e[i] = twl_arm_entry(1000 + i, i, 10000 * MS, 0, 0, 0);
		keys[i] = 1000 + i;
	}
	e[5].flags = 1U << 30;	/* a bad entry, reported in its status */
	status_undone(status, 64);
	EXPECT_EQ(-EFAULT, twl_ioctl(&self->tw, TWHEEL_IOC_ARM_BATCH, &ab));
	EXPECT_EQ(0, status[0]);
	EXPECT_EQ(-EINVAL, status[5]);
	EXPECT_EQ(0, status[63]);
	EXPECT_EQ(0, twl_query(&self->tw, 1063, &q));
	EXPECT_EQ(-ENOENT, twl_query(&self->tw, 1064, &q));
	EXPECT_EQ(1 + 63, tw_fdinfo(self->tw.fd, "timers"));

	status_undone(status, 64);
	ab.flags = TWHEEL_BATCH_PROGRESS;
	e[5].flags = 0;
	EXPECT_EQ(64, twl_ioctl(&self->tw, TWHEEL_IOC_ARM_BATCH, &ab));
	EXPECT_EQ(0, status[5]);
	EXPECT_EQ(-EEXIST, status[6]);
	/* Faulting at the first chunk: nothing processed, -EFAULT. */
	ab.status = (uintptr_t)(p + 4096);
	EXPECT_EQ(-EFAULT, twl_ioctl(&self->tw, TWHEEL_IOC_ARM_BATCH, &ab));
	EXPECT_EQ(1 + 64, tw_fdinfo(self->tw.fd, "timers"));

	/* The same for CANCEL_BATCH. */
	status_undone(status, 64);
	cb.flags = TWHEEL_BATCH_PROGRESS;
	EXPECT_EQ(64, twl_ioctl(&self->tw, TWHEEL_IOC_CANCEL_BATCH, &cb));
	EXPECT_EQ(0, status[63]);
	EXPECT_EQ(1, tw_fdinfo(self->tw.fd, "timers"));
	/* Unknown batch flags. */
	cb.flags = 2;
	EXPECT_EQ(-EINVAL, twl_ioctl(&self->tw, TWHEEL_IOC_CANCEL_BATCH, &cb));
	ab.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, twl_ioctl(&self->tw, TWHEEL_IOC_ARM_BATCH, &ab));
	munmap(p, 2 * 4096);
}

/*
 * A huge batch dies at once with its caller. The child runs a batch of
 * 2^24 entries that reads zero pages (keys 0, or entries of size 0, each
 * failing on its own) on the parent's file; the parent kills it once the
 * batch has started. The child must be gone within a second or two, the
 * status array must show where it stopped (a chunk boundary), and the
 * parent's timers must be intact.
 */
static void batch_killed(struct __test_metadata *_metadata, int fd, int arm)
{
	const size_t n = 1 << 24;
	__s32 *status = mmap(NULL, n * sizeof(*status), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	size_t esize = arm ? sizeof(struct twheel_arm) : sizeof(__u64);
	void *zeros = mmap(NULL, n * esize, PROT_READ,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct timespec t0, t1;
	size_t i, done;
	pid_t pid;
	int wst;
	long ms;

	ASSERT_NE(MAP_FAILED, status);
	ASSERT_NE(MAP_FAILED, zeros);
	status_undone(status, n);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct twheel_arm_batch ab = {
			.size = sizeof(ab), .entries = (uintptr_t)zeros,
			.status = (uintptr_t)status, .count = n,
			.entry_size = sizeof(struct twheel_arm),
		};
		struct twheel_cancel_batch cb = {
			.size = sizeof(cb), .keys = (uintptr_t)zeros,
			.status = (uintptr_t)status, .count = n,
		};

		if (arm)
			ioctl(fd, TWHEEL_IOC_ARM_BATCH, &ab);
		else
			ioctl(fd, TWHEEL_IOC_CANCEL_BATCH, &cb);
		_exit(3);	/* finished: not what the test wants */
	}
	/* Wait until the batch runs, then kill it. */
	for (i = 0; i < 10000 && status[0] == TWHEEL_STATUS_UNDONE; i++)
		tw_sleep_ms(1);
	ASSERT_NE(TWHEEL_STATUS_UNDONE, status[0]);
	tw_sleep_ms(100);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &wst, 0));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	EXPECT_TRUE(WIFSIGNALED(wst));
	EXPECT_GT(2000, ms);
	for (done = 0; done < n && status[done] != TWHEEL_STATUS_UNDONE; done++)
		if (status[done] != (arm ? -EINVAL : -ENOENT))
			break;
	for (i = done; i < n && status[i] == TWHEEL_STATUS_UNDONE; i++)
		;
	printf("# %s batch killed after %zu of %zu entries, reaped in %ld ms\n",
	       arm ? "arm" : "cancel", done, n, ms);
	EXPECT_LT(0, done);
	EXPECT_GT(n, done);
	EXPECT_EQ(0, done % 64);
	EXPECT_EQ(n, i);	/* nothing after the stop was touched */
	EXPECT_EQ(1, tw_fdinfo(fd, "timers"));
	munmap(status, n * sizeof(*status));
	munmap(zeros, n * esize);
}

TEST_F(uapi, batch_cancel_killable)
{
	batch_killed(_metadata, self->tw.fd, 0);
}

TEST_F(uapi, batch_arm_killable)
{
	batch_killed(_metadata, self->tw.fd, 1);
}

/* Entry @i of a mixed batch: key 1000 + @i, data @i, at @deadline. */
static void mixed_entry(struct twheel_arm *e, int i, __u64 deadline)
{
	*e = twl_arm_entry(1000 + i, i, deadline, 0, 0, 0);
	e->flags = TWHEEL_ARM_ABS;
}

/*
 * A batch of two chunks (64 + 36) whose entries mix new keys, duplicates
 * (with and without REPLACE) of keys made earlier in the same chunk and of
 * keys the file had, bad entries, a periodic timer, and the file's limit,
 * reached in the middle of the first chunk. Every status is what ARM
 * would have returned entry by entry, the timers that took effect fire
 * once each with their last data, in the order they were (re)armed, and
 * nothing else fires.
 */
TEST_F(uapi, batch_mixed_chunks)
{
	__u64 d = tw_now() + 400 * MS;
	struct twheel_arm e[100];
	struct twl tw;
	/* The events' keys in order, and the data of each key. */
	static const int order[] = {
		1001, 1002, 1010, 1012, 1013, 1014, 1015, 1016, 1017, 1018,
		1019, 1020, 1021, 1022, 1023, 1024, 1025, 1026, 1027, 1028,
		1029, 1030, 1031, 1032, 1033, 1034, 1035, 1036, 1000, 1011,
	};
	struct twheel_event ev[32];
	__s32 status[100], want[100];
	unsigned long old_max;
	int i, n;

	ASSERT_EQ(0, twl_open(&tw, O_CLOEXEC));
	/* A key the file has before the batch. */
	ASSERT_EQ(0, twl_arm(&tw, 5000, 0, 10000 * MS, 0, 0, 0));
	for (i = 0; i < 100; i++) {
		mixed_entry(&e[i], i, d);
		/* Past the file's limit of 31: -ENOSPC unless said below. */
		want[i] = i <= 2 || (i >= 10 && i <= 36) ? 0 : -ENOSPC;
	}
	e[3].key = 1001;			/* made by e[1] */
	want[3] = -EEXIST;
	e[4].key = 1002;			/* made by e[2], replaced */
	e[4].flags |= TWHEEL_ARM_REPLACE;
	want[4] = 0;
	e[5].flags |= 1U << 30;
	want[5] = -EINVAL;
	e[6].period_ns = 1;			/* below a tick */
	want[6] = -EINVAL;
	e[7].key = 5000;			/* the file had it */
	want[7] = -EEXIST;
	e[8].size = sizeof(e[8]) - 8;		/* not entry_size */
	want[8] = -EINVAL;
	e[9].__reserved = 1;
	want[9] = -EINVAL;
	e[10].period_ns = 20 * MS;		/* two fires */
	e[10].count = 2;
	e[40].key = 1037;			/* e[37] found no room */
	e[41].key = 1000;			/* made by e[0], replaced */
	e[41].flags |= TWHEEL_ARM_REPLACE;
	want[41] = 0;
	e[42].key = 1010;			/* made by e[10] */
	want[42] = -EEXIST;
	e[70].key = 1011;			/* replaced from chunk 2 */
	e[70].flags |= TWHEEL_ARM_REPLACE;
	want[70] = 0;
	e[71].key = 5000;
	want[71] = -EEXIST;
	e[72].count = 3;			/* a count without a period */
	want[72] = -EINVAL;

	ASSERT_EQ(0, tw_param_read("max_timers", &old_max));
	ASSERT_EQ(0, tw_param_write("max_timers", 31));
	n = twl_arm_batch(&tw, e, 100, status);
	ASSERT_EQ(0, tw_param_write("max_timers", old_max));
	EXPECT_EQ(3 + 1 + 27 + 1 + 1, n);
	for (i = 0; i < 100; i++)
		EXPECT_EQ(want[i], status[i]) TH_LOG("entry %d", i);
	EXPECT_EQ(31, tw_fdinfo(tw.fd, "timers"));
	EXPECT_EQ(1 + 33, tw_fdinfo(tw.fd, "armed"));

	/* All due at d, the periodic one also at d + 20 ms: one event. */
	while (tw_now() < d + 200 * MS)
		tw_sleep_ms(10);
	n = tw_read_n(&tw, ev, 32, 2000);
	ASSERT_EQ(30, n);
	for (i = 0; i < n; i++) {
		int key = order[i];
		__u64 data = key == 1000 ? 41 : key == 1002 ? 4 :
			     key == 1011 ? 70 : key - 1000;

		EXPECT_EQ(key, ev[i].key) TH_LOG("event %d", i);
		EXPECT_EQ(data, ev[i].data) TH_LOG("key %d", key);
		EXPECT_EQ(d + (key == 1010 ? 20 * MS : 0), ev[i].deadline_ns);
		EXPECT_EQ(key == 1010 ? 1 : 0, ev[i].overruns);
		EXPECT_EQ(TWHEEL_EVENT_LAST, ev[i].flags);
		EXPECT_TRUE(tw_late_ok(&ev[i], self->tw.version.tick_ns));
	}
	EXPECT_TRUE(tw_quiet_for(&tw, 50));
	EXPECT_EQ(1, tw_fdinfo(tw.fd, "timers"));
	EXPECT_EQ(0, twl_cancel(&tw, 5000));
	twl_close(&tw);
}

/*
 * The user's limit reached in the middle of a chunk: the entries after it
 * fail with -ENOSPC and change nothing, the user is charged for exactly
 * the timers made, and room freed by cancels is used by the next batch.
 */
TEST_F(uapi, batch_user_limit_mid_chunk)
{
	__u64 d = tw_now() + 10000 * MS;
	struct twheel_arm e[64];
	unsigned long old_user;
	struct twl tw;
	long long base;
	__s32 status[64];
	int i, n, n2;

	ASSERT_EQ(0, twl_open(&tw, O_CLOEXEC));
	base = tw_fdinfo(tw.fd, "user_timers");
	ASSERT_LE(1, base);		/* the fixture's sentinel */
	for (i = 0; i < 64; i++)
		mixed_entry(&e[i], i, d);
	ASSERT_EQ(0, tw_param_read("max_user_timers", &old_user));
	ASSERT_EQ(0, tw_param_write("max_user_timers", base + 20));
	n = twl_arm_batch(&tw, e, 64, status);
	for (i = 0; i < 64; i++)
		EXPECT_EQ(i < 20 ? 0 : -ENOSPC, status[i]) TH_LOG("entry %d", i);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0, twl_cancel(&tw, 1000 + i));
	/* Five new keys fit again; a duplicate of one of them does not. */
	for (i = 0; i < 10; i++)
		mixed_entry(&e[i], 100 + i, d);
	e[3].key = 1100;
	e[4].key = 1100;
	e[4].flags |= TWHEEL_ARM_REPLACE;
	n2 = twl_arm_batch(&tw, e, 10, status);
	ASSERT_EQ(0, tw_param_write("max_user_timers", old_user));

	EXPECT_EQ(20, n);
	EXPECT_EQ(6, n2);
	/* 1100, 1101, 1102, 1100 again (replaced), 1105, 1106 */
	for (i = 0; i < 10; i++)
		EXPECT_EQ(i <= 2 || i == 4 || i == 5 || i == 6 ? 0 :
			  i == 3 ? -EEXIST : -ENOSPC, status[i])
			TH_LOG("entry %d", i);
	EXPECT_EQ(20, tw_fdinfo(tw.fd, "timers"));
	EXPECT_EQ(base + 20, tw_fdinfo(tw.fd, "user_timers"));
	EXPECT_EQ(20, twl_cancel_all(&tw));
	EXPECT_EQ(base, tw_fdinfo(tw.fd, "user_timers"));
	twl_close(&tw);
}

/* MemTotal of /proc/meminfo in bytes, or 0. */
static unsigned long long mem_total(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/*
 * The default limits follow the machine's memory (1/32 of RAM at 160 bytes
 * a timer, between 16384 and 4194304 per user; at most 1048576 per file),
 * and VERSION, the module parameters and fdinfo agree on the limits in
 * force; fdinfo counts the user's timers.
 */
TEST_F(uapi, limits_scaled_and_in_fdinfo)
{
	unsigned long long user = mem_total() / 32 / 160;
	unsigned long p_file, p_user;
	long long before;

	ASSERT_NE(0, user);
	user = user < 16384 ? 16384 : user > 4194304 ? 4194304 : user;
	ASSERT_EQ(0, tw_param_read("max_timers", &p_file));
	ASSERT_EQ(0, tw_param_read("max_user_timers", &p_user));
	TH_LOG("MemTotal %llu MiB: max_user_timers %lu (default %llu), max_timers %lu",
	       mem_total() >> 20, p_user, user, p_file);
	EXPECT_EQ(user, p_user);
	EXPECT_EQ(user < 1048576 ? user : 1048576, p_file);
	EXPECT_EQ(p_file, self->tw.version.max_timers);
	EXPECT_EQ(p_user, self->tw.version.max_user_timers);
	EXPECT_EQ(p_file, tw_fdinfo(self->tw.fd, "max_timers"));
	EXPECT_EQ(p_user, tw_fdinfo(self->tw.fd, "max_user_timers"));
	/* A limit changed at run time shows at once. */
	ASSERT_EQ(0, tw_param_write("max_timers", p_file - 1));
	EXPECT_EQ(p_file - 1, tw_fdinfo(self->tw.fd, "max_timers"));
	ASSERT_EQ(0, tw_param_write("max_timers", p_file));
	before = tw_fdinfo(self->tw.fd, "user_timers");
	EXPECT_LE(1, before);
	ASSERT_EQ(0, twl_arm(&self->tw, 1, 0, 10000 * MS, 0, 0, 0));
	EXPECT_EQ(before + 1, tw_fdinfo(self->tw.fd, "user_timers"));
	EXPECT_EQ(0, twl_cancel(&self->tw, 1));
	EXPECT_EQ(before, tw_fdinfo(self->tw.fd, "user_timers"));
}

#define TIMENS_OFFSET_S	(10 * 86400L)	/* 10 days ahead of the host */

/*
 * Fired on its deadline in the namespace's time: never early, and late by
 * less than a second (a wrong conversion is off by days). The lateness
 * bound itself is other tests' business: a loaded host stretches it.
 */
static int fired_in(const struct twheel_event *ev, __u64 tick_ns)
{
	return ev->fire_ns >= ev->deadline_ns &&
	       ev->fire_ns - ev->deadline_ns < tick_ns + 1000 * MS;
}

/*
 * In the namespace: exit with the number of the first failed check. Its
 * own file for what it reads (the parent's sentinel fires meanwhile), the
 * parent's @ptw for a timer the parent checks.
 */
static int timens_child(const struct twl *ptw, __u64 tick_ns)
{
	__u64 now = tw_now(), host_now, d1, d2, d3;
	struct twl tw;
	int err = twl_open(&tw, O_CLOEXEC);
	struct twheel_query q;
	struct twheel_event ev[1];

	/* The namespace's clock is ahead: otherwise the test is moot. */
	if (now < TIMENS_OFFSET_S * 1000000000ULL)
		return 10;
	if (err)
		return 9;
	host_now = now - TIMENS_OFFSET_S * 1000000000ULL;
	/* 200 ms from the namespace's now. */
	d1 = now + 200 * MS;
	if (twl_arm(&tw, 1, 1, d1, 0, 0, TWHEEL_ARM_ABS))
		return 11;
	if (twl_query(&tw, 1, &q) || q.deadline_ns != d1 ||
	    q.remaining_ns > 200 * MS)
		return 12;
	/* A second ago in the namespace: fires at once, reported as given. */
	d2 = now - 1000 * MS;
	if (twl_arm(&tw, 2, 2, d2, 0, 0, TWHEEL_ARM_ABS))
		return 13;
	if (tw_read_n(&tw, ev, 1, 5000) != 1 || ev[0].key != 2)
		return 14;
	if (ev[0].deadline_ns != d2 || ev[0].fire_ns < now ||
	    ev[0].fire_ns > tw_now())
		return 15;
	/*
	 * Host time, before the namespace's offset: long past, taken as
	 * the host's 0 as timens_ktime_to_host() does, reported as such.
	 */
	if (twl_arm(&tw, 6, 6, host_now, 0, 0, TWHEEL_ARM_ABS))
		return 24;
	if (tw_read_n(&tw, ev, 1, 5000) != 1 || ev[0].key != 6 ||
	    ev[0].deadline_ns != TIMENS_OFFSET_S * 1000000000ULL ||
	    ev[0].fire_ns < now)
		return 25;
	/* Key 1 fires 200 ms later, not 10 days later, and not early. */
	if (tw_read_n(&tw, ev, 1, 5000) != 1 || ev[0].key != 1)
		return 16;
	if (ev[0].deadline_ns != d1 || !fired_in(&ev[0], tick_ns))
		return 17;
	if (tw_now() < d1)
		return 18;
	/* MODIFY to an absolute time of the namespace. */
	if (twl_arm(&tw, 3, 3, 100000 * MS, 0, 0, 0))
		return 19;
	d3 = tw_now() + 50 * MS;
	if (twl_modify(&tw, 3, d3, TWHEEL_ARM_ABS))
		return 20;
	if (tw_read_n(&tw, ev, 1, 5000) != 1 || ev[0].key != 3 ||
	    ev[0].deadline_ns != d3 || !fired_in(&ev[0], tick_ns))
		return 21;
	/* Far beyond the range, in the namespace as in the host. */
	if (twl_arm(&tw, 4, 0, (__u64)INT64_MAX + 1, 0, 0, TWHEEL_ARM_ABS) !=
	    -ERANGE)
		return 22;
	/* Left for the parent: key 5, 10 s ahead in the namespace. */
	if (twl_arm(ptw, 5, 5, tw_now() + 10000 * MS, 0, 0, TWHEEL_ARM_ABS))
		return 23;
	twl_close(&tw);
	return 0;
}

/*
 * Absolute deadlines and reported times follow the caller's namespace:
 * the child arms and reads in a namespace 10 days ahead; the parent, in
 * the host's, sees the same timer 10 days earlier.
 */
TEST_F(uapi, timens_monotonic_offset)
{
	struct twheel_query q;
	__u64 before = tw_now();
	int pid, wst;

	pid = tw_timens_fork("monotonic", TIMENS_OFFSET_S);
	if (pid == -EINVAL || pid == -ENOENT)
		SKIP(return, "no time namespaces (CONFIG_TIME_NS=n)");
	if (pid == -EPERM)
		SKIP(return, "may not create a time namespace");
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(timens_child(&self->tw, self->tw.version.tick_ns));
	ASSERT_EQ(pid, waitpid(pid, &wst, 0));
	ASSERT_TRUE(WIFEXITED(wst));
	EXPECT_EQ(0, WEXITSTATUS(wst));
	/* The child's key 5, in host time: about 10 s from now. */
	ASSERT_EQ(0, twl_query(&self->tw, 5, &q));
	EXPECT_EQ(5, q.data);
	EXPECT_LT(before + 9000 * MS, q.deadline_ns);
	EXPECT_GT(tw_now() + 10000 * MS, q.deadline_ns);
	EXPECT_EQ(0, twl_cancel(&self->tw, 5));
}

/* A namespace behind the host: deadlines before its zero read as 0. */
TEST_F(uapi, timens_negative_offset)
{
	__u64 up = tw_now() / 1000000000ULL;
	int pid, wst;

	if (up < 3)
		SKIP(return, "uptime below 3 s");
	/* Namespace time = host time - (up - 1) s: about 1 s now. */
	pid = tw_timens_fork("monotonic", -(long)(up - 1));
	if (pid == -EINVAL || pid == -ENOENT)
		SKIP(return, "no time namespaces (CONFIG_TIME_NS=n)");
	if (pid == -EPERM)
		SKIP(return, "may not create a time namespace");
	ASSERT_LE(0, pid);
	if (!pid) {
		struct twheel_event ev;
		__u64 now = tw_now(), d = now + 100 * MS;
		struct twl tw;
		int err = twl_open(&tw, O_CLOEXEC);

		if (now > 100000 * MS)
			_exit(10);
		if (err || twl_arm(&tw, 1, 1, d, 0, 0, TWHEEL_ARM_ABS))
			_exit(11);
		if (tw_read_n(&tw, &ev, 1, 5000) != 1 || ev.key != 1 ||
		    ev.deadline_ns != d || !fired_in(&ev, self->tw.version.tick_ns))
			_exit(12);
		/* The namespace's zero: long past, fires at once. */
		if (twl_arm(&tw, 2, 2, 0, 0, 0, TWHEEL_ARM_ABS) ||
		    tw_read_n(&tw, &ev, 1, 5000) != 1 || ev.key != 2 ||
		    ev.deadline_ns != 0)
			_exit(13);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &wst, 0));
	ASSERT_TRUE(WIFEXITED(wst));
	EXPECT_EQ(0, WEXITSTATUS(wst));
}

TW_HARNESS_MAIN
