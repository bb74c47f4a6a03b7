/* SPDX-License-Identifier: MIT */
/*
 * wl_vfork: calls vfork(2) exactly N times through main -> vf_outer -> vf_middle -> vfork; each
 * child exits at once (tests/e2e/nofp.sh, t:syscalls:sys_exit_vfork). glibc's vfork keeps its
 * return address in rdi across the system call, as its CFI says: the walker must take it from
 * there. Options: see wl.h.
 */
#include <sys/wait.h>

#include "wl.h"

__attribute__((noinline)) void vf_middle(void)
{
	pid_t pid = vfork();

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

__attribute__((noinline)) void vf_outer(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		vf_middle();
}

int main(int argc, char **argv)
{
	return wl_main(argc, argv, vf_outer);
}
