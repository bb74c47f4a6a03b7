/* SPDX-License-Identifier: MIT */
/*
 * encode.c: records to chunk payloads (format.md 4). The encoder checks what the decoder checks
 * (limits, sort orders, stack indexes), so stkrec learns about a bad record when writing it,
 * never a reader when reading it.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/* Rejects a NULL array with a non-zero count: the caller built the record wrong. */
#define CHECK_ARRAY(arr, n)                                                                \
	do {                                                                               \
		if ((n) && !(arr))                                                         \
			return -EINVAL;                                                    \
	} while (0)

/* format.md 4.1 */
static int encode_meta(const struct cap_meta *m, struct cap_buf *b)
{
	uint32_t i;

	CHECK_ARRAY(m->kv, m->nkv);
	CHECK_ARRAY(m->probes, m->nprobes);
	cap_buf__put_u32(b, m->nkv);
	for (i = 0; i < m->nkv; i++) {
		cap_buf__put_str(b, m->kv[i].key);
		cap_buf__put_str(b, m->kv[i].value);
	}
	cap_buf__put_u32(b, m->nprobes);
	for (i = 0; i < m->nprobes; i++) {
		const struct cap_probe *p = &m->probes[i];

		cap_buf__put_u32(b, p->id);
		cap_buf__put_u32(b, p->kind);
		cap_buf__put_u32(b, p->nattached);
		cap_buf__put_str(b, p->spec);
	}
	return 0;
}

/*
 * format.md 4.2 (KSYMS: sorted, equal addresses allowed) and 4.10 (KSYMS_ADD: with sizes, ranges
 * in address order without overlap, none past the top of the address space).
 */
static int encode_ksyms(const struct cap_ksyms *k, bool sized, struct cap_buf *b)
{
	const struct cap_ksym *s, *prev;
	uint32_t i;

	CHECK_ARRAY(k->syms, k->count);
	for (i = 0; i < k->count; i++) {
		s = &k->syms[i];
		prev = i ? s - 1 : NULL;
		if (prev && s->addr < prev->addr)
			return -EINVAL;
		if (sized && (!s->size || s->size - 1 > UINT64_MAX - s->addr ||
			      (prev && s->addr - prev->addr < prev->size)))
			return -EINVAL;
	}
	cap_buf__put_u32(b, k->flags);
	cap_buf__put_u32(b, k->count);
	for (i = 0; i < k->count; i++) {
		cap_buf__put_u64(b, k->syms[i].addr);
		if (sized)
			cap_buf__put_u64(b, k->syms[i].size);
		cap_buf__put_str(b, k->syms[i].name);
		cap_buf__put_str(b, k->syms[i].module);
	}
	return 0;
}

/* format.md 4.3 */
static int encode_mapping(const struct cap_mapping *m, struct cap_buf *b)
{
	if (m->build_id_len > CAP_BUILD_ID_MAX)
		return -EOVERFLOW;
	if (m->start > m->end)
		return -EINVAL;
	cap_buf__put_u64(b, m->start);
	cap_buf__put_u64(b, m->end);
	cap_buf__put_u64(b, m->pgoff);
	cap_buf__put_u64(b, m->dev);
	cap_buf__put_u64(b, m->inode);
	cap_buf__put_u32(b, m->kind);
	cap_buf__put_u32(b, m->flags);
	cap_buf__put_u32(b, m->build_id_len);
	cap_buf__put(b, m->build_id, m->build_id_len);
	cap_buf__put_str(b, m->path);
	return 0;
}

static int encode_process(const struct cap_process *p, struct cap_buf *b)
{
	uint32_t i;
	int err;

	CHECK_ARRAY(p->maps, p->nmaps);
	if (p->comm && strlen(p->comm) > CAP_COMM_LEN - 1)
		return -EOVERFLOW;
	for (i = 1; i < p->nmaps; i++)
		if (p->maps[i].start < p->maps[i - 1].start)
			return -EINVAL;
	cap_buf__put_u32(b, p->pid);
	cap_buf__put_u32(b, p->flags);
	cap_buf__put_u64(b, p->start_time);
	cap_buf__put_str(b, p->comm);
	cap_buf__put_str(b, p->exe);
	cap_buf__put_u32(b, p->nmaps);
	for (i = 0; i < p->nmaps; i++) {
		err = encode_mapping(&p->maps[i], b);
		if (err)
			return err;
	}
	return 0;
}

static int encode_procs(const struct cap_procs *ps, struct cap_buf *b)
{
	uint32_t i;
	int err;

	CHECK_ARRAY(ps->procs, ps->count);
	cap_buf__put_u32(b, ps->count);
	for (i = 0; i < ps->count; i++) {
		err = encode_process(&ps->procs[i], b);
		if (err)
			return err;
	}
	return 0;
}

/* format.md 4.4: a table's stacks are within the limits. */
static int check_stacks(const struct cap_stack *st, uint32_t n)
{
	CHECK_ARRAY(st, n);
	for (uint32_t i = 0; i < n; i++) {
		CHECK_ARRAY(st[i].ips, st[i].nips);
		if (st[i].nips > CAP_MAX_STACK_DEPTH)
			return -EOVERFLOW;
	}
	return 0;
}

/* format.md 4.4, 4.7: a row as the decoder will check it, its references in iv's own tables. */
static int check_row(const struct cap_interval *iv, const struct cap_row *r, bool events)
{
	if (strnlen(r->comm, CAP_COMM_LEN) == CAP_COMM_LEN)
		return -EOVERFLOW;
	if (r->kstack > iv->nkstacks || r->ustack > iv->nustacks)
		return -EINVAL;
	if (events && r->cpu >= CAP_MAX_CPUS)
		return -EINVAL;
	return 0;
}

static int check_interval(const struct cap_interval *iv, bool events)
{
	int err;

	CHECK_ARRAY(iv->rows, iv->nrows);
	err = check_stacks(iv->kstacks, iv->nkstacks);
	if (!err)
		err = check_stacks(iv->ustacks, iv->nustacks);
	for (uint32_t i = 0; i < iv->nrows && !err; i++)
		err = check_row(iv, &iv->rows[i], events);
	return err;
}

/*
 * format.md 4.4 (4.0): refs[i] = the file's reference of table stack i, 0 when no row uses it;
 * the stacks the file does not hold yet are added to held, in table order.
 */
static int file_refs(const struct cap_interval *iv, bool user, struct cap_stack_set *held,
		     uint32_t *refs)
{
	const struct cap_stack *st = user ? iv->ustacks : iv->kstacks;
	uint32_t n = user ? iv->nustacks : iv->nkstacks;

	for (uint32_t r = 0; r < iv->nrows; r++) {
		uint32_t ref = user ? iv->rows[r].ustack : iv->rows[r].kstack;

		if (ref)
			refs[ref - 1] = 1;
	}
	for (uint32_t i = 0; i < n; i++) {
		int64_t ref = refs[i] ? cap_stack_set__ref(held, &st[i]) : 0;

		if (ref < 0)
			return (int)ref;
		refs[i] = (uint32_t)ref;
	}
	return 0;
}

/* format.md 4.4: the stacks of held after the first `from`, the ones this chunk adds. */
static void encode_new_stacks(const struct cap_stack_set *held, uint32_t from, struct cap_buf *b)
{
	uint32_t n = cap_stack_set__count(held);
	struct cap_stack st;

	cap_buf__put_u32(b, n - from);
	for (uint32_t ref = from + 1; ref <= n; ref++) {
		cap_stack_set__get(held, ref, &st);
		cap_buf__put_u32(b, st.flags);
		cap_buf__put_u32(b, st.nips);
		for (uint32_t j = 0; j < st.nips; j++)
			cap_buf__put_u64(b, st.ips[j]);
	}
}

/* format.md 4.4, and 4.7 for the two fields EVENTS rows add; kref, uref: the file's references. */
static void encode_row(const struct cap_row *r, uint32_t kref, uint32_t uref, bool events,
		       struct cap_buf *b)
{
	size_t comm_len = strnlen(r->comm, CAP_COMM_LEN);

	cap_buf__put_u32(b, r->probe);
	cap_buf__put_u32(b, r->pid);
	cap_buf__put_u32(b, r->tid);
	cap_buf__put_u32(b, r->flags);
	cap_buf__put_u32(b, (uint32_t)comm_len);
	cap_buf__put(b, r->comm, comm_len);
	cap_buf__put_u32(b, kref);
	cap_buf__put_u32(b, uref);
	cap_buf__put_u64(b, r->count);
	if (events) {
		cap_buf__put_u64(b, r->ts_ns);
		cap_buf__put_u32(b, r->cpu);
	}
}

/*
 * format.md 4.4 (INTERVAL) and 4.7 (EVENTS: the same, rows carry ts_ns and cpu). iv is
 * self-contained; what is written is the stacks its rows use that the file does not hold yet,
 * and rows that refer to the file's stacks (4.0).
 */
static int encode_interval(const struct cap_interval *iv, bool events,
			   struct cap_stack_set *const held[2], struct cap_buf *b)
{
	uint32_t mark[2] = { cap_stack_set__count(held[0]), cap_stack_set__count(held[1]) };
	uint32_t *kref = NULL, *uref;
	int err = check_interval(iv, events);

	if (err)
		return err;
	kref = calloc((size_t)iv->nkstacks + iv->nustacks + 1, sizeof(*kref));
	if (!kref)
		return -ENOMEM;
	uref = kref + iv->nkstacks;
	err = file_refs(iv, false, held[0], kref);
	if (!err)
		err = file_refs(iv, true, held[1], uref);
	if (!err) {
		cap_buf__put_u32(b, iv->seq);
		cap_buf__put_u64(b, iv->start_ns);
		cap_buf__put_u64(b, iv->end_ns);
		encode_new_stacks(held[0], mark[0], b);
		encode_new_stacks(held[1], mark[1], b);
		cap_buf__put_u32(b, iv->nrows);
		for (uint32_t i = 0; i < iv->nrows; i++) {
			const struct cap_row *r = &iv->rows[i];

			encode_row(r, r->kstack ? kref[r->kstack - 1] : 0,
				   r->ustack ? uref[r->ustack - 1] : 0, events, b);
		}
		err = b->err;
	}
	if (err) {
		cap_stack_set__truncate(held[0], mark[0]);
		cap_stack_set__truncate(held[1], mark[1]);
	}
	free(kref);
	return err;
}

/*
 * format.md 4.5: every kind this version knows, zeros included, so a reader sees them all; then
 * one pair per CPU with drops (kind CAP_LOSS_CPU_BASE + cpu), only the non-zero ones: a machine
 * has hundreds of CPUs and few of them drop.
 */
static int encode_losses(const struct cap_losses *l, struct cap_buf *b)
{
	uint32_t kind, cpu, ncpu_pairs = 0;

	CHECK_ARRAY(l->cpu_dropped, l->ncpus);
	if (l->ncpus > CAP_MAX_CPUS)
		return -EOVERFLOW;
	for (cpu = 0; cpu < l->ncpus; cpu++)
		ncpu_pairs += !!l->cpu_dropped[cpu];
	cap_buf__put_u32(b, l->interval_seq);
	cap_buf__put_u32(b, CAP_LOSS__COUNT + ncpu_pairs);
	for (kind = 0; kind < CAP_LOSS__COUNT; kind++) {
		cap_buf__put_u32(b, kind);
		cap_buf__put_u64(b, l->counts[kind]);
	}
	for (cpu = 0; cpu < l->ncpus; cpu++) {
		if (!l->cpu_dropped[cpu])
			continue;
		cap_buf__put_u32(b, CAP_LOSS_CPU_BASE + cpu);
		cap_buf__put_u64(b, l->cpu_dropped[cpu]);
	}
	return 0;
}

/* format.md 4.9: u64 addr, u64 size, str name each, in file order (a later entry wins). */
static int encode_symbols(const struct cap_symbol *syms, uint32_t n, struct cap_buf *b)
{
	uint32_t i;

	CHECK_ARRAY(syms, n);
	cap_buf__put_u32(b, n);
	for (i = 0; i < n; i++) {
		cap_buf__put_u64(b, syms[i].addr);
		cap_buf__put_u64(b, syms[i].size);
		cap_buf__put_str(b, syms[i].name);
	}
	return 0;
}

/*
 * format.md 4.8 (3.0): sorted by addr, each addr written as its distance from the previous one
 * (the first from 0), then size and name length, all varints. Of the 20 fixed bytes a symbol
 * took in 2.x some 4 remain, and lz4 does not find that saving by itself: OBJECTS chunks of a
 * 10 s capture store 27% smaller with lz4 HC (format.md 4.8).
 */
static int encode_packed_symbols(const struct cap_symbol *syms, uint32_t n, struct cap_buf *b)
{
	uint64_t prev = 0;
	size_t len;
	uint32_t i;

	CHECK_ARRAY(syms, n);
	for (i = 1; i < n; i++)
		if (syms[i].addr < syms[i - 1].addr)
			return -EINVAL;
	cap_buf__put_u32(b, n);
	for (i = 0; i < n; i++) {
		len = syms[i].name ? strlen(syms[i].name) : 0;
		cap_buf__put_varint(b, syms[i].addr - prev);
		cap_buf__put_varint(b, syms[i].size);
		cap_buf__put_varint(b, len);
		cap_buf__put(b, syms[i].name, len);
		prev = syms[i].addr;
	}
	return 0;
}

/* format.md 4.8 */
static int encode_object(const struct cap_object *o, struct cap_buf *b)
{
	uint32_t i;
	int err;

	CHECK_ARRAY(o->segs, o->nsegs);
	CHECK_ARRAY(o->data, o->data_len);
	if (o->build_id_len > CAP_BUILD_ID_MAX)
		return -EOVERFLOW;
	/*
	 * Checked before copying anything: the caller (stkrec --embed-objects) learns at once that
	 * the file cannot fit in a chunk and embeds the object without its bytes instead.
	 */
	if (o->data_len > CAP_MAX_CHUNK_RAW)
		return -EOVERFLOW;
	if (o->data_len && !(o->flags & CAP_OBJ_F_WHOLE))
		return -EINVAL;
	cap_buf__put_u32(b, o->flags);
	cap_buf__put_u32(b, o->build_id_len);
	cap_buf__put(b, o->build_id, o->build_id_len);
	cap_buf__put_str(b, o->path);
	cap_buf__put_str(b, o->debuglink);
	cap_buf__put_u32(b, o->nsegs);
	for (i = 0; i < o->nsegs; i++) {
		cap_buf__put_u64(b, o->segs[i].offset);
		cap_buf__put_u64(b, o->segs[i].vaddr);
		cap_buf__put_u64(b, o->segs[i].filesz);
		cap_buf__put_u64(b, o->segs[i].memsz);
	}
	err = encode_packed_symbols(o->syms, o->nsyms, b);
	if (err)
		return err;
	/* The bytes come last: when they cannot fit in the chunk, say so before copying them. */
	if (b->len + 8 + o->data_len > CAP_MAX_CHUNK_RAW)
		return -EOVERFLOW;
	cap_buf__put_u64(b, o->data_len);
	cap_buf__put(b, o->data, (size_t)o->data_len);
	return 0;
}

static int encode_objects(const struct cap_objects *os, struct cap_buf *b)
{
	uint32_t i;
	int err;

	CHECK_ARRAY(os->objs, os->count);
	cap_buf__put_u32(b, os->count);
	for (i = 0; i < os->count; i++) {
		err = encode_object(&os->objs[i], b);
		if (err)
			return err;
		/* A big object filled the buffer past the chunk limit: copy no more objects. */
		if (b->len > CAP_MAX_CHUNK_RAW)
			return -EOVERFLOW;
	}
	return 0;
}

/* format.md 4.9: file order kept (a later entry for the same address wins). */
static int encode_perfmap(const struct cap_perfmap *pm, struct cap_buf *b)
{
	cap_buf__put_u32(b, pm->pid);
	cap_buf__put_u64(b, pm->start_time);
	return encode_symbols(pm->syms, pm->count, b);
}

/* format.md 4.11: a string as a varint length and its bytes */
static void put_vstr(struct cap_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	cap_buf__put_varint(b, n);
	cap_buf__put(b, s, n);
}

/* format.md 4.11 */
static int encode_codes(const struct cap_codes *cs, struct cap_buf *b)
{
	cap_buf__put_u32(b, cs->count);
	for (uint32_t i = 0; i < cs->count; i++) {
		const struct cap_code *c = &cs->codes[i];
		uint32_t start = 0, line = c->firstline;

		if (!c->id || (c->nlines && !c->lines))
			return -EINVAL;
		cap_buf__put_varint(b, c->id);
		cap_buf__put_varint(b, c->lang);
		cap_buf__put_varint(b, c->reason);
		cap_buf__put_varint(b, c->addr);
		put_vstr(b, c->name);
		put_vstr(b, c->file);
		cap_buf__put_varint(b, c->firstline);
		cap_buf__put_varint(b, c->nlines);
		for (uint32_t j = 0; j < c->nlines; j++) {
			int64_t d = (int64_t)c->lines[j].line - line;

			if (c->lines[j].start < start)
				return -EINVAL;	/* unsorted */
			cap_buf__put_varint(b, c->lines[j].start - start);
			cap_buf__put_varint(b, d < 0 ? ((uint64_t)-d << 1) - 1 : (uint64_t)d << 1);
			start = c->lines[j].start;
			line = c->lines[j].line;
		}
	}
	return 0;
}

/* format.md 4.6 */
static int encode_end(const struct cap_end *e, struct cap_buf *b)
{
	cap_buf__put_u32(b, e->nintervals);
	cap_buf__put_u64(b, e->end_ns);
	cap_buf__put_u64(b, e->events);
	return 0;
}

int cap_record_encode(const struct cap_record *rec, struct cap_stack_set *const held[2],
		      struct cap_buf *b)
{
	int err;

	switch (rec->type) {
	case CAP_CHUNK_META:
		err = encode_meta(&rec->meta, b);
		break;
	case CAP_CHUNK_KSYMS:
		err = encode_ksyms(&rec->ksyms, false, b);
		break;
	case CAP_CHUNK_KSYMS_ADD:
		err = encode_ksyms(&rec->ksyms, true, b);
		break;
	case CAP_CHUNK_PROCS:
		err = encode_procs(&rec->procs, b);
		break;
	case CAP_CHUNK_INTERVAL:
		err = encode_interval(&rec->interval, false, held, b);
		break;
	case CAP_CHUNK_EVENTS:
		err = encode_interval(&rec->interval, true, held, b);
		break;
	case CAP_CHUNK_LOSSES:
		err = encode_losses(&rec->losses, b);
		break;
	case CAP_CHUNK_END:
		err = encode_end(&rec->end, b);
		break;
	case CAP_CHUNK_OBJECTS:
		err = encode_objects(&rec->objects, b);
		break;
	case CAP_CHUNK_PERFMAP:
		err = encode_perfmap(&rec->perfmap, b);
		break;
	case CAP_CHUNK_CODES:
		err = encode_codes(&rec->codes, b);
		break;
	default:
		return -EINVAL;
	}
	return err ? err : b->err;
}
