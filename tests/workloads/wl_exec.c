/* SPDX-License-Identifier: MIT */
/*
 * wl_exec: the old image of an exec (tests/e2e/exec.sh). Enters getppid(2) exactly N times
 * through main -> exec_a_outer -> exec_a_middle -> exec_a_leaf, then at once execs PROGRAM
 * (wl_exec_b, the new image) with M:
 *
 *   wl_exec N PROGRAM M
 *
 * Both images' events fall in one interval of a recording, and the exec comes right after the
 * old image's last event: stkrec reads the new image before it drains the old one's rows. The
 * old image waits 300 ms before its events, so that stkrec has read it by then: an event whose
 * user stack BPF defers (process not read yet) is walked by stkrec with the tables of the image
 * the pid has when it gets to it, which after the exec is the new one (not named here).
 */
#include "wl.h"

__attribute__((noinline)) long exec_a_leaf(void)
{
	volatile long ret = wl_syscall(SYS_getppid, 0, 0);	/* the volatile gives a frame */

	return ret;
}

__attribute__((noinline)) void exec_a_middle(void)
{
	exec_a_leaf();
	__asm__ __volatile__("");	/* the call above is not a tail call */
}

__attribute__((noinline)) void exec_a_outer(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		exec_a_middle();
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s N PROGRAM M\n", argv[0]);
		return 2;
	}
	getppid();	/* BPF sees the process: stkrec reads it */
	wl_sleep_ms(300);
	exec_a_outer(wl_number(argv[0], argv[1]));
	execl(argv[2], argv[2], argv[3], (char *)NULL);
	fprintf(stderr, "%s: %s: %s\n", argv[0], argv[2], strerror(errno));
	return 1;
}
