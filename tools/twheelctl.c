// SPDX-License-Identifier: GPL-2.0
/*
 * twheelctl - arm, cancel, query and watch timers on /dev/twheel
 *
 * Timers belong to the open file, which closes when twheelctl exits, so one
 * invocation runs a sequence of commands on one file descriptor:
 *
 *   twheelctl arm KEY DELAY_MS [PERIOD_MS COUNT] ...  arm a timer
 *   twheelctl cancel KEY ...                         cancel it
 *   twheelctl query KEY ...                          print its state
 *   twheelctl list ...                               state of every key armed
 *   twheelctl watch                                  print events until no
 *                                                    timer is left
 *   twheelctl demo                                   the `make run` demo
 *
 * e.g. `twheelctl arm 1 500 arm 2 100 100 3 cancel 1 list watch`. A
 * sequence that leaves timers armed ends with an implicit watch.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>

#include <twheel/libtwheel.h>

#define MS		1000000ULL
#define MAX_KEYS	256

static struct twl tw = { .fd = -1 };
static __u64 armed_keys[MAX_KEYS];
static unsigned int narmed;

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int print_usage(void)
{
	fprintf(stderr,
		"usage: twheelctl COMMAND... | demo\n"
		"  arm KEY DELAY_MS [PERIOD_MS COUNT]  (COUNT 0: forever)\n"
		"  cancel KEY | query KEY | list | watch\n");
	return 2;
}

static int tw_open(void)
{
	int ret = twl_open(&tw, O_CLOEXEC);

	if (ret)
		fprintf(stderr, "/dev/twheel: %s\n", strerror(-ret));
	return ret;
}

/* A number in @base; 0: C's prefixes (a key may be 0x...). */
static int parse_u64(const char *s, int base, __u64 *val)
{
	char *end;

	errno = 0;
	*val = strtoull(s, &end, base);
	/* Not strtoull()'s leading blanks and sign: -1 is not a key. */
	if (errno || !isdigit((unsigned char)*s) || *end) {
		fprintf(stderr, "twheelctl: bad number '%s'\n", s);
		return -1;
	}
	return 0;
}

static int is_num(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

static int cmd_arm(__u64 key, __u64 delay_ms, __u64 period_ms, __u32 count)
{
	int ret = twl_arm(&tw, key, now_ns(), delay_ms * MS, period_ms * MS,
			  count, 0);

	if (ret) {
		fprintf(stderr, "arm %llu: %s\n", key, strerror(-ret));
		return -1;
	}
	if (narmed < MAX_KEYS)
		armed_keys[narmed++] = key;
	return 0;
}

static int cmd_cancel(__u64 key)
{
	int ret = twl_cancel(&tw, key);

	if (ret) {
		fprintf(stderr, "cancel %llu: %s\n", key, strerror(-ret));
		return -1;
	}
	printf("cancelled %llu\n", key);
	return 0;
}

static int cmd_query(__u64 key)
{
	struct twheel_query q;
	int ret = twl_query(&tw, key, &q);
	char left[16];

	if (ret) {
		printf("key %llu: %s\n", key, strerror(-ret));
		return ret == -ENOENT ? 0 : -1;
	}
	if (q.fires_left == TWHEEL_COUNT_FOREVER)
		strcpy(left, "forever");
	else
		snprintf(left, sizeof(left), "%u", q.fires_left);
	printf("key %llu: %s%s%s remaining %llu us, period %llu us, fires left %s\n",
	       key,
	       q.state & TWHEEL_STATE_PENDING ? "pending" : "idle",
	       q.state & TWHEEL_STATE_QUEUED ? " queued" : "",
	       q.state & TWHEEL_STATE_DONE ? " done" : "",
	       (__u64)q.remaining_ns / 1000, (__u64)q.period_ns / 1000, left);
	return 0;
}

static int cmd_list(void)
{
	unsigned int i;

	for (i = 0; i < narmed; i++)
		cmd_query(armed_keys[i]);
	return 0;
}

/* The number of timers of our fd, from its fdinfo. */
static long timers_left(void)
{
	char path[64], line[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", tw.fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "timers:", 7))
			n = strtol(line + 7, NULL, 10);
	fclose(f);
	return n;
}

static void print_event(const struct twheel_event *ev, __u64 seen)
{
	printf("key %-6llu deadline %llu.%06llu late %5llu us (seen +%llu us) overruns %u%s\n",
	       (__u64)ev->key, (__u64)ev->deadline_ns / 1000000000,
	       (__u64)ev->deadline_ns / 1000 % 1000000,
	       (__u64)(ev->fire_ns - ev->deadline_ns) / 1000,
	       (seen - ev->fire_ns) / 1000, ev->overruns,
	       ev->flags & TWHEEL_EVENT_LAST ? " last" : "");
}

/* Print events until no timer is left. */
static int cmd_watch(void)
{
	struct twheel_event ev[64];
	long n, left;
	int i;

	while ((left = timers_left()) > 0) {
		n = twl_read(&tw, ev, 64);
		if (n < 0) {
			fprintf(stderr, "read: %s\n", strerror(-n));
			return -1;
		}
		for (i = 0; i < n; i++)
			print_event(&ev[i], now_ns());
		fflush(stdout);
	}
	if (left < 0) {
		fprintf(stderr, "watch: no timer count in /proc/self/fdinfo\n");
		return -1;
	}
	return 0;
}

/*
 * The demo: one-shots at 10, 50, 100, 500 and 1000 ms and a 200 ms periodic
 * timer firing 5 times, read with epoll. Exits 0 when every expiry arrived
 * and none early, 1 otherwise. Fires later than a tick plus 20 ms are
 * counted and shown: under TCG on a busy host the whole guest stalls.
 */
static int cmd_demo(void)
{
	static const __u64 delays[] = { 10, 50, 100, 500, 1000 };
	struct epoll_event e = { .events = EPOLLIN };
	unsigned int expect = 5 + 5, got = 0, early = 0, slow = 0;
	__u64 start, worst = 0;
	struct twheel_event ev[16];
	unsigned int i;
	int ep;

	if (tw_open())
		return 1;
	printf("/dev/twheel: API %u, tick %llu us, %u timers per fd\n",
	       tw.version.api, tw.version.tick_ns / 1000,
	       tw.version.max_timers);
	for (i = 0; i < 5; i++)
		if (cmd_arm(delays[i], delays[i], 0, 0))
			return 1;
	if (cmd_arm(200, 200, 200, 5))
		return 1;
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, tw.fd, &e)) {
		perror("epoll");
		return 1;
	}
	start = now_ns();
	while (got < expect && now_ns() - start < 5000 * MS) {
		long n;

		if (epoll_wait(ep, &e, 1, 1000) <= 0)
			continue;
		n = twl_read(&tw, ev, 16);
		if (n < 0 && n != -EAGAIN && n != -EINTR) {
			fprintf(stderr, "read: %s\n", strerror(-n));
			break;
		}
		for (i = 0; n > 0 && i < n; i++) {
			__u64 late = ev[i].fire_ns - ev[i].deadline_ns;

			print_event(&ev[i], now_ns());
			got += 1 + ev[i].overruns;
			if (ev[i].fire_ns < ev[i].deadline_ns)
				early++;
			else if (late > tw.version.tick_ns + 20 * MS)
				slow++;
			if (ev[i].fire_ns >= ev[i].deadline_ns && late > worst)
				worst = late;
		}
	}
	close(ep);
	printf("demo: %u of %u expiries, %u early, worst lateness %llu us%s: %s\n",
	       got, expect, early, worst / 1000,
	       slow ? " (a stalled guest?)" : "",
	       got == expect && !early ? "PASS" : "FAIL");
	return got == expect && !early ? 0 : 1;
}

/* What command() returns when it used no arguments. */
enum { BAD_ARGS = -1, FAILED = -2 };

/*
 * Run the command at argv[0]; returns the arguments used, BAD_ARGS, or
 * FAILED if the kernel refused it (the command said why).
 */
static int command(int argc, char **argv)
{
	__u64 key, delay, period = 0, count = 0;

	if (!strcmp(argv[0], "list"))
		return cmd_list() ? FAILED : 1;
	if (!strcmp(argv[0], "watch"))
		return cmd_watch() ? FAILED : 1;
	if (argc < 2 || parse_u64(argv[1], 0, &key))
		return BAD_ARGS;
	if (!strcmp(argv[0], "cancel"))
		return cmd_cancel(key) ? FAILED : 2;
	if (!strcmp(argv[0], "query"))
		return cmd_query(key) ? FAILED : 2;
	/* Milliseconds in decimal (010 is 10), that fit in ns. */
	if (strcmp(argv[0], "arm") || argc < 3 ||
	    parse_u64(argv[2], 10, &delay) || delay > UINT64_MAX / MS)
		return BAD_ARGS;
	if (argc >= 5 && is_num(argv[3]) && is_num(argv[4]) &&
	    !parse_u64(argv[3], 10, &period) && !parse_u64(argv[4], 10, &count)) {
		/* Not a count that wraps to 0, which means forever. */
		if (count > UINT32_MAX || period > UINT64_MAX / MS)
			return BAD_ARGS;
		return cmd_arm(key, delay, period, count) ? FAILED : 5;
	}
	return cmd_arm(key, delay, 0, 0) ? FAILED : 3;
}

int main(int argc, char **argv)
{
	int i, used;

	if (argc < 2)
		return print_usage();
	if (!strcmp(argv[1], "demo"))
		return cmd_demo();
	if (tw_open())
		return 1;
	for (i = 1; i < argc; i += used) {
		used = command(argc - i, argv + i);
		if (used == BAD_ARGS)
			return print_usage();
		if (used == FAILED)
			return 1;
	}
	if (timers_left())
		return cmd_watch() ? 1 : 0;
	return 0;
}
