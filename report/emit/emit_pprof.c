// SPDX-License-Identifier: MIT
/*
 * emit_pprof.c: --pprof OUT.pb.gz: the captures as one pprof profile (profile.proto of
 * github.com/google/pprof, proto3), gzipped, for pprof, Pyroscope, Parca and Grafana.
 *
 * The protobuf encoding is written by hand (varints and length-delimited fields, ~60 lines):
 * Debian's protobuf-c needs code generated from the .proto for one message set, a build step and
 * a library for what is a dozen field numbers here. tests/golden/pprof/profile.proto describes
 * the fields; the tests decode our output with `protoc --decode` against it.
 *
 * Model: a location per (mapping, address), with one line per function at that address, the
 * inlined ones first (innermost first, as profile.proto says: the last line is the caller the
 * others were inlined into); a function per (name, source file, first line); a mapping per
 * executable mapping seen (start, end, offset, object), plus one for the kernel. Samples with
 * the same locations and labels (pid, tid, comm, probe, host; capture with --by capture) merge
 * across intervals and captures. The filters (--pid, --comm, --probe, --time, --grep,
 * --max-depth) choose rows and frames as in every output; a stack --max-depth cuts keeps whole
 * locations (an address and the functions inlined at it). An interpreter frame (Python,
 * format.md 4.11) is a location of no mapping at its code object's address, one per (code
 * object, instruction), whose line is the executing line of a function that has the code's file
 * name and first line (start_line).
 *
 * Captures come one at a time, and nothing of one is kept but the profile's tables: a first
 * pass weighs each (rep_pprof__weigh(): which process is the profile's main one), the second
 * adds its rows (rep_pprof__add()). Everything built, the profile's bytes included, takes
 * its memory from the run's budget (o->memory).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "../report.h"

/* ---- protobuf writer ------------------------------------------------------------------------- */

enum { PB_VARINT = 0, PB_LEN = 2 };

struct pb {
	uint8_t *buf;
	size_t n, cap;
	int err;		/* -ENOMEM or -EFBIG once an append failed; later appends do nothing */
	struct rep_charge charge;	/* buf, from the run's budget (charge.budget) */
};

static void pb_free(struct pb *p)
{
	free(p->buf);
	p->buf = NULL;
	rep_charge__clear(&p->charge);
}

static void pb_put(struct pb *p, const void *data, size_t len)
{
	if (p->err || !len)	/* an empty message may have no buffer at all */
		return;
	if (p->n + len > p->cap) {
		size_t cap = p->cap ? p->cap : 256;
		uint8_t *v;

		while (cap < p->n + len)
			cap *= 2;
		if (rep_charge__take(&p->charge, cap - p->cap)) {
			p->err = -EFBIG;
			return;
		}
		v = realloc(p->buf, cap);
		if (!v) {
			p->err = -ENOMEM;
			return;
		}
		p->buf = v;
		p->cap = cap;
	}
	memcpy(p->buf + p->n, data, len);
	p->n += len;
}

static void pb_varint(struct pb *p, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	pb_put(p, b, n);
}

/* An integer field (int64 and uint64 encode alike); zero is the default and is left out. */
static void pb_int(struct pb *p, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(p, (uint64_t)field << 3 | PB_VARINT);
	pb_varint(p, v);
}

static void pb_bytes(struct pb *p, uint32_t field, const void *data, size_t len)
{
	pb_varint(p, (uint64_t)field << 3 | PB_LEN);
	pb_varint(p, len);
	pb_put(p, data, len);
}

/* A nested message: its bytes were built in sub, which is emptied for the next one. */
static void pb_msg(struct pb *p, uint32_t field, struct pb *sub)
{
	if (sub->err)
		p->err = sub->err;
	pb_bytes(p, field, sub->buf, sub->n);
	sub->n = 0;
}

/* ---- profile.proto field numbers ------------------------------------------------------------- */

enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4, MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/* ---- the profile being built ----------------------------------------------------------------- */

struct sample {
	uint32_t *locs;		/* location ids, leaf first */
	uint32_t nlocs;
	uint32_t pid, tid;
	uint32_t comm, probe;	/* string ids */
	uint32_t host, capture;	/* string ids; capture 0 ("") unless --by capture */
	uint64_t value;
};

/* What the first capture says the values are (put_types()), and the span of all of them. */
struct profile_kind {
	bool offcpu;		/* meta weight=us */
	bool timed;		/* a sampling capture (rep_capture_is_profile()) */
	char event[64];		/* its sampling event (sampled_event()) */
	int64_t period, freq;	/* meta period and freq_hz, 0 when absent or negative */
	int64_t first_ns, last_ns;	/* wall times; first_ns INT64_MAX when none is known */
};

/* The main process's executable mapping, copied from its capture (rep_pprof__weigh()). */
struct main_map {
	struct cap_mapping map;	/* map.path points to path */
	char path[4096];
	uint64_t count;		/* its process's weight */
	bool set;
};

struct rep_pprof {
	const struct rep_opts *o;
	struct rep_filter *filter;
	uint32_t ncaps;			/* captures added */
	uint32_t nweighed;		/* captures weighed */
	struct profile_kind kind;
	struct main_map main;
	struct rep_strtab strs;		/* the string table: id 0 is "" */
	struct rep_strtab keys;		/* "kind:..." keys of functions, mappings, locations */
	uint32_t *key_ids;		/* key id -> function, mapping or location id */
	uint32_t key_ids_cap;
	struct pb functions, mappings, locations;
	struct pb tmp, tmp2;		/* scratch: a message, and the messages nested in it */
	uint32_t nfunctions, nmappings, nlocations;
	uint32_t kernel_mapping;	/* 0 until a kernel frame needs it (kernel_mapping_id()) */
	uint64_t scale[2];		/* each sample type's value: the count times this */
	uint32_t ntypes;
	struct sample *samples;
	uint32_t nsamples, samples_cap;
	struct rep_htab sample_index;
	uint32_t *locbuf;
	uint32_t locbuf_cap;
	struct rep_charge charge;	/* the arrays above (the tables and pbs charge theirs) */
	char key[2 * REP_MAX_NAME + 128];	/* two bounded strings (resolve.c) and a prefix */
};

static int64_t str_id(struct rep_pprof *b, const char *s)
{
	return rep_strtab__intern(&b->strs, s ? s : "");
}

/*
 * Look key up: *id is its object's id and the return value 0 when known; 1 when new (the caller
 * then writes the object with id *id = ++*counter); -ENOMEM.
 */
static int key_lookup(struct rep_pprof *b, uint32_t *counter, uint32_t *id)
{
	uint32_t before = b->keys.n;
	int64_t k = rep_strtab__intern(&b->keys, b->key);

	if (k < 0)
		return k;
	if (b->keys.n == before) {
		*id = b->key_ids[k];
		return 0;
	}
	if (b->keys.n > b->key_ids_cap) {
		uint32_t cap = b->key_ids_cap ? b->key_ids_cap * 2 : 1024;
		uint32_t *v;

		if (rep_charge__take(&b->charge, (uint64_t)(cap - b->key_ids_cap) * sizeof(*v)))
			return -EFBIG;
		v = realloc(b->key_ids, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		b->key_ids = v;
		b->key_ids_cap = cap;
	}
	*id = b->key_ids[k] = ++*counter;
	return 1;
}

static int function_id(struct rep_pprof *b, const char *name, const char *file, uint32_t start,
		       uint32_t *id)
{
	int64_t n, f;
	int err;

	snprintf(b->key, sizeof(b->key), "f:%s\n%s\n%u", name, file ? file : "", start);
	err = key_lookup(b, &b->nfunctions, id);
	if (err <= 0)
		return err;
	n = str_id(b, name);
	f = str_id(b, file);
	if (n < 0 || f < 0)
		return n < 0 ? n : f;
	pb_int(&b->tmp2, FUNCTION_ID, *id);
	pb_int(&b->tmp2, FUNCTION_NAME, n);
	/* the raw (mangled) name is not kept apart from the demangled one by the symbolizer */
	pb_int(&b->tmp2, FUNCTION_SYSTEM_NAME, n);
	pb_int(&b->tmp2, FUNCTION_FILENAME, f);
	pb_int(&b->tmp2, FUNCTION_START_LINE, start);
	pb_msg(&b->functions, PROFILE_FUNCTION, &b->tmp2);
	return 0;
}

static int put_mapping(struct rep_pprof *b, uint32_t id, uint64_t start, uint64_t limit,
		       uint64_t off, const char *path, const char *build_id)
{
	int64_t f = str_id(b, path), bid = str_id(b, build_id);

	if (f < 0 || bid < 0)
		return f < 0 ? f : bid;
	pb_int(&b->tmp, MAPPING_ID, id);
	pb_int(&b->tmp, MAPPING_MEMORY_START, start);
	pb_int(&b->tmp, MAPPING_MEMORY_LIMIT, limit);
	pb_int(&b->tmp, MAPPING_FILE_OFFSET, off);
	pb_int(&b->tmp, MAPPING_FILENAME, f);
	pb_int(&b->tmp, MAPPING_BUILD_ID, bid);
	pb_int(&b->tmp, MAPPING_HAS_FUNCTIONS, 1);
	pb_msg(&b->mappings, PROFILE_MAPPING, &b->tmp);
	return 0;
}

/* The mapping of process p holding addr (maps sorted by start), or NULL. */
static const struct cap_mapping *find_map(const struct cap_process *p, uint64_t addr)
{
	uint32_t lo = 0, hi = p ? p->nmaps : 0;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (addr < p->maps[mid].start)
			hi = mid;
		else if (addr >= p->maps[mid].end)
			lo = mid + 1;
		else
			return &p->maps[mid];
	}
	return NULL;
}

/* pprof mapping id of a user address (0 when outside every mapping) */
static int mapping_id(struct rep_pprof *b, const struct cap_process *p, uint64_t addr,
		      uint32_t *id)
{
	const struct cap_mapping *m = find_map(p, addr);
	char bid[2 * CAP_BUILD_ID_MAX + 1], cut[REP_MAX_NAME + 1];
	const char *path;
	int err;

	*id = 0;
	if (!m)
		return 0;
	/* a hostile length must not read past build_id[] */
	elfobj_hex(m->build_id,
		   m->build_id_len < CAP_BUILD_ID_MAX ? m->build_id_len : CAP_BUILD_ID_MAX, bid);
	/* per frame: a path of megabytes must cost what a frame's names do (REP_MAX_NAME) */
	path = rep_cut_name(m->path ? m->path : "", cut);
	snprintf(b->key, sizeof(b->key), "m:%" PRIx64 ":%" PRIx64 ":%" PRIx64 ":%s:%s", m->start,
		 m->end, m->pgoff, bid, path);
	err = key_lookup(b, &b->nmappings, id);
	if (err <= 0)
		return err;
	return put_mapping(b, *id, m->start, m->end, m->pgoff, path, bid);
}

/* The kernel's mapping, made when a kernel frame first needs it: pprof takes mapping 1 as
 * the profile's main binary. */
static int kernel_mapping_id(struct rep_pprof *b, uint32_t *id)
{
	int err = 0;

	if (!b->kernel_mapping) {
		b->kernel_mapping = ++b->nmappings;
		err = put_mapping(b, b->kernel_mapping, 0, 0, 0, "[kernel.kallsyms]", "");
	}
	*id = b->kernel_mapping;
	return err;
}

/* The mapping of p's executable, made before any other (put_main_mapping()). */
static int exe_mapping(struct rep_pprof *b, const struct cap_process *p)
{
	uint32_t id;

	for (uint32_t i = 0; p && p->exe && i < p->nmaps; i++)
		if (p->maps[i].path && !strcmp(p->maps[i].path, p->exe))
			return mapping_id(b, p, p->maps[i].start, &id);
	return 0;
}

static int add_line(struct rep_pprof *b, const char *name, const char *file, uint32_t start,
		    uint32_t line)
{
	uint32_t fid;
	int err = function_id(b, name, file, start, &fid);

	if (err)
		return err;
	pb_int(&b->tmp2, LINE_FUNCTION_ID, fid);
	pb_int(&b->tmp2, LINE_LINE, line);
	pb_msg(&b->tmp, LOCATION_LINE, &b->tmp2);
	return 0;
}

/* pprof location id of one frame */
static int location_id(struct rep_pprof *b, const struct rep_frame_info *f, uint32_t mapping,
		       uint64_t addr, uint32_t *id)
{
	uint32_t i;
	int err;

	snprintf(b->key, sizeof(b->key), "l:%u:%" PRIx64, mapping, addr);
	err = key_lookup(b, &b->nlocations, id);
	if (err <= 0)
		return err;
	/* the location's own fields, then its lines (each built in tmp2) */
	b->tmp.n = 0;
	pb_int(&b->tmp, LOCATION_ID, *id);
	pb_int(&b->tmp, LOCATION_MAPPING_ID, mapping);
	pb_int(&b->tmp, LOCATION_ADDRESS, f->lang ? f->code_addr : addr);
	for (i = 0; f->name && i < f->ninl; i++) {
		err = add_line(b, f->inl[i].name, f->inl[i].file, 0, f->inl[i].line);
		if (err)
			return err;
	}
	if (f->name) {
		err = add_line(b, f->name, f->file, f->firstline, f->line);
		if (err)
			return err;
	}
	pb_msg(&b->locations, PROFILE_LOCATION, &b->tmp);
	return 0;
}

static int reserve_locs(struct rep_pprof *b, uint32_t n)
{
	uint32_t *v;

	if (n <= b->locbuf_cap)
		return 0;
	if (rep_charge__take(&b->charge, (uint64_t)(n - b->locbuf_cap) * sizeof(*v)))
		return -EFBIG;
	v = realloc(b->locbuf, n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	b->locbuf = v;
	b->locbuf_cap = n;
	return 0;
}

/* The stack of one side of row `row`, or NULL. */
static const struct cap_stack *side_stack(const struct rep_interval *ri, uint32_t row, bool kernel)
{
	return rep_row_stack(ri, row, !kernel);
}

/* Frames (lines) of a location: the function and those inlined at its address. */
static uint32_t frames_at(const struct rep_frame_info *f)
{
	return f->name ? 1 + f->ninl : 1;
}

/*
 * How many addresses of s are shown: all, or under --max-depth N those whose frames fit in N
 * (innermost first), and at least one.
 */
static int shown_ips(struct rep_pprof *b, struct rep_resolver *r, const struct rep_interval *ri,
		     uint32_t row, bool kernel, const struct cap_stack *s, uint32_t *n)
{
	uint32_t frames = 0, i;
	const struct rep_frame_info *f;
	int err;

	*n = s->nips;
	if (!b->o->max_depth)
		return 0;
	for (i = 0; i < s->nips; i++) {
		if (!kernel && rep_ip_hidden(b->o, s->ips, s->nips, i))
			continue;	/* --python-frames */
		err = rep_resolver__frame(r, ri, row, kernel, i > 0, s->ips[i], &f);
		if (err)
			return err;
		frames += frames_at(f);
		if (frames > b->o->max_depth) {
			*n = i ? i : 1;
			break;
		}
	}
	return 0;
}

/* --grep: whether a frame of the side's shown addresses matches (1), or not (0); -ENOMEM. */
static int side_matches(struct rep_pprof *b, struct rep_resolver *r, const struct rep_interval *ri,
			uint32_t row, bool kernel)
{
	const struct cap_stack *s = side_stack(ri, row, kernel);
	const struct rep_frame_info *f;
	uint32_t n = 0, i, k;
	int err = s ? shown_ips(b, r, ri, row, kernel, s, &n) : 0;

	for (i = 0; i < n && !err; i++) {
		if (!kernel && rep_ip_hidden(b->o, s->ips, s->nips, i))
			continue;	/* --python-frames */
		err = rep_resolver__frame(r, ri, row, kernel, i > 0, s->ips[i], &f);
		if (err)
			return err;
		if (rep_filter__match(b->filter, f->name ? f->name : "[unknown]"))
			return 1;
		for (k = 0; f->name && k < f->ninl; k++)
			if (rep_filter__match(b->filter, f->inl[k].name))
				return 1;
	}
	return err;
}

static int add_stack(struct rep_pprof *b, struct rep_resolver *r, const struct rep_interval *ri,
		     uint32_t row, bool kernel, uint32_t *nlocs)
{
	const struct cap_stack *s = side_stack(ri, row, kernel);
	const struct rep_frame_info *f;
	uint32_t n, i, map;
	int err;

	if (!s)
		return 0;
	err = shown_ips(b, r, ri, row, kernel, s, &n);
	if (!err)
		err = reserve_locs(b, *nlocs + n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		if (!kernel && rep_ip_hidden(b->o, s->ips, s->nips, i))
			continue;	/* --python-frames */
		err = rep_resolver__frame(r, ri, row, kernel, i > 0, s->ips[i], &f);
		if (!err && kernel)
			err = kernel_mapping_id(b, &map);
		else if (!err)
			err = mapping_id(b, ri->procs[row], s->ips[i], &map);
		if (!err)
			err = location_id(b, f, map, s->ips[i], &b->locbuf[*nlocs]);
		if (err)
			return err;
		(*nlocs)++;
	}
	return 0;
}

struct sample_key {
	const struct rep_pprof *b;
	const struct sample *s;
};

static bool sample_eq(const void *ctx, uint32_t val)
{
	const struct sample_key *k = ctx;
	const struct sample *a = k->s, *c = &k->b->samples[val];

	return a->pid == c->pid && a->tid == c->tid && a->comm == c->comm &&
	       a->probe == c->probe && a->host == c->host && a->capture == c->capture &&
	       a->nlocs == c->nlocs &&
	       (!a->nlocs || !memcmp(a->locs, c->locs, a->nlocs * sizeof(*a->locs)));
}

static int merge_sample(struct rep_pprof *b, struct sample *s)
{
	struct sample_key key = { b, s };
	uint64_t h = rep_hash_u64(rep_hash_u64(s->pid, s->tid), (uint64_t)s->comm << 32 | s->probe);
	uint32_t val;
	int err;

	h = rep_hash_u64(h, (uint64_t)s->host << 32 | s->capture);
	h = rep_hash_bytes(h, s->locs, s->nlocs * sizeof(*s->locs));
	if (rep_htab__find(&b->sample_index, h, sample_eq, &key, &val)) {
		b->samples[val].value = rep_count_add(b->samples[val].value, s->value, NULL);
		return 0;
	}
	if (b->nsamples == b->samples_cap) {
		uint32_t cap = b->samples_cap ? b->samples_cap * 2 : 256;
		struct sample *v;

		if (rep_charge__take(&b->charge, (uint64_t)(cap - b->samples_cap) * sizeof(*v)))
			return -EFBIG;
		v = realloc(b->samples, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		b->samples = v;
		b->samples_cap = cap;
	}
	if (rep_charge__take(&b->charge, ((uint64_t)s->nlocs * sizeof(*s->locs) + 8 + 15) & ~15ull))
		return -EFBIG;
	s->locs = malloc(s->nlocs ? s->nlocs * sizeof(*s->locs) : 1);
	if (!s->locs)
		return -ENOMEM;
	if (s->nlocs)
		memcpy(s->locs, b->locbuf, s->nlocs * sizeof(*s->locs));
	err = rep_htab__insert(&b->sample_index, h, b->nsamples);
	if (err) {
		free(s->locs);
		return err;
	}
	b->samples[b->nsamples++] = *s;
	return 0;
}

static int add_row(struct rep_pprof *b, struct rep_resolver *r, const struct rep_capture *c,
		   const struct rep_interval *ri, uint32_t row, const struct sample *labels)
{
	const struct cap_row *cr = &ri->iv->rows[row];
	struct sample s = *labels;
	char comm[CAP_COMM_LEN + 1], probe[16];
	const char *spec = rep_capture_probe_spec(c, cr->probe);
	int64_t id;
	int err = 0;

	s.pid = cr->pid;
	s.tid = cr->tid;
	s.value = cr->count;
	memcpy(comm, cr->comm, CAP_COMM_LEN);
	comm[CAP_COMM_LEN] = 0;	/* hostile input may lack the NUL */
	id = str_id(b, comm);
	if (id < 0)
		return id;
	s.comm = id;
	snprintf(probe, sizeof(probe), "%u", cr->probe);
	id = str_id(b, spec ? spec : probe);
	if (id < 0)
		return id;
	s.probe = id;
	if (rep_filter__has_grep(b->filter)) {
		err = b->o->user_only ? 0 : side_matches(b, r, ri, row, true);
		if (!err && !b->o->kernel_only)
			err = side_matches(b, r, ri, row, false);
		if (err <= 0)
			return err;
		err = 0;
	}
	/* leaf first: the kernel part (when shown) sits below the user part */
	if (!b->o->user_only)
		err = add_stack(b, r, ri, row, true, &s.nlocs);
	if (!err && !b->o->kernel_only)
		err = add_stack(b, r, ri, row, false, &s.nlocs);
	if (!err)
		s.locs = b->locbuf;
	return err ? err : merge_sample(b, &s);
}

/* Whether row `row` of ri passes the row filters (--pid, --comm, --probe, --time). */
static bool row_kept(const struct rep_pprof *b, const struct rep_interval *ri, uint32_t row)
{
	const struct cap_row *cr = &ri->iv->rows[row];
	char comm[CAP_COMM_LEN + 1];

	memcpy(comm, cr->comm, CAP_COMM_LEN);
	comm[CAP_COMM_LEN] = 0;
	return rep_filter__row(b->filter, ri, cr, comm);
}

/* The sampling event of a profile capture (meta event; cpu-clock before stkrec wrote it). */
static const char *sampled_event(const struct rep_capture *c)
{
	const char *e = c->meta ? cap_meta_get(c->meta, "event") : NULL;

	return e && *e ? e : "cpu-clock";
}

/* The first capture decides the sample types; every capture widens the profile's span. */
static void note_capture(struct rep_pprof *b, const struct rep_capture *c)
{
	struct profile_kind *k = &b->kind;
	int64_t start, w;
	uint64_t end;

	if (!b->ncaps++) {
		k->offcpu = rep_capture_weight_us(c);
		k->timed = rep_capture_is_profile(c);
		snprintf(k->event, sizeof(k->event), "%s", sampled_event(c));
		if (!rep_capture_meta_i64(c, "period", &k->period) || k->period < 0)
			k->period = 0;
		if (!rep_capture_meta_i64(c, "freq_hz", &k->freq) || k->freq < 0)
			k->freq = 0;
	}
	if (!rep_capture_start_ns(c, &start))
		return;
	if (!rep_capture_end_ns(c, &end))
		end = start;
	if (rep_capture_wall_ns(c, start, &w) && w < k->first_ns)
		k->first_ns = w;
	if (rep_capture_wall_ns(c, end, &w) && w > k->last_ns)
		k->last_ns = w;
}

/* Before the first capture's rows: the main process's executable as mapping 1. */
static int put_main_mapping(struct rep_pprof *b)
{
	struct cap_process p = { .exe = b->main.path, .nmaps = 1, .maps = &b->main.map };

	return b->main.set && !b->ncaps ? exe_mapping(b, &p) : 0;
}

/*
 * The labels every sample of c carries besides its row's: host (meta host, "?" without one),
 * and with --by capture the capture's name, so that a fleet's profiles merged into one keep
 * their origin for pprof -tagfocus, Parca's and Pyroscope's label filters.
 */
static int capture_labels(struct rep_pprof *b, const struct rep_capture *c, const char *name,
			  struct sample *labels)
{
	const char *host = c->meta ? cap_meta_get(c->meta, "host") : NULL;
	int64_t id = str_id(b, host && *host ? host : "?");

	if (id < 0)
		return id;
	labels->host = id;
	if (b->o->by != REP_BY_CAPTURE)
		return 0;
	id = str_id(b, name);
	if (id < 0)
		return id;
	labels->capture = id;
	return 0;
}

int rep_pprof__add(struct rep_pprof *b, const struct rep_capture *c, const char *name)
{
	struct sample labels = { 0 };
	struct rep_resolver *r;
	uint32_t i, row;
	int err;

	err = put_main_mapping(b);
	if (!err)
		err = capture_labels(b, c, name, &labels);
	if (err)
		return err;
	note_capture(b, c);
	r = rep_resolver__new(c, b->o, REP_RESOLVE_LINES);
	if (!r)
		return -ENOMEM;
	err = rep_filter__capture(b->filter, c);
	for (i = 0; i < c->nintervals && !err; i++) {
		if (!rep_filter__interval(b->filter, &c->intervals[i]))
			continue;
		for (row = 0; row < c->intervals[i].iv->nrows && !err; row++)
			if (row_kept(b, &c->intervals[i], row))
				err = add_row(b, r, c, &c->intervals[i], row, &labels);
	}
	rep_resolver__free(r);
	return err;
}

/* ---- the main binary ------------------------------------------------------------------------- */

/* A process's weight in the profile. */
struct weight {
	uint32_t cap, pid;
	uint64_t count;
	const struct cap_process *proc;	/* a record of it that names its executable */
};

struct weights {
	struct weight *v;
	uint32_t n, cap;
	struct rep_htab index;
};

struct weight_key {
	const struct weights *ws;
	const struct weight *w;
};

static bool weight_eq(const void *ctx, uint32_t val)
{
	const struct weight_key *k = ctx;

	return k->ws->v[val].cap == k->w->cap && k->ws->v[val].pid == k->w->pid;
}

static int add_weight(struct weights *ws, const struct weight *w)
{
	struct weight_key key = { ws, w };
	uint64_t h = rep_hash_u64(w->cap, w->pid);
	uint32_t val;

	if (rep_htab__find(&ws->index, h, weight_eq, &key, &val)) {
		ws->v[val].count = rep_count_add(ws->v[val].count, w->count, NULL);
		if (!ws->v[val].proc)
			ws->v[val].proc = w->proc;
		return 0;
	}
	if (ws->n == ws->cap) {
		uint32_t cap = ws->cap ? ws->cap * 2 : 64;
		struct weight *v = realloc(ws->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		ws->v = v;
		ws->cap = cap;
	}
	if (rep_htab__insert(&ws->index, h, ws->n))
		return -ENOMEM;
	ws->v[ws->n++] = *w;
	return 0;
}

/* The one process a capture was made for: -p PID or -- COMMAND (meta pid_filter). */
static bool capture_for_one_process(const struct rep_capture *c, uint32_t *pid)
{
	const char *s = c->meta ? cap_meta_get(c->meta, "pid_filter") : NULL;
	char *end;
	unsigned long v;

	if (!s || *s < '1' || *s > '9')
		return false;
	v = strtoul(s, &end, 10);
	if (*end || v > UINT32_MAX)
		return false;
	*pid = v;
	return true;
}

/* Keep a copy of p's executable mapping as the main one, weighing count. */
static void keep_main(struct rep_pprof *b, const struct cap_process *p, uint64_t count)
{
	for (uint32_t i = 0; i < p->nmaps; i++) {
		if (!p->maps[i].path || strcmp(p->maps[i].path, p->exe))
			continue;
		b->main.map = p->maps[i];
		snprintf(b->main.path, sizeof(b->main.path), "%s", p->exe);
		b->main.map.path = b->main.path;
		b->main.count = count;
		b->main.set = true;
		return;
	}
}

/*
 * pprof names a profile after its first mapping (go tool pprof's "File:"): make it the
 * executable of the profile's main process. That is the process a capture was made for (-p PID,
 * -- COMMAND), else the one with the most weight in the rows kept, the first capture's first on
 * a tie; none when no user frame is shown. A process is weighed within its capture (pids of
 * different captures are different processes), so each capture is weighed alone, and the
 * winner's mapping copied: the capture is freed before the next is weighed.
 */
int rep_pprof__weigh(struct rep_pprof *b, const struct rep_capture *c)
{
	struct weights ws = { 0 };
	uint32_t pid = 0, k = b->nweighed++;
	bool one;
	int err = 0;

	if (b->o->kernel_only)
		return 0;
	one = capture_for_one_process(c, &pid);
	err = rep_filter__capture(b->filter, c);
	for (uint32_t i = 0; i < c->nintervals && !err; i++) {
		const struct rep_interval *ri = &c->intervals[i];

		if (!rep_filter__interval(b->filter, ri))
			continue;
		for (uint32_t row = 0; row < ri->iv->nrows && !err; row++) {
			const struct cap_row *cr = &ri->iv->rows[row];
			const struct cap_process *p = ri->procs[row];
			struct weight w = { k, cr->pid, cr->count, p && p->exe ? p : NULL };

			if (cr->ustack == CAP_NO_STACK || !row_kept(b, ri, row) ||
			    (one && cr->pid != pid))
				continue;
			err = add_weight(&ws, &w);
		}
	}
	/* strictly more: an earlier capture's process, or an earlier one of this capture, wins
	 * a tie */
	for (uint32_t i = 0; i < ws.n && !err; i++)
		if (ws.v[i].proc && (!b->main.set || ws.v[i].count > b->main.count))
			keep_main(b, ws.v[i].proc, ws.v[i].count);
	free(ws.v);
	rep_htab__clear(&ws.index);
	return err;
}

/* ---- the Profile message --------------------------------------------------------------------- */

static int value_type(struct rep_pprof *b, struct pb *out, uint32_t field, const char *type,
		      const char *unit)
{
	int64_t t = str_id(b, type), u = str_id(b, unit);

	if (t < 0 || u < 0)
		return t < 0 ? t : u;
	pb_int(&b->tmp, VALUE_TYPE_TYPE, t);
	pb_int(&b->tmp, VALUE_TYPE_UNIT, u);
	pb_msg(out, field, &b->tmp);
	return 0;
}

static int label(struct rep_pprof *b, struct pb *out, const char *key, int64_t str, uint64_t num)
{
	int64_t k = str_id(b, key);

	if (k < 0)
		return k;
	pb_int(&b->tmp2, LABEL_KEY, k);
	pb_int(&b->tmp2, LABEL_STR, str);
	pb_int(&b->tmp2, LABEL_NUM, num);
	pb_msg(out, SAMPLE_LABEL, &b->tmp2);
	return 0;
}

/* count * scale, held at INT64_MAX (pprof values are int64) */
static uint64_t scaled(uint64_t count, uint64_t scale)
{
	uint64_t v;

	if (__builtin_mul_overflow(count, scale, &v) || v > INT64_MAX)
		return INT64_MAX;
	return v;
}

static int put_samples(struct rep_pprof *b, struct pb *out)
{
	uint32_t i, j;
	int err = 0;

	for (i = 0; i < b->nsamples && !err; i++) {
		const struct sample *s = &b->samples[i];

		/* packed repeated fields: the varints are the bytes of one length-delimited field */
		for (j = 0; j < s->nlocs; j++)
			pb_varint(&b->tmp2, s->locs[j]);
		pb_msg(&b->tmp, SAMPLE_LOCATION_ID, &b->tmp2);
		for (j = 0; j < b->ntypes; j++)
			pb_varint(&b->tmp2, scaled(s->value, b->scale[j]));
		pb_msg(&b->tmp, SAMPLE_VALUE, &b->tmp2);
		err = label(b, &b->tmp, "pid", 0, s->pid);
		if (!err)
			err = label(b, &b->tmp, "tid", 0, s->tid);
		if (!err)
			err = label(b, &b->tmp, "comm", s->comm, 0);
		if (!err)
			err = label(b, &b->tmp, "probe", s->probe, 0);
		if (!err)
			err = label(b, &b->tmp, "host", s->host, 0);
		if (!err && b->o->by == REP_BY_CAPTURE)
			err = label(b, &b->tmp, "capture", s->capture, 0);
		pb_msg(out, PROFILE_SAMPLE, &b->tmp);
	}
	return err;
}

/* One sample type: its values are the counts times scale. */
static int sample_type(struct rep_pprof *b, struct pb *out, const char *type, const char *unit,
		       uint64_t scale)
{
	b->scale[b->ntypes++] = scale;
	return value_type(b, out, PROFILE_SAMPLE_TYPE, type, unit);
}

/*
 * Sample types and period from the first capture's meta (format.md 4.1), as Go's CPU profiles
 * and Pyroscope/Parca expect them. Off-CPU time is off_cpu/nanoseconds. Samples of a clock
 * (cpu-clock, task-clock) are samples/count and cpu/nanoseconds, each worth 1 s / frequency, or
 * with -c N, N ns of that clock. Samples of another event (-e page-faults, cycles...) are
 * samples/count and EVENT/count, each worth its period (-c N; rare events take every one); at
 * a frequency the kernel tunes that period, so the profile says the event and no period. Probe
 * captures count events/count.
 */
static int put_types(struct rep_pprof *b, struct pb *out)
{
	const struct profile_kind *k = &b->kind;
	int64_t period = k->period;
	const char *event = k->event;
	bool clock;
	int err;

	b->ntypes = 0;
	if (b->ncaps && k->offcpu) {
		err = sample_type(b, out, "off_cpu", "nanoseconds", 1000);
		if (!err)
			err = value_type(b, out, PROFILE_PERIOD_TYPE, "off_cpu", "nanoseconds");
		pb_int(out, PROFILE_PERIOD, 1000);
		return err;
	}
	if (!b->ncaps || !k->timed) {
		err = sample_type(b, out, "events", "count", 1);
		if (!err)
			err = value_type(b, out, PROFILE_PERIOD_TYPE, "events", "count");
		pb_int(out, PROFILE_PERIOD, 1);
		return err;
	}
	clock = !strcmp(event, "cpu-clock") || !strcmp(event, "task-clock");
	if (!period && k->freq > 0 && clock)
		period = 1000000000 / k->freq;
	err = sample_type(b, out, "samples", "count", 1);
	if (!err && period)
		err = sample_type(b, out, clock ? "cpu" : event, clock ? "nanoseconds" : "count",
				  period);
	if (!err)
		err = value_type(b, out, PROFILE_PERIOD_TYPE, clock ? "cpu" : event,
				 clock ? "nanoseconds" : "count");
	pb_int(out, PROFILE_PERIOD, period);
	return err;
}

/* Earliest start and latest end, wall clock, over every capture. */
static void put_times(struct pb *out, const struct profile_kind *k)
{
	if (k->first_ns == INT64_MAX)
		return;
	pb_int(out, PROFILE_TIME_NANOS, k->first_ns);
	if (k->last_ns > k->first_ns)
		pb_int(out, PROFILE_DURATION_NANOS, k->last_ns - k->first_ns);
}

static int put_profile(struct rep_pprof *b, struct pb *out)
{
	uint32_t i;
	int err;

	err = put_types(b, out);
	if (!err)
		err = put_samples(b, out);
	if (err)
		return err;
	pb_put(out, b->mappings.buf, b->mappings.n);
	pb_put(out, b->locations.buf, b->locations.n);
	pb_put(out, b->functions.buf, b->functions.n);
	/* every string is interned by now: the table goes last */
	for (i = 0; i < b->strs.n; i++)
		pb_bytes(out, PROFILE_STRING_TABLE, b->strs.strs[i], strlen(b->strs.strs[i]));
	put_times(out, &b->kind);
	return out->err;
}

/*
 * len bytes of buf gzipped onto out (RFC 1952, no name, no time). deflate() with gzdopen()'s
 * parameters (level 9, gzip wrapper, memory level 8) and no flush before the end gives the bytes
 * gzwrite() gave, whatever the pieces the input comes in. 0, -ENOMEM or -EIO.
 */
static int write_gz(FILE *out, const uint8_t *buf, size_t len)
{
	z_stream z = { 0 };
	uint8_t chunk[1 << 16];
	size_t left = len, n;
	int rc, err = 0;

	if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)buf;
	do {
		/* avail_in is 32 bits: the input goes in by the gigabyte */
		if (!z.avail_in) {
			z.avail_in = left > (1u << 30) ? 1u << 30 : (uInt)left;
			left -= z.avail_in;
		}
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		rc = deflate(&z, left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		if (rc == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		n = sizeof(chunk) - z.avail_out;
		if (n && fwrite(chunk, 1, n, out) != n) {
			err = -EIO;
			break;
		}
	} while (rc != Z_STREAM_END);
	deflateEnd(&z);
	return err;
}

struct rep_pprof *rep_pprof__new(const struct rep_opts *o)
{
	struct rep_pprof *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->o = o;
	b->kind.first_ns = INT64_MAX;
	b->kind.last_ns = INT64_MIN;
	b->charge.budget = b->sample_index.charge.budget = o->memory;
	b->functions.charge.budget = b->mappings.charge.budget = o->memory;
	b->locations.charge.budget = b->tmp.charge.budget = b->tmp2.charge.budget = o->memory;
	rep_strtab__set_budget(&b->strs, o->memory);
	rep_strtab__set_budget(&b->keys, o->memory);
	b->filter = rep_filter__new(o);
	/* string 0 must be "" (profile.proto) */
	if (!b->filter || str_id(b, "") < 0) {
		rep_pprof__free(b);
		errno = ENOMEM;
		return NULL;
	}
	return b;
}

void rep_pprof__free(struct rep_pprof *b)
{
	uint32_t i;

	if (!b)
		return;
	for (i = 0; i < b->nsamples; i++)
		free(b->samples[i].locs);
	free(b->samples);
	rep_htab__clear(&b->sample_index);
	rep_strtab__clear(&b->strs);
	rep_strtab__clear(&b->keys);
	free(b->key_ids);
	pb_free(&b->functions);
	pb_free(&b->mappings);
	pb_free(&b->locations);
	pb_free(&b->tmp);
	pb_free(&b->tmp2);
	free(b->locbuf);
	rep_filter__free(b->filter);
	rep_charge__clear(&b->charge);
	free(b);
}

/* The profile of the captures added, not gzipped, into *out (emptied by the caller). */
static int build(struct rep_pprof *b, struct pb *out)
{
	int err = b->functions.err ? b->functions.err : b->locations.err ? b->locations.err
									 : b->mappings.err;

	out->charge.budget = b->o->memory;
	return err ? err : put_profile(b, out);
}

int rep_pprof__write(struct rep_pprof *b, const char *path)
{
	struct pb p = { 0 };
	FILE *out;
	int err;

	err = build(b, &p);
	if (err) {
		/* over the budget: rep_run() says so */
		if (err != -EFBIG)
			fprintf(stderr, "stkreport: --pprof: %s\n", strerror(-err));
		goto out;
	}
	out = cap_fopen_output(path, false);
	if (!out) {
		err = -errno;
		fprintf(stderr, "stkreport: %s: %s\n", path, cap_output_strerror(err));
		goto out;
	}
	err = write_gz(out, p.buf, p.n);
	if (fclose(out) && !err)
		err = -EIO;
	if (err) {
		/* never a half-written profile */
		unlink(path);
		fprintf(stderr, "stkreport: %s: %s\n", path, cap_output_strerror(err));
	}
out:
	pb_free(&p);
	return err;
}

int rep_pprof__emit(struct rep_pprof *b, FILE *out)
{
	struct pb p = { 0 };
	int err = build(b, &p);

	if (err) {
		if (err != -EFBIG)
			fprintf(stderr, "stkreport: --pprof: %s\n", strerror(-err));
	} else {
		err = write_gz(out, p.buf, p.n);
		if (!err && fflush(out))
			err = -EIO;
	}
	pb_free(&p);
	return err;
}

int rep_pprof_emit(FILE *out, struct rep_capture **caps, const char **names, int n,
		   const struct rep_opts *o)
{
	struct rep_pprof *b = rep_pprof__new(o);
	int err = b ? 0 : -ENOMEM, i;

	for (i = 0; i < n && !err; i++)
		err = rep_pprof__weigh(b, caps[i]);
	for (i = 0; i < n && !err; i++)
		err = rep_pprof__add(b, caps[i], names[i]);
	if (err)
		fprintf(stderr, "stkreport: --pprof: %s\n", strerror(-err));
	else
		err = rep_pprof__emit(b, out);
	rep_pprof__free(b);
	return err;
}
