// SPDX-License-Identifier: MIT
/*
 * emit_list.c: the multi-line stack lists of bcc's stackcount, profile and offcputime, byte for
 * byte (tools/stackcount.py, profile.py and offcputime.py: the leading print(), frame indents,
 * "    --", "    comm [pid]", "    -                comm (pid)", the count and the empty line).
 * profile prints its frames as b.sym(addr, pid, True, True), "NAME+0xOFF [MODULE]", since bcc
 * 0.33, and with -A the address first, "0x%016x" (--old-layout: names only, as before);
 * offcputime prints names (with -s offsets) and keys its counts per thread, printing the
 * thread's id.
 */
#include <inttypes.h>

#include "../report.h"

static const char *str(const struct rep_model *m, uint32_t id)
{
	return rep_strtab__str(&m->strs, id);
}

/* Everything before the stacks of section s: stackcount's print(), then the -T time. */
static void section_head(FILE *out, const struct rep_model *m, const struct rep_opts *o,
			 uint32_t s)
{
	char t[32];

	fputc('\n', out);
	if (o->timestamp) {
		rep_model_section_time(m, s, t, sizeof(t));
		fprintf(out, "%-8s\n", t);
	}
}

/* --by: the group's "KEY=VALUE" line before its first stack of a section */
static void group_head(FILE *out, const struct rep_model *m, const struct rep_opts *o,
		       const struct rep_stack *prev, const struct rep_stack *st)
{
	if (o->by == REP_BY_NONE || (prev && prev->section == st->section &&
				     prev->group == st->group))
		return;
	rep_fputs_escaped(out, str(m, m->groups[st->group].label), 0);
	fputc('\n', out);
}

/* One frame line; no fprintf: this runs once per printed frame. */
static void frame_line(FILE *out, const char *indent, const struct rep_model *m, uint32_t id)
{
	fputs(indent, out);
	if (rep_model_frame_plain(m, id))
		fputs(str(m, id), out);
	else
		rep_fputs_escaped(out, str(m, id), 0);
	fputc('\n', out);
}

static bool need_delimiter(const struct rep_opts *o)
{
	return o->delimited && !o->kernel_only && !o->user_only;
}

static void stackcount_configure(const struct rep_opts *o, bool profile, struct rep_model_cfg *cfg)
{
	cfg->key_pid = o->perpid;
	cfg->key_comm = o->perpid;
	cfg->addr_column = o->verbose || o->address;
	cfg->address_stacks = o->address_stacks;
}

static void stackcount_stack(FILE *out, const struct rep_model *m, const struct rep_opts *o,
			     const struct rep_stack *st)
{
	uint32_t i;

	for (i = 0; i < st->nk; i++)
		frame_line(out, "  ", m, st->frames[i]);
	/* stackcount prints the delimiter even when one side is empty */
	if (need_delimiter(o))
		fputs("    --\n", out);
	for (i = 0; i < st->nu; i++)
		frame_line(out, "  ", m, st->frames[st->nk + i]);
	if (o->perpid) {
		fputs("    ", out);
		rep_fputs_escaped(out, str(m, st->comm), 0);
		fprintf(out, " [%" PRIu32 "]\n", st->pid);
	}
	fprintf(out, "    %" PRIu64 "\n\n", st->count);
}

static void profile_configure(const struct rep_opts *o, bool profile, struct rep_model_cfg *cfg)
{
	/* profile keys its counts on (pid, comm, stacks), offcputime on (tid, pid, comm, stacks) */
	cfg->key_pid = true;
	cfg->key_comm = true;
	cfg->key_tid = cfg->offcpu;
	cfg->addr_column = o->verbose || o->address;
	cfg->addr_0x = true;
	cfg->bcc_frames = !cfg->offcpu && !o->old_layout;
	cfg->address_stacks = o->address_stacks;
}

static void profile_stack(FILE *out, const struct rep_model *m, const struct rep_opts *o,
			  const struct rep_stack *st)
{
	uint32_t i;

	if (!o->user_only) {
		if (st->flags & REP_STACK_F_KLOST)
			fputs("    [Missed Kernel Stack]\n", out);
		else
			for (i = 0; i < st->nk; i++)
				frame_line(out, "    ", m, st->frames[i]);
	}
	if (!o->kernel_only) {
		if (need_delimiter(o) && (st->flags & REP_STACK_F_HAS_K) &&
		    (st->flags & REP_STACK_F_HAS_U))
			fputs("    --\n", out);
		if (st->flags & REP_STACK_F_ULOST)
			fputs("    [Missed User Stack]\n", out);
		else
			for (i = 0; i < st->nu; i++)
				frame_line(out, "    ", m, st->frames[st->nk + i]);
	}
	fprintf(out, "    %-16s ", "-");
	rep_fputs_escaped(out, str(m, st->comm), 0);
	fprintf(out, " (%" PRIu32 ")\n", st->pid);
	fprintf(out, "        %" PRIu64 "\n\n", st->count);
}

static int emit_sections(FILE *out, const struct rep_model *m, const struct rep_opts *o,
			 void (*stack)(FILE *, const struct rep_model *, const struct rep_opts *,
				       const struct rep_stack *))
{
	uint32_t s, i = 0;

	for (s = 0; s < m->nsections; s++) {
		section_head(out, m, o, s);
		for (; i < m->nstacks && m->stacks[i].section == s; i++) {
			group_head(out, m, o, i ? &m->stacks[i - 1] : NULL, &m->stacks[i]);
			stack(out, m, o, &m->stacks[i]);
		}
	}
	return 0;
}

static int stackcount_emit(FILE *out, const struct rep_model *m, const struct rep_opts *o)
{
	return emit_sections(out, m, o, stackcount_stack);
}

static int profile_emit(FILE *out, const struct rep_model *m, const struct rep_opts *o)
{
	return emit_sections(out, m, o, profile_stack);
}

const struct emitter emit_stackcount = {
	.name = "stackcount",
	.configure = stackcount_configure,
	.emit = stackcount_emit,
};

const struct emitter emit_profile = {
	.name = "profile",
	.configure = profile_configure,
	.emit = profile_emit,
};
