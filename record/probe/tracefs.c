// SPDX-License-Identifier: MIT
/* tracefs.c: where tracefs is (tracepoints in spec.c, traceable kernel functions in kfunc.c). */
#include <stdio.h>
#include <sys/mount.h>
#include <unistd.h>

#include "probe.h"

const char *rec_tracefs(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[64];

	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/events", dirs[i]);
		if (!access(path, F_OK))
			return dirs[i];
	}
	/* tracefs is not mounted by default everywhere (this project's CI host among them). */
	if (mount("nodev", dirs[0], "tracefs", 0, NULL))
		return NULL;
	return dirs[0];
}
