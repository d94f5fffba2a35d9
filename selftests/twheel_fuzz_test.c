// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel ioctl fuzzer: seeded random ioctls, valid and corrupted
 * (random sizes, flags, keys, counts, pointers into inaccessible memory),
 * interleaved with read, poll, close, dup and fork, from several threads
 * and processes on shared and separate files. The kernel must not splat
 * (the host checks the console), and a control timer armed on its own file
 * before the run must still fire on time after it.
 *
 * Environment: TWHEEL_FUZZ_CALLS (default 100000), TWHEEL_FUZZ_SEED
 * (default: the time; printed, so that a run can be repeated as far as
 * the scheduling of its threads allows).
 */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "twheel_test.h"
#include "kselftest_harness.h"

#define NTHREADS	4	/* per process */
#define NPROCS		2	/* worker processes besides the parent */
#define NSLOTS		8	/* files per process, shared by its threads */
#define NKEYS		512	/* the usual keyspace, so that keys collide */
#define MAX_ERRNO	160
#define CTL_PERIOD	(50 * MS)

/* Shared between the processes: the counts of the whole run. */
struct fuzz_stats {
	unsigned long calls;
	unsigned long ok;
	unsigned long forks;
	unsigned long closes;
	unsigned long events;
	unsigned long err[MAX_ERRNO];
};

static struct fuzz_stats *stats;
static int slots[NSLOTS];
/*
 * Pointers for the kernel to fault on: a PROT_NONE page (as unusable for
 * copy_*_user() as an unmapped one, and never reused by a later mmap()),
 * after a scratch page that a straddling struct may scribble on.
 */
static char *unmapped;
/* Each thread's status arrays end where such a page begins: huge counts fault. */
static __thread char *guarded;
static unsigned long calls_per_worker;
static __u64 tick_ns;

static __u64 rnd(__u64 *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static void count(long ret)
{
	__atomic_add_fetch(&stats->calls, 1, __ATOMIC_RELAXED);
	if (ret >= 0)
		__atomic_add_fetch(&stats->ok, 1, __ATOMIC_RELAXED);
	else
		__atomic_add_fetch(&stats->err[-ret < MAX_ERRNO ? -ret : 0], 1,
				   __ATOMIC_RELAXED);
}

static long sys_ret(long ret)
{
	return ret < 0 ? -errno : ret;
}

/* A pointer for the kernel to use: mostly @good, else a bad one. */
static void *fuzz_ptr(__u64 *s, void *good, size_t len)
{
	switch (rnd(s) % 32) {
	case 0:
		return NULL;
	case 1:
		return unmapped;
	case 2:	/* the struct starts mapped and runs into the hole */
		return (char *)unmapped - (len > 8 ? len / 2 : 4);
	case 3:
		return (void *)0xffff888000000000ULL;	/* kernel memory */
	case 4:
		return (void *)(uintptr_t)rnd(s);
	default:
		return good;
	}
}

static __u32 fuzz_size(__u64 *s, __u32 size)
{
	switch (rnd(s) % 32) {
	case 0:
		return rnd(s) % (size + 1);		/* short */
	case 1:
		return size + 8 * (rnd(s) % 4);		/* a tail, zero or not */
	case 2:
		return 4096 + rnd(s) % 8;		/* around a page */
	case 3:
		return rnd(s);
	default:
		return size;
	}
}

static __u64 fuzz_key(__u64 *s)
{
	return rnd(s) % 16 ? rnd(s) % NKEYS : rnd(s);
}

static __u64 fuzz_expiry(__u64 *s, __u32 *flags)
{
	switch (rnd(s) % 16) {
	case 0:
		return rnd(s);
	case 1:
		return INT64_MAX - rnd(s) % 4;
	case 2:
		*flags |= TWHEEL_ARM_ABS;
		return tw_now() - rnd(s) % (1000 * MS);	/* the past */
	case 3:
		*flags |= TWHEEL_ARM_ABS;
		return tw_now() + rnd(s) % (100 * MS);
	case 4:
		return 0;
	default:
		return rnd(s) % (200 * MS);
	}
}

static __u64 fuzz_period(__u64 *s)
{
	switch (rnd(s) % 16) {
	case 0:
		return rnd(s);
	case 1:
		return tick_ns - 1;
	case 2:
		return tick_ns;
	case 3:
	case 4:
		return tick_ns + rnd(s) % (50 * MS);
	default:
		return 0;
	}
}

static __u32 fuzz_count(__u64 *s)
{
	switch (rnd(s) % 8) {
	case 0:
		return rnd(s);
	case 1:
		return UINT32_MAX - rnd(s) % 2;
	case 2:
		return 1 + rnd(s) % 5;
	default:
		return 0;
	}
}

static void fuzz_arm_struct(__u64 *s, struct twheel_arm *a)
{
	__u32 flags = rnd(s) % 4;

	memset(a, 0, sizeof(*a));
	a->key = fuzz_key(s);
	a->data = rnd(s);
	a->expiry_ns = fuzz_expiry(s, &flags);
	a->period_ns = fuzz_period(s);
	a->count = a->period_ns ? fuzz_count(s) : 0;
	if (!(rnd(s) % 32))
		flags |= 1U << (rnd(s) % 32);
	a->flags = flags;
	if (!(rnd(s) % 32))
		a->__reserved = rnd(s);
	a->size = fuzz_size(s, sizeof(*a));
}

/* A buffer with room for a struct and a tail, the tail mostly zero. */
union fuzz_buf {
	struct twheel_version v;
	struct twheel_arm a;
	struct twheel_arm_batch ab;
	struct twheel_cancel c;
	struct twheel_cancel_batch cb;
	struct twheel_modify m;
	struct twheel_query q;
	struct twheel_cancel_all ca;
	char raw[8192];
};

static int pick_fd(__u64 *s)
{
	return __atomic_load_n(&slots[rnd(s) % NSLOTS], __ATOMIC_RELAXED);
}

static void fuzz_one(__u64 *s, union fuzz_buf *u);

/* A fork: the child shares the files, runs a few calls and exits. */
static void fuzz_fork(__u64 *s, union fuzz_buf *u)
{
	pid_t pid = fork();
	unsigned int i;

	count(sys_ret(pid));
	if (pid == 0) {
		__u64 cs = rnd(s) | 1;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (i = 0; i < 16; i++)
			fuzz_one(&cs, u);
		_exit(0);
	}
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		__atomic_add_fetch(&stats->forks, 1, __ATOMIC_RELAXED);
	}
}

/* Close a file and open another in its slot. */
static void fuzz_reopen(__u64 *s)
{
	unsigned int i = rnd(s) % NSLOTS;
	int fd, nfd, none = -1;

	fd = __atomic_exchange_n(&slots[i], -1, __ATOMIC_RELAXED);
	if (fd >= 0) {
		count(sys_ret(close(fd)));
		__atomic_add_fetch(&stats->closes, 1, __ATOMIC_RELAXED);
	}
	nfd = sys_ret(open(TW_DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC));
	count(nfd);
	if (nfd >= 0 &&
	    !__atomic_compare_exchange_n(&slots[i], &none, nfd, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		close(nfd);
}

/* Duplicate @fd into a random slot. */
static void fuzz_dup(__u64 *s, int fd)
{
	unsigned int i = rnd(s) % NSLOTS;
	int nfd = fd >= 0 ? sys_ret(dup(fd)) : -EBADF;

	count(nfd);
	if (nfd < 0)
		return;
	fd = __atomic_exchange_n(&slots[i], nfd, __ATOMIC_RELAXED);
	if (fd >= 0)
		close(fd);
}

/* read, poll, close, dup or fork: @op is in [74, 100). */
static void fuzz_file_op(__u64 *s, union fuzz_buf *u, unsigned int op, int fd)
{
	struct twheel_event ev[16];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t len;
	long ret;

	if (op < 86) {
		len = rnd(s) % 4 ? sizeof(ev[0]) * (1 + rnd(s) % 16) :
				   rnd(s) % 1024;
		ret = sys_ret(read(fd, fuzz_ptr(s, ev, sizeof(ev)),
				   len > sizeof(ev) ? sizeof(ev) : len));
		count(ret);
		if (ret > 0)
			__atomic_add_fetch(&stats->events, ret / sizeof(ev[0]),
					   __ATOMIC_RELAXED);
	} else if (op < 93) {
		count(sys_ret(poll(&p, 1, rnd(s) % 2)));
	} else if (op < 96) {
		fuzz_reopen(s);
	} else if (op < 99) {
		fuzz_dup(s, fd);
	} else if (rnd(s) % 4) {	/* forks are slow: 1 in 400 */
		count(sys_ret(poll(&p, 1, 0)));
	} else {
		fuzz_fork(s, u);
	}
}

static void fuzz_one(__u64 *s, union fuzz_buf *u)
{
	static const unsigned int cmds[] = {
		TWHEEL_IOC_VERSION, TWHEEL_IOC_ARM, TWHEEL_IOC_ARM_BATCH,
		TWHEEL_IOC_CANCEL, TWHEEL_IOC_CANCEL_BATCH, TWHEEL_IOC_MODIFY,
		TWHEEL_IOC_QUERY, TWHEEL_IOC_CANCEL_ALL,
	};
	struct twheel_arm entries[16];
	__u64 keys[16];
	__s32 *status = (__s32 *)(guarded + 4096) - 16;
	unsigned int i, n, op = rnd(s) % 100;
	int fd = pick_fd(s);
	unsigned long cmd;
	void *arg = u;

	if (op >= 74) {
		fuzz_file_op(s, u, op, fd);
		return;
	}
	memset(u->raw, 0, 256);
	if (!(rnd(s) % 16))
		u->raw[rnd(s) % 256] = rnd(s);	/* a nonzero tail, maybe */
	if (op < 22) {			/* ARM */
		cmd = TWHEEL_IOC_ARM;
		fuzz_arm_struct(s, &u->a);
		arg = fuzz_ptr(s, u, sizeof(u->a));
	} else if (op < 32) {		/* ARM_BATCH */
		n = rnd(s) % 17;
		for (i = 0; i < n; i++) {
			fuzz_arm_struct(s, &entries[i]);
			if (rnd(s) % 4)
				entries[i].size = sizeof(entries[i]);
		}
		cmd = TWHEEL_IOC_ARM_BATCH;
		u->ab.size = fuzz_size(s, sizeof(u->ab));
		u->ab.flags = rnd(s) % 32 ? 0 : rnd(s);
		u->ab.entries = (uintptr_t)fuzz_ptr(s, entries, sizeof(entries));
		u->ab.status = (uintptr_t)fuzz_ptr(s, status, 16 * sizeof(*status));
		u->ab.count = rnd(s) % 16 ? n : (__u32)rnd(s);
		u->ab.entry_size = rnd(s) % 8 ? sizeof(entries[0]) :
					       (__u32)rnd(s) % 8192;
		arg = fuzz_ptr(s, u, sizeof(u->ab));
	} else if (op < 42) {		/* CANCEL */
		cmd = TWHEEL_IOC_CANCEL;
		u->c.size = fuzz_size(s, sizeof(u->c));
		u->c.flags = rnd(s) % 32 ? 0 : rnd(s);
		u->c.key = fuzz_key(s);
		arg = fuzz_ptr(s, u, sizeof(u->c));
	} else if (op < 48) {		/* CANCEL_BATCH */
		n = rnd(s) % 17;
		for (i = 0; i < n; i++)
			keys[i] = fuzz_key(s);
		cmd = TWHEEL_IOC_CANCEL_BATCH;
		u->cb.size = fuzz_size(s, sizeof(u->cb));
		u->cb.keys = (uintptr_t)fuzz_ptr(s, keys, sizeof(keys));
		u->cb.status = (uintptr_t)fuzz_ptr(s, status, 16 * sizeof(*status));
		u->cb.count = rnd(s) % 16 ? n : (__u32)rnd(s);
		u->cb.__reserved = rnd(s) % 32 ? 0 : rnd(s);
		arg = fuzz_ptr(s, u, sizeof(u->cb));
	} else if (op < 58) {		/* MODIFY */
		__u32 flags = rnd(s) % 8;

		cmd = TWHEEL_IOC_MODIFY;
		u->m.key = fuzz_key(s);
		u->m.expiry_ns = fuzz_expiry(s, &flags);
		if (flags & TWHEEL_MODIFY_PERIOD) {
			u->m.period_ns = fuzz_period(s);
			u->m.count = fuzz_count(s);
		}
		u->m.flags = flags;
		u->m.size = fuzz_size(s, sizeof(u->m));
		arg = fuzz_ptr(s, u, sizeof(u->m));
	} else if (op < 66) {		/* QUERY */
		cmd = TWHEEL_IOC_QUERY;
		u->q.size = fuzz_size(s, sizeof(u->q));
		u->q.key = fuzz_key(s);
		arg = fuzz_ptr(s, u, sizeof(u->q));
	} else if (op < 68) {		/* CANCEL_ALL */
		cmd = TWHEEL_IOC_CANCEL_ALL;
		u->ca.size = fuzz_size(s, sizeof(u->ca));
		arg = fuzz_ptr(s, u, sizeof(u->ca));
	} else if (op < 70) {		/* VERSION */
		cmd = TWHEEL_IOC_VERSION;
		u->v.size = fuzz_size(s, sizeof(u->v));
		u->v.api = rnd(s) % 8 ? TWHEEL_API : rnd(s);
		arg = fuzz_ptr(s, u, sizeof(u->v));
	} else {			/* a random ioctl number */
		for (i = 0; i < 64; i++)
			u->raw[i] = rnd(s);
		u->a.size = fuzz_size(s, 48);
		cmd = cmds[rnd(s) % 8];
		switch (rnd(s) % 4) {
		case 0:	/* another size in the number: ignored */
			cmd = (cmd & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT)) |
			      ((rnd(s) & _IOC_SIZEMASK) << _IOC_SIZESHIFT);
			break;
		case 1:	/* another direction */
			cmd ^= (rnd(s) % 4) << _IOC_DIRSHIFT;
			break;
		case 2:
			cmd = _IOC(rnd(s) % 4, TWHEEL_IOC_MAGIC, rnd(s) % 32,
				   rnd(s) % 256);
			break;
		default:
			cmd = rnd(s);
			break;
		}
		arg = fuzz_ptr(s, u, 64);
	}
	count(sys_ret(ioctl(fd, cmd, arg)));
}

/* A scratch page followed by a PROT_NONE one; NULL if out of memory. */
static char *guarded_page(void)
{
	char *p = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + 4096, 4096, PROT_NONE))
		abort();
	return p;
}

static void *worker(void *arg)
{
	__u64 s = (uintptr_t)arg | 1;
	union fuzz_buf *u = malloc(sizeof(*u));
	unsigned long i;

	if (!u)
		return NULL;
	guarded = guarded_page();
	for (i = 0; i < calls_per_worker; i++)
		fuzz_one(&s, u);
	free(u);
	return NULL;
}

/* One process: NTHREADS threads on this process's NSLOTS files. */
static void run_process(__u64 seed)
{
	pthread_t th[NTHREADS];
	int i;

	for (i = 0; i < NTHREADS; i++)
		pthread_create(&th[i], NULL, worker,
			       (void *)(uintptr_t)(seed * 1000003 + i));
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
}

static const char *errno_name(int e)
{
	switch (e) {
	case 0: return "other";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EFAULT: return "EFAULT";
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	case ENOSPC: return "ENOSPC";
	case ENOTTY: return "ENOTTY";
	case ERANGE: return "ERANGE";
	case E2BIG: return "E2BIG";
	case EINTR: return "EINTR";
	default: return "?";
	}
}

FIXTURE(fuzz) {
	int unused;
};

FIXTURE_SETUP(fuzz)
{
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, random_ioctls, 3600)
{
	const char *e_calls = getenv("TWHEEL_FUZZ_CALLS");
	const char *e_seed = getenv("TWHEEL_FUZZ_SEED");
	unsigned long calls = e_calls ? strtoul(e_calls, NULL, 0) : 100000;
	__u64 seed = e_seed ? strtoull(e_seed, NULL, 0) : tw_now();
	struct twheel_event ev[64];
	__u64 t0, t1, covered = 0, ctl_start;
	pid_t pids[NPROCS];
	int i, status, n, got = 0, late_ok = 1;
	struct twl ctl;

	stats = mmap(NULL, sizeof(*stats), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, stats);
	unmapped = guarded_page() + 4096;

	/* The control timer, periodic, on its own file. */
	ASSERT_EQ(0, twl_open(&ctl, O_CLOEXEC));
	tick_ns = ctl.version.tick_ns;
	ctl_start = tw_now() + CTL_PERIOD;
	ASSERT_EQ(0, twl_arm(&ctl, 0xc0, 0xc0de, ctl_start, CTL_PERIOD, 0,
			     TWHEEL_ARM_ABS));

	calls_per_worker = calls / ((NPROCS + 1) * NTHREADS) + 1;
	TH_LOG("seed %llu (TWHEEL_FUZZ_SEED to repeat), %lu calls in %d processes x %d threads",
	       (unsigned long long)seed, calls, NPROCS + 1, NTHREADS);
	t0 = tw_now();
	for (i = 0; i < NPROCS; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			/* No fuzzing on after the test is over. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			twl_close(&ctl);
			/* A process of its own files... */
			for (n = 0; n < NSLOTS; n++)
				slots[n] = open(TW_DEV, O_RDWR | O_NONBLOCK |
						O_CLOEXEC);
			run_process(seed + i + 1);
			_exit(0);
		}
	}
	/* ...and the parent's, which forks share from time to time. */
	for (n = 0; n < NSLOTS; n++)
		slots[n] = open(TW_DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	run_process(seed);
	for (i = 0; i < NPROCS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	}
	for (n = 0; n < NSLOTS; n++)
		if (slots[n] >= 0)
			close(slots[n]);
	t1 = tw_now();

	TH_LOG("%lu calls in %llu ms: %lu ok, %lu events read, %lu closes, %lu forks",
	       stats->calls, (unsigned long long)(t1 - t0) / MS, stats->ok,
	       stats->events, stats->closes, stats->forks);
	for (i = 0; i < MAX_ERRNO; i++)
		if (stats->err[i])
			TH_LOG("  errno %3d %-7s %lu", i, errno_name(i),
			       stats->err[i]);
	EXPECT_LE(calls, stats->calls);

	/* The control timer: every deadline since it started is accounted... */
	do {
		n = twl_read(&ctl, ev, ARRAY_SIZE(ev));
		for (i = 0; i < n; i++) {
			covered += 1 + ev[i].overruns;
			got++;
		}
	} while (tw_fdinfo(ctl.fd, "queued") > 0);
	/* ...and the next one fires on time. */
	ASSERT_EQ(1, tw_read_n(&ctl, ev, 1, 5000));
	covered += 1 + ev[0].overruns;
	late_ok = tw_late_ok(&ev[0], tick_ns);
	TH_LOG("control timer: %d events for %llu deadlines over %llu ms, last %llu us late",
	       got + 1, (unsigned long long)covered,
	       (unsigned long long)(ev[0].deadline_ns - ctl_start) / MS,
	       (unsigned long long)(ev[0].fire_ns - ev[0].deadline_ns) / 1000);
	EXPECT_TRUE(late_ok);
	EXPECT_EQ(0xc0deULL, ev[0].data);
	EXPECT_EQ((ev[0].deadline_ns - ctl_start) / CTL_PERIOD + 1, covered);
	EXPECT_EQ(1, tw_fdinfo(ctl.fd, "timers"));
	twl_close(&ctl);
}

int main(int argc, char **argv)
{
	tw_require_device();
	return test_harness_run(argc, argv);
}
