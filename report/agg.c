// SPDX-License-Identifier: MIT
/*
 * agg.c: the one symbolized model every emitter prints. Each address becomes one or more
 * structured frames (struct rep_frame: name, offset, module, source line, inlined, kernel or user,
 * reason), an address with inlined functions expanding to one frame per function, innermost
 * first. Frames are interned by their text as the layout displays it (rep_frame_render()), and a
 * frame's id is the id of that text in rep_model.strs, so rows whose displayed stacks are identical
 * merge: merging follows what the user sees (two pids with the same frames are one stack unless
 * the layout shows the pid). Layouts that print every field (--json) render an exact key instead.
 *
 * Several captures merge into one model, added one at a time (rep_model__add()): the model keeps
 * nothing of a capture once it is added, so that a thousand captures cost what their distinct
 * stacks and names cost, not what their files hold. --by keeps their stacks apart in groups
 * (struct rep_group), and the filters of filter.c drop rows and stacks before merging.
 *
 * Cost: every distinct address is symbolized once (struct rep_resolver, resolve.c) and turned
 * into frames once (struct run); frames and stacks are hashed, never compared pairwise. Memory:
 * the model and the builder's tables take their bytes from the run's memory budget (o->memory)
 * as they grow; over it, building fails with -EFBIG.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report.h"

/*
 * The frames of resolver address `id`: runs[first..first+n), and the address's reason (frames
 * are interned by text, and "[unknown]" stands for several reasons). Indexed by id, 8 bytes
 * each, so a frame costs the resolver's slot and this, not a walk through its details.
 */
struct run {
	uint32_t first;
	uint16_t n;		/* 1 + inlined functions (symbolize.c reports at most 64) */
	uint16_t reason;
};

struct rep_model_builder {
	struct rep_model *m;
	const struct rep_capture *c;	/* the capture being added */
	uint32_t capi;			/* its index: how many were added before it */
	const char *name;		/* its file name */
	uint32_t nsec;			/* -T: sections of the captures added before it */
	const struct rep_opts *o;
	struct rep_filter *filter;
	struct rep_resolver *res;	/* the capture's */
	struct run *run_of;		/* per resolver id */
	uint32_t nrun_of, run_of_cap;
	uint32_t *runs;			/* frame ids of resolved addresses */
	uint32_t nruns, runs_cap;
	uint8_t *reasons;		/* per frame_buf slot: the address's reason */
	uint32_t reasons_cap;
	uint8_t *grep;			/* per string id: 0 unknown, 1 no match, 2 match */
	uint32_t grep_cap;
	char *key;			/* address_key()'s text */
	size_t key_cap;
	uint32_t empty;			/* id of "" */
	struct rep_charge charge;	/* the tables above, until the model is built */
};

/* snprintf that never lets *n run past len, so later appends stay in bounds */
static void append(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*n >= len - 1)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	if (w > 0)
		*n = *n + w < len - 1 ? *n + w : len - 1;
}

/*
 * An interpreter frame: "NAME (FILE:LINE)", the file's base name (its path with -v, where the
 * frame also says "[py] " first and its code object's address and instruction offset last);
 * --no-python-lines leaves the line out.
 */
static void render_code(const struct rep_frame *f, const struct rep_opts *o, bool exact,
			char *buf, size_t len, size_t *n)
{
	const char *file = f->file, *slash;

	if (o->verbose || exact)
		append(buf, len, n, "[py] ");
	append(buf, len, n, "%s", f->name ? f->name : "[unknown]");
	if (file && !o->verbose && !exact && (slash = strrchr(file, '/')) && slash[1])
		file = slash + 1;
	if (file && (o->no_python_lines && !exact))
		append(buf, len, n, " (%s)", file);
	else if (file)
		append(buf, len, n, " (%s:%" PRIu32 ")", file, f->line);
	if ((o->verbose || exact) && f->offset == CAP_CODE_OFF_NONE)
		append(buf, len, n, " [code 0x%" PRIx64 "]", f->addr);
	else if (o->verbose || exact)
		append(buf, len, n, " [code 0x%" PRIx64 " +%" PRIu64 "]", f->addr, f->offset);
	if (exact)
		append(buf, len, n, " %u", f->reason);
}

/*
 * The text of a frame (stkreport(1), "Frames"):
 *   [ADDR ]NAME[+0xOFF][ (FILE:LINE)][ (inlined)][ [MODULE]][_[k]]   named frames
 *   [ADDR ][unknown][ (MODULE+0xOFF)][ [MODULE]][_[k]]                unnamed frames
 *   [kernel] 0xADDR[_[k]], or ADDR [kernel] with the address column   under hidden kallsyms
 * ADDR is stackcount -v's "%-16lx", or profile -A's "0x%016lx" (cfg->addr_0x); +0xOFF comes
 * with -s or in bcc profile's frames (never on an inlined frame: it has no address of its own);
 * FILE:LINE with -l; (MODULE+0xOFF) with -v; [MODULE] in bcc profile's frames (cfg->bcc_frames:
 * b.sym(addr, pid, show_module=True, show_offset=True) in tools/profile.py since bcc 0.33, the
 * module "kernel" for the kernel image, bcc's KSyms name); _[k] with -a. " (inlined)" is perf's
 * marking. exact (layouts that print every field, --json): every field goes into the text, so
 * frames that differ in any field stay apart. Interpreter frames: render_code().
 */
void rep_frame_render(const struct rep_frame *f, const struct rep_opts *o,
		      const struct rep_model_cfg *cfg, char *buf, size_t len)
{
	bool inl = f->flags & REP_FRAME_F_INLINED, kernel = f->flags & REP_FRAME_F_KERNEL;
	bool exact = cfg->exact;
	const char *module = f->module ? f->module : kernel ? "kernel" : NULL;
	size_t n = 0;

	buf[0] = 0;
	if (cfg->addr_column)
		append(buf, len, &n, cfg->addr_0x ? "0x%016" PRIx64 " " : "%-16" PRIx64 " ",
		       f->addr);
	if (f->flags & REP_FRAME_F_PYTHON) {
		render_code(f, o, exact, buf, len, &n);
		return;
	}
	if (f->name) {
		append(buf, len, &n, "%s", f->name);
		if ((o->offset || exact || cfg->bcc_frames) && !inl)
			append(buf, len, &n, "+0x%" PRIx64, f->offset);
		if ((o->lines || exact) && f->file)
			append(buf, len, &n, " (%s:%" PRIu32 ")", f->file, f->line);
		if (inl)
			append(buf, len, &n, " (inlined)");
	} else if (f->reason == SYM_R_KSYMS_HIDDEN) {
		/* kallsyms showed zeros when recorded: the address is all there is, never a guess
		 * (with the address column it is there already) */
		append(buf, len, &n, cfg->addr_column ? "[kernel]" : "[kernel] 0x%" PRIx64, f->addr);
		module = NULL;
	} else {
		append(buf, len, &n, "[unknown]");
		if ((o->verbose || exact) && f->module)
			append(buf, len, &n, " (%s+0x%" PRIx64 ")", f->module, f->module_offset);
		if (!f->module)
			module = NULL;	/* bcc: no module known, no brackets */
	}
	if (cfg->bcc_frames && module)
		append(buf, len, &n, " [%s]", module);
	if (exact) {
		append(buf, len, &n, " %s", f->module ? f->module : "");
		append(buf, len, &n, " %u", f->reason);
	}
	if (kernel && (o->annotations || exact))
		append(buf, len, &n, "_[k]");
}

static const char *intern_or_null(struct rep_model *m, const char *s, int *err)
{
	int64_t id;

	if (!s)
		return NULL;
	id = rep_strtab__intern(&m->strs, s);
	if (id < 0) {
		*err = id;
		return NULL;
	}
	return rep_strtab__str(&m->strs, id);
}

/* Room for the record of string id `id` in the frame table (indexed by string id). */
static int reserve_frame_slot(struct rep_model *m, uint32_t id)
{
	uint32_t cap = m->frames_cap ? m->frames_cap : 256;
	struct rep_frame *v;

	if (id < m->frames_cap)
		return 0;
	while (cap <= id)
		cap *= 2;
	if (rep_charge__take(&m->charge, (uint64_t)(cap - m->frames_cap) * sizeof(*v)))
		return -EFBIG;
	v = realloc(m->frames, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memset(v + m->frames_cap, 0, (cap - m->frames_cap) * sizeof(*v));
	m->frames = v;
	m->frames_cap = cap;
	return 0;
}

/*
 * Intern frame f (its strings lent by the symbolizer): copy its strings into the model, render
 * its text, and store the record under the text's id the first time that text is seen.
 */
static int intern_frame(struct rep_model_builder *b, struct rep_frame f, uint32_t *id)
{
	struct rep_model *m = b->m;
	char buf[REP_MAX_FRAME_TEXT];
	int64_t tid;
	int err = 0;

	rep_frame_render(&f, b->o, &m->cfg, buf, sizeof(buf));
	tid = rep_strtab__intern(&m->strs, buf);
	if (tid < 0)
		return tid;
	err = reserve_frame_slot(m, tid);
	if (err)
		return err;
	if (!(m->frames[tid].flags & REP_FRAME_F_USED)) {
		f.name = intern_or_null(m, f.name, &err);
		f.module = intern_or_null(m, f.module, &err);
		f.module_path = intern_or_null(m, f.module_path, &err);
		f.file = intern_or_null(m, f.file, &err);
		if (err)
			return err;
		f.flags |= REP_FRAME_F_USED;
		if (rep_needs_escape(buf, REP_ESC_SEMICOLON))
			f.flags |= REP_FRAME_F_ESCAPE;
		f.text = tid;
		m->frames[tid] = f;
	}
	*id = tid;
	return 0;
}

static int reserve_runs(struct rep_model_builder *b, uint32_t n)
{
	uint32_t cap = b->runs_cap ? b->runs_cap : 4096;
	uint32_t *v;

	if (b->nruns + n <= b->runs_cap)
		return 0;
	while (cap < b->nruns + n)
		cap *= 2;
	if (rep_charge__take(&b->charge, (uint64_t)(cap - b->runs_cap) * sizeof(*v)))
		return -EFBIG;
	v = realloc(b->runs, cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	b->runs = v;
	b->runs_cap = cap;
	return 0;
}

/*
 * The frames of one looked-up address, appended to runs: the functions inlined at it, innermost
 * first, then the function the code belongs to (perf's order in a leaf-first chain).
 */
static int add_run(struct rep_model_builder *b, const struct rep_frame_info *fi, uint64_t addr)
{
	uint32_t ninl = b->o->no_inline ? 0 : fi->ninl, i, id;
	struct rep_frame f = {
		.name = fi->name,
		.offset = fi->offset,
		.module = fi->module,
		.module_path = fi->module_path,
		.module_offset = fi->module_offset,
		.addr = addr,
		.file = fi->file,
		.line = fi->line,
		.reason = fi->reason,
		.flags = fi->kernel ? REP_FRAME_F_KERNEL : 0,
	};

	if (fi->lang) {
		f.flags |= REP_FRAME_F_PYTHON;
		f.addr = fi->code_addr;
	}
	int err;

	if (!fi->name)
		ninl = 0;
	err = reserve_runs(b, ninl + 1);
	if (err)
		return err;
	for (i = 0; i < ninl; i++) {
		struct rep_frame in = f;

		in.name = fi->inl[i].name;
		in.file = fi->inl[i].file;
		in.line = fi->inl[i].line;
		in.offset = 0;
		in.flags |= REP_FRAME_F_INLINED;
		err = intern_frame(b, in, &id);
		if (err)
			return err;
		b->runs[b->nruns++] = id;
	}
	err = intern_frame(b, f, &id);
	if (err)
		return err;
	b->runs[b->nruns++] = id;
	return 0;
}

/* The frames of address `id` of the resolver, made the first time it is seen. */
static int frames_of(struct rep_model_builder *b, uint32_t id, uint64_t addr,
		     const struct run **out)
{
	const struct rep_frame_info *fi;
	uint32_t first;
	int err;

	/* ids are dense: one not seen yet is the next one */
	if (id < b->nrun_of) {
		*out = &b->run_of[id];
		return 0;
	}
	if (b->nrun_of == b->run_of_cap) {
		uint32_t cap = b->run_of_cap ? b->run_of_cap * 2 : 4096;
		struct run *v;

		if (rep_charge__take(&b->charge, (uint64_t)(cap - b->run_of_cap) * sizeof(*v)))
			return -EFBIG;
		v = realloc(b->run_of, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		b->run_of = v;
		b->run_of_cap = cap;
	}
	fi = rep_resolver__info(b->res, id);
	first = b->nruns;
	err = add_run(b, fi, addr);
	if (err)
		return err;
	b->run_of[id] = (struct run){ first, b->nruns - first, fi->reason };
	*out = &b->run_of[b->nrun_of++];
	return 0;
}

static int reserve_frames(struct rep_model_builder *b, uint32_t n)
{
	struct rep_model *m = b->m;
	uint32_t *v;
	uint8_t *r;

	if (n <= m->frame_buf_cap)
		return 0;
	n = n < 256 ? 256 : n * 2;
	if (rep_charge__take(&b->charge, (uint64_t)(n - m->frame_buf_cap) * (sizeof(*v) + 1)))
		return -EFBIG;
	v = realloc(m->frame_buf, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->frame_buf = v;
	m->frame_buf_cap = n;
	r = realloc(b->reasons, n);
	if (!r)
		return -ENOMEM;
	b->reasons = r;
	return 0;
}

/* Append the frames of one stack of row `row` to frame_buf at *pos, at most max (0: all). */
static int add_frames(struct rep_model_builder *b, const struct cap_stack *s,
		      const struct rep_interval *ri, uint32_t row, bool kernel, uint32_t max,
		      uint32_t *pos)
{
	uint32_t ids[64], i, j, k, n, start = *pos;
	const struct run *r;
	int err;

	for (i = 0; i < s->nips && (!max || *pos - start < max); i += n) {
		/* addresses in batches (one call, not one per frame); one at a time under
		 * --max-depth, which may cut the stack inside an address's inlined frames */
		n = max ? 1 : s->nips - i < 64 ? s->nips - i : 64;
		err = rep_resolver__ids(b->res, ri, row, kernel, s->ips, i, n, ids);
		if (err)
			return err;
		for (k = 0; k < n && (!max || *pos - start < max); k++) {
			/* every id, hidden or not: frames_of() takes new ids in order */
			err = frames_of(b, ids[k], s->ips[i + k], &r);
			if (err)
				return err;
			if (!kernel && rep_ip_hidden(b->o, s->ips, s->nips, i + k))
				continue;	/* --python-frames */
			err = reserve_frames(b, *pos + r->n);
			if (err)
				return err;
			for (j = 0; j < r->n && (!max || *pos - start < max); j++) {
				b->reasons[*pos] = r->reason;
				b->m->frame_buf[(*pos)++] = b->runs[r->first + j];
			}
		}
	}
	return 0;
}

struct stack_key {
	const struct rep_model *m;
	const struct rep_stack *s;
};

static bool stack_eq(const void *ctx, uint32_t val)
{
	const struct stack_key *k = ctx;
	const struct rep_stack *a = k->s, *b = &k->m->stacks[val];

	return a->section == b->section && a->group == b->group && a->pid == b->pid &&
	       a->comm == b->comm && a->flags == b->flags && a->nk == b->nk && a->nu == b->nu &&
	       a->addrs == b->addrs &&
	       (!(a->nk + a->nu) ||
		!memcmp(a->frames, b->frames, (a->nk + a->nu) * sizeof(*a->frames)));
}

static uint64_t stack_hash(const struct rep_stack *s)
{
	uint64_t h = rep_hash_u64(s->section, ((uint64_t)s->pid << 32) | s->comm);

	h = rep_hash_u64(h, ((uint64_t)s->flags << 40) ^ ((uint64_t)s->nk << 20) ^ s->nu);
	h = rep_hash_u64(h, ((uint64_t)s->addrs << 32) | s->group);
	return rep_hash_bytes(h, s->frames, (s->nk + s->nu) * sizeof(*s->frames));
}

static int merge(struct rep_model *m, struct rep_stack *s)
{
	struct stack_key key = { m, s };
	uint64_t h = stack_hash(s);
	uint32_t val, n = s->nk + s->nu;
	uint32_t *frames;
	int err;

	if (rep_htab__find(&m->index, h, stack_eq, &key, &val)) {
		m->stacks[val].count = rep_count_add(m->stacks[val].count, s->count, NULL);
		return 0;
	}
	if (m->nstacks == m->cap) {
		uint32_t cap = m->cap ? m->cap * 2 : 256;
		struct rep_stack *v;

		if (rep_charge__take(&m->charge, (uint64_t)(cap - m->cap) * sizeof(*v)))
			return -EFBIG;
		v = realloc(m->stacks, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->stacks = v;
		m->cap = cap;
	}
	/* malloc's own 8 bytes, rounded to 16 */
	if (rep_charge__take(&m->charge, (n * sizeof(*frames) + 8 + 15) & ~(uint64_t)15))
		return -EFBIG;
	frames = malloc(n ? n * sizeof(*frames) : 1);
	if (!frames)
		return -ENOMEM;
	if (n)	/* frame_buf may still be NULL */
		memcpy(frames, s->frames, n * sizeof(*frames));
	err = rep_htab__insert(&m->index, h, m->nstacks);
	if (err) {
		free(frames);
		return err;
	}
	m->stacks[m->nstacks] = *s;
	m->stacks[m->nstacks].frames = frames;
	m->nstacks++;
	return 0;
}

/* ---- groups (--by) ------------------------------------------------------------------------- */

struct group_key {
	const struct rep_model *m;
	uint32_t label;
};

static bool group_eq(const void *ctx, uint32_t val)
{
	const struct group_key *k = ctx;

	return k->m->groups[val].label == k->label;
}

static const char *const by_names[] = {
	[REP_BY_HOST] = "host", [REP_BY_CAPTURE] = "capture", [REP_BY_PID] = "pid",
	[REP_BY_COMM] = "comm", [REP_BY_PROBE] = "probe", [REP_BY_INTERVAL] = "interval",
};

/* The group of value text `value`, sort key `key`, added when new. Returns its index. */
static int64_t group_id(struct rep_model_builder *b, const char *value, int64_t key)
{
	struct rep_model *m = b->m;
	char label[512];
	struct group_key k = { m, 0 };
	int64_t lid, vid;
	uint32_t id;
	int err;

	snprintf(label, sizeof(label), "%s=%s", by_names[b->o->by], value);
	lid = rep_strtab__intern(&m->strs, label);
	if (lid < 0)
		return lid;
	k.label = lid;
	if (rep_htab__find(&m->group_index, rep_hash_u64(0, lid), group_eq, &k, &id))
		return id;
	vid = rep_strtab__intern(&m->strs, value);
	if (vid < 0)
		return vid;
	if (m->ngroups == m->groups_cap) {
		uint32_t cap = m->groups_cap ? m->groups_cap * 2 : 16;
		struct rep_group *v;

		if (rep_charge__take(&m->charge, (uint64_t)(cap - m->groups_cap) * sizeof(*v)))
			return -EFBIG;
		v = realloc(m->groups, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		m->groups = v;
		m->groups_cap = cap;
	}
	err = rep_htab__insert(&m->group_index, rep_hash_u64(0, lid), m->ngroups);
	if (err)
		return err;
	m->groups[m->ngroups] = (struct rep_group){ .label = lid, .value = vid, .key = key };
	return m->ngroups++;
}

/* The --by group of one row (0 when not grouping). */
static int64_t row_group(struct rep_model_builder *b, const struct rep_interval *ri,
			 const struct cap_row *row, const char *comm)
{
	const char *s;
	char v[64];
	int64_t wall;

	switch (b->o->by) {
	case REP_BY_HOST:
		s = b->c->meta ? cap_meta_get(b->c->meta, "host") : NULL;
		return group_id(b, s && *s ? s : "?", 0);
	case REP_BY_CAPTURE:
		return group_id(b, b->name, b->capi);
	case REP_BY_PID:
		snprintf(v, sizeof(v), "%" PRIu32, row->pid);
		return group_id(b, v, row->pid);
	case REP_BY_COMM:
		return group_id(b, comm, 0);
	case REP_BY_PROBE:
		s = rep_capture_probe_spec(b->c, row->probe);
		if (!s) {
			snprintf(v, sizeof(v), "%" PRIu32, row->probe);
			s = v;
		}
		return group_id(b, s, row->probe);
	case REP_BY_INTERVAL:
		wall = rep_capture_wall_or_mono(b->c, ri->iv->end_ns);
		rep_wall_time_text(v, sizeof(v), wall);
		return group_id(b, v, wall / 1000000000);
	default:
		return 0;
	}
}

/* ---- rows ---------------------------------------------------------------------------------- */

/*
 * --address-stacks: the raw addresses of the stacks shown, as a string id, so that stacks of
 * other addresses stay apart however alike they print: bcc keys its counts on stack ids, one per
 * distinct address stack (tools/stackcount.py, profile.py, offcputime.py: struct key_t).
 */
static int64_t address_key(struct rep_model_builder *b, const struct cap_stack *ks,
			   const struct cap_stack *us)
{
	const struct cap_stack *side[2] = { ks, us };
	char *key = b->key;
	size_t n = 0;

	for (int k = 0; k < 2; k++) {
		uint32_t nips = side[k] ? side[k]->nips : 0;
		size_t need = n + 2 + nips * 17 + 1;

		if (need > b->key_cap) {
			size_t cap = need * 2;
			char *v = realloc(b->key, cap);

			if (!v)
				return -ENOMEM;
			b->key = key = v;
			b->key_cap = cap;
		}
		n += sprintf(key + n, "%c:", k ? 'u' : 'k');
		for (uint32_t i = 0; i < nips; i++)
			n += sprintf(key + n, "%" PRIx64 ",", side[k]->ips[i]);
	}
	return rep_strtab__intern(&b->m->strs, key);
}

/* --grep: does any frame of the stack match? Each frame text is matched once. */
static int stack_matches(struct rep_model_builder *b, const uint32_t *frames, uint32_t n)
{
	const struct rep_model *m = b->m;
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint32_t id = frames[i];

		if (id >= b->grep_cap) {
			uint32_t cap = b->grep_cap ? b->grep_cap : 1024;
			uint8_t *v;

			while (cap <= id)
				cap *= 2;
			if (rep_charge__take(&b->charge, cap - b->grep_cap))
				return -EFBIG;
			v = realloc(b->grep, cap);
			if (!v)
				return -ENOMEM;
			memset(v + b->grep_cap, 0, cap - b->grep_cap);
			b->grep = v;
			b->grep_cap = cap;
		}
		if (!b->grep[id]) {
			const char *name = m->frames[id].name;

			b->grep[id] = rep_filter__match(b->filter, name ? name : "[unknown]") ? 2 : 1;
		}
		if (b->grep[id] == 2)
			return 1;
	}
	return 0;
}

static int add_row(struct rep_model_builder *b, uint32_t section, const struct rep_interval *ri,
		   uint32_t r)
{
	const struct cap_interval *iv = ri->iv;
	const struct cap_row *row = &iv->rows[r];
	const struct rep_model_cfg *cfg = &b->m->cfg;
	const struct cap_stack *ks, *us;
	struct rep_stack s = { .section = section, .count = row->count };
	char comm[CAP_COMM_LEN + 1];
	uint32_t pos = 0, i;
	int64_t id;
	int err;

	memcpy(comm, row->comm, CAP_COMM_LEN);
	comm[CAP_COMM_LEN] = 0;	/* hostile input may lack the NUL */
	if (!rep_filter__row(b->filter, ri, row, comm))
		return 0;
	if (cfg->key_comm) {
		id = rep_strtab__intern(&b->m->strs, comm);
		if (id < 0)
			return id;
		s.comm = id;
	} else {
		s.comm = b->empty;
	}
	id = row_group(b, ri, row, comm);
	if (id < 0)
		return id;
	s.group = id;
	s.pid = !cfg->key_pid ? 0 : cfg->key_tid ? row->tid : row->pid;
	ks = cfg->kernel ? rep_row_stack(ri, r, false) : NULL;
	us = cfg->user ? rep_row_stack(ri, r, true) : NULL;
	if (cfg->kernel && (row->flags & CAP_ROW_F_KSTACK_LOST))
		s.flags |= REP_STACK_F_KLOST;
	if (cfg->user && (row->flags & CAP_ROW_F_USTACK_LOST))
		s.flags |= REP_STACK_F_ULOST;
	if (ks) {
		s.flags |= REP_STACK_F_HAS_K;
		err = add_frames(b, ks, ri, r, true, b->o->max_depth, &pos);
		if (err)
			return err;
	}
	s.nk = pos;
	if (us) {
		s.flags |= REP_STACK_F_HAS_U;
		err = add_frames(b, us, ri, r, false, b->o->max_depth, &pos);
		if (err)
			return err;
	}
	s.nu = pos - s.nk;
	s.frames = b->m->frame_buf;
	if (rep_filter__has_grep(b->filter)) {
		err = stack_matches(b, s.frames, pos);
		if (err <= 0)
			return err;
	}
	if (cfg->address_stacks) {
		id = address_key(b, ks, us);
		if (id < 0)
			return id;
		s.addrs = id;
	}
	/* unnamed frames are counted as displayed: after the filters and --max-depth */
	for (i = 0; i < pos; i++) {
		if (b->reasons[i] != SYM_OK) {
			b->m->unnamed[b->reasons[i]] =
				rep_count_add(b->m->unnamed[b->reasons[i]], row->count, NULL);
			b->m->unnamed_total = rep_count_add(b->m->unnamed_total, row->count, NULL);
		}
	}
	b->m->kept_events = rep_count_add(b->m->kept_events, row->count, NULL);
	if (b->m->on_row) {
		err = b->m->on_row(b->m->on_row_ctx, b->m, b->c, ri, r, &s);
		if (err)
			return err;
	}
	return merge(b->m, &s);
}

/* ---- order --------------------------------------------------------------------------------- */

static int frames_cmp(const struct rep_model *m, const uint32_t *a, uint32_t na, const uint32_t *b,
		      uint32_t nb)
{
	uint32_t i;
	int d;

	for (i = 0; i < na && i < nb; i++) {
		if (a[i] == b[i])
			continue;
		d = strcmp(rep_strtab__str(&m->strs, a[i]), rep_strtab__str(&m->strs, b[i]));
		if (d)
			return d;
	}
	return na < nb ? -1 : na > nb;
}

int rep_stack_cmp(const struct rep_model *m, const struct rep_stack *a, const struct rep_stack *b)
{
	int d;

	if (a->section != b->section)
		return a->section < b->section ? -1 : 1;
	/* groups are numbered in their display order once the model is built */
	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->count != b->count)
		return a->count < b->count ? -1 : 1;
	/* equal counts: order by what is printed, so the output never depends on file order */
	d = strcmp(rep_strtab__str(&m->strs, a->comm), rep_strtab__str(&m->strs, b->comm));
	if (d)
		return d;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	d = frames_cmp(m, a->frames, a->nk, b->frames, b->nk);
	if (d)
		return d;
	d = frames_cmp(m, a->frames + a->nk, a->nu, b->frames + b->nk, b->nu);
	if (d)
		return d;
	if (a->flags != b->flags)
		return a->flags < b->flags ? -1 : 1;
	/* --address-stacks: entries that print alike, in the order of their addresses */
	return a->addrs == b->addrs ? 0 :
	       strcmp(rep_strtab__str(&m->strs, a->addrs), rep_strtab__str(&m->strs, b->addrs));
}

/* qsort has no context argument; qsort_r (glibc) does */
static int stack_cmp_r(const void *a, const void *b, void *ctx)
{
	return rep_stack_cmp(ctx, a, b);
}

static int group_cmp_r(const void *a, const void *b, void *ctx)
{
	const struct rep_model *m = ctx;
	const struct rep_group *x = &m->groups[*(const uint32_t *)a];
	const struct rep_group *y = &m->groups[*(const uint32_t *)b];

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return strcmp(rep_strtab__str(&m->strs, x->label), rep_strtab__str(&m->strs, y->label));
}

/* Renumber the groups in display order (sort key, then label). */
static int sort_groups(struct rep_model *m)
{
	uint32_t *order = NULL, *rank = NULL, i;
	struct rep_group *sorted = NULL;
	int err = -ENOMEM;

	if (m->ngroups < 2)
		return 0;
	order = malloc(m->ngroups * sizeof(*order));
	rank = malloc(m->ngroups * sizeof(*rank));
	sorted = malloc(m->ngroups * sizeof(*sorted));
	if (!order || !rank || !sorted)
		goto out;
	for (i = 0; i < m->ngroups; i++)
		order[i] = i;
	qsort_r(order, m->ngroups, sizeof(*order), group_cmp_r, m);
	for (i = 0; i < m->ngroups; i++) {
		rank[order[i]] = i;
		sorted[i] = m->groups[order[i]];
	}
	for (i = 0; i < m->nstacks; i++)
		m->stacks[i].group = rank[m->stacks[i].group];
	memcpy(m->groups, sorted, m->ngroups * sizeof(*sorted));
	err = 0;
out:
	free(order);
	free(rank);
	free(sorted);
	return err;
}

/* ---- build --------------------------------------------------------------------------------- */

static void builder_clear_capture(struct rep_model_builder *b)
{
	/* resolver ids start again at 0 with the next capture's resolver */
	rep_resolver__free(b->res);
	b->res = NULL;
	b->nrun_of = 0;
	b->nruns = 0;
	b->c = NULL;
}

static void builder_free(struct rep_model_builder *b)
{
	if (!b)
		return;
	builder_clear_capture(b);
	free(b->run_of);
	free(b->runs);
	free(b->reasons);
	free(b->grep);
	free(b->key);
	rep_charge__clear(&b->charge);
	rep_filter__free(b->filter);
	free(b);
}

/*
 * -T: room for the sections of a capture of n intervals, after those of the captures before. A
 * section keeps its interval's end and the wall time of that end, computed now: the capture is
 * gone when the headings print.
 */
static int reserve_sections(struct rep_model *m, uint32_t n)
{
	uint32_t need = m->nsections + n;
	uint64_t *end;
	int64_t *wall;

	if (need <= m->sections_cap)
		return 0;
	need = need < 2 * m->sections_cap ? 2 * m->sections_cap : need;
	if (rep_charge__take(&m->charge, (uint64_t)(need - m->sections_cap) *
			     (sizeof(*end) + sizeof(*wall))))
		return -EFBIG;
	end = realloc(m->section_end_ns, need * sizeof(*end));
	if (end)
		m->section_end_ns = end;
	wall = end ? realloc(m->section_wall_ns, need * sizeof(*wall)) : NULL;
	if (!wall)
		return -ENOMEM;
	m->section_wall_ns = wall;
	memset(m->section_end_ns + m->sections_cap, 0,
	       (need - m->sections_cap) * sizeof(*m->section_end_ns));
	memset(wall + m->sections_cap, 0, (need - m->sections_cap) * sizeof(*wall));
	m->sections_cap = need;
	return 0;
}

static int add_capture(struct rep_model_builder *b)
{
	const struct rep_capture *c = b->c;
	struct rep_model *m = b->m;
	uint32_t i, r;
	int err;

	if (b->o->timestamp) {
		err = reserve_sections(m, c->nseqs);
		if (err)
			return err;
		m->nsections = b->nsec + c->nseqs;
	}
	/* with the raw-address column a frame's text is per address, not per object offset */
	b->res = rep_resolver__new(c, b->o, (b->o->lines ? REP_RESOLVE_LINES : 0) |
				   (m->cfg.addr_column ? REP_RESOLVE_PER_ADDRESS : 0));
	if (!b->res)
		return -ENOMEM;
	err = rep_filter__capture(b->filter, c);
	if (err)
		return err;
	for (i = 0; i < c->nintervals; i++) {
		const struct rep_interval *ri = &c->intervals[i];
		/* -T: one section per interval, the parts of a split one (format.md 3.2) together */
		uint32_t section = b->o->timestamp ? b->nsec + ri->index : 0;

		if (b->o->timestamp) {
			m->section_end_ns[section] = ri->iv->end_ns;
			m->section_wall_ns[section] = rep_capture_wall_or_mono(c, ri->iv->end_ns);
		}
		if (!rep_filter__interval(b->filter, ri))
			continue;
		for (r = 0; r < ri->iv->nrows; r++) {
			err = add_row(b, section, ri, r);
			if (err)
				return err;
		}
	}
	return 0;
}

int rep_model__begin(struct rep_model *m, const struct rep_opts *o,
		     const struct rep_model_cfg *cfg)
{
	struct rep_model_builder *b;
	int64_t id;

	memset(m, 0, sizeof(*m));
	m->cfg = *cfg;
	m->nsections = o->timestamp ? 0 : 1;
	m->charge.budget = m->index.charge.budget = m->group_index.charge.budget = o->memory;
	rep_strtab__set_budget(&m->strs, o->memory);
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	m->builder = b;
	b->m = m;
	b->o = o;
	b->charge.budget = o->memory;
	b->filter = rep_filter__new(o);
	if (!b->filter)
		return errno == ENOMEM ? -ENOMEM : -errno;
	id = rep_strtab__intern(&m->strs, "");
	if (id < 0)
		return id;
	b->empty = id;
	return 0;
}

int rep_model__add(struct rep_model *m, const struct rep_capture *c, const char *name)
{
	struct rep_model_builder *b = m->builder;
	int err;

	b->c = c;
	b->name = name ? name : "?";
	err = add_capture(b);
	builder_clear_capture(b);
	b->capi++;
	b->nsec += c->nseqs;
	return err;
}

int rep_model__finish(struct rep_model *m)
{
	int err;

	builder_free(m->builder);
	m->builder = NULL;
	err = sort_groups(m);
	if (err)
		return err;
	if (m->nstacks)
		qsort_r(m->stacks, m->nstacks, sizeof(*m->stacks), stack_cmp_r, m);
	/* positions moved: the merge index is stale and no longer needed */
	rep_htab__clear(&m->index);
	return 0;
}

int rep_model__build_many(struct rep_model *m, const struct rep_capture *const *caps,
			  const char *const *names, uint32_t n, const struct rep_opts *o,
			  const struct rep_model_cfg *cfg)
{
	uint32_t i;
	int err;

	err = rep_model__begin(m, o, cfg);
	for (i = 0; i < n && !err; i++)
		err = rep_model__add(m, caps[i], names && names[i] ? names[i] : "?");
	return err ? err : rep_model__finish(m);
}

int rep_model__build(struct rep_model *m, const struct rep_capture *c, const struct rep_opts *o,
		     const struct rep_model_cfg *cfg)
{
	const char *name = o->input ? o->input : "?";

	return rep_model__build_many(m, &c, &name, 1, o, cfg);
}

int64_t rep_capture_wall_or_mono(const struct rep_capture *c, uint64_t mono_ns)
{
	int64_t wall;

	/* without the clock pair the monotonic time is the best we have */
	return rep_capture_wall_ns(c, mono_ns, &wall) ? wall : (int64_t)mono_ns;
}

void rep_wall_time_text(char *buf, size_t len, int64_t wall_ns)
{
	time_t t = wall_ns / 1000000000;
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "??:??:??");
}

void rep_model_section_time(const struct rep_model *m, uint32_t s, char *buf, size_t len)
{
	rep_wall_time_text(buf, len, m->section_wall_ns[s]);
}

void rep_model__clear(struct rep_model *m)
{
	uint32_t i;

	builder_free(m->builder);
	for (i = 0; i < m->nstacks; i++)
		free(m->stacks[i].frames);
	free(m->stacks);
	free(m->section_end_ns);
	free(m->section_wall_ns);
	free(m->frame_buf);
	free(m->frames);
	free(m->groups);
	rep_htab__clear(&m->index);
	rep_htab__clear(&m->group_index);
	rep_strtab__clear(&m->strs);
	rep_charge__clear(&m->charge);
	memset(m, 0, sizeof(*m));
}
