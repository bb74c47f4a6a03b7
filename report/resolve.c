// SPDX-License-Identifier: MIT
/*
 * resolve.c: the symbolization cache every output goes through. Each raw address becomes its
 * details (name, offset, object, build-id, source line and inline chain), symbolized once per
 * distinct (object, file offset, return?) of user space and (kernel symbol table, address,
 * return?) of the kernel. agg.c turns them into the model's frames; SQL, pprof and stacksnoop
 * read them.
 *
 * Bounds (stkreport(1), LIMITS): every string a frame hands out (names, objects, source files)
 * is at most REP_MAX_NAME bytes, cut here, so that no output does more per frame than that
 * however long the capture's strings are; and every address kept takes its bytes from the
 * run's memory budget.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "report.h"

struct slot {
	const void *ctx;
	uint64_t addr;
	uint32_t kind;		/* 0 user, 1 user return address, 2 kernel, 3 kernel return,
				 * KIND_CODE an interpreter frame (by its word: capture-wide) */
	uint32_t id;		/* index into frames + 1; 0 = empty slot */
};

struct rep_resolver {
	const struct rep_capture *c;
	struct sym_user *user;
	struct sym_kernel **kernels;	/* per kernel symbol table, [nksyms] = none; built lazily */
	uint64_t charged;		/* the kernel indexes, from the capture's memory budget */
	struct slot *tab;		/* power of two, at most half full */
	size_t cap;
	uint64_t seed;			/* random: where keys land is not the input's choice */
	struct rep_frame_info *frames;
	uint32_t n, frames_cap;
	bool per_address;		/* REP_RESOLVE_PER_ADDRESS */
	struct rep_strtab cut;		/* strings over REP_MAX_NAME bytes, cut */
};

struct rep_resolver *rep_resolver__new(const struct rep_capture *c, const struct rep_opts *o,
				       unsigned int flags)
{
	struct rep_opts so = *o;
	struct rep_resolver *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	so.lines = flags & REP_RESOLVE_LINES;
	if (getrandom(&r->seed, sizeof(r->seed), GRND_NONBLOCK) != sizeof(r->seed))
		r->seed = (uintptr_t)r;	/* no entropy yet: the heap's place, at least */
	r->c = c;
	r->per_address = flags & REP_RESOLVE_PER_ADDRESS;
	r->user = rep_sym_user__new(c, &so);
	r->kernels = calloc(c->nksyms + 1, sizeof(*r->kernels));
	if (!r->user || !r->kernels) {
		rep_resolver__free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void rep_resolver__free(struct rep_resolver *r)
{
	uint32_t i;

	if (!r)
		return;
	if (r->kernels)
		for (i = 0; i <= r->c->nksyms; i++)
			sym_kernel__free(r->kernels[i]);
	cap_budget__give(r->c->budget, r->charged);
	free(r->kernels);
	for (i = 0; i < r->n; i++)
		free(r->frames[i].inl);
	free(r->frames);
	free(r->tab);
	rep_strtab__clear(&r->cut);
	sym_user__free(r->user);
	free(r);
}

/*
 * The slot holding (ctx, addr, kind), or the empty slot where it belongs. The hash is keyed
 * (seed, as rep_htab's): addresses whose hashes share their low bits would make one cluster
 * every lookup walks, and an unkeyed hash of a u64 is inverted in a few operations.
 */
static inline struct slot *find_slot(uint64_t seed, struct slot *tab, size_t cap, const void *ctx,
				     uint64_t addr, uint32_t kind)
{
	size_t mask = cap - 1;
	size_t i = rep_hash_u64(rep_hash_u64(seed ^ (uintptr_t)ctx, addr), kind) & mask;

	for (; tab[i].id; i = (i + 1) & mask)
		if (tab[i].ctx == ctx && tab[i].addr == addr && tab[i].kind == kind)
			break;
	return &tab[i];
}

/* Room for one more address: the table stays at most half full. */
static int grow(struct rep_resolver *r)
{
	size_t cap = r->cap ? r->cap * 2 : 4096, i;
	struct slot *tab;

	if ((r->n + 1) * 2 > r->cap) {
		tab = calloc(cap, sizeof(*tab));
		if (!tab)
			return -ENOMEM;
		for (i = 0; i < r->cap; i++)
			if (r->tab[i].id)
				*find_slot(r->seed, tab, cap, r->tab[i].ctx, r->tab[i].addr,
					   r->tab[i].kind) =
					r->tab[i];
		free(r->tab);
		r->tab = tab;
		r->cap = cap;
	}
	if (r->n == r->frames_cap) {
		uint32_t fcap = r->frames_cap ? r->frames_cap * 2 : 1024;
		struct rep_frame_info *v = realloc(r->frames, fcap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->frames = v;
		r->frames_cap = fcap;
	}
	return 0;
}

/* A kernel symbol index as sym_kernel__new() makes it: four words per symbol. */
#define KERNEL_INDEX_BYTES(n) (64 + (uint64_t)(n) * 4 * sizeof(uint64_t))

/* The index of kernel symbol table ks: NULL with errno EFBIG when it would exceed the memory
 * budget, ENOMEM when out of memory. */
static struct sym_kernel *kernel_for(struct rep_resolver *r, uint32_t ks)
{
	uint32_t i = ks < r->c->nksyms ? ks : r->c->nksyms;
	const struct cap_ksyms *table = i < r->c->nksyms ? r->c->ksyms[i] : NULL;
	uint64_t bytes;

	/* called per row: once built, nothing more to do */
	if (r->kernels[i])
		return r->kernels[i];
	bytes = KERNEL_INDEX_BYTES(table ? table->count : 0);
	if (cap_budget__take(r->c->budget, bytes)) {
		errno = EFBIG;
		return NULL;
	}
	r->kernels[i] = sym_kernel__new(table);
	if (r->kernels[i]) {
		r->charged += bytes;
	} else {
		cap_budget__give(r->c->budget, bytes);
		errno = ENOMEM;
	}
	return r->kernels[i];
}

const char *rep_cut_name(const char *s, char buf[REP_MAX_NAME + 1])
{
	size_t n = REP_MAX_NAME - 3;

	if (!s || strnlen(s, REP_MAX_NAME + 1) <= REP_MAX_NAME)
		return s;
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;	/* not inside a UTF-8 sequence */
	memcpy(buf, s, n);
	memcpy(buf + n, "...", 4);
	return buf;
}

/*
 * s cut as rep_cut_name() says, a cut copy kept in r->cut (*bytes grows by what that keeps). A
 * capture may hold names of megabytes: what a frame prints, and the work per frame, stay
 * within REP_MAX_NAME.
 */
static const char *bounded(struct rep_resolver *r, const char *s, uint64_t *bytes, int *err)
{
	char buf[REP_MAX_NAME + 1];
	const char *cut = rep_cut_name(s, buf);
	uint32_t before = r->cut.n;
	int64_t id;

	if (cut == s)
		return s;
	id = rep_strtab__intern(&r->cut, cut);
	if (id < 0) {
		*err = id;
		return NULL;
	}
	if (r->cut.n != before)
		*bytes += strlen(cut) + 1 + sizeof(char *);
	return rep_strtab__str(&r->cut, id);
}

/*
 * Keep what the lookup lends only until the next one (the inline array), strings bounded.
 * *bytes: what the frame keeps beyond its slot and record.
 */
static int fill(struct rep_resolver *r, struct rep_frame_info *f, const struct sym_result *res,
		bool kernel, uint64_t *bytes)
{
	int err = 0;

	memset(f, 0, sizeof(*f));
	f->name = bounded(r, res->name, bytes, &err);
	f->offset = res->offset;
	f->reason = res->reason;
	f->kernel = kernel;
	f->module_path = kernel ? NULL : bounded(r, res->module_path, bytes, &err);
	f->module = bounded(r, res->module, bytes, &err);	/* kernel: the module's name, NULL
								 * for the image */
	f->module_offset = res->module_offset;
	f->build_id = res->build_id;
	f->build_id_len = res->build_id ? res->build_id_len : 0;
	f->file = bounded(r, res->file, bytes, &err);
	f->line = res->line;
	if (err)
		return err;
	if (res->ninl && res->inl) {
		f->inl = malloc(res->ninl * sizeof(*f->inl));
		if (!f->inl)
			return -ENOMEM;
		*bytes += res->ninl * sizeof(*f->inl);
		for (uint32_t i = 0; i < res->ninl && !err; i++) {
			f->inl[i].name = bounded(r, res->inl[i].name, bytes, &err);
			f->inl[i].file = bounded(r, res->inl[i].file, bytes, &err);
			f->inl[i].line = res->inl[i].line;
		}
		f->ninl = res->ninl;
	}
	return err;
}

#define KIND_CODE 4

/*
 * An interpreter frame (format.md 4.11) from the capture's CODES entry of its id, its strings
 * bounded as fill()'s.
 */
static int fill_code(struct rep_resolver *r, struct rep_frame_info *f, uint64_t word,
		     uint64_t *bytes)
{
	const struct cap_code *code = sym_code_find(r->c->codes, r->c->ncodes,
						    CAP_CODE_FRAME_ID(word));
	uint32_t off = CAP_CODE_FRAME_OFF(word);
	int err = 0;

	memset(f, 0, sizeof(*f));
	f->lang = code ? code->lang : CAP_LANG_PYTHON;
	f->offset = off;	/* CAP_CODE_OFF_NONE: no instruction run yet */
	f->reason = SYM_R_CODE;
	f->code_addr = code ? code->addr : 0;
	if (!code || code->reason != CAP_CODE_NAMED || !code->name)
		return 0;
	f->reason = SYM_OK;
	f->name = bounded(r, code->name, bytes, &err);
	f->file = bounded(r, code->file, bytes, &err);
	f->line = sym_code_line(code, off);
	f->firstline = code->firstline;
	return err;
}

/*
 * What an address costs beyond its strings: its record and its slot, in arrays that double
 * (the slots at most half full): twice the record, four slots.
 */
#define ADDRESS_BYTES (2 * sizeof(struct rep_frame_info) + 4 * sizeof(struct slot))

/*
 * Symbolize a new address into frames[n] and slot s (or the slot growing moved it to). Its bytes
 * come from the memory budget: -EFBIG when they would exceed it.
 */
static int add(struct rep_resolver *r, struct slot *s, const void *ctx, const void *key_ctx,
	       uint64_t key_addr, uint32_t kind, uint64_t addr)
{
	bool kernel = kind == 2 || kind == 3, is_return = kind & 1;
	uint64_t bytes = ADDRESS_BYTES;
	struct sym_result res;
	size_t cap = r->cap;
	int err;

	err = grow(r);
	if (err)
		return err;
	if (r->cap != cap)
		s = find_slot(r->seed, r->tab, r->cap, key_ctx, key_addr, kind);
	memset(&res, 0, sizeof(res));
	if (kernel && !ctx)
		res.reason = SYM_R_BUDGET;	/* kernel_for() found no room for the index */
	else if (kernel)
		sym_kernel__lookup(ctx, is_return && addr ? addr - 1 : addr, &res);
	else if (kind != KIND_CODE)	/* a code object's word: named from CODES, no lookup */
		sym_user__lookup(r->user, ctx, addr, is_return, &res);
	if (kernel && is_return && res.name)
		res.offset++;	/* looked up addr - 1; the offset is the raw address's */
	err = kind == KIND_CODE ? fill_code(r, &r->frames[r->n], addr, &bytes) :
		fill(r, &r->frames[r->n], &res, kernel, &bytes);
	if (!err && cap_budget__take(r->c->budget, bytes))
		err = -EFBIG;
	if (err) {
		free(r->frames[r->n].inl);
		return err;
	}
	r->charged += bytes;
	r->frames[r->n].id = r->n;
	*s = (struct slot){ key_ctx, key_addr, kind, ++r->n };
	return 0;
}

/* The symbolizer context of row `row`'s kernel or user frames: a struct sym_kernel (NULL when
 * over the budget or out of memory) or the row's struct cap_process (which may be NULL). */
static const void *context(struct rep_resolver *r, const struct rep_interval *ri, uint32_t row,
			   bool kernel)
{
	return kernel ? (const void *)kernel_for(r, ri->ksyms) : (const void *)ri->procs[row];
}

/* The id of one address: the body of every lookup, inlined into the loop of __ids. */
static inline int lookup(struct rep_resolver *r, const void *ctx, bool kernel, bool is_return,
			 uint64_t addr, uint32_t *id)
{
	uint32_t kind = (kernel ? 2 : 0) + is_return;
	const void *key_ctx = ctx;
	uint64_t key_addr = addr;
	struct slot *s;
	int err;

	/* an interpreter frame: its word names a code object of the capture, in any process */
	if (!kernel && CAP_CODE_FRAME_IS(addr)) {
		kind = KIND_CODE;
		key_ctx = NULL;
	} else if (!kernel && !r->per_address) {
		/* user addresses: shared by every process mapping the object, unless the caller
		 * shows raw addresses */
		err = sym_user__locate(r->user, ctx, addr, is_return, &key_ctx, &key_addr);
		if (err)
			return err;
	}
	/* the table is allocated with the first address */
	s = r->cap ? find_slot(r->seed, r->tab, r->cap, key_ctx, key_addr, kind) : NULL;
	if (s && s->id) {
		*id = s->id - 1;
		return 0;
	}
	err = add(r, s, ctx, key_ctx, key_addr, kind, addr);
	*id = r->n - 1;
	return err;
}

int rep_resolver__ids(struct rep_resolver *r, const struct rep_interval *ri, uint32_t row,
		      bool kernel, const uint64_t *ips, uint32_t first, uint32_t n, uint32_t *ids)
{
	const void *ctx = context(r, ri, row, kernel);
	uint32_t i;
	int err;

	/* over the budget: the run ends with the budget's error (run.c), never a wrong name */
	if (kernel && !ctx)
		return -errno;
	for (i = 0; i < n; i++) {
		/* frames above the leaf are return addresses: the call is the byte before */
		err = lookup(r, ctx, kernel, first + i > 0, ips[first + i], &ids[i]);
		if (err)
			return err;
	}
	return 0;
}

bool rep_ip_hidden(const struct rep_opts *o, const uint64_t *ips, uint32_t n, uint32_t i)
{
	if (o->python_frames == REP_PYFRAMES_NATIVE)
		return CAP_CODE_FRAME_IS(ips[i]);
	if (o->python_frames == REP_PYFRAMES_MIXED)
		return false;
	/* python (the default): the interpreter's own frame, right inside the frames it runs */
	return i + 1 < n && !CAP_CODE_FRAME_IS(ips[i]) && CAP_CODE_FRAME_IS(ips[i + 1]);
}

const struct rep_frame_info *rep_resolver__info(const struct rep_resolver *r, uint32_t id)
{
	return &r->frames[id];
}

int rep_resolver__frame(struct rep_resolver *r, const struct rep_interval *ri, uint32_t row,
			bool kernel, bool is_return, uint64_t addr,
			const struct rep_frame_info **out)
{
	const void *ctx = context(r, ri, row, kernel);
	uint32_t id;
	int err;

	if (kernel && !ctx)
		return -errno;
	err = lookup(r, ctx, kernel, is_return, addr, &id);
	if (!err)
		*out = &r->frames[id];
	return err;
}
