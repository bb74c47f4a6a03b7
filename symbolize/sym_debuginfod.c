// SPDX-License-Identifier: MIT
/*
 * sym_debuginfod.c: libdebuginfod's functions for sym_find.c, linked or loaded (see
 * sym_internal.h). This file is compiled twice:
 *  - for the dynamic stkreport (`make`), the library is linked: the table holds its functions;
 *  - for the static one (`make static`, STK_DEBUGINFOD_DLOPEN), it is loaded with dlopen() the
 *    first time a report asks a server, as libdw's own debuginfod support does. Linking it in
 *    would bring libcurl, a TLS library and their own dependencies into the one file, and with
 *    them glibc's NSS (getaddrinfo), which a static binary can only use through the target's
 *    shared libc anyway.
 *
 * A static program's dlopen() loads the target's libc.so.6 beside the libc linked in, and glibc
 * supports that only when both are the same version: another one may refuse, or crash while
 * loading. So the library is first loaded in a child process that checks the version and exits;
 * only when that went well does stkreport load it itself. Otherwise debuginfod is unavailable,
 * said once on stderr, and the report goes on without it.
 */
#include <stdlib.h>

#include "sym_internal.h"

#ifndef STK_DEBUGINFOD_DLOPEN

const struct sym_dbgd_api *sym_dbgd_api(void)
{
	static const struct sym_dbgd_api linked = {
		.begin = debuginfod_begin,
		.end = debuginfod_end,
		.find_debuginfo = debuginfod_find_debuginfo,
		.find_executable = debuginfod_find_executable,
		.set_user_data = debuginfod_set_user_data,
		.get_user_data = debuginfod_get_user_data,
		.set_progressfn = debuginfod_set_progressfn,
		.free = free,
	};

	return &linked;
}

#else /* STK_DEBUGINFOD_DLOPEN */

#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SONAME "libdebuginfod.so.1"

/* Fill a from SONAME. 0, or -1 with why set. */
static int dbgd_load(struct sym_dbgd_api *a, char *why, size_t len)
{
	const char *(*libc_version)(void);
	void *h = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(why, len, "%s", dlerror());
		return -1;
	}
	/*
	 * dlsym() on the library's handle also searches its dependencies: "free" and
	 * "gnu_get_libc_version" are those of the libc.so.6 it brought. The paths find_* return are
	 * that libc's malloc()'s; the libc linked in has a heap of its own.
	 */
#define SYM(fn, name)                                                                        \
	do {                                                                                  \
		*(void **)&(fn) = dlsym(h, name);	/* POSIX's way to a function pointer */ \
		if (!(fn)) {                                                                  \
			snprintf(why, len, "%s: no %s", SONAME, name);                        \
			return -1;                                                            \
		}                                                                             \
	} while (0)
	SYM(a->begin, "debuginfod_begin");
	SYM(a->end, "debuginfod_end");
	SYM(a->find_debuginfo, "debuginfod_find_debuginfo");
	SYM(a->find_executable, "debuginfod_find_executable");
	SYM(a->set_user_data, "debuginfod_set_user_data");
	SYM(a->get_user_data, "debuginfod_get_user_data");
	SYM(a->set_progressfn, "debuginfod_set_progressfn");
	SYM(a->free, "free");
	SYM(libc_version, "gnu_get_libc_version");
#undef SYM
	if (strcmp(libc_version(), gnu_get_libc_version())) {
		snprintf(why, len, "this system's glibc is %s, this static stkreport's %s",
			 libc_version(), gnu_get_libc_version());
		return -1;
	}
	return 0;
}

/* Load SONAME in a child process first: 0 when it loaded there, else -1 with why set. */
static int dbgd_try(char *why, size_t len)
{
	struct sym_dbgd_api a;
	int pipefd[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(pipefd)) {
		snprintf(why, len, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(why, len, "fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (!pid) {
		/* _exit: the parent's unflushed stdout stays the parent's */
		close(pipefd[0]);
		if (dbgd_load(&a, why, len)) {
			if (write(pipefd[1], why, strlen(why)) < 0)
				_exit(2);
			_exit(1);
		}
		_exit(0);
	}
	close(pipefd[1]);
	n = 0;
	for (ssize_t r; n < (ssize_t)len - 1; n += r) {
		r = read(pipefd[0], why + n, len - 1 - n);
		if (r < 0 && errno == EINTR)
			r = 0;
		else if (r <= 0)
			break;
	}
	why[n > 0 ? n : 0] = 0;
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(why, len, "waitpid: %s", strerror(errno));
			return -1;
		}
	if (WIFSIGNALED(status)) {
		snprintf(why, len, "loading %s killed a test process (%s): this system's glibc is "
			 "not the %s this static stkreport was linked with", SONAME,
			 strsignal(WTERMSIG(status)), gnu_get_libc_version());
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		if (!why[0])
			snprintf(why, len, "loading %s failed", SONAME);
		return -1;
	}
	return 0;
}

const struct sym_dbgd_api *sym_dbgd_api(void)
{
	/*
	 * Process-wide, as the library it stands for: once loaded (or found unusable) it stays so,
	 * and a second symbolizer (one per capture with --diff) neither forks again nor repeats the
	 * warning. The one mutable state below main.c besides the signal flag, for that reason.
	 */
	static struct sym_dbgd_api loaded;
	static int state;	/* 0 not tried, 1 loaded, -1 unavailable */
	char why[512] = "";

	if (!state) {
		state = !dbgd_try(why, sizeof(why)) && !dbgd_load(&loaded, why, sizeof(why)) ? 1 : -1;
		if (state < 0)
			fprintf(stderr, "stkreport: debuginfod: unavailable in this static build (%s); "
				"DEBUGINFOD_URLS ignored\n", why);
	}
	return state > 0 ? &loaded : NULL;
}

#endif /* STK_DEBUGINFOD_DLOPEN */
