// SPDX-License-Identifier: MIT
/* symbolize.c: kernel and user address -> symbol, offline (see symbolize.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <elfutils/libdwelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "htab.h"
#include "symbolize.h"

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
	uint64_t addr;
	const char *name;
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
		k->syms[k->n].name = ks->syms[i].name;
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
	if (k->hidden)
		return set_unknown(res, SYM_R_KSYMS_HIDDEN);
	if (!k->n || addr < k->syms[0].addr)
		return set_unknown(res, SYM_R_NO_SYMBOLS);
	/* last symbol with addr <= address: kallsyms has no sizes, so like bcc the last symbol
	 * also covers everything above it */
	hi = k->n;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	memset(res, 0, sizeof(*res));
	res->name = k->syms[lo].name;
	res->offset = addr - k->syms[lo].addr;
}

/* ---- ELF objects --------------------------------------------------------------------------- */

int sym_segments_to_vaddr(const struct sym_segment *segs, uint32_t nsegs, uint64_t off,
			  uint64_t *vaddr)
{
	uint32_t i;

	for (i = 0; i < nsegs; i++) {
		if (off >= segs[i].offset && off - segs[i].offset < segs[i].filesz) {
			*vaddr = off - segs[i].offset + segs[i].vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const struct sym_symbol *sym_symbols_find(const struct sym_symbol *syms, uint32_t nsyms,
					  uint64_t vaddr)
{
	uint32_t lo = 0, hi = nsyms, i, tries;

	if (!nsyms || vaddr < syms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (syms[mid].addr <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	/* sizeless symbols (hand-written assembly) reach up to the next symbol */
	if (!syms[lo].size)
		return &syms[lo];
	/* a sized symbol that ends before vaddr may sit inside a bigger, earlier one (nested
	 * local labels); look back a little, not the whole table */
	for (i = lo, tries = 0; tries < 8; i--, tries++) {
		if (syms[i].size && vaddr - syms[i].addr < syms[i].size)
			return &syms[i];
		if (!i)
			break;
	}
	return NULL;
}

static int bind_rank(unsigned char bind)
{
	return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

struct raw_sym {
	uint64_t addr, size;
	size_t name_off;
	int rank;
};

static int raw_sym_cmp(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address prefer a sized, global symbol: the name a user knows */
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return x->name_off < y->name_off ? -1 : x->name_off > y->name_off;
}

struct sym_buf {
	struct raw_sym *syms;
	size_t n, cap;
	char *names;
	size_t len, names_cap;
};

static int buf_add(struct sym_buf *b, const GElf_Sym *sym, const char *name)
{
	size_t nlen = strlen(name) + 1;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		struct raw_sym *s = realloc(b->syms, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		b->syms = s;
		b->cap = cap;
	}
	while (b->len + nlen > b->names_cap) {
		size_t cap = b->names_cap ? b->names_cap * 2 : 4096;
		char *p = realloc(b->names, cap);

		if (!p)
			return -ENOMEM;
		b->names = p;
		b->names_cap = cap;
	}
	memcpy(b->names + b->len, name, nlen);
	b->syms[b->n].addr = sym->st_value;
	b->syms[b->n].size = sym->st_size;
	b->syms[b->n].name_off = b->len;
	b->syms[b->n].rank = bind_rank(GELF_ST_BIND(sym->st_info));
	b->n++;
	b->len += nlen;
	return 0;
}

/* Function symbols of the first section of type sh_type. */
static int read_symbols(Elf *elf, uint32_t sh_type, struct sym_buf *b)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != sh_type)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !shdr.sh_entsize)
			return 0;
		n = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			int t;

			if (!gelf_getsym(data, i, &sym))
				break;
			t = GELF_ST_TYPE(sym.st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value)
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			if (buf_add(b, &sym, name))
				return -ENOMEM;
		}
		return 0;
	}
	return 0;
}

static int read_segments(Elf *elf, struct sym_elf *e)
{
	size_t n, i;

	if (elf_getphdrnum(elf, &n))
		return 0;
	e->segs = calloc(n ? n : 1, sizeof(*e->segs));
	if (!e->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->segs[e->nsegs].offset = ph.p_offset;
		e->segs[e->nsegs].vaddr = ph.p_vaddr;
		e->segs[e->nsegs].filesz = ph.p_filesz;
		e->nsegs++;
	}
	return 0;
}

static int collect_symbols(Elf *elf, struct sym_elf *e)
{
	struct sym_buf b = { 0 };
	size_t i;
	int err;

	err = read_symbols(elf, SHT_SYMTAB, &b);
	e->full_symtab = b.n > 0;
	/* a stripped binary keeps only .dynsym */
	if (!err && !b.n)
		err = read_symbols(elf, SHT_DYNSYM, &b);
	if (err)
		goto out;
	if (b.n)
		qsort(b.syms, b.n, sizeof(*b.syms), raw_sym_cmp);
	e->syms = calloc(b.n ? b.n : 1, sizeof(*e->syms));
	if (!e->syms) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < b.n; i++) {
		if (e->nsyms && e->syms[e->nsyms - 1].addr == b.syms[i].addr)
			continue;	/* aliases: the first after sorting wins */
		e->syms[e->nsyms].addr = b.syms[i].addr;
		e->syms[e->nsyms].size = b.syms[i].size;
		/* names are fixed up once the buffer stops moving */
		e->syms[e->nsyms].name = (const char *)(uintptr_t)b.syms[i].name_off;
		e->nsyms++;
	}
	e->names = b.names;
	b.names = NULL;
	for (i = 0; i < e->nsyms; i++)
		e->syms[i].name = e->names + (uintptr_t)e->syms[i].name;
out:
	free(b.syms);
	free(b.names);
	return err;
}

struct sym_elf *sym_elf__open(const char *path)
{
	struct sym_elf *e = NULL;
	const void *bid;
	struct stat st;
	Elf *elf = NULL;
	ssize_t bid_len;
	int fd, err = 0;

	/* a capture names the files: never block on a FIFO or read a device */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = -ENOEXEC;
		goto out;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto out;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		err = -ENOMEM;
		goto out;
	}
	bid_len = dwelf_elf_gnu_build_id(elf, &bid);
	if (bid_len > 0 && bid_len <= CAP_BUILD_ID_MAX) {
		memcpy(e->build_id, bid, bid_len);
		e->build_id_len = bid_len;
	}
	err = read_segments(elf, e);
	if (!err)
		err = collect_symbols(elf, e);
out:
	if (elf)
		elf_end(elf);
	close(fd);
	if (err) {
		sym_elf__close(e);
		errno = -err;
		return NULL;
	}
	return e;
}

void sym_elf__close(struct sym_elf *e)
{
	if (!e)
		return;
	free(e->segs);
	free(e->syms);
	free(e->names);
	free(e);
}

/* ---- user space ---------------------------------------------------------------------------- */

/* One (path, build-id) pair, opened once. */
struct dso {
	char *path;
	uint32_t build_id_len;
	uint8_t build_id[CAP_BUILD_ID_MAX];
	const char *module;		/* basename, into path */
	struct sym_elf *elf;		/* NULL unless status == SYM_OK */
	enum sym_reason status;
};

struct sym_user {
	const char *symfs;
	bool open_files;
	struct dso *dsos;
	uint32_t n, cap;
	struct rep_htab index;		/* (path, build-id) -> dso */
	/* mapping record -> dso, so a frame costs a pointer hash, not a path hash */
	struct rep_htab map_index;
	const struct cap_mapping **map_keys;
	uint32_t *map_dso;
	uint32_t nmaps, maps_cap;
};

struct sym_user *sym_user__new(const struct sym_user_opts *o)
{
	struct sym_user *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->symfs = o->symfs && *o->symfs ? o->symfs : NULL;
	u->open_files = o->open_files;
	return u;
}

void sym_user__free(struct sym_user *u)
{
	uint32_t i;

	if (!u)
		return;
	for (i = 0; i < u->n; i++) {
		sym_elf__close(u->dsos[i].elf);
		free(u->dsos[i].path);
	}
	free(u->dsos);
	rep_htab__clear(&u->index);
	rep_htab__clear(&u->map_index);
	free(u->map_keys);
	free(u->map_dso);
	free(u);
}

/* a hostile length must not read past build_id[] */
static uint32_t bid_len(const struct cap_mapping *m)
{
	return m->build_id_len > CAP_BUILD_ID_MAX ? CAP_BUILD_ID_MAX : m->build_id_len;
}

struct dso_key {
	const struct sym_user *u;
	const struct cap_mapping *m;
};

static bool dso_eq(const void *ctx, uint32_t val)
{
	const struct dso_key *k = ctx;
	const struct dso *d = &k->u->dsos[val];

	return d->build_id_len == bid_len(k->m) &&
	       !memcmp(d->build_id, k->m->build_id, d->build_id_len) &&
	       !strcmp(d->path, k->m->path);
}

static bool build_id_matches(const struct sym_elf *e, const struct cap_mapping *m)
{
	/* without a recorded build-id nothing proves the file is the one that ran: accept only a
	 * file that has none either */
	return e->build_id_len == bid_len(m) && !memcmp(e->build_id, m->build_id, bid_len(m));
}

/* Try one candidate file: SYM_OK (and *out set), SYM_R_NOT_FOUND or SYM_R_BUILD_ID. */
static enum sym_reason try_candidate(const char *file, const struct cap_mapping *m,
				     struct sym_elf **out)
{
	struct sym_elf *e = sym_elf__open(file);

	if (!e)
		return SYM_R_NOT_FOUND;
	if (!build_id_matches(e, m)) {
		sym_elf__close(e);
		return SYM_R_BUILD_ID;
	}
	*out = e;
	return SYM_OK;
}

/*
 * A stripped object (only .dynsym: local functions unnamed) may have its .symtab in a separate
 * debug file, found by build-id as distributions install them (libc6-dbg, *-dbgsym):
 * [SYMFS]/usr/lib/debug/.build-id/xx/rest.debug. Its build-id must match too. Debug files keep
 * the object's virtual addresses, so only the symbols are taken; segments stay the object's.
 */
static void take_debug_symbols(const struct sym_user *u, struct sym_elf *e,
			       const struct cap_mapping *m)
{
	char hex[2 * CAP_BUILD_ID_MAX + 1], *file;
	uint32_t i, len = bid_len(m), pass;

	if (len < 2)
		return;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
	for (pass = u->symfs ? 0 : 1; pass < 2; pass++) {
		struct sym_elf *dbg = NULL;

		if (asprintf(&file, "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
			     pass ? "" : u->symfs, hex, hex + 2) < 0)
			return;
		if (try_candidate(file, m, &dbg) == SYM_OK && dbg->full_symtab) {
			free(e->syms);
			free(e->names);
			e->syms = dbg->syms;
			e->nsyms = dbg->nsyms;
			e->names = dbg->names;
			e->full_symtab = true;
			dbg->syms = NULL;
			dbg->names = NULL;
		}
		sym_elf__close(dbg);
		free(file);
		if (e->full_symtab)
			return;
	}
}

static void open_dso(const struct sym_user *u, struct dso *d, const struct cap_mapping *m)
{
	enum sym_reason r = SYM_R_NOT_FOUND, r2;
	char *file;

	if (!u->open_files) {
		d->status = SYM_R_NOT_FOUND;
		return;
	}
	if (u->symfs && asprintf(&file, "%s%s%s", u->symfs, m->path[0] == '/' ? "" : "/",
				 m->path) >= 0) {
		r = try_candidate(file, m, &d->elf);
		free(file);
	}
	if (r != SYM_OK) {
		r2 = try_candidate(m->path, m, &d->elf);
		/* a mismatch anywhere says more than "not found" elsewhere */
		r = r2 == SYM_OK ? SYM_OK : (r == SYM_R_BUILD_ID ? r : r2);
	}
	if (r == SYM_OK && !d->elf->full_symtab)
		take_debug_symbols(u, d->elf, m);
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
		return &u->dsos[id];
	if (u->n == u->cap) {
		uint32_t cap = u->cap ? u->cap * 2 : 16;
		struct dso *dsos = realloc(u->dsos, cap * sizeof(*dsos));

		if (!dsos)
			return NULL;
		u->dsos = dsos;
		u->cap = cap;
	}
	d = &u->dsos[u->n];
	memset(d, 0, sizeof(*d));
	d->path = strdup(m->path);
	if (!d->path)
		return NULL;
	if (rep_htab__insert(&u->index, h, u->n)) {
		free(d->path);
		return NULL;
	}
	d->build_id_len = len;
	memcpy(d->build_id, m->build_id, len);
	slash = strrchr(d->path, '/');
	d->module = slash ? slash + 1 : d->path;
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
	if (m->kind != CAP_MAP_FILE || !m->path || !*m->path) {
		set_unknown(res, SYM_R_SPECIAL);
		res->module = special_module(m);
		res->module_offset = off;
		return;
	}
	d = get_dso(u, m);
	if (!d)
		/* out of memory: degrade, not fail */
		return set_unknown(res, SYM_R_NOT_FOUND);
	set_unknown(res, d->status);
	res->module = d->module;
	res->module_offset = off;
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
	res->name = s->name;
	/* the printed offset is that of the raw address, as bcc prints it */
	res->offset = vaddr + (addr - look) - s->addr;
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

/* Index of m's dso, through the mapping cache. Returns the index or -ENOMEM. */
static int64_t dso_index(struct sym_user *u, const struct cap_mapping *m)
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
		uint32_t *dsos;

		if (!keys)
			return -ENOMEM;
		u->map_keys = keys;
		dsos = realloc(u->map_dso, cap * sizeof(*dsos));
		if (!dsos)
			return -ENOMEM;
		u->map_dso = dsos;
		u->maps_cap = cap;
	}
	d = get_dso(u, m);
	if (!d || rep_htab__insert(&u->map_index, h, u->nmaps))
		return -ENOMEM;
	u->map_keys[u->nmaps] = m;
	u->map_dso[u->nmaps] = d - u->dsos;
	return u->map_dso[u->nmaps++];
}

/* Stable stand-ins for "no object" outcomes, distinct from any dso token. */
static const char no_object[SYM_R__COUNT];

int sym_user__locate(struct sym_user *u, const struct cap_process *proc, uint64_t addr,
		     bool is_return, const void **obj, uint64_t *off)
{
	uint64_t look = is_return && addr ? addr - 1 : addr;
	const struct cap_mapping *m;
	int64_t idx;

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
	if (m->kind != CAP_MAP_FILE || !m->path || !*m->path) {
		*obj = special_module(m);
		return 0;
	}
	idx = dso_index(u, m);
	if (idx < 0)
		return idx;
	/* small integers: never the address of a string or of no_object[] */
	*obj = (const void *)(uintptr_t)(idx + 1);
	return 0;
}
