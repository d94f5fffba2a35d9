// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel selftests: the UAPI made to last.
 *
 * - size_ver0_*: structs grow as the kernel's extensible structs do. A "v1"
 *   client passes the *_SIZE_VER0 sizes; a "v2" client was built against a
 *   header whose structs (and struct twheel_event) have grown by a field the
 *   running kernel does not know. Both must work, and a v2 client that uses
 *   its new field learns the kernel's size from -E2BIG.
 *
 * Each test arms a sentinel timer first; the teardown checks that it still
 * fires, with the right key and data: no bad input loses another timer.
 */
#define _GNU_SOURCE
#include <assert.h>

#include "twheel_test.h"
#include "kselftest_harness.h"

#define SENTINEL	0x5e5e5e5eULL

/* What a "v2" header would declare: each struct with one more field. */
struct arm_v2 {
	struct twheel_arm v1;
	__aligned_u64 slack_ns;		/* unknown to this kernel */
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

/* Today's structs are the first ones. */
static_assert(sizeof(struct twheel_version) == TWHEEL_VERSION_SIZE_VER0, "");
static_assert(sizeof(struct twheel_arm) == TWHEEL_ARM_SIZE_VER0, "");
static_assert(sizeof(struct twheel_event) == TWHEEL_EVENT_SIZE_VER0, "");

FIXTURE(uapi) {
	int fd;
	struct twheel_version v;
};

FIXTURE_SETUP(uapi)
{
	self->fd = open(TW_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, tw_version(self->fd, &self->v));
	ASSERT_EQ(0, tw_arm(self->fd, SENTINEL, ~SENTINEL, 100 * MS, 0, 0, 0));
}

FIXTURE_TEARDOWN(uapi)
{
	struct twheel_event ev[1];

	/* Back to VER0 records, whatever a test asked for. */
	self->v.want_event_size = TWHEEL_EVENT_SIZE_VER0;
	ASSERT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_VERSION, &self->v));
	ASSERT_EQ(1, tw_read_n(self->fd, ev, 1, 5000));
	EXPECT_EQ(SENTINEL, ev[0].key);
	EXPECT_EQ(~SENTINEL, ev[0].data);
	EXPECT_TRUE(tw_late_ok(&ev[0], self->v.tick_ns));
	close(self->fd);
}

/* A client of the first API: every struct at its *_SIZE_VER0. */
TEST_F(uapi, size_ver0_v1_client)
{
	struct twheel_version v = { .size = TWHEEL_VERSION_SIZE_VER0,
				    .api = TWHEEL_API };
	struct twheel_arm a = tw_arm_rel(1, 11, 10 * MS);
	struct twheel_query q = { .size = TWHEEL_QUERY_SIZE_VER0, .key = 2 };
	struct twheel_modify m = { .size = TWHEEL_MODIFY_SIZE_VER0, .key = 2,
				   .expiry_ns = 20 * MS };
	struct twheel_cancel c = { .size = TWHEEL_CANCEL_SIZE_VER0, .key = 3 };
	__u64 keys[1] = { 4 };
	__s32 status[2] = { 7, 7 };
	struct twheel_arm e[2] = { tw_arm_rel(3, 0, 10000 * MS),
				   tw_arm_rel(4, 0, 10000 * MS) };
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

	/* A v1 client never sets want_event_size: VER0 records. */
	ASSERT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_VERSION, &v));
	EXPECT_EQ(TWHEEL_EVENT_SIZE_VER0, v.event_size);
	a.size = TWHEEL_ARM_SIZE_VER0;
	ASSERT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_ARM, &a));
	a.key = 2;
	a.expiry_ns = 10000 * MS;
	ASSERT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_ARM, &a));
	ASSERT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_MODIFY, &m));
	ASSERT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_QUERY, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.state);
	EXPECT_EQ(TWHEEL_QUERY_SIZE_VER0, q.size);
	EXPECT_GE(20 * MS, q.remaining_ns);
	EXPECT_EQ(2, tw_ioctl_ret(self->fd, TWHEEL_IOC_ARM_BATCH, &ab));
	EXPECT_EQ(0, status[0]);
	EXPECT_EQ(0, status[1]);
	EXPECT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_CANCEL, &c));
	EXPECT_EQ(1, tw_ioctl_ret(self->fd, TWHEEL_IOC_CANCEL_BATCH, &cb));
	/* Keys 1, 2 and the sentinel, in an order the load decides. */
	n = tw_read_n(self->fd, ev, 3, 5000);
	ASSERT_EQ(3, n);
	for (i = 0; i < n; i++) {
		EXPECT_TRUE(ev[i].key == 1 || ev[i].key == 2 ||
			    ev[i].key == SENTINEL);
		EXPECT_TRUE(tw_late_ok(&ev[i], self->v.tick_ns));
	}
	ASSERT_EQ(0, tw_arm(self->fd, SENTINEL, ~SENTINEL, 10 * MS, 0, 0, 0));
}

/* A v2 client that leaves its new fields 0 works on this kernel. */
TEST_F(uapi, size_ver0_v2_client_zero_tail)
{
	struct version_v2 v = { .v1 = { .size = sizeof(v), .api = TWHEEL_API,
					.want_event_size = sizeof(struct event_v2) } };
	struct arm_v2 a = { .v1 = tw_arm_rel(1, 21, 10 * MS) };
	struct arm_v2 e[2] = { { .v1 = tw_arm_rel(2, 22, 10 * MS) },
			       { .v1 = tw_arm_rel(3, 23, 10000 * MS) } };
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

	ASSERT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_VERSION, &v));
	EXPECT_EQ(sizeof(struct event_v2), v.v1.event_size);
	EXPECT_TRUE(v.v1.features & TWHEEL_FEATURE_EVENT_SIZE);
	EXPECT_EQ(0, v.more_features);	/* beyond the kernel's struct */
	a.v1.size = sizeof(a);
	ASSERT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_ARM, &a));
	e[0].v1.size = sizeof(e[0]);
	e[1].v1.size = sizeof(e[1]);
	EXPECT_EQ(2, tw_ioctl_ret(self->fd, TWHEEL_IOC_ARM_BATCH, &ab));
	ASSERT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_QUERY, &q));
	EXPECT_EQ(TWHEEL_STATE_PENDING, q.v1.state);
	EXPECT_EQ(23, q.v1.data);
	EXPECT_EQ(sizeof(q), q.v1.size);
	EXPECT_EQ(0, q.clockid);	/* not written: the kernel's struct is shorter */

	/* A buffer of less than one v2 record is too small now. */
	tw_sleep_ms(50);
	EXPECT_EQ(-1, read(self->fd, buf, sizeof(buf)));
	EXPECT_EQ(EINVAL, errno);
	/* Records of the v2 size, the unknown field 0 (the sentinel too). */
	memset(ev, 0xa5, sizeof(ev));
	while (seen < 3) {
		struct pollfd p = { .fd = self->fd, .events = POLLIN };

		ASSERT_EQ(1, poll(&p, 1, 5000));
		r = read(self->fd, ev, sizeof(ev));
		ASSERT_LT(0, r);
		ASSERT_EQ(0, r % sizeof(ev[0]));
		for (i = 0; i < r / (ssize_t)sizeof(ev[0]); i++, seen++) {
			EXPECT_EQ(0, ev[i].clockid);
			EXPECT_EQ(ev[i].v1.key == SENTINEL ? ~SENTINEL :
				  20 + ev[i].v1.key, ev[i].v1.data);
			EXPECT_TRUE(tw_late_ok(&ev[i].v1, self->v.tick_ns));
		}
	}
	EXPECT_EQ(3, seen);
	EXPECT_EQ(0, tw_cancel(self->fd, 3));
	ASSERT_EQ(0, tw_arm(self->fd, SENTINEL, ~SENTINEL, 10 * MS, 0, 0, 0));
}

/*
 * A v2 client that uses its new field gets -E2BIG and the kernel's size,
 * and succeeds with that size: nothing was armed by the failed call.
 */
TEST_F(uapi, size_ver0_v2_client_e2big_writes_size)
{
	struct arm_v2 a = { .v1 = tw_arm_rel(1, 31, 10000 * MS) };
	struct query_v2 q = { .v1 = { .size = sizeof(q), .key = 1 },
			      .clockid = 1 };
	struct arm_v2 e = { .v1 = tw_arm_rel(2, 32, 10000 * MS), .slack_ns = 1 };
	__s32 status = 1;
	struct twheel_arm_batch ab = {
		.size = sizeof(ab), .entries = (uintptr_t)&e,
		.status = (uintptr_t)&status, .count = 1,
		.entry_size = sizeof(e),
	};
	char *page = malloc(2 * 4096);
	struct twheel_query *bigq = (struct twheel_query *)page;

	ASSERT_NE(NULL, page);
	a.v1.size = sizeof(a);
	a.slack_ns = 5 * MS;
	EXPECT_EQ(-E2BIG, tw_ioctl(self->fd, TWHEEL_IOC_ARM, &a));
	EXPECT_EQ(sizeof(struct twheel_arm), a.v1.size);
	EXPECT_EQ(-ENOENT, tw_cancel(self->fd, 1));
	/* The caller falls back to what the kernel knows. */
	EXPECT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_ARM, &a));
	EXPECT_EQ(-E2BIG, tw_ioctl(self->fd, TWHEEL_IOC_QUERY, &q));
	EXPECT_EQ(sizeof(struct twheel_query), q.v1.size);
	EXPECT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_QUERY, &q));
	EXPECT_EQ(31, q.v1.data);
	/* Above a page: -E2BIG even with a zero tail, and the size. */
	memset(page, 0, 2 * 4096);
	bigq->size = 4096 + 8;
	bigq->key = 1;
	EXPECT_EQ(-E2BIG, tw_ioctl(self->fd, TWHEEL_IOC_QUERY, bigq));
	EXPECT_EQ(sizeof(struct twheel_query), bigq->size);
	/* A batch entry: -E2BIG in its status; entries are never written. */
	e.v1.size = sizeof(e);
	EXPECT_EQ(0, tw_ioctl_ret(self->fd, TWHEEL_IOC_ARM_BATCH, &ab));
	EXPECT_EQ(-E2BIG, status);
	EXPECT_EQ(sizeof(e), e.v1.size);
	EXPECT_EQ(-ENOENT, tw_cancel(self->fd, 2));
	EXPECT_EQ(2, tw_fdinfo(self->fd, "timers"));
	EXPECT_EQ(0, tw_cancel(self->fd, 1));
	free(page);
}

/* Bad sizes: -EINVAL, and nothing changes. */
TEST_F(uapi, size_ver0_bad_sizes)
{
	struct twheel_version v = { .size = sizeof(v), .api = TWHEEL_API };
	struct twheel_arm a = tw_arm_rel(1, 0, 0);
	static const __u32 bad[] = { 8, TWHEEL_EVENT_SIZE_VER0 - 8,
				     TWHEEL_EVENT_SIZE_VER0 + 4,
				     TWHEEL_EVENT_SIZE_MAX + 8, UINT32_MAX };
	unsigned int i;

	a.size = TWHEEL_ARM_SIZE_VER0 - 8;
	EXPECT_EQ(-EINVAL, tw_ioctl(self->fd, TWHEEL_IOC_ARM, &a));
	v.size = TWHEEL_VERSION_SIZE_VER0 - 4;
	EXPECT_EQ(-EINVAL, tw_ioctl(self->fd, TWHEEL_IOC_VERSION, &v));
	v.size = sizeof(v);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		v.want_event_size = bad[i];
		EXPECT_EQ(-EINVAL, tw_ioctl(self->fd, TWHEEL_IOC_VERSION, &v));
	}
	/* Unchanged, and 0 keeps the size. */
	v.want_event_size = 0;
	EXPECT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_VERSION, &v));
	EXPECT_EQ(TWHEEL_EVENT_SIZE_VER0, v.event_size);
	v.want_event_size = TWHEEL_EVENT_SIZE_MAX;
	EXPECT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_VERSION, &v));
	EXPECT_EQ(TWHEEL_EVENT_SIZE_MAX, v.event_size);
	v.want_event_size = 0;
	EXPECT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_VERSION, &v));
	EXPECT_EQ(TWHEEL_EVENT_SIZE_MAX, v.event_size);
	EXPECT_EQ(1, tw_fdinfo(self->fd, "timers"));
	EXPECT_EQ(TWHEEL_EVENT_SIZE_MAX, tw_fdinfo(self->fd, "event_size"));
}

/* The record size belongs to the open file: dup shares it, open does not. */
TEST_F(uapi, size_ver0_event_size_per_file)
{
	struct twheel_version v = { .size = sizeof(v), .api = TWHEEL_API,
				    .want_event_size = 64 };
	int fd2 = open(TW_DEV, O_RDWR | O_CLOEXEC), fd3 = dup(self->fd);
	struct twheel_version v2;
	struct twheel_query q;
	struct {
		struct twheel_event ev;
		__u64 tail[3];
	} rec;
	struct twheel_event ev;

	ASSERT_LE(0, fd2);
	ASSERT_LE(0, fd3);
	ASSERT_EQ(0, tw_ioctl(self->fd, TWHEEL_IOC_VERSION, &v));
	ASSERT_EQ(0, tw_version(fd2, &v2));
	EXPECT_EQ(TWHEEL_EVENT_SIZE_VER0, v2.event_size);
	ASSERT_EQ(0, tw_version(fd3, &v2));
	EXPECT_EQ(64, v2.event_size);
	ASSERT_EQ(0, tw_arm(fd2, 1, 41, 0, 0, 0, 0));
	ASSERT_EQ(1, tw_read_n(fd2, &ev, 1, 5000));
	EXPECT_EQ(41, ev.data);
	ASSERT_EQ(0, tw_arm(self->fd, 1, 42, 0, 0, 0, 0));
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
	if (tw_query(self->fd, SENTINEL, &q))
		ASSERT_EQ(0, tw_arm(self->fd, SENTINEL, ~SENTINEL, 10 * MS,
				    0, 0, 0));
	close(fd2);
	close(fd3);
}

TW_HARNESS_MAIN
