/* SPDX-License-Identifier: MIT */
/*
 * helpers.h: shared by the tests/format programs: temporary files, reading a whole file, exact
 * comparison of records (every field, every byte of every string), decoding crafted payloads.
 */
#ifndef STK_TESTS_FORMAT_HELPERS_H
#define STK_TESTS_FORMAT_HELPERS_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stk/capture.h"
#include "../test.h"
#include "craft.h"

/* A fresh directory under $TMPDIR (or /tmp); removed by the program with rm_tree(). */
static inline char *tmp_dir(void)
{
	const char *base = getenv("TMPDIR");
	static char path[256];

	snprintf(path, sizeof(path), "%s/stkfmt.XXXXXX", base && *base ? base : "/tmp");
	return mkdtemp(path);
}

static inline void rm_tree(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

/* Whole file into malloc'd memory; NULL on error. */
static inline uint8_t *slurp(const char *path, size_t *len)
{
	uint8_t *buf = NULL;
	struct stat st;
	FILE *f;

	f = fopen(path, "rb");
	if (!f)
		return NULL;
	if (fstat(fileno(f), &st) == 0) {
		buf = malloc(st.st_size ? (size_t)st.st_size : 1);
		if (buf && fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)st.st_size;
	}
	fclose(f);
	return buf;
}

static inline bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a, b);
}

/* Empty and NULL strings are the same on disk (format.md 1); only ksym modules keep NULL. */
static inline bool str_eq_empty(const char *a, const char *b)
{
	return str_eq(a ? a : "", b ? b : "");
}

/*
 * Exact comparison of two records, one function per type. Each returns NULL when equal, else
 * which field differs (in a static buffer).
 */
static char diff_why[128];

#define DIFF(...) (snprintf(diff_why, sizeof(diff_why), __VA_ARGS__), diff_why)

static inline const char *meta_diff(const struct cap_meta *a, const struct cap_meta *b)
{
	uint32_t i;

	if (a->nkv != b->nkv || a->nprobes != b->nprobes)
		return DIFF("meta counts");
	for (i = 0; i < a->nkv; i++)
		if (!str_eq_empty(a->kv[i].key, b->kv[i].key) ||
		    !str_eq_empty(a->kv[i].value, b->kv[i].value))
			return DIFF("meta kv %u", i);
	for (i = 0; i < a->nprobes; i++) {
		const struct cap_probe *p = &a->probes[i], *q = &b->probes[i];

		if (p->id != q->id || p->kind != q->kind || p->nattached != q->nattached ||
		    !str_eq_empty(p->spec, q->spec))
			return DIFF("meta probe %u", i);
	}
	return NULL;
}

static inline const char *ksyms_diff(const struct cap_ksyms *a, const struct cap_ksyms *b)
{
	uint32_t i;

	if (a->flags != b->flags || a->count != b->count)
		return DIFF("ksyms flags/count");
	for (i = 0; i < a->count; i++) {
		const struct cap_ksym *p = &a->syms[i], *q = &b->syms[i];
		const char *pm = p->module && *p->module ? p->module : NULL;
		const char *qm = q->module && *q->module ? q->module : NULL;

		if (p->addr != q->addr || p->size != q->size || !str_eq_empty(p->name, q->name) ||
		    !str_eq(pm, qm))
			return DIFF("ksym %u", i);
	}
	return NULL;
}

static inline bool mapping_eq(const struct cap_mapping *m, const struct cap_mapping *n)
{
	return m->start == n->start && m->end == n->end && m->pgoff == n->pgoff &&
	       m->dev == n->dev && m->inode == n->inode && m->kind == n->kind &&
	       m->flags == n->flags && m->build_id_len == n->build_id_len &&
	       !memcmp(m->build_id, n->build_id, m->build_id_len) &&
	       str_eq_empty(m->path, n->path);
}

static inline const char *procs_diff(const struct cap_procs *a, const struct cap_procs *b)
{
	uint32_t i, j;

	if (a->count != b->count)
		return DIFF("procs count");
	for (i = 0; i < a->count; i++) {
		const struct cap_process *p = &a->procs[i], *q = &b->procs[i];

		if (p->pid != q->pid || p->flags != q->flags || p->start_time != q->start_time ||
		    !str_eq_empty(p->comm, q->comm) || !str_eq_empty(p->exe, q->exe) ||
		    p->nmaps != q->nmaps)
			return DIFF("process %u", i);
		for (j = 0; j < p->nmaps; j++)
			if (!mapping_eq(&p->maps[j], &q->maps[j]))
				return DIFF("process %u mapping %u", i, j);
	}
	return NULL;
}

static inline bool stack_eq(const struct cap_stack *s, const struct cap_stack *t)
{
	return s->flags == t->flags && s->nips == t->nips &&
	       (!s->nips || !memcmp(s->ips, t->ips, s->nips * sizeof(*s->ips)));
}

static inline bool row_eq(const struct cap_row *r, const struct cap_row *s)
{
	return r->probe == s->probe && r->pid == s->pid && r->tid == s->tid &&
	       r->flags == s->flags && !strcmp(r->comm, s->comm) && r->kstack == s->kstack &&
	       r->ustack == s->ustack && r->count == s->count && r->ts_ns == s->ts_ns &&
	       r->cpu == s->cpu;
}

static inline const char *interval_diff(const struct cap_interval *p,
					const struct cap_interval *q)
{
	uint32_t i;

	if (p->seq != q->seq || p->start_ns != q->start_ns || p->end_ns != q->end_ns ||
	    p->nkstacks != q->nkstacks || p->nustacks != q->nustacks || p->nrows != q->nrows)
		return DIFF("interval header");
	for (i = 0; i < p->nkstacks; i++)
		if (!stack_eq(&p->kstacks[i], &q->kstacks[i]))
			return DIFF("kernel stack %u", i);
	for (i = 0; i < p->nustacks; i++)
		if (!stack_eq(&p->ustacks[i], &q->ustacks[i]))
			return DIFF("user stack %u", i);
	for (i = 0; i < p->nrows; i++)
		if (!row_eq(&p->rows[i], &q->rows[i]))
			return DIFF("row %u", i);
	return NULL;
}

/*
 * want, a self-contained interval as written, against got, decoded and added to s (4.0: the
 * file's stacks, format.md 4.4): every field, and each row's stacks by content.
 */
static inline const char *interval_file_diff(const struct cap_interval *want,
					     const struct cap_stacks *s,
					     const struct cap_interval *got)
{
	uint32_t i;

	if (want->seq != got->seq || want->start_ns != got->start_ns ||
	    want->end_ns != got->end_ns || want->nrows != got->nrows)
		return DIFF("interval header");
	for (i = 0; i < want->nrows; i++) {
		struct cap_row r = got->rows[i];
		const struct cap_stack *wk = cap_stacks__get(NULL, want, false, want->rows[i].kstack);
		const struct cap_stack *wu = cap_stacks__get(NULL, want, true, want->rows[i].ustack);
		const struct cap_stack *gk = cap_stacks__get(s, got, false, r.kstack);
		const struct cap_stack *gu = cap_stacks__get(s, got, true, r.ustack);

		r.kstack = want->rows[i].kstack;
		r.ustack = want->rows[i].ustack;
		if (!row_eq(&want->rows[i], &r))
			return DIFF("row %u", i);
		if (!wk != !gk || (wk && !stack_eq(wk, gk)))
			return DIFF("row %u kernel stack", i);
		if (!wu != !gu || (wu && !stack_eq(wu, gu)))
			return DIFF("row %u user stack", i);
	}
	return NULL;
}

static inline const char *losses_diff(const struct cap_losses *a, const struct cap_losses *b)
{
	if (a->interval_seq != b->interval_seq ||
	    memcmp(a->counts, b->counts, sizeof(a->counts)))
		return DIFF("losses");
	if (a->ncpus != b->ncpus ||
	    (a->ncpus && memcmp(a->cpu_dropped, b->cpu_dropped, a->ncpus * sizeof(uint64_t))))
		return DIFF("losses per cpu (ncpus %u, %u)", a->ncpus, b->ncpus);
	return NULL;
}

static inline const char *symbols_diff(const char *what, const struct cap_symbol *a, uint32_t na,
				       const struct cap_symbol *b, uint32_t nb)
{
	uint32_t i;

	if (na != nb)
		return DIFF("%s: %u symbols, %u", what, na, nb);
	for (i = 0; i < na; i++)
		if (a[i].addr != b[i].addr || a[i].size != b[i].size ||
		    !str_eq_empty(a[i].name, b[i].name))
			return DIFF("%s: symbol %u", what, i);
	return NULL;
}

static inline const char *objects_diff(const struct cap_objects *a, const struct cap_objects *b)
{
	const char *d;
	uint32_t i;

	if (a->count != b->count)
		return DIFF("objects count");
	for (i = 0; i < a->count; i++) {
		const struct cap_object *o = &a->objs[i], *q = &b->objs[i];

		if (o->flags != q->flags || o->build_id_len != q->build_id_len ||
		    memcmp(o->build_id, q->build_id, o->build_id_len) ||
		    !str_eq_empty(o->path, q->path) || !str_eq_empty(o->debuglink, q->debuglink))
			return DIFF("object %u header", i);
		if (o->nsegs != q->nsegs ||
		    (o->nsegs && memcmp(o->segs, q->segs, o->nsegs * sizeof(*o->segs))))
			return DIFF("object %u segments", i);
		d = symbols_diff("object", o->syms, o->nsyms, q->syms, q->nsyms);
		if (d)
			return d;
		if (o->data_len != q->data_len ||
		    (o->data_len && memcmp(o->data, q->data, (size_t)o->data_len)))
			return DIFF("object %u data", i);
	}
	return NULL;
}

static inline const char *perfmap_diff(const struct cap_perfmap *a, const struct cap_perfmap *b)
{
	if (a->pid != b->pid || a->start_time != b->start_time)
		return DIFF("perfmap pid/start_time");
	return symbols_diff("perfmap", a->syms, a->count, b->syms, b->count);
}

static inline const char *codes_diff(const struct cap_codes *a, const struct cap_codes *b)
{
	uint32_t i;

	if (a->count != b->count)
		return DIFF("codes count %u, %u", a->count, b->count);
	for (i = 0; i < a->count; i++) {
		const struct cap_code *c = &a->codes[i], *d = &b->codes[i];

		if (c->id != d->id || c->lang != d->lang || c->reason != d->reason ||
		    c->addr != d->addr || !str_eq_empty(c->name, d->name) ||
		    !str_eq_empty(c->file, d->file) || c->firstline != d->firstline)
			return DIFF("code %u", i);
		if (c->nlines != d->nlines ||
		    (c->nlines && memcmp(c->lines, d->lines, c->nlines * sizeof(*c->lines))))
			return DIFF("code %u lines", i);
	}
	return NULL;
}

static inline const char *record_diff(const struct cap_record *a, const struct cap_record *b)
{
	if (a->type != b->type)
		return DIFF("type %u != %u", a->type, b->type);
	switch (a->type) {
	case CAP_CHUNK_META:
		return meta_diff(&a->meta, &b->meta);
	case CAP_CHUNK_KSYMS:
	case CAP_CHUNK_KSYMS_ADD:
		return ksyms_diff(&a->ksyms, &b->ksyms);
	case CAP_CHUNK_PROCS:
		return procs_diff(&a->procs, &b->procs);
	case CAP_CHUNK_INTERVAL:
	case CAP_CHUNK_EVENTS:
		return interval_diff(&a->interval, &b->interval);
	case CAP_CHUNK_LOSSES:
		return losses_diff(&a->losses, &b->losses);
	case CAP_CHUNK_OBJECTS:
		return objects_diff(&a->objects, &b->objects);
	case CAP_CHUNK_PERFMAP:
		return perfmap_diff(&a->perfmap, &b->perfmap);
	case CAP_CHUNK_CODES:
		return codes_diff(&a->codes, &b->codes);
	case CAP_CHUNK_END:
		if (a->end.nintervals != b->end.nintervals || a->end.end_ns != b->end.end_ns ||
		    a->end.events != b->end.events)
			return DIFF("end");
		return NULL;
	}
	return DIFF("unknown type %u", a->type);
}

#undef DIFF

/* Exact comparison; on a difference, why says which field. */
static inline bool record_eq(const struct cap_record *a, const struct cap_record *b,
			     char *why, size_t whylen)
{
	const char *d = record_diff(a, b);

	if (d)
		snprintf(why, whylen, "%s", d);
	return !d;
}

/* Write rec alone to path, read it back and decode it: the record, or NULL. */
static inline struct cap_record *round_trip(const char *path, const struct cap_record *rec)
{
	struct cap_writer *w = cap_writer__open(path);
	struct cap_record *got = NULL;
	struct cap_reader *r;
	struct cap_chunk ch;
	int err;

	if (!w)
		return NULL;
	err = cap_writer__put(w, rec);
	cap_writer__close(w);
	if (err) {
		printf("# put: %s\n", strerror(-err));
		return NULL;
	}
	r = cap_reader__open(path);
	if (r && cap_reader__next(r, &ch) == 1)
		cap_record__decode(&ch, &got);
	cap_reader__close(r);
	return got;
}

/* NAME: rec written to path reads back equal, field by field. */
static inline void check_round_trip(const char *path, const char *name,
				    const struct cap_record *rec)
{
	struct cap_record *got = round_trip(path, rec);
	char why[128] = "not read back";

	T_CHECK(name, got && record_eq(rec, got, why, sizeof(why)), "%s", why);
	cap_record__free(got);
}

/*
 * Decode payload p as a chunk of type from a file of the given major version (0: the current
 * one): want 0 and a record, or the error want and no record (format.md 4 decoder rules).
 */
static inline void expect_decode_major(const struct craft_payload *p, const char *name,
				       uint16_t type, uint16_t major, int want)
{
	struct cap_chunk ch = { .type = type, .len = (uint32_t)p->len, .data = p->buf,
				.major = major };
	struct cap_record *rec = NULL;
	int ret = cap_record__decode(&ch, &rec);

	T_CHECK(name, ret == want && (ret ? !rec : !!rec), "expected %d, got %d", want, ret);
	cap_record__free(rec);
}

static inline void expect_decode(const struct craft_payload *p, const char *name, uint16_t type,
				 int want)
{
	expect_decode_major(p, name, type, 0, want);
}

/*
 * A capture of the sample records (written to dir/name), loaded into memory, with the offsets
 * where each chunk starts (bounds[0] = 16) and ends (bounds[i + 1]); payloads[i] are copies of
 * the decompressed chunks as first read back. Returns the number of chunks or -1.
 */
struct capture_image {
	uint8_t *buf;
	size_t len;
	int nchunks;
	uint64_t bounds[64];
	uint8_t *payloads[64];
	uint32_t plens[64];
	uint16_t types[64];
};

static inline void capture_image__free(struct capture_image *img)
{
	int i;

	free(img->buf);
	for (i = 0; i < img->nchunks; i++)
		free(img->payloads[i]);
	memset(img, 0, sizeof(*img));
}

/* Write recs (n of them, repeated times times) and load the result. Returns 0 or -1. */
static inline int capture_image__make(struct capture_image *img, const char *path,
				      const struct cap_record *recs, int n, int times)
{
	struct cap_writer *w = cap_writer__open(path);
	struct cap_reader *r;
	struct cap_chunk ch;
	int i, k = 0;

	memset(img, 0, sizeof(*img));
	if (!w || n * times > 63)
		return -1;
	img->bounds[0] = cap_writer__size(w);
	for (i = 0; i < n * times; i++) {
		if (cap_writer__put(w, &recs[i % n]))
			return -1;
		img->bounds[i + 1] = cap_writer__size(w);
	}
	cap_writer__close(w);
	img->buf = slurp(path, &img->len);
	if (!img->buf || img->len != img->bounds[n * times])
		return -1;
	r = cap_reader__open_mem(img->buf, img->len);
	if (!r)
		return -1;
	while (cap_reader__next(r, &ch) == 1 && k < 63) {
		img->payloads[k] = malloc(ch.len + 1);
		memcpy(img->payloads[k], ch.data, ch.len);
		img->plens[k] = ch.len;
		img->types[k] = ch.type;
		k++;
	}
	cap_reader__close(r);
	img->nchunks = k;
	return k == n * times ? 0 : -1;
}

#endif /* STK_TESTS_FORMAT_HELPERS_H */
