// SPDX-License-Identifier: MIT
/*
 * kallsyms.c: the kernel text symbols a capture needs (format.md 4.10). At each drain the
 * interval's kernel addresses are named and one KSYMS_ADD record holds the symbols hit that the
 * capture lacks.
 *
 * By default the kernel names them (record/ksyms/ksymname.c): its own lookup gives each address's
 * symbol, size and module, so nothing of /proc/kallsyms is formatted or parsed. Symbols of the
 * kernel image are written once; those of modules and BPF programs, which come and go, are
 * asked again at every drain that hits them and written again when they changed.
 *
 * Otherwise (--all-kallsyms, or where that BPF program does not load) /proc/kallsyms (some
 * 120000 text symbols, 5 MB) is read whole into memory when the first interval with kernel
 * stacks is drained, not at start-up, so nothing delays the first sample; it is parsed in place
 * by hand (sscanf cost more than the kernel takes to print the file), sorted and given sizes,
 * and read again when a frame lies outside the kernel image and modules or BPF programs changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "ksyms.h"
#include "../base/base.h"

struct ksym {
	uint64_t addr;
	uint64_t size;		/* up to the next symbol's address; the last one up to 2^64 */
	const char *name;	/* into rec_kallsyms.text */
	const char *module;	/* into rec_kallsyms.text; NULL for the kernel image */
	bool written;		/* the capture's table holds this symbol, with this range */
};

/* A written kernel-image symbol's range: those never change while the system runs. */
struct span {
	uint64_t addr, size;
};

/* A written symbol of a module or BPF program, which may be unloaded and its place reused. */
struct other {
	uint64_t addr, size;
	char *name, *module;
};

/*
 * The symbols written when the kernel names the addresses (record/ksyms/ksymname.c): sorted by
 * addr. An address it could not name stays unnamed for the rest of the capture (format.md 4.10: no
 * later symbol may cover an address an earlier row needed and none covered).
 */
struct named {
	struct rec_ksymname *kn;
	struct span *image;
	uint32_t nimage, image_cap;
	struct other *other;
	uint32_t nother, other_cap;
	uint64_t *unnamed;
	uint32_t nunnamed, unnamed_cap;
};

struct rec_kallsyms {
	const char *path;
	uint64_t (*signature)(void);
	bool read;		/* the file was read once */
	bool hidden;		/* only zero addresses (kptr_restrict) */
	bool hidden_written;
	bool warned;		/* a failed read was reported */
	char *text;		/* the file, names and modules NUL-terminated in place */
	struct ksym *syms;	/* sorted by cmp_ksym(), zero addresses left out */
	uint32_t n;
	uint64_t sig;		/* signature() read just before the file */
	uint64_t text_lo, text_hi;	/* the kernel image's text: its symbols stay as they are */
	uint32_t *hits;		/* indexes of the symbols a drain writes */
	struct cap_ksym *out;	/* its record */
	uint32_t out_cap;
	struct named named;	/* the default: names from the kernel, no file read */
};

/* ---- parsing ------------------------------------------------------------------------------ */

struct kline {
	uint64_t addr;
	char type;		/* 0: malformed */
	const char *name, *mod;	/* in the line, not NUL-terminated; mod NULL without one */
	size_t name_len, mod_len;
};

/* A hex digit's value plus one, 0 for any other byte: parsing kallsyms' 5 MB is most of reading it. */
static const uint8_t hex_value1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* The first space or tab in [p, end), or end: memchr's vector loops, not a byte loop. */
static const char *blank_in(const char *p, const char *end)
{
	const char *tab = memchr(p, '\t', (size_t)(end - p));
	const char *space = memchr(p, ' ', (size_t)((tab ? tab : end) - p));

	return space ? space : tab ? tab : end;
}

/*
 * The line at p ("ADDR TYPE NAME" and maybe "\t[MODULE]", up to '\n' or end) into l; returns
 * where the next line starts. A line that does not have that shape gets type 0.
 */
static const char *parse_line(const char *p, const char *end, struct kline *l)
{
	const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p, *close;
	const char *next;
	uint64_t addr = 0;
	char type;
	int v;

	if (!eol)
		eol = end;
	next = eol < end ? eol + 1 : end;
	memset(l, 0, sizeof(*l));
	for (; q < eol && (v = hex_value1[(unsigned char)*q]); q++)
		addr = addr << 4 | (uint64_t)(v - 1);
	l->addr = addr;
	if (q == p || q - p > 16 || eol - q < 4 || q[0] != ' ' || q[2] != ' ')
		return next;
	type = q[1];
	l->name = q + 3;
	q = blank_in(l->name, eol);
	l->name_len = (size_t)(q - l->name);
	while (q < eol && (*q == ' ' || *q == '\t'))
		q++;
	if (q < eol && *q == '[') {
		close = memchr(q, ']', (size_t)(eol - q));
		if (!close)
			return next;
		l->mod = q + 1;
		l->mod_len = (size_t)(close - l->mod);
	}
	if (l->name_len)
		l->type = type;
	return next;
}

/* Text symbols only: t/T (local/global), w/W (weak). */
static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

int rec_kallsyms_line(const char *line, uint64_t *addr, char *name, size_t nsz, char *mod,
		      size_t msz)
{
	struct kline l;

	parse_line(line, line + strlen(line), &l);
	if (!l.type || l.name_len >= nsz || l.mod_len >= msz)
		return -EINVAL;
	if (!is_text(l.type))
		return 0;
	*addr = l.addr;
	memcpy(name, l.name, l.name_len);
	name[l.name_len] = 0;
	memcpy(mod, l.mod ? l.mod : "", l.mod_len);
	mod[l.mod_len] = 0;
	return 1;
}

/* ---- reading -------------------------------------------------------------------------------- */

/* The whole file (procfs says size 0: read until the end), NUL-terminated. */
static int read_all(const char *path, char **out, size_t *len)
{
	size_t cap = 8u << 20, n = 0;
	char *buf = NULL, *more;
	ssize_t got;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (!buf || cap - n < 2) {
			cap = buf ? cap * 2 : cap;
			more = realloc(buf, cap);
			if (!more) {
				err = -ENOMEM;
				break;
			}
			buf = more;
		}
		got = read(fd, buf + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			err = -errno;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

/*
 * By address; of aliases (one address, several names), the one kallsyms lists first comes last,
 * where find() and a KSYMS reader take it: the kernel's own choice, the name its stack traces
 * and %pS print (record/ksyms/ksymname.c). Names point into the file as read, so the pointers give
 * its order.
 */
static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name == y->name ? 0 : x->name > y->name ? -1 : 1;
}

/* Aliases listed in the file's order into cmp_ksym()'s: the reverse. */
static void reverse(struct ksym *s, uint32_t n)
{
	for (uint32_t i = 0; i < n / 2; i++) {
		struct ksym x = s[i];

		s[i] = s[n - 1 - i];
		s[n - 1 - i] = x;
	}
}

/* Merge the sorted runs s[0, mid) and s[mid, n), the second copied out first (the shorter). */
static int merge_runs(struct ksym *s, uint32_t mid, uint32_t n)
{
	struct ksym *b = malloc((n - mid) * sizeof(*b));
	uint32_t i = mid, j = n - mid, k = n;

	if (!b)
		return -ENOMEM;
	memcpy(b, s + mid, (n - mid) * sizeof(*b));
	while (j > 0) {
		if (i > 0 && cmp_ksym(&s[i - 1], &b[j - 1]) > 0)
			s[--k] = s[--i];
		else
			s[--k] = b[--j];
	}
	free(b);
	return 0;
}

/*
 * Sort by cmp_ksym(). kallsyms lists the kernel image first, in address order, aliases in the
 * file's order (reversed here), then modules and BPF programs in no order: sorting just those
 * and merging costs a fraction of a sort of all 120,000.
 */
static int sort_symbols(struct ksym *s, uint32_t n)
{
	uint32_t head = 1, run;

	if (n < 2)
		return 0;
	while (head < n && s[head - 1].addr <= s[head].addr)
		head++;
	for (uint32_t i = 0; i < head; i += run) {
		for (run = 1; i + run < head && s[i + run].addr == s[i].addr; run++)
			;
		if (run > 1)
			reverse(s + i, run);
	}
	if (head == n)
		return 0;
	qsort(s + head, n - head, sizeof(*s), cmp_ksym);
	return merge_runs(s, head, n);
}

static bool same_module(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* The index of the last of n sorted records (of size sz, u64 address first) at or below addr. */
static int64_t last_at_or_below(const void *v, uint32_t n, size_t sz, uint64_t addr)
{
	uint32_t lo = 0, hi = n;

	if (!n || *(const uint64_t *)v > addr)
		return -1;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (*(const uint64_t *)((const char *)v + mid * sz) <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The symbols the capture holds stay written when kallsyms is read again and they did not
 * change: the same address, name, module and size in the new table.
 */
static void carry_written(const struct ksym *old, uint32_t nold, struct ksym *syms, uint32_t n)
{
	for (uint32_t i = 0; i < nold; i++) {
		int64_t j = -1;

		if (old[i].written)
			j = last_at_or_below(syms, n, sizeof(*syms), old[i].addr);

		for (; j >= 0 && syms[j].addr == old[i].addr; j--)
			if (!strcmp(syms[j].name, old[i].name)) {
				syms[j].written = old[i].size == syms[j].size &&
						  same_module(old[i].module, syms[j].module);
				break;
			}
	}
}

/*
 * Read kallsyms (again): text symbols with a non-zero address, sorted, sized to tile the address
 * space from the first one up (format.md 4.10), so that each address is named as a whole
 * snapshot names it. The old table, if any, is replaced only on success.
 */
static int load(struct rec_kallsyms *k)
{
	struct ksym *syms = NULL, *more;
	uint32_t n = 0, cap = 0, i;
	uint64_t sig, next, lo = 0, hi = 0;
	const char *p, *end;
	bool zeros = false;
	struct kline l;
	size_t len = 0;
	char *text = NULL;
	int err;

	sig = k->signature();	/* before the file it describes */
	err = read_all(k->path, &text, &len);
	if (err)
		return err;
	for (p = text, end = text + len; p < end;) {
		p = parse_line(p, end, &l);
		if (!is_text(l.type))
			continue;
		if (!l.addr) {
			zeros = true;
			continue;
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 1u << 16;
			more = realloc(syms, cap * sizeof(*syms));
			if (!more) {
				free(syms);
				free(text);
				return -ENOMEM;
			}
			syms = more;
		}
		/* the bytes after each field are a separator, not needed once parsed */
		((char *)l.name)[l.name_len] = 0;
		if (l.mod)
			((char *)l.mod)[l.mod_len] = 0;
		syms[n++] = (struct ksym){ .addr = l.addr, .name = l.name, .module = l.mod };
	}
	if (sort_symbols(syms, n)) {
		free(syms);
		free(text);
		return -ENOMEM;
	}
	for (i = n, next = 0; i-- > 0;) {
		if (i + 1 < n && syms[i + 1].addr != syms[i].addr)
			next = syms[i + 1].addr;
		syms[i].size = next - syms[i].addr;	/* next 0: 2^64 - addr */
		if (!syms[i].module) {
			lo = syms[i].addr;
			hi = hi ? hi : syms[i].addr + 1;
		}
	}
	carry_written(k->syms, k->n, syms, n);
	free(k->syms);
	free(k->text);
	k->syms = syms;
	k->n = n;
	k->text = text;
	k->sig = sig;
	k->text_lo = lo;
	k->text_hi = hi;
	/* kptr_restrict shows every address as zero: the names alone locate nothing */
	k->hidden = zeros && !n;
	k->read = true;
	return 0;
}

/* ---- the capture's records ------------------------------------------------------------------ */

struct rec_kallsyms *rec_kallsyms__new(const char *path, uint64_t (*signature)(void))
{
	struct rec_kallsyms *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->path = path;
	k->signature = signature;
	return k;
}

void rec_kallsyms__use_names(struct rec_kallsyms *k, struct rec_ksymname *kn)
{
	k->named.kn = kn;
}

static void named_free(struct named *nm)
{
	for (uint32_t i = 0; i < nm->nother; i++) {
		free(nm->other[i].name);
		free(nm->other[i].module);
	}
	free(nm->other);
	free(nm->image);
	free(nm->unnamed);
	rec_ksymname__close(nm->kn);
}

void rec_kallsyms__new_file(struct rec_kallsyms *k)
{
	struct named *nm = &k->named;

	for (uint32_t i = 0; i < nm->nother; i++) {
		free(nm->other[i].name);
		free(nm->other[i].module);
	}
	nm->nother = nm->nimage = nm->nunnamed = 0;
	for (uint32_t i = 0; i < k->n; i++)
		k->syms[i].written = false;
	k->hidden_written = false;
}

void rec_kallsyms__free(struct rec_kallsyms *k)
{
	if (!k)
		return;
	named_free(&k->named);
	free(k->syms);
	free(k->text);
	free(k->hits);
	free(k->out);
	free(k);
}

/* Room for n symbols in the record being built. */
static int reserve_out(struct rec_kallsyms *k, uint32_t n)
{
	struct cap_ksym *out;
	uint32_t *hits;

	if (n <= k->out_cap)
		return 0;
	out = realloc(k->out, n * sizeof(*out));
	if (!out)
		return -ENOMEM;
	k->out = out;
	hits = realloc(k->hits, n * sizeof(*hits));
	if (!hits)
		return -ENOMEM;
	k->hits = hits;
	k->out_cap = n;
	return 0;
}

/* Write n symbols of k->out as a record of type. */
static int put_record(struct rec_kallsyms *k, uint16_t type, uint32_t flags, uint32_t n,
		      struct cap_writer *w)
{
	struct cap_record rec = { .type = type, .ksyms = { flags, n, k->out } };

	return cap_writer__put(w, &rec);
}

static void set_out(struct cap_ksym *o, const struct ksym *s)
{
	*o = (struct cap_ksym){ .addr = s->addr, .name = (char *)s->name,
				.module = (char *)s->module, .size = s->size };
}

int rec_kallsyms__put_all(struct rec_kallsyms *k, struct cap_writer *w)
{
	uint32_t i;
	int err;

	err = load(k);
	if (!err)
		err = reserve_out(k, k->n);
	if (err)
		return err;
	for (i = 0; i < k->n; i++) {
		set_out(&k->out[i], &k->syms[i]);
		k->syms[i].written = true;
	}
	k->hidden_written = k->hidden;
	return put_record(k, CAP_CHUNK_KSYMS, k->hidden ? CAP_KSYMS_F_HIDDEN : 0, k->n, w);
}

/* The index of the symbol naming addr (the last alias at its address), or -1 below the first. */
static int64_t find(const struct rec_kallsyms *k, uint64_t addr)
{
	return last_at_or_below(k->syms, k->n, sizeof(*k->syms), addr);
}

/*
 * Frames outside the kernel image (modules, BPF programs) can need a newer table: only then is
 * the signature (reading /proc/modules and the BPF program ids) worth its cost, and only when it
 * changed is kallsyms (5 MB) read again.
 */
static bool stale(const struct rec_kallsyms *k, const struct cap_interval *iv)
{
	for (uint32_t i = 0; i < iv->nkstacks; i++)
		for (uint32_t j = 0; j < iv->kstacks[i].nips; j++) {
			uint64_t ip = iv->kstacks[i].ips[j];

			if (ip < k->text_lo || ip >= k->text_hi)
				return k->signature() != k->sig;
		}
	return false;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- names from the kernel (the default) ------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Does a written image symbol hold addr? */
static bool image_holds(const struct named *nm, uint64_t addr)
{
	int64_t i = last_at_or_below(nm->image, nm->nimage, sizeof(*nm->image), addr);

	return i >= 0 && addr - nm->image[i].addr < nm->image[i].size;
}

static bool is_unnamed(const struct named *nm, uint64_t addr)
{
	int64_t i = last_at_or_below(nm->unnamed, nm->nunnamed, sizeof(*nm->unnamed), addr);

	return i >= 0 && nm->unnamed[i] == addr;
}

/* Does [addr, addr + size) hold an address that stayed unnamed? */
static bool covers_unnamed(const struct named *nm, uint64_t addr, uint64_t size)
{
	int64_t i = last_at_or_below(nm->unnamed, nm->nunnamed, sizeof(*nm->unnamed),
				     addr + size - 1);

	return i >= 0 && nm->unnamed[i] >= addr;
}

/* Insert v (of size sz, u64 address first) at its place in a sorted array; grows it. */
static int insert_sorted(void **v, uint32_t *n, uint32_t *cap, size_t sz, const void *x)
{
	int64_t at = last_at_or_below(*v, *n, sz, *(const uint64_t *)x) + 1;
	char *p;

	if (*n == *cap) {
		uint32_t more = *cap ? *cap * 2 : 256;

		p = realloc(*v, (size_t)more * sz);
		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = more;
	}
	p = *v;
	memmove(p + (at + 1) * sz, p + at * sz, (*n - at) * sz);
	memcpy(p + at * sz, x, sz);
	(*n)++;
	return 0;
}

/* Whether the other symbol s was written as it is now; if not, it is recorded so. */
static int other_is_new(struct named *nm, const struct rec_ksym_named *s, const char *module,
			bool *fresh)
{
	int64_t i = last_at_or_below(nm->other, nm->nother, sizeof(*nm->other), s->addr);
	struct other *old = i >= 0 && nm->other[i].addr == s->addr ? &nm->other[i] : NULL;
	struct other o;

	*fresh = !old || old->size != s->size || strcmp(old->name, s->name) ||
		 strcmp(old->module, module);
	if (!*fresh)
		return 0;
	o = (struct other){ s->addr, s->size, strdup(s->name), strdup(module) };
	if (!o.name || !o.module) {
		free(o.name);
		free(o.module);
		return -ENOMEM;
	}
	if (old) {
		free(old->name);
		free(old->module);
		*old = o;
		return 0;
	}
	return insert_sorted((void **)&nm->other, &nm->nother, &nm->other_cap, sizeof(o), &o);
}

/*
 * The module a symbol of no module is in: the kernel image's own, or outside the image one of a
 * BPF program (bpf_prog_<tag>_<name>, trampolines, dispatchers), which kallsyms lists as [bpf]
 * and the lookup leaves without one.
 */
static const char *module_of(const struct named *nm, const struct rec_ksym_named *s)
{
	if (s->module[0])
		return s->module;
	if (!rec_ksymname__in_image(nm->kn, s->addr) && !strncmp(s->name, "bpf_", 4))
		return "bpf";
	return "";
}

/*
 * Take what the kernel said of ip: a symbol for the record (out[*n], its strings in s), or an
 * address left unnamed. Image symbols are written once; others again when they changed.
 */
static int take_named(struct rec_kallsyms *k, uint64_t ip, struct rec_ksym_named *s, uint32_t *n)
{
	struct named *nm = &k->named;
	const char *module;
	bool fresh = true;
	int err;

	if (!s->size || covers_unnamed(nm, s->addr, s->size)) {
		/* bounded: past it an unnamed address is merely asked again at the next drain */
		if (nm->nunnamed >= 1u << 16)
			return 0;
		return insert_sorted((void **)&nm->unnamed, &nm->nunnamed, &nm->unnamed_cap,
				     sizeof(ip), &ip);
	}
	module = module_of(nm, s);
	if (!*module && rec_ksymname__in_image(nm->kn, s->addr)) {
		struct span sp = { s->addr, s->size };

		if (image_holds(nm, s->addr))
			return 0;
		err = insert_sorted((void **)&nm->image, &nm->nimage, &nm->image_cap, sizeof(sp),
				    &sp);
	} else {
		err = other_is_new(nm, s, module, &fresh);
	}
	if (err || !fresh)
		return err;
	k->out[(*n)++] = (struct cap_ksym){ .addr = s->addr, .size = s->size, .name = s->name,
					    .module = *module ? (char *)module : NULL };
	return 0;
}

/* The interval's distinct kernel addresses that the written image symbols do not hold. */
static uint64_t *addresses_to_ask(const struct named *nm, const struct cap_interval *iv,
				  uint32_t frames, uint32_t *nask)
{
	uint64_t *ips = malloc(frames * sizeof(*ips));
	uint32_t n = 0, m = 0;

	if (!ips)
		return NULL;
	for (uint32_t i = 0; i < iv->nkstacks; i++)
		for (uint32_t j = 0; j < iv->kstacks[i].nips; j++)
			ips[n++] = iv->kstacks[i].ips[j];
	qsort(ips, n, sizeof(*ips), cmp_u64);
	for (uint32_t i = 0; i < n; i++)
		if ((!m || ips[i] != ips[m - 1]) && !image_holds(nm, ips[i]) &&
		    !is_unnamed(nm, ips[i]))
			ips[m++] = ips[i];
	*nask = m;
	return ips;
}

static int put_named(struct rec_kallsyms *k, const struct cap_interval *iv, uint32_t frames,
		     struct cap_writer *w)
{
	struct named *nm = &k->named;
	struct rec_ksym_named *said = NULL;
	uint32_t nask = 0, n = 0;
	uint64_t *ask = addresses_to_ask(nm, iv, frames, &nask);
	int err = ask ? 0 : -ENOMEM;

	if (!err && nask) {
		said = calloc(nask, sizeof(*said));
		err = said ? reserve_out(k, nask) : -ENOMEM;
	}
	for (uint32_t i = 0; !err && i < nask; i += STK_KSYMNAME_BATCH) {
		uint32_t m = nask - i < STK_KSYMNAME_BATCH ? nask - i : STK_KSYMNAME_BATCH;

		err = rec_ksymname__name(nm->kn, ask + i, m, said + i);
		for (uint32_t j = 0; !err && j < m; j++)
			err = take_named(k, ask[i + j], &said[i + j], &n);
	}
	/*
	 * format.md 4.10: in address order, no overlaps. The symbols of one drain's lookups are
	 * disjoint and come in the order of the sorted addresses they hold: already in order.
	 */
	if (!err && n)
		err = put_record(k, CAP_CHUNK_KSYMS_ADD, 0, n, w);
	free(said);
	free(ask);
	return err;
}

/* ---- the drain's record ----------------------------------------------------------------------- */

int rec_kallsyms__put(struct rec_kallsyms *k, const struct cap_interval *iv, struct cap_writer *w)
{
	uint32_t i, j, n = 0, frames = 0;
	int64_t s;
	int err;

	for (i = 0; i < iv->nkstacks; i++)
		frames += iv->kstacks[i].nips;
	if (!frames)
		return 0;
	if (k->named.kn)
		return put_named(k, iv, frames, w);
	if (!k->read || stale(k, iv)) {
		/*
		 * Not fatal: the frames stay unnamed (or named from the table read before) and
		 * the next interval tries again. Said once.
		 */
		err = load(k);
		if (err && !k->warned)
			rec_err(err, "warning: cannot read %s: %s", k->path, strerror(-err));
		k->warned |= err != 0;
	}
	if (k->hidden) {
		if (k->hidden_written)
			return 0;
		k->hidden_written = true;
		return put_record(k, CAP_CHUNK_KSYMS_ADD, CAP_KSYMS_F_HIDDEN, 0, w);
	}
	/* each symbol is written once: never more than there are */
	err = reserve_out(k, frames < k->n ? frames : k->n);
	if (err)
		return err;
	for (i = 0; i < iv->nkstacks; i++)
		for (j = 0; j < iv->kstacks[i].nips; j++) {
			s = find(k, iv->kstacks[i].ips[j]);
			if (s < 0 || k->syms[s].written)
				continue;
			k->syms[s].written = true;
			k->hits[n++] = (uint32_t)s;
		}
	if (!n)
		return 0;
	/* format.md 4.10: in address order; one symbol per address, so no two ranges overlap */
	qsort(k->hits, n, sizeof(*k->hits), cmp_u32);
	for (i = 0; i < n; i++)
		set_out(&k->out[i], &k->syms[k->hits[i]]);
	return put_record(k, CAP_CHUNK_KSYMS_ADD, 0, n, w);
}

/* ---- change detection ---------------------------------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/*
 * What kallsyms depends on, cheaply: the name and load address of each module (not the
 * reference counts, which change all the time) and the ids of the loaded BPF programs (each has
 * a bpf_prog_<tag>_<name> [bpf] symbol). Returns a hash.
 */
uint64_t rec_kallsyms_signature(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char line[1024];
	__u32 id = 0;
	FILE *f = fopen("/proc/modules", "r");

	while (f && fgets(line, sizeof(line), f)) {
		const char *addr = strrchr(line, ' ');

		h = fnv1a(h, line, strcspn(line, " "));
		if (addr)
			h = fnv1a(h, addr, strcspn(addr, "\n"));
	}
	if (f)
		fclose(f);
	while (!bpf_prog_get_next_id(id, &id))
		h = fnv1a(h, (const char *)&id, sizeof(id));
	return h;
}
