// SPDX-License-Identifier: MIT
/*
 * agg.c: the one symbolized model every emitter prints. Each row's stacks become sequences of
 * interned frame texts (as they will be displayed), and rows whose displayed stacks are identical
 * merge, so merging follows what the user sees (two pids with the same frames are one stack
 * unless the layout shows the pid).
 *
 * Cost: every distinct (process or kallsyms snapshot, address) is symbolized once (resolve
 * cache); frames and stacks are hashed, never compared pairwise.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/*
 * Resolve cache entry, stored inline in an open-addressing table: one cache line per lookup.
 * (Keys and values behind an index cost three dependent cache misses per frame, which dominated
 * the run time on a million-row capture.)
 */
struct resolved {
	const void *ctx;	/* struct sym_kernel * or struct cap_process * (may be NULL) */
	uint64_t addr;
	uint32_t kind;		/* 0 user, 1 user return address, 2 kernel, 3 kernel return */
	uint32_t text;		/* string id */
	uint32_t reason;
	uint32_t used;
};

struct builder {
	struct rep_model *m;
	const struct rep_capture *c;
	const struct rep_opts *o;
	struct sym_user *user;
	struct sym_kernel **kernels;	/* per kallsyms snapshot, [nksyms] = none, built lazily */
	struct resolved *cache;		/* power-of-two table, at most half full */
	size_t ncache, cache_cap;
	uint32_t empty;			/* id of "" */
};

static uint64_t resolved_hash(const void *ctx, uint64_t addr, uint32_t kind)
{
	return rep_hash_u64(rep_hash_u64((uintptr_t)ctx, addr), kind);
}

/* The slot holding (ctx, addr, kind), or the empty slot where it belongs. */
static struct resolved *cache_slot(struct resolved *tab, size_t cap, const void *ctx, uint64_t addr,
				   uint32_t kind)
{
	size_t mask = cap - 1, i;

	for (i = resolved_hash(ctx, addr, kind) & mask; tab[i].used; i = (i + 1) & mask)
		if (tab[i].ctx == ctx && tab[i].addr == addr && tab[i].kind == kind)
			break;
	return &tab[i];
}

static int cache_grow(struct builder *b)
{
	size_t cap = b->cache_cap ? b->cache_cap * 2 : 4096, i;
	struct resolved *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (i = 0; i < b->cache_cap; i++)
		if (b->cache[i].used)
			*cache_slot(tab, cap, b->cache[i].ctx, b->cache[i].addr, b->cache[i].kind) =
				b->cache[i];
	free(b->cache);
	b->cache = tab;
	b->cache_cap = cap;
	return 0;
}

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

static void frame_text(struct builder *b, const struct sym_result *res, uint64_t addr,
		       bool kernel, char *buf, size_t len)
{
	const struct rep_opts *o = b->o;
	size_t n = 0;

	buf[0] = 0;
	if (b->m->cfg.addr_column)
		append(buf, len, &n, "%-16" PRIx64 " ", addr);
	if (res->name) {
		append(buf, len, &n, "%s", res->name);
		if (o->offset)
			append(buf, len, &n, "+0x%" PRIx64, res->offset);
	} else {
		append(buf, len, &n, "[unknown]");
		if (o->verbose && res->module)
			append(buf, len, &n, " (%s+0x%" PRIx64 ")", res->module,
			       res->module_offset);
	}
	if (kernel && o->annotations)
		append(buf, len, &n, "_[k]");
}

static struct sym_kernel *kernel_for(struct builder *b, uint32_t ks)
{
	uint32_t i = ks < b->c->nksyms ? ks : b->c->nksyms;

	if (!b->kernels[i])
		b->kernels[i] = sym_kernel__new(i < b->c->nksyms ? b->c->ksyms[i] : NULL);
	return b->kernels[i];
}

/* Text id and reason of one frame; symbolizes each (context, address, kind) once. */
static int resolve(struct builder *b, const void *ctx, uint64_t addr, uint32_t kind,
		   uint32_t *text, uint32_t *reason)
{
	struct resolved *slot;
	struct sym_result res;
	char buf[4096];
	int64_t id;

	const void *key_ctx = ctx;
	uint64_t key_addr = addr;
	int err;

	/* user frames: key by (object, file offset), shared by every process mapping the object;
	 * a raw-address column makes the text per address, so then key by (process, address) */
	if (kind < 2 && !b->m->cfg.addr_column) {
		err = sym_user__locate(b->user, ctx, addr, kind == 1, &key_ctx, &key_addr);
		if (err)
			return err;
	}
	if ((b->ncache + 1) * 2 > b->cache_cap && cache_grow(b))
		return -ENOMEM;
	slot = cache_slot(b->cache, b->cache_cap, key_ctx, key_addr, kind);
	if (slot->used) {
		*text = slot->text;
		*reason = slot->reason;
		return 0;
	}
	if (kind >= 2)
		sym_kernel__lookup(ctx, kind == 3 && addr ? addr - 1 : addr, &res);
	else
		sym_user__lookup(b->user, ctx, addr, kind == 1, &res);
	if (res.name && kind == 3)
		res.offset++;	/* looked up addr - 1, print the offset of addr itself */
	frame_text(b, &res, addr, kind >= 2, buf, sizeof(buf));
	id = rep_strtab__intern(&b->m->strs, buf);
	if (id < 0)
		return id;
	*slot = (struct resolved){ key_ctx, key_addr, kind, id, res.reason, 1 };
	b->ncache++;
	*text = slot->text;
	*reason = slot->reason;
	return 0;
}

static int reserve_frames(struct rep_model *m, uint32_t n)
{
	uint32_t *v;

	if (n <= m->frame_buf_cap)
		return 0;
	v = realloc(m->frame_buf, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	m->frame_buf = v;
	m->frame_buf_cap = n;
	return 0;
}

static const struct cap_stack *stack_at(const struct cap_stack *tab, uint32_t n, uint32_t ref)
{
	return ref != CAP_NO_STACK && ref <= n ? &tab[ref - 1] : NULL;
}

/* Append the frames of one stack to frame_buf at *pos. */
static int add_frames(struct builder *b, const struct cap_stack *s, const void *ctx, bool kernel,
		      uint64_t count, uint32_t *pos)
{
	struct rep_model *m = b->m;
	uint32_t i, text, reason;
	int err;

	err = reserve_frames(m, *pos + s->nips);
	if (err)
		return err;
	for (i = 0; i < s->nips; i++) {
		/* frames above the leaf are return addresses: the call is the byte before */
		uint32_t kind = (kernel ? 2 : 0) + (i > 0);

		err = resolve(b, ctx, s->ips[i], kind, &text, &reason);
		if (err)
			return err;
		if (reason != SYM_OK) {
			m->unnamed[reason] += count;
			m->unnamed_total += count;
		}
		m->frame_buf[(*pos)++] = text;
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

	return a->section == b->section && a->pid == b->pid && a->comm == b->comm &&
	       a->flags == b->flags && a->nk == b->nk && a->nu == b->nu &&
	       (!(a->nk + a->nu) ||
		!memcmp(a->frames, b->frames, (a->nk + a->nu) * sizeof(*a->frames)));
}

static uint64_t stack_hash(const struct rep_stack *s)
{
	uint64_t h = rep_hash_u64(s->section, ((uint64_t)s->pid << 32) | s->comm);

	h = rep_hash_u64(h, ((uint64_t)s->flags << 40) ^ ((uint64_t)s->nk << 20) ^ s->nu);
	return rep_hash_bytes(h, s->frames, (s->nk + s->nu) * sizeof(*s->frames));
}

static int merge(struct rep_model *m, struct rep_stack *s)
{
	struct stack_key key = { m, s };
	uint64_t h = stack_hash(s);
	uint32_t val, n = s->nk + s->nu;
	uint32_t *frames;

	if (rep_htab__find(&m->index, h, stack_eq, &key, &val)) {
		m->stacks[val].count += s->count;
		return 0;
	}
	if (m->nstacks == m->cap) {
		uint32_t cap = m->cap ? m->cap * 2 : 256;
		struct rep_stack *v = realloc(m->stacks, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->stacks = v;
		m->cap = cap;
	}
	frames = malloc(n ? n * sizeof(*frames) : 1);
	if (!frames)
		return -ENOMEM;
	if (n)	/* frame_buf may still be NULL */
		memcpy(frames, s->frames, n * sizeof(*frames));
	if (rep_htab__insert(&m->index, h, m->nstacks)) {
		free(frames);
		return -ENOMEM;
	}
	m->stacks[m->nstacks] = *s;
	m->stacks[m->nstacks].frames = frames;
	m->nstacks++;
	return 0;
}

static int add_row(struct builder *b, uint32_t section, const struct rep_interval *ri, uint32_t r)
{
	const struct cap_interval *iv = ri->iv;
	const struct cap_row *row = &iv->rows[r];
	const struct rep_model_cfg *cfg = &b->m->cfg;
	const struct cap_stack *ks, *us;
	struct rep_stack s = { .section = section, .count = row->count };
	char comm[CAP_COMM_LEN + 1];
	uint32_t pos = 0;
	int64_t id;
	int err;

	if (cfg->key_comm) {
		memcpy(comm, row->comm, CAP_COMM_LEN);
		comm[CAP_COMM_LEN] = 0;	/* hostile input may lack the NUL */
		id = rep_strtab__intern(&b->m->strs, comm);
		if (id < 0)
			return id;
		s.comm = id;
	} else {
		s.comm = b->empty;
	}
	s.pid = cfg->key_pid ? row->pid : 0;
	ks = cfg->kernel ? stack_at(iv->kstacks, iv->nkstacks, row->kstack) : NULL;
	us = cfg->user ? stack_at(iv->ustacks, iv->nustacks, row->ustack) : NULL;
	if (cfg->kernel && (row->flags & CAP_ROW_F_KSTACK_LOST))
		s.flags |= REP_STACK_F_KLOST;
	if (cfg->user && (row->flags & CAP_ROW_F_USTACK_LOST))
		s.flags |= REP_STACK_F_ULOST;
	if (ks) {
		s.flags |= REP_STACK_F_HAS_K;
		err = add_frames(b, ks, kernel_for(b, ri->ksyms), true, row->count, &pos);
		if (err)
			return err;
	}
	s.nk = pos;
	if (us) {
		s.flags |= REP_STACK_F_HAS_U;
		err = add_frames(b, us, ri->procs[r], false, row->count, &pos);
		if (err)
			return err;
	}
	s.nu = pos - s.nk;
	s.frames = b->m->frame_buf;
	return merge(b->m, &s);
}

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
	return a->flags < b->flags ? -1 : a->flags > b->flags;
}

/* qsort has no context argument; qsort_r (glibc) does */
static int stack_cmp_r(const void *a, const void *b, void *ctx)
{
	return rep_stack_cmp(ctx, a, b);
}

static void builder_clear(struct builder *b)
{
	uint32_t i;

	if (b->kernels)
		for (i = 0; i <= b->c->nksyms; i++)
			sym_kernel__free(b->kernels[i]);
	free(b->kernels);
	sym_user__free(b->user);
	free(b->cache);
}

int rep_model__build(struct rep_model *m, const struct rep_capture *c, const struct rep_opts *o,
		     const struct rep_model_cfg *cfg)
{
	struct builder b = { .m = m, .c = c, .o = o };
	uint32_t i, r;
	int64_t id;
	int err = 0;

	memset(m, 0, sizeof(*m));
	m->cfg = *cfg;
	b.user = rep_sym_user__new(c, o);
	b.kernels = calloc(c->nksyms + 1, sizeof(*b.kernels));
	m->nsections = o->timestamp ? c->nintervals : 1;
	m->section_end_ns = calloc(m->nsections ? m->nsections : 1, sizeof(*m->section_end_ns));
	id = rep_strtab__intern(&m->strs, "");
	if (!b.user || !b.kernels || !m->section_end_ns || id < 0) {
		err = -ENOMEM;
		goto out;
	}
	b.empty = id;
	for (i = 0; i < c->nintervals; i++) {
		const struct rep_interval *ri = &c->intervals[i];
		uint32_t section = o->timestamp ? i : 0;

		if (o->timestamp)
			m->section_end_ns[i] = ri->iv->end_ns;
		for (r = 0; r < ri->iv->nrows; r++) {
			err = add_row(&b, section, ri, r);
			if (err)
				goto out;
		}
	}
	if (m->nstacks)
		qsort_r(m->stacks, m->nstacks, sizeof(*m->stacks), stack_cmp_r, m);
	/* positions moved: the merge index is stale and no longer needed */
	rep_htab__clear(&m->index);
out:
	builder_clear(&b);
	return err;
}

void rep_model__clear(struct rep_model *m)
{
	uint32_t i;

	for (i = 0; i < m->nstacks; i++)
		free(m->stacks[i].frames);
	free(m->stacks);
	free(m->section_end_ns);
	free(m->frame_buf);
	rep_htab__clear(&m->index);
	rep_strtab__clear(&m->strs);
	memset(m, 0, sizeof(*m));
}
