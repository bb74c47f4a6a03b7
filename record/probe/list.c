// SPDX-License-Identifier: MIT
/*
 * list.c: `stkrec -l [SPEC...]`, as `bpftrace -l`: what each SPEC would attach to, one line per
 * target, written as a SPEC that attaches to that target alone (so a line can be pasted back).
 * No SPEC lists every tracepoint. Nothing is loaded or attached.
 */
#include <errno.h>
#include <stdio.h>

#include "probe.h"

static void print_target(const struct rec_spec *s, const struct rec_target *t)
{
	switch (s->kind) {
	case CAP_PROBE_TRACEPOINT:
		printf("t:%s\n", t->name);
		break;
	case CAP_PROBE_KFUNC:
		printf("p::%s\n", t->name);
		break;
	case CAP_PROBE_UPROBE:
		printf("p:%s:%s\n", s->path, t->name);
		break;
	case CAP_PROBE_USDT:
		printf("u:%s:%s\n", s->path, t->name);
		break;
	}
}

int rec_list(const struct rec_opts *o)
{
	static char *every_tracepoint[] = { "t:*:*" };
	struct rec_opts all = *o;
	struct rec_spec *specs = NULL;
	int nspecs = 0, err;

	if (!all.nspecs) {
		all.specs = every_tracepoint;
		all.nspecs = 1;
	}
	err = rec_specs__resolve(&all, &specs, &nspecs);
	for (int i = 0; !err && i < nspecs; i++)
		for (uint32_t j = 0; j < specs[i].ntargets; j++)
			print_target(&specs[i], &specs[i].targets[j]);
	rec_specs__free(specs, nspecs);
	if (!err && fflush(stdout))
		err = rec_err(-EIO, "cannot write the list: standard output failed");
	return err;
}
