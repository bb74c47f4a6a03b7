// SPDX-License-Identifier: MIT
/*
 * emit_folded.c: `comm;user root;...;user leaf;[-;]kernel root;...;kernel leaf count`, the input
 * of flamegraph.pl, as bcc's stackcount -f (delimiter always with -d) and profile -f (delimiter
 * only when both stacks exist, "[Missed ... Stack]" placeholders) print it. The first field
 * follows the tool the capture stands for: profile.py and offcputime.py always put the command
 * name there (no pid; their counts are keyed by pid, so one line per process); stackcount.py
 * only with -P (also without pid). Without -P stackcount's BPF key holds no name, and its line is
 * [""] + frames joined by ';': the field is there but empty, so its lines start with ';'. We
 * print that too, byte for byte, and frames keep their field numbers in every mode (awk -F';'
 * and cut -d';' scripts written for bcc keep working). Per-event captures count as stackcount.
 * With --by (ours, not bcc's) the group's value is the first field, then the comm where the mode
 * keys on it, else the frames: no empty field in the middle of a line, which flamegraph.pl would
 * draw as a nameless bar over each group. Lines follow the list order (least to most frequent);
 * with -T each interval is headed by its time. The path is shared with --diff (the same lines)
 * and --svg (which leaves the empty field out too). Names go out escaped (escape.h), ';' too, so
 * a name can add neither a line nor a frame (FlameGraph's stackcollapse-perf.pl turns ';' in
 * names into ':' for the same reason; bcc leaves it).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "../report.h"

static void folded_configure(const struct rep_opts *o, bool profile, struct rep_model_cfg *cfg)
{
	/* profile and offcputime key on (pid, comm); stackcount on both only with -P */
	cfg->key_comm = profile || o->perpid;
	cfg->key_pid = profile || o->perpid;
	cfg->addr_column = false;
	/* bcc's lines, one per stack of addresses: offcputime's keys are threads */
	cfg->address_stacks = o->address_stacks;
	cfg->key_tid = cfg->offcpu && o->address_stacks;
}

static uint32_t add_reversed(const struct rep_model *m, const uint32_t *frames, uint32_t n,
			     bool kernel, struct emit_path_elem *path, uint32_t at)
{
	while (n--)
		path[at++] = (struct emit_path_elem){
			rep_strtab__str(&m->strs, frames[n]), kernel,
			rep_model_frame_plain(m, frames[n]), frames[n] };
	return at;
}

/* Grow *buf to the elements st's path may need: group, comm, delimiter, two markers, frames. */
static int path_reserve(struct emit_path_elem **buf, uint32_t *cap, const struct rep_stack *st)
{
	uint32_t need = st->nk + st->nu + 5;
	struct emit_path_elem *v;

	if (need <= *cap)
		return 0;
	v = realloc(*buf, need * 2 * sizeof(*v));
	if (!v)
		return -ENOMEM;
	*buf = v;
	*cap = need * 2;
	return 0;
}

bool emit_folded_blank_comm(const struct rep_model *m, const struct rep_opts *o)
{
	return !m->cfg.key_comm && o->by == REP_BY_NONE;
}

int64_t emit_folded_path(const struct rep_model *m, const struct rep_opts *o,
			 const struct rep_stack *st, struct emit_path_elem **buf, uint32_t *cap)
{
	bool profile = m->cfg.profile;
	bool delim = o->delimited && !o->kernel_only && !o->user_only;
	struct emit_path_elem *path;
	uint32_t n = 0;

	if (path_reserve(buf, cap, st))
		return -ENOMEM;
	path = *buf;

	/* --by: the group's value is the outermost frame, above comm */
	if (o->by != REP_BY_NONE)
		path[n++] = (struct emit_path_elem){
			rep_strtab__str(&m->strs, m->groups[st->group].value), false };
	if (m->cfg.key_comm)
		path[n++] = (struct emit_path_elem){ rep_strtab__str(&m->strs, st->comm), false };
	else if (emit_folded_blank_comm(m, o))
		path[n++] = (struct emit_path_elem){ "", false, true };
	if (!o->kernel_only) {
		if (profile && (st->flags & REP_STACK_F_ULOST))
			path[n++] = (struct emit_path_elem){ "[Missed User Stack]", false };
		else
			n = add_reversed(m, st->frames + st->nk, st->nu, false, path, n);
	}
	if (!o->user_only) {
		if (profile)
			delim = delim && (st->flags & REP_STACK_F_HAS_K) &&
				(st->flags & REP_STACK_F_HAS_U);
		if (delim)
			path[n++] = (struct emit_path_elem){ "-", false };
		if (profile && (st->flags & REP_STACK_F_KLOST))
			path[n++] = (struct emit_path_elem){ "[Missed Kernel Stack]", true };
		else
			n = add_reversed(m, st->frames, st->nk, true, path, n);
	}
	return n;
}

void emit_folded_line(FILE *out, const struct emit_path_elem *path, uint32_t n)
{
	uint32_t i;

	/* no fprintf: this loop runs once per frame of every line. Escaping ';' and line ends
	 * keeps each stack one line of the frames it has, whatever its names hold; frames the
	 * model found plain skip the scan. */
	for (i = 0; i < n; i++) {
		if (i)
			fputc(';', out);
		if (path[i].plain)
			fputs(path[i].name, out);
		else
			rep_fputs_escaped(out, path[i].name, REP_ESC_SEMICOLON);
	}
}

static int folded_stack(FILE *out, const struct rep_model *m, const struct rep_opts *o,
			const struct rep_stack *st, struct emit_path_elem **buf, uint32_t *cap)
{
	int64_t n = emit_folded_path(m, o, st, buf, cap);

	if (n < 0)
		return n;
	emit_folded_line(out, *buf, n);
	fprintf(out, " %" PRIu64 "\n", st->count);
	return 0;
}

static int folded_emit(FILE *out, const struct rep_model *m, const struct rep_opts *o)
{
	struct emit_path_elem *buf = NULL;
	uint32_t s, i = 0, cap = 0;
	char t[32];
	int err = 0;

	for (s = 0; s < m->nsections && !err; s++) {
		/* stackcount -f skips the empty line but keeps the -T time */
		if (o->timestamp) {
			rep_model_section_time(m, s, t, sizeof(t));
			fprintf(out, "%-8s\n", t);
		}
		for (; i < m->nstacks && m->stacks[i].section == s && !err; i++)
			err = folded_stack(out, m, o, &m->stacks[i], &buf, &cap);
	}
	free(buf);
	return err;
}

const struct emitter emit_folded = {
	.name = "folded",
	.configure = folded_configure,
	.emit = folded_emit,
};
