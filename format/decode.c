/* SPDX-License-Identifier: MIT */
/*
 * decode.c: chunk payloads to records (format.md 4). The input is hostile: every count is checked
 * against the bytes left before anything is allocated (each element has a minimum encoded size,
 * format.md 4), so decoded memory stays within a small multiple of the payload, itself at most
 * CAP_MAX_CHUNK_RAW; and every byte of it is taken from the caller's budget (capture.h) before
 * it is allocated, which bounds a whole file. Errors: -EBADMSG malformed, -EOVERFLOW over a
 * limit of capture.h, -EFBIG over the budget, -ENOMEM.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/* Minimum encoded sizes of repeated elements (format.md 4.1 - 4.10). */
#define MIN_KV		8u	/* two empty strings */
#define MIN_PROBE	16u	/* id, kind, nattached, empty spec */
#define MIN_KSYM	16u	/* addr, empty name, empty module */
#define MIN_PROCESS	28u	/* pid, flags, start_time, empty comm and exe, nmaps */
#define MIN_MAPPING	56u	/* five u64, kind, flags, build_id_len, empty path */
#define MIN_STACK	8u	/* flags, nips */
#define MIN_ROW		36u	/* probe, pid, tid, flags, empty comm, kstack, ustack, count */
#define MIN_LOSS	12u	/* kind, count */
#define MIN_EVENT_ROW	48u	/* MIN_ROW, ts_ns, cpu */
#define MIN_OBJECT	32u	/* flags, build_id_len, empty path and debuglink, nsegs, nsyms,
				 * data_len */
#define MIN_SEGMENT	32u	/* offset, vaddr, filesz, memsz */
#define MIN_SYMBOL	20u	/* addr, size, empty name */
#define MIN_PACKED_SYMBOL 3u	/* 3.0 OBJECTS: one-byte varints addr delta, size, name length 0 */
#define MIN_KSYM_ADD	24u	/* addr, size, empty name and module */
#define MIN_CODE	8u	/* one-byte varints id, lang, reason, addr, name and file lengths,
				 * firstline, nlines */
#define MIN_CODE_LINE	2u	/* one-byte varints start delta, line delta */

/* A read position in a payload. The first error sticks; later reads return zeros. */
struct cursor {
	const uint8_t *p;
	size_t left;
	int err;
	struct cap_arena *arena;
};

static void fail(struct cursor *c, int err)
{
	if (!c->err)
		c->err = err;
	c->left = 0;
}

static const uint8_t *take(struct cursor *c, size_t n)
{
	const uint8_t *p = c->p;

	if (c->err)
		return NULL;
	if (n > c->left) {
		fail(c, -EBADMSG);
		return NULL;
	}
	c->p += n;
	c->left -= n;
	return p;
}

static uint32_t get_u32(struct cursor *c)
{
	const uint8_t *p = take(c, 4);

	return p ? cap_load_u32(p) : 0;
}

static uint64_t get_u64(struct cursor *c)
{
	const uint8_t *p = take(c, 8);

	return p ? cap_load_u64(p) : 0;
}

/*
 * format.md 1.5 (3.0): unsigned LEB128. More than CAP_VARINT_MAX bytes, or a tenth byte above 1
 * (bits past the 64th), is malformed: no value is silently cut to 64 bits.
 */
static uint64_t get_varint(struct cursor *c)
{
	const uint8_t *p;
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < CAP_VARINT_MAX; i++) {
		p = take(c, 1);
		if (!p)
			return 0;
		if (i == CAP_VARINT_MAX - 1 && *p > 1)
			break;
		v |= (uint64_t)(*p & 0x7f) << (7 * i);
		if (!(*p & 0x80))
			return v;
	}
	fail(c, -EBADMSG);
	return 0;
}

static void *alloc(struct cursor *c, size_t n)
{
	void *p;

	if (c->err)
		return NULL;
	p = cap_arena__alloc(c->arena, n);
	if (!p)
		fail(c, -errno);	/* EFBIG or ENOMEM: cap_arena__alloc() sets one */
	return p;
}

/*
 * A count of elements that each take at least min_size bytes: more than the bytes left can
 * hold is malformed, checked before the caller allocates count elements.
 */
static uint32_t get_count(struct cursor *c, size_t min_size)
{
	uint32_t n = get_u32(c);

	if (n > c->left / min_size) {
		fail(c, -EBADMSG);
		return 0;
	}
	return n;
}

/*
 * n bytes of the payload as a NUL-terminated string. Decoded strings are NUL-terminated, so a
 * NUL inside one could not be represented: malformed.
 */
static char *get_chars(struct cursor *c, uint64_t n)
{
	const uint8_t *src;
	char *s;

	if (n > c->left) {
		fail(c, -EBADMSG);
		return NULL;
	}
	src = take(c, (size_t)n);
	if (!src)
		return NULL;
	if (memchr(src, 0, (size_t)n)) {
		fail(c, -EBADMSG);
		return NULL;
	}
	s = alloc(c, (size_t)n + 1);
	if (s)
		memcpy(s, src, (size_t)n);
	return s;
}

/* format.md 1: u32 length + bytes. max_len bounds it (-EOVERFLOW); pass SIZE_MAX for none. */
static char *get_str_max(struct cursor *c, size_t max_len, size_t *len_out)
{
	uint32_t n = get_u32(c);
	char *s;

	if (c->err)
		return NULL;
	if (n > max_len) {
		fail(c, -EOVERFLOW);
		return NULL;
	}
	s = get_chars(c, n);
	if (s && len_out)
		*len_out = n;
	return s;
}

static char *get_str(struct cursor *c)
{
	return get_str_max(c, SIZE_MAX, NULL);
}

/* format.md 4.1 */
static void decode_meta(struct cursor *c, struct cap_meta *m)
{
	uint32_t i;

	m->nkv = get_count(c, MIN_KV);
	m->kv = alloc(c, (size_t)m->nkv * sizeof(*m->kv));
	for (i = 0; i < m->nkv && !c->err; i++) {
		m->kv[i].key = get_str(c);
		m->kv[i].value = get_str(c);
	}
	m->nprobes = get_count(c, MIN_PROBE);
	m->probes = alloc(c, (size_t)m->nprobes * sizeof(*m->probes));
	for (i = 0; i < m->nprobes && !c->err; i++) {
		struct cap_probe *p = &m->probes[i];

		p->id = get_u32(c);
		p->kind = get_u32(c);
		p->nattached = get_u32(c);
		p->spec = get_str(c);
	}
}

/*
 * format.md 4.2 (KSYMS) and 4.10 (KSYMS_ADD, sized): an empty module is the kernel image itself,
 * NULL in memory. Readers binary-search the table and replace overlapped symbols by range: an
 * unsorted table, or sized ranges that overlap, are empty or run past 2^64, are malformed.
 */
static void decode_ksyms(struct cursor *c, bool sized, struct cap_ksyms *k)
{
	struct cap_ksym *s, *prev;
	size_t mod_len = 0;
	uint32_t i;

	k->flags = get_u32(c);
	k->count = get_count(c, sized ? MIN_KSYM_ADD : MIN_KSYM);
	k->syms = alloc(c, (size_t)k->count * sizeof(*k->syms));
	for (i = 0; i < k->count && !c->err; i++) {
		s = &k->syms[i];
		prev = i ? s - 1 : NULL;
		s->addr = get_u64(c);
		if (sized)
			s->size = get_u64(c);
		s->name = get_str(c);
		s->module = get_str_max(c, SIZE_MAX, &mod_len);
		if (!mod_len)
			s->module = NULL;
		if (prev && s->addr < prev->addr)
			fail(c, -EBADMSG);
		if (sized && (!s->size || s->size - 1 > UINT64_MAX - s->addr ||
			      (prev && s->addr - prev->addr < prev->size)))
			fail(c, -EBADMSG);
	}
}

/* format.md 4.3 */
static void decode_mapping(struct cursor *c, struct cap_mapping *m)
{
	const uint8_t *id;

	m->start = get_u64(c);
	m->end = get_u64(c);
	m->pgoff = get_u64(c);
	m->dev = get_u64(c);
	m->inode = get_u64(c);
	m->kind = get_u32(c);
	m->flags = get_u32(c);
	m->build_id_len = get_u32(c);
	if (m->build_id_len > CAP_BUILD_ID_MAX) {
		fail(c, -EOVERFLOW);
		m->build_id_len = 0;
		return;
	}
	id = take(c, m->build_id_len);
	if (id)
		memcpy(m->build_id, id, m->build_id_len);
	m->path = get_str(c);
	if (m->start > m->end)
		fail(c, -EBADMSG);
}

static void decode_process(struct cursor *c, struct cap_process *p)
{
	uint32_t i;

	p->pid = get_u32(c);
	p->flags = get_u32(c);
	p->start_time = get_u64(c);
	p->comm = get_str_max(c, CAP_COMM_LEN - 1, NULL);
	p->exe = get_str(c);
	p->nmaps = get_count(c, MIN_MAPPING);
	p->maps = alloc(c, (size_t)p->nmaps * sizeof(*p->maps));
	for (i = 0; i < p->nmaps && !c->err; i++) {
		decode_mapping(c, &p->maps[i]);
		if (i && p->maps[i].start < p->maps[i - 1].start)
			fail(c, -EBADMSG);
	}
}

static void decode_procs(struct cursor *c, struct cap_procs *ps)
{
	uint32_t i;

	ps->count = get_count(c, MIN_PROCESS);
	ps->procs = alloc(c, (size_t)ps->count * sizeof(*ps->procs));
	for (i = 0; i < ps->count && !c->err; i++)
		decode_process(c, &ps->procs[i]);
}

/* format.md 4.4 */
static struct cap_stack *decode_stacks(struct cursor *c, uint32_t *count)
{
	struct cap_stack *st;
	uint32_t i, j;

	*count = get_count(c, MIN_STACK);
	st = alloc(c, (size_t)*count * sizeof(*st));
	for (i = 0; i < *count && !c->err; i++) {
		st[i].flags = get_u32(c);
		st[i].nips = get_u32(c);
		/* The limit first: a huge depth is -EOVERFLOW even when bytes are missing too. */
		if (st[i].nips > CAP_MAX_STACK_DEPTH) {
			fail(c, -EOVERFLOW);
			break;
		}
		if (st[i].nips > c->left / 8) {
			fail(c, -EBADMSG);
			break;
		}
		st[i].ips = alloc(c, (size_t)st[i].nips * sizeof(*st[i].ips));
		for (j = 0; j < st[i].nips && !c->err; j++)
			st[i].ips[j] = get_u64(c);
	}
	if (c->err)
		*count = 0;
	return st;
}

/* format.md 4.4; EVENTS rows (4.7) add ts_ns and cpu, INTERVAL rows leave them 0. */
static void decode_row(struct cursor *c, const struct cap_interval *iv, bool events,
		       uint16_t major, struct cap_row *r)
{
	size_t comm_len = 0;
	char *comm;

	r->probe = get_u32(c);
	r->pid = get_u32(c);
	r->tid = get_u32(c);
	r->flags = get_u32(c);
	comm = get_str_max(c, CAP_COMM_LEN - 1, &comm_len);
	if (comm)
		memcpy(r->comm, comm, comm_len + 1);
	r->kstack = get_u32(c);
	r->ustack = get_u32(c);
	r->count = get_u64(c);
	if (events) {
		r->ts_ns = get_u64(c);
		r->cpu = get_u32(c);
		/* Readers index per-CPU tables by it (format.md 4.7). */
		if (r->cpu >= CAP_MAX_CPUS)
			fail(c, -EBADMSG);
	}
	/* 4.0: rows refer to the file's stacks, which struct cap_stacks checks */
	if (major < 4 && (r->kstack > iv->nkstacks || r->ustack > iv->nustacks))
		fail(c, -EBADMSG);
}

/* format.md 4.4 (INTERVAL) and 4.7 (EVENTS) */
static void decode_interval(struct cursor *c, bool events, uint16_t major,
			    struct cap_interval *iv)
{
	uint32_t i;

	iv->seq = get_u32(c);
	iv->start_ns = get_u64(c);
	iv->end_ns = get_u64(c);
	iv->kstacks = decode_stacks(c, &iv->nkstacks);
	iv->ustacks = decode_stacks(c, &iv->nustacks);
	iv->nrows = get_count(c, events ? MIN_EVENT_ROW : MIN_ROW);
	iv->rows = alloc(c, (size_t)iv->nrows * sizeof(*iv->rows));
	for (i = 0; i < iv->nrows && !c->err; i++)
		decode_row(c, iv, events, major, &iv->rows[i]);
}

/*
 * format.md 4.5: kinds this version does not know are skipped; a known kind appears once. Kinds
 * from CAP_LOSS_CPU_BASE on are per-CPU drops (1.1): the CPU must be below CAP_MAX_CPUS and
 * appear once. Two passes over the pairs: the first finds the highest CPU, so cpu_dropped is
 * allocated once at its final size (max cpu + 1), bounded by CAP_MAX_CPUS, not by the input.
 */
static void decode_losses(struct cursor *c, struct cap_losses *l)
{
	uint8_t cpu_seen[CAP_MAX_CPUS / 8] = { 0 };
	struct cursor first;
	uint32_t n, i, kind, cpu, ncpus = 0;
	uint64_t seen = 0, count;

	l->interval_seq = get_u32(c);
	n = get_count(c, MIN_LOSS);
	first = *c;
	for (i = 0; i < n && !first.err; i++) {
		kind = get_u32(&first);
		get_u64(&first);
		if (kind < CAP_LOSS_CPU_BASE)
			continue;
		if (kind - CAP_LOSS_CPU_BASE >= CAP_MAX_CPUS) {
			fail(c, -EBADMSG);
			return;
		}
		if (kind - CAP_LOSS_CPU_BASE + 1 > ncpus)
			ncpus = kind - CAP_LOSS_CPU_BASE + 1;
	}
	if (ncpus) {
		l->cpu_dropped = alloc(c, (size_t)ncpus * sizeof(*l->cpu_dropped));
		l->ncpus = ncpus;
	}
	for (i = 0; i < n && !c->err; i++) {
		kind = get_u32(c);
		count = get_u64(c);
		if (kind >= CAP_LOSS_CPU_BASE) {
			cpu = kind - CAP_LOSS_CPU_BASE;
			if (cpu_seen[cpu / 8] & (1u << (cpu % 8))) {
				fail(c, -EBADMSG);
				break;
			}
			cpu_seen[cpu / 8] |= (uint8_t)(1u << (cpu % 8));
			l->cpu_dropped[cpu] = count;
			continue;
		}
		if (kind >= CAP_LOSS__COUNT)
			continue;
		if (seen & (1ull << kind)) {
			fail(c, -EBADMSG);
			break;
		}
		seen |= 1ull << kind;
		l->counts[kind] = count;
	}
}

/*
 * format.md 4.9, and 4.8 before 3.0: count, then { u64 addr, u64 size, str name } each. Object
 * symbol tables are binary-searched: unsorted is malformed when the caller says sorted.
 */
static struct cap_symbol *decode_symbols(struct cursor *c, bool sorted, uint32_t *count)
{
	struct cap_symbol *syms;
	uint32_t i;

	*count = get_count(c, MIN_SYMBOL);
	syms = alloc(c, (size_t)*count * sizeof(*syms));
	for (i = 0; i < *count && !c->err; i++) {
		syms[i].addr = get_u64(c);
		syms[i].size = get_u64(c);
		syms[i].name = get_str(c);
		if (sorted && i && syms[i].addr < syms[i - 1].addr)
			fail(c, -EBADMSG);
	}
	if (c->err)
		*count = 0;
	return syms;
}

/*
 * format.md 4.8 (3.0): count, then { varint addr delta, varint size, varint name length, name }
 * each. The deltas keep the table sorted; one that carries an address past 2^64 is malformed.
 */
static struct cap_symbol *decode_packed_symbols(struct cursor *c, uint32_t *count)
{
	struct cap_symbol *syms;
	uint64_t prev = 0, delta;
	uint32_t i;

	*count = get_count(c, MIN_PACKED_SYMBOL);
	syms = alloc(c, (size_t)*count * sizeof(*syms));
	for (i = 0; i < *count && !c->err; i++) {
		delta = get_varint(c);
		if (delta > UINT64_MAX - prev)
			fail(c, -EBADMSG);
		syms[i].addr = prev + delta;
		syms[i].size = get_varint(c);
		syms[i].name = get_chars(c, get_varint(c));
		prev = syms[i].addr;
	}
	if (c->err)
		*count = 0;
	return syms;
}

/* format.md 4.8; the symbol table's layout is that of the file's major version (format.md 5). */
static void decode_object(struct cursor *c, uint16_t major, struct cap_object *o)
{
	const uint8_t *src;
	uint32_t i;

	o->flags = get_u32(c);
	o->build_id_len = get_u32(c);
	if (o->build_id_len > CAP_BUILD_ID_MAX) {
		fail(c, -EOVERFLOW);
		o->build_id_len = 0;
		return;
	}
	src = take(c, o->build_id_len);
	if (src)
		memcpy(o->build_id, src, o->build_id_len);
	o->path = get_str(c);
	o->debuglink = get_str(c);
	o->nsegs = get_count(c, MIN_SEGMENT);
	o->segs = alloc(c, (size_t)o->nsegs * sizeof(*o->segs));
	for (i = 0; i < o->nsegs && !c->err; i++) {
		o->segs[i].offset = get_u64(c);
		o->segs[i].vaddr = get_u64(c);
		o->segs[i].filesz = get_u64(c);
		o->segs[i].memsz = get_u64(c);
	}
	if (major >= 3)
		o->syms = decode_packed_symbols(c, &o->nsyms);
	else
		o->syms = decode_symbols(c, true, &o->nsyms);
	o->data_len = get_u64(c);
	if (c->err)
		return;
	/* The limit first, as for stack depths; then the bytes, which must all be there. */
	if (o->data_len > CAP_MAX_CHUNK_RAW) {
		fail(c, -EOVERFLOW);
		return;
	}
	if (o->data_len && !(o->flags & CAP_OBJ_F_WHOLE)) {
		fail(c, -EBADMSG);
		return;
	}
	src = take(c, (size_t)o->data_len);
	if (!src || !o->data_len)
		return;
	o->data = alloc(c, (size_t)o->data_len);
	if (o->data)
		memcpy(o->data, src, (size_t)o->data_len);
}

static void decode_objects(struct cursor *c, uint16_t major, struct cap_objects *os)
{
	uint32_t i;

	os->count = get_count(c, MIN_OBJECT);
	os->objs = alloc(c, (size_t)os->count * sizeof(*os->objs));
	for (i = 0; i < os->count && !c->err; i++)
		decode_object(c, major, &os->objs[i]);
}

/* format.md 4.9: symbols in file order, not sorted (later entries win). */
static void decode_perfmap(struct cursor *c, struct cap_perfmap *pm)
{
	pm->pid = get_u32(c);
	pm->start_time = get_u64(c);
	pm->syms = decode_symbols(c, false, &pm->count);
}

/* format.md 4.11: a varint that must fit 32 bits */
static uint32_t get_varint32(struct cursor *c)
{
	uint64_t v = get_varint(c);

	if (v > UINT32_MAX)
		fail(c, -EBADMSG);
	return (uint32_t)v;
}

/* format.md 4.11: line runs, deltas from the previous run (the first from firstline) */
static void decode_code_lines(struct cursor *c, struct cap_code *code)
{
	uint64_t start = 0, n;
	int64_t line = code->firstline;

	n = get_varint(c);
	if (n > c->left / MIN_CODE_LINE) {
		fail(c, -EBADMSG);
		return;
	}
	code->lines = alloc(c, (size_t)n * sizeof(*code->lines));
	for (uint64_t i = 0; i < n && !c->err; i++) {
		/* each delta checked before it is added: a huge one must not wrap the sums */
		uint64_t step = get_varint(c), d = get_varint(c);

		if (step > UINT32_MAX || (d >> 1) > UINT32_MAX) {
			fail(c, -EBADMSG);
			break;
		}
		start += step;
		line += d & 1 ? -(int64_t)(d >> 1) - 1 : (int64_t)(d >> 1);
		if (start > UINT32_MAX || line < 0 || line > UINT32_MAX)
			fail(c, -EBADMSG);
		code->lines[i] = (struct cap_code_line){ (uint32_t)start, (uint32_t)line };
	}
	if (!c->err)
		code->nlines = (uint32_t)n;
}

static void decode_codes(struct cursor *c, struct cap_codes *cs)
{
	cs->count = get_count(c, MIN_CODE);
	cs->codes = alloc(c, (size_t)cs->count * sizeof(*cs->codes));
	for (uint32_t i = 0; i < cs->count && !c->err; i++) {
		struct cap_code *code = &cs->codes[i];

		code->id = get_varint32(c);
		if (!c->err && !code->id)
			fail(c, -EBADMSG);
		code->lang = get_varint32(c);
		code->reason = get_varint32(c);
		code->addr = get_varint(c);
		code->name = get_chars(c, get_varint(c));
		code->file = get_chars(c, get_varint(c));
		code->firstline = get_varint32(c);
		decode_code_lines(c, code);
	}
	if (c->err)
		cs->count = 0;
}

/* format.md 4.6 */
static void decode_end(struct cursor *c, struct cap_end *e)
{
	e->nintervals = get_u32(c);
	e->end_ns = get_u64(c);
	e->events = get_u64(c);
}

int cap_record__decode(const struct cap_chunk *chunk, struct cap_record **out)
{
	return cap_record__decode_budget(chunk, NULL, out);
}

int cap_record__decode_budget(const struct cap_chunk *chunk, struct cap_budget *b,
			      struct cap_record **out)
{
	struct cursor c = { .p = chunk->data, .left = chunk->len };
	uint16_t major = chunk->major ? chunk->major : CAP_MAJOR;
	struct cap_record *rec = NULL;
	int err;

	*out = NULL;
	if (!cap_chunk_type_known(chunk->type) || major > CAP_MAJOR)
		return -ENOTSUP;
	if (chunk->len && !chunk->data)
		return -EINVAL;
	if (chunk->len > CAP_MAX_CHUNK_RAW)
		return -EOVERFLOW;
	/*
	 * The record itself lives in its arena, so the budget sees all of it. A first block of
	 * three times the payload holds the decoded form of most records (format.md 4: each
	 * element's minimum size keeps it within a small multiple).
	 */
	c.arena = cap_arena__new(b, (size_t)chunk->len * 3 + sizeof(*rec) + 64);
	if (!c.arena)
		return -errno;	/* EFBIG or ENOMEM */
	rec = alloc(&c, sizeof(*rec));
	if (!rec) {
		err = c.err;
		cap_arena__free(c.arena);
		return err;
	}
	rec->priv = c.arena;
	rec->type = chunk->type;
	switch (chunk->type) {
	case CAP_CHUNK_META:
		decode_meta(&c, &rec->meta);
		break;
	case CAP_CHUNK_KSYMS:
		decode_ksyms(&c, false, &rec->ksyms);
		break;
	case CAP_CHUNK_KSYMS_ADD:
		decode_ksyms(&c, true, &rec->ksyms);
		break;
	case CAP_CHUNK_PROCS:
		decode_procs(&c, &rec->procs);
		break;
	case CAP_CHUNK_INTERVAL:
		decode_interval(&c, false, major, &rec->interval);
		break;
	case CAP_CHUNK_EVENTS:
		decode_interval(&c, true, major, &rec->interval);
		break;
	case CAP_CHUNK_OBJECTS:
		decode_objects(&c, major, &rec->objects);
		break;
	case CAP_CHUNK_PERFMAP:
		decode_perfmap(&c, &rec->perfmap);
		break;
	case CAP_CHUNK_LOSSES:
		decode_losses(&c, &rec->losses);
		break;
	case CAP_CHUNK_END:
		decode_end(&c, &rec->end);
		break;
	case CAP_CHUNK_CODES:
		decode_codes(&c, &rec->codes);
		break;
	}
	/* format.md 4: a record fills its payload exactly; extra bytes are a bug or damage. */
	if (!c.err && c.left)
		fail(&c, -EBADMSG);
	err = c.err;
	if (err) {
		cap_record__free(rec);
		return err;
	}
	*out = rec;
	return 0;
}

/* Everything a decoded record points to (cpu_dropped, object data, ...), and the record
 * itself, is in its arena. */
void cap_record__free(struct cap_record *rec)
{
	if (rec)
		cap_arena__free(rec->priv);
}
