// SPDX-License-Identifier: MIT
/* symbolize.c: kernel and user address -> symbol, offline (see symbolize.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <stk/elfobj.h>

#include "stk/htab.h"
#include "sym_internal.h"
#include "stk/symbolize.h"

static const char *const reason_names[SYM_R__COUNT] = {
	[SYM_OK] = "named",
	[SYM_R_NO_MAPS] = "process exited before its maps were read",
	[SYM_R_OUTSIDE] = "address outside any mapping",
	[SYM_R_SPECIAL] = "vdso, JIT or special mapping",
	[SYM_R_NOT_FOUND] = "object not found",
	[SYM_R_BUILD_ID] = "build-id mismatch",
	[SYM_R_NO_SYMBOLS] = "no symbol",
	[SYM_R_KSYMS_HIDDEN] = "kallsyms hidden (kptr_restrict)",
	[SYM_R_NO_KSYMS] = "no kallsyms in capture",
	[SYM_R_BUDGET] = "over the memory budget",
	[SYM_R_CODE] = "interpreter code object not named",
};

const char *sym_reason_name(unsigned int reason)
{
	return reason < SYM_R__COUNT ? reason_names[reason] : "unknown reason";
}

static void set_unknown(struct sym_result *res, enum sym_reason reason)
{
	memset(res, 0, sizeof(*res));
	res->reason = reason;
}

/* ---- kernel -------------------------------------------------------------------------------- */

struct kentry {
	uint64_t addr, size;	/* size 0: unknown (KSYMS), up to the next symbol */
	const char *name;
	const char *module;	/* NULL: the kernel image */
};

struct sym_kernel {
	bool missing, hidden;
	uint32_t n;
	struct kentry *syms;
};

static int kentry_cmp(const void *a, const void *b)
{
	const struct kentry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

struct sym_kernel *sym_kernel__new(const struct cap_ksyms *ks)
{
	struct sym_kernel *k = calloc(1, sizeof(*k));
	uint32_t i, nonzero = 0;

	if (!k)
		return NULL;
	if (!ks) {
		k->missing = true;
		return k;
	}
	k->syms = calloc(ks->count ? ks->count : 1, sizeof(*k->syms));
	if (!k->syms) {
		free(k);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < ks->count; i++) {
		if (!ks->syms[i].addr || !ks->syms[i].name)
			continue;
		k->syms[k->n].addr = ks->syms[i].addr;
		k->syms[k->n].size = ks->syms[i].size;
		k->syms[k->n].name = ks->syms[i].name;
		k->syms[k->n].module = ks->syms[i].module && *ks->syms[i].module ?
				       ks->syms[i].module : NULL;
		k->n++;
		nonzero++;
	}
	/* the header promises sorted symbols, but a hostile file could break binary search */
	qsort(k->syms, k->n, sizeof(*k->syms), kentry_cmp);
	k->hidden = (ks->flags & CAP_KSYMS_F_HIDDEN) || (ks->count && !nonzero);
	return k;
}

void sym_kernel__free(struct sym_kernel *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k);
}

void sym_kernel__lookup(const struct sym_kernel *k, uint64_t addr, struct sym_result *res)
{
	uint32_t lo = 0, hi;

	if (!k || k->missing)
		return set_unknown(res, SYM_R_NO_KSYMS);
	/* kallsyms showed zeros (kptr_restrict): never a wrong name. The reason alone marks
	 * these frames (the renderer prints them as kernel addresses); no module is set, since
	 * -v would print it as a module offset */
	if (k->hidden)
		return set_unknown(res, SYM_R_KSYMS_HIDDEN);
	if (!k->n || addr < k->syms[0].addr)
		return set_unknown(res, SYM_R_NO_SYMBOLS);
	/* last symbol with addr <= address (format.md 4.10). One without a size (a KSYMS
	 * snapshot, which kallsyms gives none) covers everything up to the next symbol, like bcc,
	 * the last one everything above it; one with a size (KSYMS_ADD) only its range. */
	hi = k->n;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (k->syms[lo].size && addr - k->syms[lo].addr >= k->syms[lo].size)
		return set_unknown(res, SYM_R_NO_SYMBOLS);
	memset(res, 0, sizeof(*res));
	res->name = k->syms[lo].name;
	res->offset = addr - k->syms[lo].addr;
	res->module = k->syms[lo].module;
}

/* ---- user space ---------------------------------------------------------------------------- */

#define MAX_INLINE 64u	/* inlined functions reported at one address */

/* One (path, build-id) pair, opened once. */
struct dso {
	uint32_t idx;			/* in sym_user.dsos; sym_user__locate's token is idx + 1 */
	char *path;
	uint32_t build_id_len;
	uint8_t build_id[CAP_BUILD_ID_MAX];
	const char *module;		/* basename, into path */
	struct sym_elf *elf;		/* NULL unless status == SYM_OK */
	enum sym_reason status;
	const struct cap_object *emb;	/* the embedded copy the symbols came from, or NULL */
	bool files;			/* may look for files (a file mapping, files allowed) */
	char *debuglink;		/* from the object or its record, NULL if none */
	uint32_t debuglink_crc;
	bool has_crc;
	char *dwarf_file;		/* a matching file known to hold DWARF, or NULL */
	struct sym_dwarf *dw;		/* opened on the first line or inline lookup */
	void *dw_image;			/* copy of an embedded whole object dw reads */
	bool dw_tried;
	bool debug_skipped;		/* counted in the debug budget's skipped */
	const char **dem;		/* demangled name per symbol, filled lazily */
	uint64_t charged;		/* taken from the memory budget: elf, dem, dw_image */
	/*
	 * Another path of an embedded object an earlier dso opened: its tables (elf, dem, dw)
	 * are that owner's, made once however many paths name the object (1,000 paths of an
	 * object of a million symbols sorted its table 1,000 times).
	 */
	struct dso *owner;
	enum sym_reason emb_status;	/* owners: what the embedded copy gave, before the host's */
};

struct sym_user {
	struct sym_user_opts o;
	const struct cap_object **objs;	/* a copy of o.objects: index_embedded() swaps entries */
	struct sym_finder *finder;	/* NULL when files are off limits */
	struct sym_jit *jit;
	/* each dso allocated on its own: results lend d->build_id, which must not move */
	struct dso **dsos;
	uint32_t n, cap;
	struct rep_htab index;		/* (path, build-id) -> dso */
	struct rep_htab emb_index;	/* build-id -> embedded object (index into o.objects) */
	struct dso **emb_owner;		/* per embedded object: the dso that opened it, or NULL */
	/* mapping record -> dso, so a frame costs a pointer hash, not a path hash */
	struct rep_htab map_index;
	const struct cap_mapping **map_keys;
	struct dso **map_dso;
	uint32_t nmaps, maps_cap;
	struct rep_strtab names;	/* demangled names */
	struct sym_inline inl[MAX_INLINE];	/* the last lookup's inline chain */
	struct sym_dwarf_frame frames[MAX_INLINE];
};

/* a hostile length must not read past build_id[] */
static uint32_t obj_bid_len(uint32_t len)
{
	return len > CAP_BUILD_ID_MAX ? CAP_BUILD_ID_MAX : len;
}

static uint32_t bid_len(const struct cap_mapping *m)
{
	return obj_bid_len(m->build_id_len);
}

struct emb_key {
	const struct sym_user *u;
	const uint8_t *id;
	uint32_t len;
};

static bool emb_eq(const void *ctx, uint32_t val)
{
	const struct emb_key *k = ctx;
	const struct cap_object *o = k->u->objs[val];

	return obj_bid_len(o->build_id_len) == k->len && !memcmp(o->build_id, k->id, k->len);
}

static int64_t find_embedded(const struct sym_user *u, const uint8_t *id, uint32_t len)
{
	struct emb_key key = { u, id, len };
	uint32_t val;

	if (!len || !rep_htab__find(&u->emb_index, rep_hash_bytes(0, id, len), emb_eq, &key, &val))
		return -1;
	return val;
}

/* Index the embedded objects by build-id. Several captures may carry the same object: keep the
 * first, unless a later one holds the whole file. */
static int index_embedded(struct sym_user *u)
{
	uint32_t i;

	for (i = 0; i < u->o.nobjects; i++) {
		const struct cap_object *o = u->objs[i];
		uint32_t len = obj_bid_len(o->build_id_len);
		int64_t old = find_embedded(u, o->build_id, len);

		if (!len)
			continue;
		if (old < 0) {
			if (rep_htab__insert(&u->emb_index, rep_hash_bytes(0, o->build_id, len), i))
				return -ENOMEM;
		} else if ((o->flags & CAP_OBJ_F_WHOLE) &&
			   !(u->objs[old]->flags & CAP_OBJ_F_WHOLE)) {
			/* swap the record the index entry points at */
			u->objs[old] = o;
		}
	}
	return 0;
}

struct sym_user *sym_user__new(const struct sym_user_opts *o)
{
	struct sym_user *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->o = *o;
	if (u->o.symfs && !*u->o.symfs)
		u->o.symfs = NULL;
	if (o->nobjects && o->objects) {
		u->objs = malloc(o->nobjects * sizeof(*u->objs));
		if (!u->objs)
			goto fail;
		memcpy(u->objs, o->objects, o->nobjects * sizeof(*u->objs));
	} else {
		u->o.nobjects = 0;
	}
	if (index_embedded(u))
		goto fail;
	u->jit = sym_jit__new(o->perfmaps, o->perfmaps ? o->nperfmaps : 0, o->memory);
	if (!u->jit)
		goto fail;
	if (o->open_files) {
		u->finder = sym_finder__new(&u->o);
		if (!u->finder)
			goto fail;
	}
	return u;
fail:
	sym_user__free(u);
	errno = ENOMEM;
	return NULL;
}

void sym_user__free(struct sym_user *u)
{
	uint32_t i;

	if (!u)
		return;
	for (i = 0; i < u->n; i++) {
		struct dso *d = u->dsos[i];

		cap_budget__give(u->o.memory, d->charged);
		if (!d->owner)
			sym_elf__close(d->elf);
		sym_dwarf__close(d->dw);
		free(d->dw_image);
		free(d->path);
		free(d->debuglink);
		free(d->dwarf_file);
		free(d->dem);
		free(d);
	}
	free(u->dsos);
	free(u->emb_owner);
	rep_htab__clear(&u->index);
	rep_htab__clear(&u->emb_index);
	rep_htab__clear(&u->map_index);
	rep_strtab__clear(&u->names);
	free(u->map_keys);
	free(u->map_dso);
	free(u->objs);
	sym_jit__free(u->jit);
	sym_finder__free(u->finder);
	free(u);
}

struct dso_key {
	const struct sym_user *u;
	const struct cap_mapping *m;
};

static bool dso_eq(const void *ctx, uint32_t val)
{
	const struct dso_key *k = ctx;
	const struct dso *d = k->u->dsos[val];

	return d->build_id_len == bid_len(k->m) &&
	       !memcmp(d->build_id, k->m->build_id, d->build_id_len) &&
	       !strcmp(d->path, k->m->path);
}

static int embedded_sym_cmp(const void *a, const void *b)
{
	const struct sym_symbol *x = a, *y = b;
	/* a table has no bindings: stkrec kept one symbol per address by them (format.md 4.8) */
	struct cap_symbol_cand cx = { x->size, STB_GLOBAL, x->name };
	struct cap_symbol_cand cy = { y->size, STB_GLOBAL, y->name };

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return cap_symbol_prefer(&cx, &cy);
}

/*
 * The symbols and segments of an embedded record (names borrowed from the record, but those
 * with a symbol version, which are copied without it: format.md 4.8).
 */
static struct sym_elf *elf_from_record(const struct cap_object *o)
{
	struct sym_elf *e = calloc(1, sizeof(*e));
	uint64_t copied = 0;
	uint32_t i, n = 0;
	char *p;

	if (!e)
		return NULL;
	for (i = 0; i < o->nsyms; i++) {
		const char *name = o->syms[i].name;
		size_t base = name ? cap_symbol_base_len(name) : 0;

		if (name && name[base])
			copied += base + 1;
	}
	e->segs = calloc(o->nsegs ? o->nsegs : 1, sizeof(*e->segs));
	e->syms = calloc(o->nsyms ? o->nsyms : 1, sizeof(*e->syms));
	e->names = p = malloc(copied ? copied : 1);
	if (!e->segs || !e->syms || !e->names) {
		sym_elf__close(e);
		return NULL;
	}
	for (i = 0; i < o->nsegs; i++) {
		e->segs[i].offset = o->segs[i].offset;
		e->segs[i].vaddr = o->segs[i].vaddr;
		e->segs[i].filesz = o->segs[i].filesz;
	}
	e->nsegs = o->nsegs;
	for (i = 0; i < o->nsyms; i++) {
		const char *name = o->syms[i].name;
		size_t base;

		if (!name || !*name)
			continue;
		e->syms[n].addr = o->syms[i].addr;
		e->syms[n].size = o->syms[i].size;
		e->syms[n].name = name;
		base = cap_symbol_base_len(name);
		if (name[base]) {
			memcpy(p, name, base);
			p[base] = 0;
			e->syms[n].name = p;
			p += base + 1;
		}
		n++;
	}
	/* the writer sorts them, but a hostile file could break binary search */
	qsort(e->syms, n, sizeof(*e->syms), embedded_sym_cmp);
	for (i = 0; i < n; i++)
		if (!e->nsyms || e->syms[e->nsyms - 1].addr != e->syms[i].addr)
			e->syms[e->nsyms++] = e->syms[i];
	e->bytes = (uint64_t)(o->nsegs ? o->nsegs : 1) * sizeof(*e->segs) +
		   (uint64_t)(o->nsyms ? o->nsyms : 1) * sizeof(*e->syms) + copied;
	e->full_symtab = o->flags & (CAP_OBJ_F_SYMTAB | CAP_OBJ_F_DEBUGDATA | CAP_OBJ_F_DEBUGFILE);
	e->build_id_len = obj_bid_len(o->build_id_len);
	memcpy(e->build_id, o->build_id, e->build_id_len);
	return e;
}

/* Symbols from the capture's own copy of the object. */
static enum sym_reason open_embedded(struct sym_user *u, struct dso *d, const struct cap_object *o)
{
	struct sym_elf *rec;

	d->emb = o;
	if (o->debuglink && *o->debuglink)
		d->debuglink = strdup(o->debuglink);
	if ((o->flags & CAP_OBJ_F_WHOLE) && o->data && o->data_len) {
		/* sym_elf__open_mem() copies the image while it reads it */
		if (cap_budget__take(u->o.memory, o->data_len))
			return SYM_R_BUDGET;
		d->elf = sym_elf__open_mem(o->data, o->data_len, u->o.debug);
		cap_budget__give(u->o.memory, o->data_len);
		if (!d->elf)
			return SYM_R_NOT_FOUND;
		/* a content-hash key cannot be checked against the bytes; a GNU build-id can */
		if (!(o->flags & CAP_OBJ_F_PSEUDO_ID) &&
		    !sym_elf__build_id_is(d->elf, d->build_id, d->build_id_len)) {
			sym_elf__close(d->elf);
			d->elf = NULL;
			return SYM_R_BUILD_ID;
		}
		/* a stripped object whose debug file's symbols stkrec added to the record: those
		 * name it, not this host's debug files */
		if (!d->elf->full_symtab && (o->flags & CAP_OBJ_F_DEBUGFILE) &&
		    (rec = elf_from_record(o))) {
			sym_elf__take_symbols(d->elf, rec);	/* without memory: its own */
			sym_elf__close(rec);
		}
		return SYM_OK;
	}
	d->elf = elf_from_record(o);
	return d->elf ? SYM_OK : SYM_R_NOT_FOUND;
}

static void want_of(const struct dso *d, struct sym_want *w)
{
	*w = (struct sym_want){
		.path = d->path,
		.build_id = d->build_id,
		.build_id_len = d->build_id_len,
		.debuglink = d->debuglink,
		.debuglink_crc = d->debuglink_crc,
		.has_crc = d->has_crc,
	};
}

/* Keep file (taken) as the place to read d's DWARF from, when e, opened from it, has DWARF and
 * no such file is known yet. */
static void keep_dwarf_file(struct dso *d, const struct sym_elf *e, char *file)
{
	if (e && e->has_dwarf && !d->dwarf_file)
		d->dwarf_file = file;
	else
		free(file);
}

static void find_debug_symbols(struct sym_user *u, struct dso *d)
{
	struct sym_elf *dbg = NULL;
	struct sym_want w;
	char *file = NULL;

	/* a debug file's program headers keep addresses but not file offsets (the sections are
	 * NOBITS): without the object or its record nothing maps a frame into it */
	if (!d->elf)
		return;
	want_of(d, &w);
	if (sym_finder__debug(u->finder, &w, u->o.lines || u->o.inlines, &dbg, &file))
		return;
	keep_dwarf_file(d, dbg, file);
	/* debug files keep the object's virtual addresses: segments stay the object's */
	if (dbg->full_symtab)
		sym_elf__take_symbols(d->elf, dbg);	/* without memory: its own */
	sym_elf__close(dbg);
}

/*
 * The embedded object emb for d: opened once, by the first dso that names it (its owner); a
 * later dso borrows the owner's tables (returns true: d is done), or, where the embedded copy
 * gave nothing, starts from its reason without opening it again.
 */
static bool embedded_of(struct sym_user *u, struct dso *d, int64_t emb, enum sym_reason *r)
{
	struct dso *o;

	if (!u->emb_owner)
		u->emb_owner = calloc(u->o.nobjects, sizeof(*u->emb_owner));
	o = u->emb_owner ? u->emb_owner[emb] : NULL;
	if (!o) {
		*r = d->emb_status = open_embedded(u, d, u->objs[emb]);
		if (u->emb_owner)
			u->emb_owner[emb] = d;
		return false;
	}
	d->emb = o->emb;
	*r = o->emb_status;
	if (*r != SYM_OK)
		return false;
	/* the owner's tables, or the owner's reason when they did not fit the budget */
	if (o->debuglink)
		d->debuglink = strdup(o->debuglink);
	d->owner = o;
	d->elf = o->elf;
	d->status = o->status;
	return true;
}

static void open_dso(struct sym_user *u, struct dso *d, const struct cap_mapping *m)
{
	int64_t emb = find_embedded(u, d->build_id, d->build_id_len);
	enum sym_reason r = SYM_R_NOT_FOUND;
	char *file = NULL;

	if (emb >= 0 && embedded_of(u, d, emb, &r))
		return;
	if (r != SYM_OK && r != SYM_R_BUDGET && d->files) {
		r = sym_finder__object(u->finder, &(struct sym_want){
			.path = d->path, .build_id = d->build_id, .build_id_len = d->build_id_len },
			&d->elf, &file);
		if (r == SYM_OK && d->elf->debuglink) {
			free(d->debuglink);
			d->debuglink = strdup(d->elf->debuglink);
			d->debuglink_crc = d->elf->debuglink_crc;
			d->has_crc = true;
		}
		keep_dwarf_file(d, d->elf, file);
	}
	/* a stripped object (only .dynsym: local functions unnamed): a separate debug file of the
	 * same build may have the full .symtab */
	if (d->files && d->elf && !d->elf->full_symtab)
		find_debug_symbols(u, d);
	/* the tables are kept for the symbolizer's life: the memory budget must see them (with
	 * the demangled-name pointers symbol_name() may add) */
	if (d->elf) {
		uint64_t bytes = d->elf->bytes +
				 (u->o.demangle ? (uint64_t)d->elf->nsyms * sizeof(*d->dem) : 0);

		if (!cap_budget__take(u->o.memory, bytes)) {
			d->charged += bytes;
		} else {
			sym_elf__close(d->elf);
			d->elf = NULL;
			r = SYM_R_BUDGET;
		}
	}
	if (r == SYM_OK && !d->elf->nsyms)
		r = SYM_R_NO_SYMBOLS;
	d->status = r;
}

static struct dso *get_dso(struct sym_user *u, const struct cap_mapping *m)
{
	struct dso_key key = { u, m };
	uint32_t len = bid_len(m);
	uint64_t h = rep_hash_bytes(rep_hash_bytes(0, m->build_id, len), m->path, strlen(m->path));
	struct dso *d;
	const char *slash;
	uint32_t id;

	if (rep_htab__find(&u->index, h, dso_eq, &key, &id))
		return u->dsos[id];
	if (u->n == u->cap) {
		uint32_t cap = u->cap ? u->cap * 2 : 16;
		struct dso **dsos = realloc(u->dsos, cap * sizeof(*dsos));

		if (!dsos)
			return NULL;
		u->dsos = dsos;
		u->cap = cap;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->path = strdup(m->path);
	if (!d->path || rep_htab__insert(&u->index, h, u->n)) {
		free(d->path);
		free(d);
		return NULL;
	}
	d->idx = u->n;
	u->dsos[u->n] = d;
	d->build_id_len = len;
	memcpy(d->build_id, m->build_id, len);
	slash = strrchr(d->path, '/');
	d->module = m->kind == CAP_MAP_VDSO ? "[vdso]" : slash ? slash + 1 : d->path;
	/* the vdso and memfd objects exist only in the capture */
	d->files = u->finder && m->kind == CAP_MAP_FILE;
	u->n++;
	open_dso(u, d, m);
	return d;
}

static const struct cap_mapping *find_mapping(const struct cap_process *p, uint64_t addr)
{
	uint32_t lo = 0, hi = p->nmaps;

	/* maps are sorted by start (capture.h); last one starting at or below addr */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= p->maps[lo - 1].end)
		return NULL;
	return &p->maps[lo - 1];
}

static const char *special_module(const struct cap_mapping *m)
{
	switch (m->kind) {
	case CAP_MAP_VDSO:
		return "[vdso]";
	case CAP_MAP_ANON_EXEC:
		return "[anon]";
	default:
		return m->path && *m->path ? m->path : "[special]";
	}
}

/* Mappings resolved through a dso: files, and the vdso or a memfd when the capture embeds them. */
static bool has_dso(const struct sym_user *u, const struct cap_mapping *m)
{
	if (!m->path || !*m->path)
		return false;
	if (m->kind == CAP_MAP_FILE)
		return true;
	return (m->kind == CAP_MAP_VDSO || m->kind == CAP_MAP_MEMFD) &&
	       find_embedded(u, m->build_id, bid_len(m)) >= 0;
}

/* name, demangled (and kept in u->names) unless told otherwise */
static const char *display_name(struct sym_user *u, const char *name)
{
	char *dem;
	int64_t id;

	if (!u->o.demangle || !name)
		return name;
	dem = sym_demangle(name);
	if (!dem)
		return name;
	id = rep_strtab__intern(&u->names, dem);
	free(dem);
	/* out of memory: the raw name is still a name */
	return id < 0 ? name : rep_strtab__str(&u->names, id);
}

static const char *symbol_name(struct sym_user *u, struct dso *d, const struct sym_symbol *s)
{
	size_t i = s - d->elf->syms;

	if (d->owner)
		d = d->owner;	/* its names, demangled once */
	if (!u->o.demangle)
		return s->name;
	if (!d->dem)
		d->dem = calloc(d->elf->nsyms, sizeof(*d->dem));
	if (!d->dem)
		return display_name(u, s->name);
	if (!d->dem[i])
		d->dem[i] = display_name(u, s->name);
	return d->dem[i];
}

/* The debug budget left d's debug data unread, in whole or in part: counted once per object. */
static void debug_skipped(struct sym_user *u, struct dso *d)
{
	if (!d->debug_skipped && u->o.debug)
		u->o.debug->skipped++;
	d->debug_skipped = true;
}

static struct sym_dwarf *dso_dwarf(struct sym_user *u, struct dso *d)
{
	struct sym_elf *dbg = NULL;
	struct sym_want w;
	char *file = NULL;

	if (d->owner)
		return dso_dwarf(u, d->owner);
	if (d->dw_tried)
		return d->dw;
	d->dw_tried = true;
	if (!d->dwarf_file && d->emb && (d->emb->flags & CAP_OBJ_F_WHOLE) && d->elf &&
	    d->elf->has_dwarf) {
		/* nothing to copy when the budget would not let libdw open it anyway */
		if (!sym_debug_left(u->o.debug)) {
			debug_skipped(u, d);
			return NULL;
		}
		/* libdw reads the image for as long as it is open: keep a private copy */
		if (cap_budget__take(u->o.memory, d->emb->data_len))
			return NULL;
		d->dw_image = malloc(d->emb->data_len);
		if (!d->dw_image) {
			cap_budget__give(u->o.memory, d->emb->data_len);
			return NULL;
		}
		d->charged += d->emb->data_len;
		memcpy(d->dw_image, d->emb->data, d->emb->data_len);
		d->dw = sym_dwarf__open_mem(d->dw_image, d->emb->data_len, u->o.debug);
		if (!d->dw && errno == EFBIG)
			debug_skipped(u, d);
		return d->dw;
	}
	want_of(d, &w);
	if (!d->dwarf_file && d->files && d->emb) {
		/* the symbols came from the capture: the object file itself, if this host has the
		 * same build, may carry DWARF (on failure dbg and file stay NULL) */
		sym_finder__object(u->finder, &w, &dbg, &file);
		keep_dwarf_file(d, dbg, file);
		sym_elf__close(dbg);
	}
	if (!d->dwarf_file && d->files) {
		sym_finder__debug(u->finder, &w, true, &dbg, &file);
		keep_dwarf_file(d, dbg, file);
		sym_elf__close(dbg);
	}
	if (d->dwarf_file) {
		d->dw = sym_dwarf__open(d->dwarf_file, u->o.debug);
		if (!d->dw && errno == EFBIG)
			debug_skipped(u, d);
	}
	return d->dw;
}

/* Source position and inline chain of vaddr (the looked-up address) into res. */
static void add_source(struct sym_user *u, struct dso *d, uint64_t vaddr, struct sym_result *res)
{
	struct sym_dwarf *dw = dso_dwarf(u, d);
	const char *file;
	uint32_t line, i;
	int n;

	if (!dw)
		return;
	n = sym_dwarf__lookup(dw, vaddr, u->frames, MAX_INLINE, &file, &line);
	if (n == -EFBIG)
		debug_skipped(u, d);
	if (n < 0)
		return;
	if (u->o.lines) {
		res->file = file;
		res->line = line;
	}
	if (!u->o.inlines || !n)
		return;
	for (i = 0; i < (uint32_t)n; i++) {
		u->inl[i].name = display_name(u, u->frames[i].name);
		u->inl[i].file = u->o.lines ? u->frames[i].file : NULL;
		u->inl[i].line = u->o.lines ? u->frames[i].line : 0;
	}
	res->ninl = n;
	res->inl = u->inl;
}

static void lookup_jit(struct sym_user *u, const struct cap_process *proc,
		       const struct cap_mapping *m, uint64_t addr, uint64_t look,
		       struct sym_result *res)
{
	const struct sym_jit_proc *jp = sym_jit__proc(u->jit, proc->pid, proc->start_time);
	const struct cap_symbol *s = sym_jit_proc__find(jp, look);

	set_unknown(res, jp ? SYM_R_NO_SYMBOLS : sym_jit__refused(u->jit) ? SYM_R_BUDGET
									 : SYM_R_SPECIAL);
	res->module = special_module(m);
	res->module_offset = addr - m->start + m->pgoff;
	if (!s)
		return;
	res->reason = SYM_OK;
	res->name = display_name(u, s->name);
	res->offset = addr - s->addr;
}

struct map_key {
	const struct sym_user *u;
	const struct cap_mapping *m;
};

static bool map_eq(const void *ctx, uint32_t val)
{
	const struct map_key *k = ctx;

	return k->u->map_keys[val] == k->m;
}

/* m's dso, through the mapping cache. NULL when out of memory. */
static struct dso *mapping_dso(struct sym_user *u, const struct cap_mapping *m)
{
	struct map_key key = { u, m };
	uint64_t h = rep_hash_u64(0, (uintptr_t)m);
	struct dso *d;
	uint32_t val;

	if (rep_htab__find(&u->map_index, h, map_eq, &key, &val))
		return u->map_dso[val];
	if (u->nmaps == u->maps_cap) {
		uint32_t cap = u->maps_cap ? u->maps_cap * 2 : 64;
		const struct cap_mapping **keys = realloc(u->map_keys, cap * sizeof(*keys));
		struct dso **dsos;

		if (!keys)
			return NULL;
		u->map_keys = keys;
		dsos = realloc(u->map_dso, cap * sizeof(*dsos));
		if (!dsos)
			return NULL;
		u->map_dso = dsos;
		u->maps_cap = cap;
	}
	d = get_dso(u, m);
	if (!d || rep_htab__insert(&u->map_index, h, u->nmaps))
		return NULL;
	u->map_keys[u->nmaps] = m;
	u->map_dso[u->nmaps++] = d;
	return d;
}

void sym_user__lookup(struct sym_user *u, const struct cap_process *proc, uint64_t addr,
		      bool is_return, struct sym_result *res)
{
	uint64_t look = is_return && addr ? addr - 1 : addr;
	const struct cap_mapping *m;
	const struct sym_symbol *s;
	struct dso *d;
	uint64_t off, vaddr;

	if (!proc || (proc->flags & CAP_PROC_F_NO_MAPS))
		return set_unknown(res, SYM_R_NO_MAPS);
	m = find_mapping(proc, look);
	if (!m)
		return set_unknown(res, SYM_R_OUTSIDE);
	off = addr - m->start + m->pgoff;
	if (m->kind == CAP_MAP_ANON_EXEC)
		return lookup_jit(u, proc, m, addr, look, res);
	if (!has_dso(u, m)) {
		set_unknown(res, SYM_R_SPECIAL);
		res->module = special_module(m);
		res->module_offset = off;
		return;
	}
	/* through the mapping cache: a dso's own key is its path, which may be megabytes long */
	d = mapping_dso(u, m);
	if (!d)
		/* out of memory: degrade, not fail */
		return set_unknown(res, SYM_R_NOT_FOUND);
	set_unknown(res, d->status);
	res->module = d->module;
	res->module_path = d->path;
	res->module_offset = off;
	if (d->build_id_len) {
		res->build_id = d->build_id;
		res->build_id_len = d->build_id_len;
	}
	if (d->status != SYM_OK)
		return;
	if (sym_segments_to_vaddr(d->elf->segs, d->elf->nsegs, look - m->start + m->pgoff,
				  &vaddr)) {
		res->reason = SYM_R_NO_SYMBOLS;
		return;
	}
	s = sym_symbols_find(d->elf->syms, d->elf->nsyms, vaddr);
	if (!s) {
		res->reason = SYM_R_NO_SYMBOLS;
		return;
	}
	res->reason = SYM_OK;
	res->name = symbol_name(u, d, s);
	/* the printed offset is that of the raw address, as bcc prints it */
	res->offset = vaddr + (addr - look) - s->addr;
	if (u->o.lines || u->o.inlines)
		add_source(u, d, vaddr, res);
}

/* Stable stand-ins for "no object" outcomes, distinct from any dso token. */
static const char no_object[SYM_R__COUNT];

int sym_user__locate(struct sym_user *u, const struct cap_process *proc, uint64_t addr,
		     bool is_return, const void **obj, uint64_t *off)
{
	uint64_t look = is_return && addr ? addr - 1 : addr;
	const struct cap_mapping *m;
	const struct sym_jit_proc *jp;
	struct dso *d;

	*off = 0;
	if (!proc || (proc->flags & CAP_PROC_F_NO_MAPS)) {
		*obj = &no_object[SYM_R_NO_MAPS];
		return 0;
	}
	m = find_mapping(proc, look);
	if (!m) {
		*obj = &no_object[SYM_R_OUTSIDE];
		return 0;
	}
	*off = addr - m->start + m->pgoff;
	/* JIT code is named per process generation, by absolute address */
	if (m->kind == CAP_MAP_ANON_EXEC &&
	    (jp = sym_jit__proc(u->jit, proc->pid, proc->start_time))) {
		*obj = jp;
		*off = addr;
		return 0;
	}
	if (!has_dso(u, m)) {
		*obj = special_module(m);
		return 0;
	}
	d = mapping_dso(u, m);
	if (!d)
		return -ENOMEM;
	/* small integers: never the address of a string or of no_object[] */
	*obj = (const void *)(uintptr_t)(d->idx + 1);
	return 0;
}
