/* SPDX-License-Identifier: MIT */
/*
 * wl_short: short-lived processes for tests/e2e/shortlived.sh.
 *
 *   wl_short NPROCS HITS LIFE_MS    fork and exec itself NPROCS times, one after the other
 *   wl_short -c HITS LIFE_MS        (a child) call short_target HITS times through
 *                                   main -> short_outer -> short_middle -> short_target right
 *                                   after exec, then live LIFE_MS in all and exit
 *
 * Each child is a new process (exec) that is gone about LIFE_MS after its first event: its maps
 * must be known at once (the kernel's mmap records), and its objects held open, for its frames
 * to be named, libc's included: short_target calls getppid() through libc.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "wl.h"

/* Its getppid() call makes an event inside libc (a syscall tracepoint) for each uprobe hit. */
__attribute__((noinline)) void short_target(void)
{
	getppid();
	__asm__ __volatile__("");
}

__attribute__((noinline)) void short_middle(void)
{
	short_target();
	__asm__ __volatile__("");
}

__attribute__((noinline)) void short_outer(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		short_middle();
}

static int child(unsigned long hits, long life_ms)
{
	short_outer(hits);
	wl_sleep_ms(life_ms);
	return 0;
}

static int driver(const char *self, unsigned long nprocs, const char *hits, const char *life)
{
	int status, failed = 0;

	for (unsigned long i = 0; i < nprocs; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			execl(self, "wl_short", "-c", hits, life, (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	return failed != 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "-c"))
		return child(wl_number(argv[0], argv[2]), (long)wl_number(argv[0], argv[3]));
	if (argc != 4) {
		fprintf(stderr, "usage: %s NPROCS HITS LIFE_MS | -c HITS LIFE_MS\n", argv[0]);
		return 2;
	}
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 1;
	self[n] = 0;	/* the real path: exec of /proc/self/exe would make every comm "exe" */
	return driver(self, wl_number(argv[0], argv[1]), argv[2], argv[3]);
}
