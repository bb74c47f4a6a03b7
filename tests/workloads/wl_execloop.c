/* SPDX-License-Identifier: MIT */
/*
 * wl_execloop N: an exec storm (tests/e2e/storm.sh). The process execs itself N times, one pid
 * through N + 1 images; each image spins about SPIN_US in main -> storm_spin before its exec,
 * so that a profile samples its user code as well as the exec in the kernel. Every exec during
 * an interval splits it into one more part (format.md 3.2):
 *
 *   wl_execloop N
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SPIN_US 300

static unsigned long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ull + ts.tv_nsec / 1000;
}

__attribute__((noinline)) void storm_spin(void)
{
	unsigned long long until = now_us() + SPIN_US;
	volatile unsigned long x = 1;

	while (now_us() < until)
		x = x * 2862933555777941757UL + 3037000493UL;
}

int main(int argc, char **argv)
{
	char next[32], self[4096];
	ssize_t len;
	char *end;
	unsigned long n;

	n = argc == 2 ? strtoul(argv[1], &end, 10) : 0;
	if (argc != 2 || *end) {
		fprintf(stderr, "usage: %s N\n", argv[0]);
		return 2;
	}
	storm_spin();
	if (!n)
		return 0;
	snprintf(next, sizeof(next), "%lu", n - 1);
	/* by its own path, not /proc/self/exe: the comm stays wl_execloop */
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0)
		len = 0;
	self[len] = 0;
	execl(self, argv[0], next, (char *)NULL);
	fprintf(stderr, "%s: exec: %s\n", argv[0], strerror(errno));
	return 1;
}
