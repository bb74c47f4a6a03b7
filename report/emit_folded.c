// SPDX-License-Identifier: MIT
/*
 * emit_folded.c: `comm;user root;...;user leaf;[-;]kernel root;...;kernel leaf count`, the input
 * of flamegraph.pl, as bcc's stackcount -f (delimiter always with -d) and profile -f (delimiter
 * only when both stacks exist, "[Missed ... Stack]" placeholders) print it. Lines follow the
 * list order (least to most frequent); with -T each interval is headed by its time.
 */
#include <inttypes.h>

#include "report.h"

static void folded_configure(const struct rep_opts *o, bool profile, struct rep_model_cfg *cfg)
{
	cfg->key_comm = true;
	cfg->key_pid = profile || o->perpid;
	cfg->addr_column = false;
}

static void put_frames_reversed(FILE *out, const struct rep_model *m, const uint32_t *frames,
				uint32_t n)
{
	/* fputs, not fprintf: this loop runs once per frame of every line */
	while (n--) {
		fputc(';', out);
		fputs(rep_strtab__str(&m->strs, frames[n]), out);
	}
}

static void folded_stack(FILE *out, const struct rep_model *m, const struct rep_opts *o,
			 const struct rep_stack *st)
{
	bool profile = m->cfg.profile;
	bool delim = o->delimited && !o->kernel_only && !o->user_only;

	fputs(rep_strtab__str(&m->strs, st->comm), out);
	if (!o->kernel_only) {
		if (profile && (st->flags & REP_STACK_F_ULOST))
			fputs(";[Missed User Stack]", out);
		else
			put_frames_reversed(out, m, st->frames + st->nk, st->nu);
	}
	if (!o->user_only) {
		if (profile)
			delim = delim && (st->flags & REP_STACK_F_HAS_K) &&
				(st->flags & REP_STACK_F_HAS_U);
		if (delim)
			fputs(";-", out);
		if (profile && (st->flags & REP_STACK_F_KLOST))
			fputs(";[Missed Kernel Stack]", out);
		else
			put_frames_reversed(out, m, st->frames, st->nk);
	}
	fprintf(out, " %" PRIu64 "\n", st->count);
}

static int folded_emit(FILE *out, const struct rep_model *m, const struct rep_capture *c,
		       const struct rep_opts *o)
{
	uint32_t s, i = 0;
	char t[32];

	for (s = 0; s < m->nsections; s++) {
		/* stackcount -f skips the empty line but keeps the -T time */
		if (o->timestamp) {
			emit_section_time(t, sizeof(t), c, m->section_end_ns[s]);
			fprintf(out, "%-8s\n", t);
		}
		for (; i < m->nstacks && m->stacks[i].section == s; i++)
			folded_stack(out, m, o, &m->stacks[i]);
	}
	return 0;
}

const struct emitter emit_folded = {
	.name = "folded",
	.configure = folded_configure,
	.emit = folded_emit,
};
