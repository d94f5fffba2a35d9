// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel selftests: every error has its own errno and leaves the
 * file's other timers alone. Each test arms a sentinel timer first; the
 * teardown checks that it still fires, with the right key and data.
 */
#include <assert.h>

#include "twheel_test.h"
#include "kselftest_harness.h"

#define SENTINEL	0x5e5e5e5eULL

FIXTURE(err) {
	struct twl tw;
};

FIXTURE_SETUP(err)
{
	ASSERT_EQ(0, twl_open(&self->tw, O_CLOEXEC));
	ASSERT_EQ(0, twl_arm(&self->tw, SENTINEL, ~SENTINEL, 100 * MS, 0, 0, 0));
}

FIXTURE_TEARDOWN(err)
{
	struct twheel_event ev = { 0 };

	EXPECT_EQ(1, tw_read_n(&self->tw, &ev, 1, 5000));
	EXPECT_EQ(SENTINEL, ev.key);
	EXPECT_EQ(~SENTINEL, ev.data);
	EXPECT_TRUE(tw_late_ok(&ev, self->tw.version.tick_ns));
	twl_close(&self->tw);
}

TEST_F(err, enotty)
{
	struct twheel_arm a = twl_arm_entry(1, 0, 0, 0, 0, 0);
	int fd = self->tw.fd;

	EXPECT_EQ(-ENOTTY, tw_ioctl(fd, _IOW(0xB8, 0x01, struct twheel_arm), &a));
	EXPECT_EQ(-ENOTTY, tw_ioctl(fd, _IOW(TWHEEL_IOC_MAGIC, 0x3f, struct twheel_arm), &a));
	/* Wrong direction. */
	EXPECT_EQ(-ENOTTY, tw_ioctl(fd, _IOR(TWHEEL_IOC_MAGIC, 0x01, struct twheel_arm), &a));
	EXPECT_EQ(-ENOTTY, tw_ioctl(fd, TCGETS, &a));
}

TEST_F(err, efault)
{
	struct twheel_arm a = twl_arm_entry(1, 0, 0, 0, 0, 0);
	__s32 status[2];
	struct twheel_arm_batch b = {
		.size = sizeof(b), .entries = 8, .status = (uintptr_t)status,
		.count = 2, .entry_size = sizeof(a),
	};
	void *bad = tw_bad_ptr();

	EXPECT_EQ(-EFAULT, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, NULL));
	EXPECT_EQ(-EFAULT, tw_ioctl(self->tw.fd, TWHEEL_IOC_QUERY, (void *)8));
	/* A bad entries array: every entry fails on its own. */
	EXPECT_EQ(0, twl_ioctl(&self->tw, TWHEEL_IOC_ARM_BATCH, &b));
	EXPECT_EQ(-EFAULT, status[0]);
	EXPECT_EQ(-EFAULT, status[1]);
	/* A bad status array: nothing is armed. */
	b.entries = (uintptr_t)&a;
	b.count = 1;
	b.status = 8;
	EXPECT_EQ(-EFAULT, twl_ioctl(&self->tw, TWHEEL_IOC_ARM_BATCH, &b));
	EXPECT_EQ(-ENOENT, twl_cancel(&self->tw, 1));
	EXPECT_EQ(1, tw_fdinfo(self->tw.fd, "timers"));
	/* A table sized for a batch of 1M that armed none: back to 64 buckets. */
	b.count = 1 << 20;
	EXPECT_EQ(-EFAULT, twl_ioctl(&self->tw, TWHEEL_IOC_ARM_BATCH, &b));
	EXPECT_EQ(64 * 8, tw_fdinfo(self->tw.fd, "table_bytes"));
	/* Waits for the sentinel, fails to copy it, and keeps it. */
	EXPECT_EQ(-1, read(self->tw.fd, bad, sizeof(struct twheel_event)));
	EXPECT_EQ(EFAULT, errno);
}

/*
 * An argument the result cannot be written back to: -EFAULT, and the call
 * changed nothing (no ring set up, the event size kept; the teardown's
 * read() would fail with a ring).
 */
TEST_F(err, efault_copy_out)
{
	struct twheel_ring_setup *rs;
	struct twheel_version *v;
	void *page;

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	rs = page;
	rs->size = sizeof(*rs);
	rs->entries = 64;
	v = page + 2048;
	v->size = sizeof(*v);
	v->api = TWHEEL_API;
	v->want_event_size = TWHEEL_EVENT_SIZE_MAX;
	ASSERT_EQ(0, mprotect(page, 4096, PROT_READ));
	EXPECT_EQ(-EFAULT, tw_ioctl(self->tw.fd, TWHEEL_IOC_RING_SETUP, rs));
	EXPECT_EQ(-EFAULT, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, v));
	munmap(page, 4096);
	EXPECT_EQ(0, tw_fdinfo(self->tw.fd, "ring_entries"));
	EXPECT_EQ(sizeof(struct twheel_event),
		  tw_fdinfo(self->tw.fd, "event_size"));
}

TEST_F(err, einval_flags_and_reserved)
{
	struct twheel_arm a = twl_arm_entry(1, 0, 10 * MS, 0, 0, 0);
	struct twheel_cancel c = { .size = sizeof(c), .key = SENTINEL };
	struct twheel_query q = { .size = sizeof(q), .key = SENTINEL };
	struct twheel_cancel_all ca = { .size = sizeof(ca), .flags = 1 };

	a.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &a));
	a.flags = TWHEEL_MODIFY_PERIOD;	/* valid for MODIFY, not for ARM */
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &a));
	a.flags = 0;
	a.__reserved = 1;
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &a));
	c.flags = 4;
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_CANCEL, &c));
	q.__reserved = 1;
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_QUERY, &q));
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_CANCEL_ALL, &ca));
	EXPECT_EQ(1, tw_fdinfo(self->tw.fd, "timers"));
}

TEST_F(err, einval_values)
{
	struct twheel_modify m = { .size = sizeof(m), .key = SENTINEL,
				   .expiry_ns = 100 * MS, .period_ns = MS };
	struct twheel_version v = { .size = sizeof(v), .api = 99 };

	/* A period below one tick, so that no timer can be a DoS. */
	EXPECT_EQ(-EINVAL, twl_arm(&self->tw, 1, 0, 0, self->tw.version.tick_ns - 1, 0, 0));
	EXPECT_EQ(-EINVAL, twl_arm(&self->tw, 1, 0, 0, 1, 1, 0));
	/* A count without a period. */
	EXPECT_EQ(-EINVAL, twl_arm(&self->tw, 1, 0, 0, 0, 3, 0));
	/* A period without TWHEEL_MODIFY_PERIOD. */
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_MODIFY, &m));
	m.flags = TWHEEL_MODIFY_PERIOD;
	m.period_ns = 1;
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_MODIFY, &m));
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_VERSION, &v));
	EXPECT_EQ(1, tw_fdinfo(self->tw.fd, "timers"));
}

TEST_F(err, einval_short_size)
{
	struct twheel_arm a = twl_arm_entry(1, 0, 0, 0, 0, 0);
	struct twheel_query q = { .size = TWHEEL_QUERY_SIZE_VER0 - 8, .key = SENTINEL };
	__s32 status = 0;
	struct twheel_arm_batch b = {
		.size = sizeof(b), .entries = (uintptr_t)&a,
		.status = (uintptr_t)&status, .count = 1, .entry_size = 40,
	};

	a.size = TWHEEL_ARM_SIZE_VER0 - 4;
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &a));
	a.size = 0;
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &a));
	EXPECT_EQ(-EINVAL, tw_ioctl(self->tw.fd, TWHEEL_IOC_QUERY, &q));
	/* Batch: short entries; then an entry whose size differs. */
	EXPECT_EQ(-EINVAL, twl_ioctl(&self->tw, TWHEEL_IOC_ARM_BATCH, &b));
	b.entry_size = sizeof(a);
	a.size = sizeof(a) + 8;
	EXPECT_EQ(0, twl_ioctl(&self->tw, TWHEEL_IOC_ARM_BATCH, &b));
	EXPECT_EQ(-EINVAL, status);
	EXPECT_EQ(1, tw_fdinfo(self->tw.fd, "timers"));
}

/* A larger struct is fine with a zero tail, -E2BIG with a nonzero one. */
TEST_F(err, e2big_tail)
{
	struct {
		struct twheel_arm a;
		__u64 tail[2];
	} big = { .a = twl_arm_entry(1, 0, 10000 * MS, 0, 0, 0) };
	struct {
		struct twheel_query q;
		__u64 tail;
	} bq = { .q = { .size = sizeof(bq), .key = 1 } };

	big.a.size = sizeof(big);
	EXPECT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &big));
	EXPECT_EQ(0, tw_ioctl(self->tw.fd, TWHEEL_IOC_QUERY, &bq));
	EXPECT_EQ(TWHEEL_STATE_PENDING, bq.q.state);
	big.a.key = 2;
	big.tail[1] = 1;
	EXPECT_EQ(-E2BIG, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &big));
	big.a.size = 1 << 20;
	big.tail[1] = 0;
	EXPECT_EQ(-E2BIG, tw_ioctl(self->tw.fd, TWHEEL_IOC_ARM, &big));
	EXPECT_EQ(2, tw_fdinfo(self->tw.fd, "timers"));
	EXPECT_EQ(0, twl_cancel(&self->tw, 1));
}

TEST_F(err, erange)
{
	EXPECT_EQ(-ERANGE, twl_arm(&self->tw, 1, 0, UINT64_MAX, 0, 0, 0));
	EXPECT_EQ(-ERANGE, twl_arm(&self->tw, 1, 0, INT64_MAX, 0, 0, 0));
	EXPECT_EQ(-ERANGE, twl_arm(&self->tw, 1, 0, (__u64)INT64_MAX + 1, 0, 0,
				   TWHEEL_ARM_ABS));
	EXPECT_EQ(-ERANGE, twl_modify(&self->tw, SENTINEL, UINT64_MAX / 2 + 1,
				      TWHEEL_ARM_ABS));
	/* The far end of the range is fine. */
	EXPECT_EQ(0, twl_arm(&self->tw, 1, 0, INT64_MAX, 0, 0, TWHEEL_ARM_ABS));
	EXPECT_EQ(0, twl_cancel(&self->tw, 1));
}

TEST_F(err, enoent)
{
	struct twheel_query q;

	EXPECT_EQ(-ENOENT, twl_cancel(&self->tw, 1));
	EXPECT_EQ(-ENOENT, twl_query(&self->tw, 1, &q));
	EXPECT_EQ(-ENOENT, twl_modify(&self->tw, 1, 0, 0));
}

TEST_F(err, eexist)
{
	EXPECT_EQ(-EEXIST, twl_arm(&self->tw, SENTINEL, 0, 0, 0, 0, 0));
}

/* -ENOSPC at the per-file limit (lowered through the module parameter). */
TEST_F(err, enospc_per_file)
{
	unsigned long old;
	__s32 status[4];
	struct twheel_arm a[4];
	int i, ret;

	if (tw_param_read("max_timers", &old) || tw_param_write("max_timers", 10))
		SKIP(return, "cannot set max_timers (not root?)");
	for (i = 1; i < 10; i++) {
		ret = twl_arm(&self->tw, i, 0, 10000 * MS, 0, 0, 0);
		if (ret)
			break;
	}
	EXPECT_EQ(-ENOSPC, twl_arm(&self->tw, 100, 0, 0, 0, 0, 0));
	for (i = 0; i < 4; i++)
		a[i] = twl_arm_entry(200 + i, 0, 0, 0, 0, 0);
	EXPECT_EQ(0, twl_arm_batch(&self->tw, a, 4, status));
	EXPECT_EQ(-ENOSPC, status[0]);
	EXPECT_EQ(-ENOSPC, status[3]);
	/* Replacing an existing key needs no room. */
	EXPECT_EQ(0, twl_arm(&self->tw, 1, 0, 10000 * MS, 0, 0, TWHEEL_ARM_REPLACE));
	/* A free slot is usable again. */
	EXPECT_EQ(0, twl_cancel(&self->tw, 1));
	EXPECT_EQ(0, twl_arm(&self->tw, 100, 0, 10000 * MS, 0, 0, 0));
	tw_param_write("max_timers", old);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(10, tw_fdinfo(self->tw.fd, "timers"));
	EXPECT_EQ(10, twl_cancel_all(&self->tw));
	ASSERT_EQ(0, twl_arm(&self->tw, SENTINEL, ~SENTINEL, 10 * MS, 0, 0, 0));
}

/* -ENOSPC at the per-user limit, over two files. */
TEST_F(err, enospc_per_user)
{
	unsigned long old;
	struct twl tw2;
	int i;

	ASSERT_EQ(0, twl_open(&tw2, 0));
	if (tw_param_read("max_user_timers", &old) ||
	    tw_param_write("max_user_timers", 20))
		SKIP(return, "cannot set max_user_timers (not root?)");
	for (i = 1; i < 10; i++)
		EXPECT_EQ(0, twl_arm(&self->tw, i, 0, 10000 * MS, 0, 0, 0));
	for (i = 0; i < 10; i++)
		EXPECT_EQ(0, twl_arm(&tw2, i, 0, 10000 * MS, 0, 0, 0));
	EXPECT_EQ(-ENOSPC, twl_arm(&tw2, 10, 0, 0, 0, 0, 0));
	EXPECT_EQ(-ENOSPC, twl_arm(&self->tw, 10, 0, 0, 0, 0, 0));
	/* Closing a file gives its timers back. */
	twl_close(&tw2);
	EXPECT_EQ(0, twl_arm(&self->tw, 10, 0, 10000 * MS, 0, 0, 0));
	tw_param_write("max_user_timers", old);
	EXPECT_EQ(11, tw_fdinfo(self->tw.fd, "timers"));
}

int main(int argc, char **argv)
{
	tw_require_device();
	return test_harness_run(argc, argv);
}
