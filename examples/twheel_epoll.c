// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_epoll - the epoll idiom with /dev/twheel, through libtwheel.h
 *
 * One event loop, one file descriptor, many keyed timers: arm a batch of
 * session timeouts, keep one session alive by re-arming (modifying) its
 * timer, and take the expiries in batches whenever epoll says the fd is
 * readable: with read(), or with "--ring" from the event ring, without a
 * system call per batch. Exits 0 when every session but the kept-alive one
 * expired, in deadline order and none early.
 *
 * Build: cc $(pkg-config --cflags libtwheel) -o twheel_epoll twheel_epoll.c
 */
#include <stdio.h>
#include <sys/epoll.h>

#include <twheel/libtwheel.h>

#define SESSIONS	16
#define KEEP		7		/* the session that stays alive */
#define MS		1000000ULL

/* Arm every session in one batch; 0, or the first entry's -errno. */
static int arm_sessions(struct twl *tw)
{
	struct twheel_arm arm[SESSIONS];
	__s32 status[SESSIONS];
	long ret;
	int i;

	for (i = 0; i < SESSIONS; i++)		/* key: the session id */
		arm[i] = twl_arm_entry(i, 1000 + i, (50 + 10 * i) * MS, 0, 0, 0);
	ret = twl_arm_batch(tw, arm, SESSIONS, status);
	if (ret < 0)
		return ret;
	for (i = 0; i < SESSIONS; i++)
		if (status[i])
			return status[i];
	return 0;
}

/* The events available now: from the ring, or read() (O_NONBLOCK). */
static long take(struct twl *tw, struct twheel_event *ev, unsigned int max)
{
	if (tw->map)
		return twl_ring_reap(tw, ev, max);
	return twl_read(tw, ev, max);
}

int main(int argc, char **argv)
{
	int ring = argc > 1 && !strcmp(argv[1], "--ring");
	struct epoll_event e = { .events = EPOLLIN };
	int ep, expired = 0, i, bad = 0, ret;
	struct twheel_event ev[8];
	__u64 last = 0;
	struct twl tw;
	long n;

	ret = twl_open(&tw, O_NONBLOCK | O_CLOEXEC);
	if (!ret && ring)
		ret = twl_ring_setup(&tw, 64);
	if (ret) {
		fprintf(stderr, "/dev/twheel: %s\n", strerror(-ret));
		return 1;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, tw.fd, &e)) {
		perror("epoll");
		return 1;
	}
	ret = arm_sessions(&tw);
	if (!ret)
		ret = twl_modify(&tw, KEEP, 60000 * MS, 0);
	if (ret) {
		fprintf(stderr, "arming: %s\n", strerror(-ret));
		return 1;
	}
	while (expired < SESSIONS - 1) {
		if (epoll_wait(ep, &e, 1, 5000) != 1) {
			fprintf(stderr, "timed out with %d expired\n", expired);
			return 1;
		}
		/* Drain: whole events, as many as there are. */
		while ((n = take(&tw, ev, 8)) > 0) {
			for (i = 0; i < n; i++) {
				long long late = ev[i].fire_ns - ev[i].deadline_ns;

				printf("session %llu (data %llu) expired, %lld us late\n",
				       (unsigned long long)ev[i].key,
				       (unsigned long long)ev[i].data, late / 1000);
				bad |= late < 0 || ev[i].key == KEEP ||
				       ev[i].deadline_ns < last;
				last = ev[i].deadline_ns;
				expired++;
			}
		}
		if (n < 0 && n != -EAGAIN) {
			fprintf(stderr, "read: %s\n", strerror(-n));
			return 1;
		}
	}
	printf("%d sessions expired in order (%s), session %d kept alive: %s\n",
	       expired, ring ? "ring" : "read", KEEP, bad ? "FAIL" : "ok");
	close(ep);
	twl_close(&tw);
	return bad;
}
