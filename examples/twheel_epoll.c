// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_epoll - the epoll idiom with /dev/twheel
 *
 * One event loop, one file descriptor, many keyed timers: arm a batch of
 * session timeouts, keep one session alive by re-arming (modifying) its
 * timer, and read the expiries in batches whenever epoll says the fd is
 * readable. Exits 0 when every session but the kept-alive one expired, in
 * deadline order and none early.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/twheel.h>

#define SESSIONS	16
#define KEEP		7		/* the session that stays alive */
#define MS		1000000ULL

static int arm_sessions(int fd)
{
	struct twheel_arm arm[SESSIONS];
	__s32 status[SESSIONS];
	struct twheel_arm_batch batch = {
		.size = sizeof(batch),
		.entries = (uintptr_t)arm,
		.status = (uintptr_t)status,
		.count = SESSIONS,
		.entry_size = sizeof(arm[0]),
	};
	int i;

	memset(arm, 0, sizeof(arm));
	for (i = 0; i < SESSIONS; i++) {
		arm[i].size = sizeof(arm[i]);
		arm[i].key = i;			/* the session id */
		arm[i].data = 1000 + i;		/* e.g. a pointer to it */
		arm[i].expiry_ns = (50 + 10 * i) * MS;
	}
	return ioctl(fd, TWHEEL_IOC_ARM_BATCH, &batch) == SESSIONS ? 0 : -1;
}

static int keep_alive(int fd)
{
	struct twheel_modify mod = {
		.size = sizeof(mod),
		.key = KEEP,
		.expiry_ns = 60000 * MS,	/* activity: a minute more */
	};

	return ioctl(fd, TWHEEL_IOC_MODIFY, &mod);
}

int main(void)
{
	struct twheel_event ev[8];
	struct epoll_event e = { .events = EPOLLIN };
	int fd, ep, expired = 0, i, bad = 0;
	__u64 last = 0;
	ssize_t n;

	fd = open("/dev/twheel", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		perror("/dev/twheel");
		return 1;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) ||
	    arm_sessions(fd) || keep_alive(fd)) {
		perror("setup");
		return 1;
	}
	while (expired < SESSIONS - 1) {
		if (epoll_wait(ep, &e, 1, 5000) != 1) {
			fprintf(stderr, "timed out with %d expired\n", expired);
			return 1;
		}
		/* Drain: each read returns as many whole events as fit. */
		while ((n = read(fd, ev, sizeof(ev))) > 0) {
			for (i = 0; i < n / (ssize_t)sizeof(ev[0]); i++) {
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
		if (n < 0 && errno != EAGAIN) {
			perror("read");
			return 1;
		}
	}
	printf("%d sessions expired in order, session %d kept alive: %s\n",
	       expired, KEEP, bad ? "FAIL" : "ok");
	close(ep);
	close(fd);
	return bad;
}
