// SPDX-License-Identifier: MIT
/*
 * wl_throw [-v] SECS: throws and catches a C++ exception in a loop for SECS seconds (fractions
 * allowed): main -> wl_outer -> wl_middle -> wl_thrower, which throws, and wl_middle catches.
 * Built as release C++ is (g++ -O2, no frame pointers), so nearly every sample lands in
 * libstdc++ and libgcc's unwinder (_Unwind_RaiseException, _Unwind_Find_FDE, the CFA program),
 * whose exception return ends in `jmp *%rcx`: the return address in a register
 * (tests/e2e/regret.sh), and the C++ workload of bench/run's walk section.
 * `-v` prints `pid PID` first.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>

extern "C" {

__attribute__((noinline)) void wl_thrower(unsigned long i)
{
	throw i;
}

__attribute__((noinline)) unsigned long wl_middle(unsigned long i)
{
	try {
		wl_thrower(i);
	} catch (unsigned long v) {
		return v;
	}
	return 0;
}

static double now_s()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long wl_outer(double secs)
{
	double end = now_s() + secs;
	unsigned long sum = 0, i = 0;

	do {
		for (unsigned long j = 0; j < 1000; j++)
			sum += wl_middle(i++);
	} while (now_s() < end);
	return sum;
}

}

int main(int argc, char **argv)
{
	char *end;
	double secs;

	if (argc > 1 && !strcmp(argv[1], "-v")) {
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
		argc--, argv++;
	}
	if (argc != 2 || (secs = strtod(argv[1], &end)) <= 0 || *end) {
		fprintf(stderr, "usage: wl_throw [-v] SECS\n");
		return 2;
	}
	return wl_outer(secs) ? 0 : 1;
}
